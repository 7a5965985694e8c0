"""Uneven inputs: ``with ddp.join():`` (and `algorithms.join.Join`) lets ranks that run out of
batches early keep pace with the others.

While the context is on, every training forward of DDP first all-reduces a count of the
ranks still training. A rank that leaves the loop then shadows the others at each of their
iterations until the count is zero: it joins that count with 0, receives the buffers, and
takes part in DDP's gradient reductions with zeros (so the averages keep their divisor, the
initial world size, unless ``divide_by_initial_world_size=False``), its own ``.grad`` left
as they are, then runs the other joinables' steps (a `ZeroRedundancyOptimizer` steps its
share with those gradients and broadcasts it), as PyTorch's join hooks do. At the end,
every rank takes the parameters and buffers of the rank that joined last.
"""

from __future__ import annotations

import numpy as np

from ._types import ReduceOp

__all__ = ["DDPJoin", "EARLY_TERMINATION"]

EARLY_TERMINATION = "Detected at least one rank that exhausted inputs. Throwing across all ranks."


class DDPJoin:
    """The context manager `DistributedDataParallel.join` returns."""

    def __init__(
        self,
        ddp,
        divide_by_initial_world_size: bool = True,
        enable: bool = True,
        throw_on_early_termination: bool = False,
        others: tuple = (),
    ) -> None:
        self.ddp = ddp
        self.divide_by_initial_world_size = divide_by_initial_world_size
        self.enable = enable
        self.throw_on_early_termination = throw_on_early_termination
        self.others = others
        self.steps = 0

    def __enter__(self):
        if self.enable:
            self.ddp._join = self
        return self

    def __exit__(self, kind, value, trace) -> None:
        if not self.enable:
            return
        try:
            if kind is None:
                self._shadow()
        finally:
            self.ddp._join = None
            self.ddp._active = None

    def count(self) -> int:
        """All-reduce 1 from a training rank: the number of ranks still training."""
        self.steps += 1
        return self._all_reduce(1)

    def check(self, active: int) -> None:
        """On a training rank: raise when another has run out (``throw_on_early_termination``)."""
        if self.throw_on_early_termination and active < self.ddp.process_group.size():
            raise RuntimeError(EARLY_TERMINATION)
        if not self.divide_by_initial_world_size:
            self.ddp._active = active

    def _all_reduce(self, value: int) -> int:
        flag = np.array([value], np.int64)
        self.ddp.process_group._mpi.allreduce(flag, ReduceOp.SUM).wait()
        return int(flag[0])

    def _shadow(self) -> None:
        ddp = self.ddp
        while True:
            active = self._all_reduce(0)
            if active == 0:
                break
            if self.throw_on_early_termination:
                raise RuntimeError(f"Rank {ddp.process_group.rank()} exhausted all inputs.")
            ddp._active = None if self.divide_by_initial_world_size else active
            ddp.shadow_step()
            for other in self.others:
                other.step()
        self._sync_model()

    def _sync_model(self) -> None:
        """Give every rank the parameters and buffers of the rank that joined last (the
        highest rank among them): the ranks that joined early did not step."""
        g = self.ddp.process_group
        mine = np.array([self.steps, g.rank()], np.int64)
        every = np.empty((g.size(), 2), np.int64)
        g._mpi.allgather(every, mine, "join's model sync").wait()
        root = int(max(range(g.size()), key=lambda r: (every[r, 0], every[r, 1])))
        module = self.ddp.module
        self.ddp._broadcast([*module.parameters(), *module.buffers()], root)
