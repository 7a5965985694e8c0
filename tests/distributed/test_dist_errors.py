"""Failures raise on every rank instead of hanging (dist_worker_errors.py), and the launcher
gives torchrun's environment."""

from __future__ import annotations

import time


def lines(proc) -> list[str]:
    return [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]


def test_mismatched_shapes_dtypes_roots_and_collectives_raise_on_every_rank(mpirun):
    proc = mpirun("dist_worker_errors.py", args=["mismatch"], timeout=60)
    found = lines(proc)
    assert proc.returncode == 0 and len(found) == 10, proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in found), proc.stdout
    shape = [line for line in found if line.startswith("PASS shape")]
    assert "TensorShape=[3]" in shape[0] and "TensorShape=[4]" in shape[0]


def test_a_rank_that_skips_a_collective_makes_the_others_time_out(mpirun):
    proc = mpirun("dist_worker_errors.py", args=["absent"], timeout=60)
    found = lines(proc)
    assert len(found) == 1 and found[0].startswith("PASS timeout"), proc.stdout + proc.stderr
    assert "Timed out after 2000ms waiting for all_reduce" in found[0]


def test_a_dead_rank_does_not_hang_the_others(mpirun):
    start = time.monotonic()
    proc = mpirun("dist_worker_errors.py", args=["dead"], timeout=60)
    assert time.monotonic() - start < 30
    # rank 0 either timed out or was stopped by mpiexec: never a hang, never a success
    assert "FAIL" not in proc.stdout, proc.stdout + proc.stderr


def test_launcher_sets_torchrun_environment(mpirun):
    proc = mpirun("dist_worker_errors.py", args=["env"], launcher=True, timeout=60)
    found = lines(proc)
    assert proc.returncode == 0 and len(found) == 2, proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in found), proc.stdout
