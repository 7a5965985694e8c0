"""all_to_all, reduce_scatter, batch_isend_irecv, monitored_barrier, the object collectives
and PyTorch's errors on misuse, on 2 ranks (dist_worker_api.py); the questions about the
machine and backends in this process."""

from __future__ import annotations

import pytest

pytest.importorskip("mpi4py", reason="tocha.distributed runs on MPI: pip install mpi4py mpich")

import tocha as torch  # noqa: E402
import tocha.distributed as dist  # noqa: E402


def test_tutorial_collectives_and_misuse_errors_on_two_ranks(mpirun):
    proc = mpirun("dist_worker_api.py", n=2, launcher=True, timeout=90)
    found = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in found), proc.stdout
    assert len(found) == 2 * 28, proc.stdout


def test_node_local_rank(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert dist.get_node_local_rank(fallback_rank=3) == 2


def test_backends_and_complex_support():
    assert dist.is_backend_available("GLOO") and not dist.is_backend_available("foo")
    assert not dist.is_ucc_available() and not dist.is_xccl_available()
    assert [dist.get_default_backend_for_device(d) for d in ("cpu", "cuda")] == ["gloo", "nccl"]
    assert dist.get_default_backend_for_device(torch.device("cpu")) == "gloo"
    ops = dist.ReduceOp
    assert [dist.supports_complex(o) for o in (ops.SUM, ops.AVG, ops.MAX, ops.PRODUCT)] == [
        True,
        True,
        False,
        False,
    ]


def test_destroy_without_a_group_is_pytorchs_assertion():
    assert not dist.is_initialized() and dist.get_pg_count() == 0
    with pytest.raises(AssertionError, match="Process group cannot be None"):
        dist.destroy_process_group()
