"""ZeroRedundancyOptimizer on 2 ranks (dist_worker_zero.py)."""

from __future__ import annotations


def test_zero_redundancy_optimizer_matches_a_plain_optimizer(mpirun):
    proc = mpirun("dist_worker_zero.py", n=2, launcher=True, timeout=90)
    found = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert proc.returncode == 0 and len(found) == 2 * 6 + 1, proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in found), proc.stdout
