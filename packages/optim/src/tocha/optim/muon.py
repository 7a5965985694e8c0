"""Muon: momentum whose update is orthogonalised by Newton-Schulz iterations, for the 2-D
parameters of hidden layers."""

from __future__ import annotations

import math

import tocha
from tocha import Tensor

from ._per_parameter import PerParameterOptimizer
from .optimizer import ParamsT, to_scalar

__all__ = ["Muon"]

_ADJUSTMENTS = ("original", "match_rms_adamw")


def _orthogonalized(update: Tensor, coefficients, steps: int, eps: float) -> Tensor:
    """The nearest semi-orthogonal matrix to `update`, approximately: from
    ``X = update / (||update|| + eps)`` (transposed when it has more rows than columns),
    `steps` iterations of ``X <- a X + (b A + c A^2) X`` with ``A = X X^T``, in the
    update's own precision (PyTorch rounds its iterations to bfloat16: updates agree to
    bfloat16's precision)."""
    a, b, c = coefficients
    x = update / (update.norm() + eps)
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.mT
    for _ in range(steps):
        gram = x @ x.mT
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.mT if tall else x


def _adjusted_lr(lr: float, shape, adjust_lr_fn: str | None) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * lr * math.sqrt(max(rows, cols))
    return lr * math.sqrt(max(1.0, rows / cols))


class Muon(PerParameterOptimizer):
    r"""Muon, as ``torch.optim.Muon``, for 2-D parameters only:
    :math:`B \leftarrow \mu B + (1 - \mu) g` (PyTorch's implementation: its documentation
    writes :math:`\mu B + g`, which differs by a scale the orthogonalisation removes, but
    not in the Nesterov mix); the update :math:`\tilde B = (1 - \mu) g + \mu B` (Nesterov)
    or :math:`B`; :math:`O = \mathrm{NS}^{(a,b,c)}_k(\tilde B)` (Newton-Schulz
    orthogonalisation); :math:`\theta \leftarrow (1 - \gamma\lambda)\theta - \gamma' O`, with
    :math:`\gamma' = \gamma \sqrt{\max(1, A/B)}` for an ``(A, B)`` parameter ("original",
    the default) or :math:`0.2\,\gamma\sqrt{\max(A, B)}` (``adjust_lr_fn="match_rms_adamw"``).
    The state is ``momentum_buffer``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
        eps: float = 1e-07,
        ns_steps: int = 5,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUSTMENTS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(
            lr=lr,
            weight_decay=weight_decay,
            momentum=momentum,
            nesterov=nesterov,
            ns_coefficients=ns_coefficients,
            eps=eps,
            ns_steps=ns_steps,
            adjust_lr_fn=adjust_lr_fn,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def _update(self, group, p: Tensor) -> None:
        grad = p.grad
        if grad.is_sparse:
            raise RuntimeError("Muon does not support sparse gradients")
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = tocha.zeros_like(grad)
        buffer = state["momentum_buffer"]
        momentum = group["momentum"]
        buffer.lerp_(grad, 1 - momentum)
        update = grad.lerp(buffer, momentum) if group["nesterov"] else buffer
        update = _orthogonalized(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        lr = to_scalar(group["lr"])
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(update, alpha=-_adjusted_lr(lr, p.shape, group["adjust_lr_fn"]))
