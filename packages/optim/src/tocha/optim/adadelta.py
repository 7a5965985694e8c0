"""Adadelta."""

from __future__ import annotations

from tocha import Tensor

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .optimizer import ParamsT, to_scalar

__all__ = ["Adadelta"]


class Adadelta(ElementwiseOptimizer):
    r"""Adadelta, as ``torch.optim.Adadelta``.

    .. math::
        v \leftarrow \rho v + (1-\rho) g^2, \quad
        \Delta \leftarrow \frac{\sqrt{u + \epsilon}}{\sqrt{v + \epsilon}} g, \quad
        u \leftarrow \rho u + (1-\rho) \Delta^2, \quad \theta \leftarrow \theta - \gamma\Delta

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: coefficient that scales the delta (default 1.0).
        rho: coefficient of the running averages (default 0.9).
        eps: added for numerical stability (default 1e-6).
        weight_decay: L2 penalty (default 0).
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        capturable: accepted for compatibility; a step on CPU parameters raises, as in PyTorch.
        maximize: maximize the objective instead of minimizing it.
        differentiable: not supported (must be False).

    State per parameter: ``step``, ``square_avg``, ``acc_delta``.
    """

    capturable_devices = ("cuda", "xpu", "hpu", "privateuseone")

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _tensor_state(self, group):
        return (("square_avg", 0.0), ("acc_delta", 0.0))

    def _coefficients(self, group, scalars):
        scalars[0] += 1
        return dict(
            lr=to_scalar(group["lr"]),
            rho=group["rho"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        F.adadelta(xp, p, g, states[0], states[1], tmp, **c)
