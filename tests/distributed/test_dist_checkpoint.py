"""torch.distributed.checkpoint: save and load on 2 ranks (dist_worker_dcp.py), and in one
process without a process group."""

from __future__ import annotations

import pytest

pytest.importorskip("mpi4py", reason="tocha.distributed runs on MPI: pip install mpi4py mpich")

import tocha as torch  # noqa: E402
import tocha.distributed.checkpoint as dcp  # noqa: E402
from tocha import nn  # noqa: E402


def test_dcp_tutorial_on_two_ranks(mpirun, tmp_path):
    proc = mpirun("dist_worker_dcp.py", n=2, launcher=True, timeout=90, args=[str(tmp_path)])
    found = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert proc.returncode == 0 and len(found) == 2 * 6, proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in found), proc.stdout


def test_dcp_in_one_process_without_a_group(tmp_path):
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    with pytest.warns(UserWarning, match="assuming the intent is to save in a single process"):
        dcp.save({"model": model.state_dict(), "epoch": 3, "ids": [1, 2]}, checkpoint_id=tmp_path)
    other = nn.Linear(3, 2)
    state = {"model": other.state_dict(), "epoch": 0, "ids": []}
    dcp.load(state, checkpoint_id=tmp_path, no_dist=True)
    assert torch.equal(other.weight, model.weight) and state["epoch"] == 3
    assert state["ids"] == [1, 2]
    with pytest.raises(dcp.CheckpointException, match="Missing key in checkpoint state_dict: x."):
        dcp.load({"x": torch.zeros(1)}, checkpoint_id=tmp_path, no_dist=True)
    assert not issubclass(dcp.CheckpointException, Exception)
    with pytest.raises(dcp.CheckpointException, match="FileNotFoundError"):
        dcp.load({"x": torch.zeros(1)}, checkpoint_id=tmp_path / "none", no_dist=True)
