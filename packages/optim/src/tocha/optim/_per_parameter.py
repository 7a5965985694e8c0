"""The step of optimizers that update each parameter on its own: Adafactor, Muon, SparseAdam."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import tocha
from tocha import Tensor

from .optimizer import Optimizer

__all__ = ["PerParameterOptimizer"]


class PerParameterOptimizer(Optimizer):
    """An optimizer whose `step` calls ``_update(group, p)`` for each parameter that has a
    gradient, under ``no_grad`` (NumPy silent on inf and NaN, as PyTorch)."""

    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Update every parameter that has a gradient (evaluating `closure` first if given)."""
        loss = None
        if closure is not None:
            with tocha.enable_grad():
                loss = closure()
        with tocha.no_grad(), np.errstate(all="ignore"):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(group, p)
        return loss

    def _update(self, group: dict, p: Tensor) -> None:
        raise NotImplementedError
