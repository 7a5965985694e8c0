"""Rprop: resilient backpropagation."""

from __future__ import annotations

from tocha import Tensor

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .optimizer import ParamsT

__all__ = ["Rprop"]


class Rprop(ElementwiseOptimizer):
    r"""Rprop, as ``torch.optim.Rprop``: each element has its own step size, multiplied by
    ``etaplus`` while its gradient keeps its sign and by ``etaminus`` when the sign flips
    (that step then skips the element); the parameter moves by the step size against the
    gradient's sign.

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: the initial step size (default 1e-2).
        etas: ``(etaminus, etaplus)`` (default (0.5, 1.2)).
        step_sizes: the least and greatest step sizes (default (1e-6, 50)).
        capturable: accepted for compatibility; a step on CPU parameters raises, as in PyTorch.
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        maximize: maximize the objective instead of minimizing it.
        differentiable: not supported (must be False).

    State per parameter: ``step``, ``prev``, ``step_size``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _tensor_state(self, group):
        return (("prev", 0.0), ("step_size", "lr"))

    def _coefficients(self, group, scalars):
        scalars[0] += 1
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        return dict(
            etaminus=etaminus,
            etaplus=etaplus,
            step_size_min=step_size_min,
            step_size_max=step_size_max,
            maximize=group["maximize"],
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        F.rprop(xp, p, g, states[0], states[1], tmp, **c)
