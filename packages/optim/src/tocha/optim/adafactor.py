"""Adafactor: Adam-like steps whose second moment of a matrix is kept as a row and a column
factor (memory of the rows plus the columns, not of every entry)."""

from __future__ import annotations

import math

import tocha
from tocha import Tensor

from ._per_parameter import PerParameterOptimizer
from .optimizer import ParamsT, to_scalar

__all__ = ["Adafactor"]


class Adafactor(PerParameterOptimizer):
    r"""Adafactor, as ``torch.optim.Adafactor``. At step :math:`t`, with
    :math:`\hat\beta_{2,t} = 1 - t^{\tau}` (:math:`\tau` = `beta2_decay`),
    :math:`\rho_t = \min(\mathrm{lr}, 1/\sqrt t)` and
    :math:`\alpha_t = \max(\epsilon_2, \mathrm{RMS}(\theta))\,\rho_t`: the parameter decays
    by :math:`1 - \mathrm{lr}\,\lambda`; the second moment :math:`\hat V` of a tensor of 2 or
    more dims is the product of running means of :math:`G^2` over its last dim (``row_var``)
    and over the one before (``col_var``), divided by the rows' mean (at least
    :math:`\epsilon_1`); of a vector or a scalar it is the running mean itself
    (``variance``). Then :math:`U = G / \max(\sqrt{\hat V}, \epsilon_1)` and
    :math:`\theta \leftarrow \theta - \alpha_t U / \max(1, \mathrm{RMS}(U)/d)`.
    :math:`\epsilon_1` None means the dtype's machine epsilon.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(
            lr=lr,
            beta2_decay=beta2_decay,
            eps=eps,
            d=d,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(self, group, p: Tensor) -> None:
        grad = p.grad
        if grad.is_sparse:
            raise RuntimeError("Adafactor does not support sparse gradients")
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        if group["maximize"]:
            grad = -grad
        state = self.state[p]
        factored = p.dim() > 1
        if not state:
            state["step"] = tocha.tensor(0.0)
            if factored:
                state["row_var"] = p.new_zeros(p.shape[:-1] + (1,))
                state["col_var"] = p.new_zeros(p.shape[:-2] + (1, p.shape[-1]))
            else:
                state["variance"] = tocha.zeros_like(p)
        state["step"] += 1
        t = float(state["step"])
        lr = to_scalar(group["lr"])
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = tocha.finfo(p.dtype).eps
        beta2 = 1 - t ** group["beta2_decay"]
        rho = min(lr, 1 / math.sqrt(t))
        alpha = max(eps2, float(p.norm(2)) / math.sqrt(p.numel())) * rho
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        square = grad * grad
        if factored:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_(square.mean(-1, keepdim=True), 1 - beta2)
            col_var.lerp_(square.mean(-2, keepdim=True), 1 - beta2)
            variance = row_var @ col_var
            variance /= row_var.mean(-2, keepdim=True).clamp(min=eps1)
        else:
            state["variance"].lerp_(square, 1 - beta2)
            variance = state["variance"].clone()
        update = variance.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, float(update.norm(2)) / (math.sqrt(update.numel()) * group["d"]))
        p.add_(update, alpha=-alpha / denom)
