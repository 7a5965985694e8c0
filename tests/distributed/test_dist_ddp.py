"""DistributedDataParallel on 2 ranks (dist_worker_ddp.py): 20 SGD steps give the same weights
on both ranks and the weights of single-process training on the concatenated batches."""

from __future__ import annotations

import re

import pytest

# The worker trains with tocha.optim on batches sharded by tocha.utils.data's DistributedSampler.
pytest.importorskip("tocha.optim", reason="the DDP tests train with tocha-optim")
pytest.importorskip("tocha.utils.data", reason="the DDP tests shard data with tocha-utils")

NAMES = [
    "check_training_matches_single_process",
    "check_no_sync_accumulates",
    "check_unused_parameters",
    "check_buffers_follow_rank_0",
    "check_different_models_raise",
]


@pytest.fixture(scope="module")
def output(mpirun):
    proc = mpirun("dist_worker_ddp.py", n=2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", NAMES)
def test_ddp(output, name):
    failures = re.findall(rf"^FAIL {name}: .*?(?=^PASS|^FAIL|\Z)", output, re.M | re.S)
    assert not failures, "".join(failures)
    assert output.count(f"PASS {name}\n") == 2, output


def test_communication_hooks(mpirun):
    proc = mpirun("dist_worker_hooks.py", n=2, launcher=True, timeout=90)
    found = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert proc.returncode == 0 and len(found) == 2 * 6, proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in found), proc.stdout


def test_uneven_inputs_with_join(mpirun):
    proc = mpirun("dist_worker_join.py", n=2, launcher=True, timeout=90)
    found = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert proc.returncode == 0 and len(found) == 2 * 4, proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in found), proc.stdout
