"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

from tocha import Tensor

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .adam import check_adam_args
from .optimizer import ParamsT, to_scalar

__all__ = ["Adamax"]


class Adamax(ElementwiseOptimizer):
    r"""Adamax, as ``torch.optim.Adamax``.

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g, \quad
        u \leftarrow \max(\beta_2 u, |g| + \epsilon), \quad
        \theta \leftarrow \theta - \frac{\gamma}{1-\beta_1^t} \frac{m}{u}

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: learning rate (default 2e-3).
        betas: coefficients of the running averages (default (0.9, 0.999)).
        eps: added to the norm (default 1e-8).
        weight_decay: L2 penalty (default 0).
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        maximize: maximize the objective instead of minimizing it.
        differentiable: not supported (must be False).
        capturable: accepted for compatibility; a step on CPU parameters raises, as in PyTorch.

    State per parameter: ``step``, ``exp_avg``, ``exp_inf``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _tensor_state(self, group):
        return (("exp_avg", 0.0), ("exp_inf", 0.0))

    def _coefficients(self, group, scalars):
        step = scalars[0]
        step += 1
        beta1, beta2 = group["betas"]
        return dict(
            step=float(step[0]),
            lr=to_scalar(group["lr"]),
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        F.adamax(xp, p, g, states[0], states[1], tmp, **c)
