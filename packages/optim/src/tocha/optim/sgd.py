"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum and weight
decay."""

from __future__ import annotations

from tocha import Tensor

from . import _update_rules as F
from ._elementwise import ElementwiseOptimizer
from .optimizer import ParamsT, to_scalar

__all__ = ["SGD"]


class SGD(ElementwiseOptimizer):
    r"""Stochastic gradient descent, as ``torch.optim.SGD``.

    .. math::
        g \leftarrow \nabla f(\theta) + \lambda\theta, \quad
        b \leftarrow \mu b + (1 - \tau) g, \quad
        \theta \leftarrow \theta - \gamma\,(g + \mu b \text{ if nesterov else } b)

    Args:
        params: the tensors to optimize, or parameter groups (dicts).
        lr: learning rate :math:`\gamma` (default 1e-3).
        momentum: momentum factor :math:`\mu` (default 0).
        dampening: dampening :math:`\tau` of the momentum (default 0).
        weight_decay: L2 penalty :math:`\lambda` (default 0).
        nesterov: Nesterov momentum (needs a momentum and zero dampening).
        maximize: maximize the objective instead of minimizing it.
        foreach: the multi-tensor path (None: when a group has at least 8 parameters).
        differentiable: not supported (must be False).
        fused: taken as ``foreach``.

    Example:
        >>> opt = tocha.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _step_group(self, group) -> None:
        """Parameters with sparse gradients (``nn.Embedding(sparse=True)``) step one at a
        time on their densified gradients, as PyTorch's SGD allows; weight decay with a
        sparse gradient raises PyTorch's error."""
        sparse = [p for p in group["params"] if p.grad is not None and p.grad.is_sparse]
        if not sparse:
            return super()._step_group(group)
        if group["weight_decay"] != 0:
            raise RuntimeError(
                "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
            )
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if grad.is_sparse:
                p._ag.grad = grad.to_dense()
            try:
                self._single_step(group, p)
            finally:
                p._ag.grad = grad

    def _tensor_state(self, group):
        return (("momentum_buffer", None),) if group["momentum"] != 0 else ()

    def _scalar_state(self, group):
        return ()

    def _coefficients(self, group, scalars):
        return dict(
            lr=to_scalar(group["lr"]),
            momentum=group["momentum"],
            dampening=group["dampening"],
            weight_decay=group["weight_decay"],
            nesterov=group["nesterov"],
            maximize=group["maximize"],
        )

    def _update(self, xp, p, g, states, tmp, fresh, c):
        F.sgd(xp, p, g, states[0] if states else None, tmp, fresh=fresh, **c)
