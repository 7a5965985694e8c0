"""Each collective on 2 ranks against the single-process result (dist_worker_collectives.py)."""

from __future__ import annotations

import re

import pytest

NAMES = [
    "all_reduce",
    "all_reduce_half_and_noncontiguous",
    "all_reduce_async",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all_single",
    "all_to_all_single_uneven",
    "send_recv",
    "objects",
    "groups",
]


@pytest.fixture(scope="module")
def output(mpirun):
    proc = mpirun("dist_worker_collectives.py", n=2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", NAMES)
def test_collective_matches_single_process(output, name):
    failures = re.findall(rf"^FAIL {name}: .*?(?=^PASS|^FAIL|\Z)", output, re.M | re.S)
    assert not failures, "".join(failures)
    assert output.count(f"PASS {name}\n") == 2, output
