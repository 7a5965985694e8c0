"""``Join``, as ``torch.distributed.algorithms.join``: the context manager for uneven inputs
over several joinables, ``with Join([ddp_model, zero_optimizer]):``."""

from __future__ import annotations

from .._ddp import DistributedDataParallel
from .._ddp_join import DDPJoin

__all__ = ["Join"]


class Join:
    """Let ranks with fewer inputs keep pace: while the others train, a rank that has left
    its loop runs each joinable's shadow of an iteration (DDP's gradient reduction with
    zero gradients, then a `ZeroRedundancyOptimizer` step).

    Args:
        joinables: a `DistributedDataParallel`, then optionally the
            `ZeroRedundancyOptimizer` stepping its parameters.
        enable: False turns the context manager off.
        throw_on_early_termination: raise RuntimeError on every rank as soon as one runs
            out of inputs.
        **kwargs: ``divide_by_initial_world_size`` (default True).
    """

    def __init__(
        self,
        joinables: list,
        enable: bool = True,
        throw_on_early_termination: bool = False,
        **kwargs,
    ) -> None:
        if not joinables:
            raise ValueError("The join context manager requires at least one joinable")
        models = [j for j in joinables if isinstance(j, DistributedDataParallel)]
        if len(models) != 1:
            raise NotImplementedError(
                "tocha's Join takes exactly one DistributedDataParallel among its joinables "
                "(and optimizers that step its parameters)"
            )
        others = tuple(j for j in joinables if j is not models[0])
        divide = kwargs.get("divide_by_initial_world_size", True)
        self._context = DDPJoin(models[0], divide, enable, throw_on_early_termination, others)

    def __enter__(self):
        self._context.__enter__()
        return self

    def __exit__(self, kind, value, trace) -> None:
        self._context.__exit__(kind, value, trace)
