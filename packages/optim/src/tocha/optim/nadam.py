"""NAdam: Adam with Nesterov momentum."""

from __future__ import annotations

from tocha import Tensor

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .adam import check_adam_args
from .optimizer import ParamsT, to_scalar

__all__ = ["NAdam"]


class NAdam(ElementwiseOptimizer):
    r"""NAdam, as ``torch.optim.NAdam``.

    The momentum coefficient of step :math:`t` is
    :math:`\mu_t = \beta_1 (1 - \tfrac12 0.96^{t\psi})` (:math:`\psi` the momentum decay);
    the update mixes the gradient and the running average weighted by :math:`\mu_t`,
    :math:`\mu_{t+1}` and their running product.

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: learning rate (default 2e-3).
        betas: coefficients of the running averages (default (0.9, 0.999)).
        eps: added to the denominator (default 1e-8).
        weight_decay: L2 penalty, or decoupled decay (default 0).
        momentum_decay: :math:`\psi` (default 4e-3).
        decoupled_weight_decay: decay the parameters as AdamW does.
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        maximize: maximize the objective instead of minimizing it.
        capturable: accepted for compatibility; a step on CPU parameters raises, as in PyTorch.
        differentiable: not supported (must be False).

    State per parameter: ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``.
    """

    capturable_tensors = "params, mu_products and state_steps"

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _scalar_state(self, group):
        return (("step", 0.0), ("mu_product", 1.0))

    def _tensor_state(self, group):
        return (("exp_avg", 0.0), ("exp_avg_sq", 0.0))

    def _coefficients(self, group, scalars):
        step_t, mu_product = scalars
        step_t += 1
        step = float(step_t[0])
        beta1, beta2 = group["betas"]
        momentum_decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        return dict(
            lr=to_scalar(group["lr"]),
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            decoupled_weight_decay=group["decoupled_weight_decay"],
            maximize=group["maximize"],
            bias_correction2=1 - beta2**step,
            mu=mu,
            mu_next=mu_next,
            mu_product=float(mu_product[0]),
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        F.nadam(xp, p, g, states[0], states[1], tmp, **c)
