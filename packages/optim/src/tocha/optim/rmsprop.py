"""RMSprop."""

from __future__ import annotations

from tocha import Tensor

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .optimizer import ParamsT, to_scalar

__all__ = ["RMSprop"]


class RMSprop(ElementwiseOptimizer):
    r"""RMSprop, as ``torch.optim.RMSprop``.

    .. math::
        v \leftarrow \alpha v + (1-\alpha) g^2, \quad
        \theta \leftarrow \theta - \gamma \frac{g}{\sqrt{v - \bar g^2} + \epsilon}

    (:math:`\bar g`, the running average of the gradient, only when centered; with momentum
    the quotient accumulates in a buffer first).

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: learning rate (default 1e-2).
        alpha: smoothing constant (default 0.99).
        eps: added to the denominator (default 1e-8).
        weight_decay: L2 penalty (default 0).
        momentum: momentum factor (default 0).
        centered: normalize by the estimated variance of the gradient.
        capturable: accepted for compatibility; a step on CPU parameters raises, as in PyTorch.
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        maximize: maximize the objective instead of minimizing it.
        differentiable: not supported (must be False).

    State per parameter: ``step``, ``square_avg``, and ``momentum_buffer`` (momentum > 0),
    ``grad_avg`` (centered).
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _tensor_state(self, group):
        spec = [("square_avg", 0.0)]
        if group["momentum"] > 0:
            spec.append(("momentum_buffer", 0.0))
        if group["centered"]:
            spec.append(("grad_avg", 0.0))
        return tuple(spec)

    def _coefficients(self, group, scalars):
        scalars[0] += 1
        return dict(
            lr=to_scalar(group["lr"]),
            alpha=group["alpha"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            momentum=group["momentum"],
            centered=group["centered"],
            maximize=group["maximize"],
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        rest = iter(states[1:])
        buf = next(rest) if c["momentum"] > 0 else None
        grad_avg = next(rest) if c["centered"] else None
        F.rmsprop(xp, p, g, states[0], buf, grad_avg, tmp, **c)
