"""Fixtures of the distributed tests: `mpirun` starts a worker script on several local ranks.

The tests skip, saying why, when no MPI can be found (mpi4py or mpiexec missing).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _mpiexec() -> str | None:
    if importlib.util.find_spec("mpi4py") is None:
        return None
    from tocha.distributed.run import find_mpiexec

    return find_mpiexec()


@pytest.fixture(scope="session")
def mpirun():
    """``mpirun(script, n=2, timeout=120, env=None, launcher=False)``: run the worker
    `script` (a file beside this one) on `n` ranks, through mpiexec or through
    ``python -m tocha.distributed.run``; returns the CompletedProcess (text)."""
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("no MPI found: pip install mpi4py mpich (mpi4py or mpiexec is missing)")

    def run(script: str, n: int = 2, timeout: float = 120, env=None, launcher=False, args=()):
        path = str(HERE / script)
        if launcher:
            launch = ["-m", "tocha.distributed.run", "--standalone", "--nproc_per_node", str(n)]
            command = [sys.executable, *launch]
        else:
            command = [mpiexec, "-n", str(n), sys.executable, "-u"]
        full_env = {**os.environ, "PYTHONPATH": str(HERE), **(env or {})}
        return subprocess.run(
            [*command, path, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
        )

    return run
