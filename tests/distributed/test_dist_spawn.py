"""Workers started apart, as PyTorch programs start them without a launcher
(``multiprocessing.spawn``, ``multiprocessing.Process``), meet at rank 0's ``tcp://``,
``env://`` or ``file://`` address and form one world (dist_worker_spawn.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mpi4py", reason="tocha.distributed runs on MPI: pip install mpi4py mpich")

WORKER = Path(__file__).resolve().parent / "dist_worker_spawn.py"


def run(mode: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "MASTER_"))}
    proc = subprocess.run(
        [sys.executable, "-u", str(WORKER), mode],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    found = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert proc.returncode == 0 and found, proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in found), proc.stdout + proc.stderr
    return found


@pytest.mark.parametrize("mode", ["spawn", "file", "process", "store"])
def test_workers_started_apart_form_one_world(mode):
    found = run(mode)
    assert len(found) == {"spawn": 20, "process": 11}.get(mode, 10)


def test_rank_zero_alone_times_out_with_pytorchs_store_error():
    start = time.monotonic()
    assert len(run("alone")) == 1
    assert time.monotonic() - start < 20


def test_a_taken_port_is_pytorchs_network_error():
    assert len(run("port")) == 1


def test_a_worker_that_raises_after_init_ends_the_spawn():
    """The other rank is inside a collective: spawn must see the failure and stop it rather
    than wait for the collective's 30-minute timeout."""
    start = time.monotonic()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "MASTER_"))}
    proc = subprocess.run(
        [sys.executable, "-u", str(WORKER), "raises"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert "PASS raises raised ProcessRaisedException" in proc.stdout, proc.stdout + proc.stderr
    assert time.monotonic() - start < 30
