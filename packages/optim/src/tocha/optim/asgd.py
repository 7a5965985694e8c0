"""ASGD: averaged stochastic gradient descent."""

from __future__ import annotations

from tocha import Tensor

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .optimizer import ParamsT, to_scalar

__all__ = ["ASGD"]


class ASGD(ElementwiseOptimizer):
    r"""Averaged SGD, as ``torch.optim.ASGD``.

    .. math::
        \theta \leftarrow \theta (1 - \lambda\eta_t) - \eta_t g, \quad
        a \leftarrow a + \mu_t (\theta - a), \quad
        \eta_{t+1} = \frac{\gamma}{(1 + \lambda\gamma t)^\alpha}, \quad
        \mu_{t+1} = \frac{1}{\max(1, t - t_0)}

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: learning rate :math:`\gamma` (default 1e-2).
        lambd: decay term :math:`\lambda` (default 1e-4).
        alpha: power of the eta update (default 0.75).
        t0: the step at which averaging starts (default 1e6).
        weight_decay: L2 penalty (default 0).
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        maximize: maximize the objective instead of minimizing it.
        differentiable: not supported (must be False).
        capturable: accepted for compatibility; a step on CPU parameters raises, as in PyTorch.

    State per parameter: ``step``, ``eta``, ``mu``, ``ax`` (the average).
    """

    capturable_tensors = "params, mus, etas, and state_steps"

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _scalar_state(self, group):
        return (("step", 0.0), ("eta", "lr"), ("mu", 1.0))

    def _tensor_state(self, group):
        return (("ax", 0.0),)

    def _coefficients(self, group, scalars):
        step_t, eta, mu = scalars
        eta_value, mu_value = float(eta[0]), float(mu[0])
        step_t += 1
        step = float(step_t[0])
        lr, lambd = to_scalar(group["lr"]), group["lambd"]
        eta[...] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        mu[...] = 1 / max(1, step - group["t0"])
        return dict(
            lambd=lambd,
            eta=eta_value,
            mu=mu_value,
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        F.asgd(xp, p, g, states[0], tmp, **c)
