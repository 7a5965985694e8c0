"""RAdam: Adam with a rectified adaptive learning rate."""

from __future__ import annotations

from tocha import Tensor

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .adam import check_adam_args
from .optimizer import ParamsT, to_scalar

__all__ = ["RAdam"]


class RAdam(ElementwiseOptimizer):
    r"""RAdam, as ``torch.optim.RAdam``: while the variance of the adaptive rate is
    intractable (:math:`\rho_t \le 5`) it steps as SGD with momentum, then as Adam scaled by
    the rectification term.

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages (default (0.9, 0.999)).
        eps: added to the denominator (default 1e-8).
        weight_decay: L2 penalty, or decoupled decay (default 0).
        decoupled_weight_decay: decay the parameters as AdamW does.
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        maximize: maximize the objective instead of minimizing it.
        capturable: accepted for compatibility; a step on CPU parameters raises, as in PyTorch.
        differentiable: not supported (must be False).

    State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _tensor_state(self, group):
        return (("exp_avg", 0.0), ("exp_avg_sq", 0.0))

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
            decoupled_weight_decay=group["decoupled_weight_decay"],
            maximize=group["maximize"],
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        F.radam(xp, p, g, states[0], states[1], tmp, **c)
