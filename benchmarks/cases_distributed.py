"""Distributed benchmarks (issue tocha-distributed), measured on 2 local ranks.

The figures come from one run of dist_bench_worker.py under ``mpiexec -n 2``, started on the
first call of any of these cases; the cases then replay them through a clock that advances by
the measured seconds at each call, so the table shows them beside the others.

- ``dist.all_reduce`` of 100 MB float32 beside mpi4py's own ``Allreduce`` of a NumPy buffer of
  the same size, measured in the same run (in the NumPy column). Target: tocha's throughput
  at least 0.8x mpi4py's.
- One DDP training step on 2 ranks beside the same step in one process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness import Case, numpy_throughput

WORKER = Path(__file__).resolve().parent / "dist_bench_worker.py"


class _Run:
    """The 2-rank run, made once, and the clock that replays its figures."""

    def __init__(self) -> None:
        self.figures = None
        self.now = 0.0

    def measure(self) -> dict:
        if self.figures is None:
            try:
                from tocha.distributed.run import find_mpiexec
            except ImportError as exc:
                raise ImportError(f"tocha-distributed is not installed ({exc})") from exc
            mpiexec = find_mpiexec()
            if mpiexec is None:
                raise ImportError("no mpiexec: pip install mpich")
            proc = subprocess.run(
                [mpiexec, "-n", "2", sys.executable, str(WORKER)],
                capture_output=True,
                text=True,
                timeout=600,
                env=dict(os.environ),
            )
            lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
            if proc.returncode or not lines:
                raise RuntimeError(f"the 2-rank benchmark failed:\n{proc.stdout}{proc.stderr}")
            self.figures = json.loads(lines[0].removeprefix("RESULT "))
        return self.figures

    def clock(self) -> float:
        return self.now

    def replay(self, key: str):
        """A case callable that advances the clock by the measured seconds of `key`."""

        def call(lib, *inputs) -> None:
            self.now += self.measure()[key]

        return call


_RUN = _Run()
CASES = [
    Case(
        "dist.all_reduce(t), 2 ranks (numpy: mpi4py Allreduce)",
        "100 MB float32",
        lambda: (),
        _RUN.replay("tocha_all_reduce"),
        torch=None,
        numpy=_RUN.replay("mpi4py_all_reduce"),
        loops=1,
        repeats=1,
        clock=_RUN.clock,
        goal=numpy_throughput(0.8),
    ),
    Case(
        "DDP training step, 2 ranks",
        "MLP 256-1024-1024-10, batch 64/rank",
        lambda: (),
        _RUN.replay("ddp_step"),
        torch=None,
        loops=1,
        repeats=1,
        clock=_RUN.clock,
    ),
    Case(
        "training step, 1 process",
        "MLP 256-1024-1024-10, batch 64",
        lambda: (),
        _RUN.replay("single_step"),
        torch=None,
        loops=1,
        repeats=1,
        clock=_RUN.clock,
    ),
]
