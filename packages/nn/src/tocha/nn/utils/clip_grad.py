"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm,
clip_grads_with_norm_, as ``torch.nn.utils.clip_grad``."""

from __future__ import annotations

import math

import tocha
from tocha import Tensor

__all__ = [
    "clip_grad_norm_",
    "clip_grad_norm",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]


def _tensors(values) -> list:
    return [values] if isinstance(values, Tensor) else list(values)


def get_total_norm(
    tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach: bool | None = None
) -> Tensor:
    """The `norm_type` norm of all `tensors` together (as if concatenated)."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tocha.tensor(0.0)
    with tocha.no_grad():
        norms = [t.norm(norm_type) for t in tensors]
        device = norms[0].device
        total = tocha.stack([n.to(device) for n in norms]).norm(norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(
    parameters, max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    """Scale the gradients in place by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with tocha.no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device, g.dtype))


def clip_grad_norm_(
    parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients of `parameters` in place so that their total `norm_type` norm is
    at most `max_norm`; returns the total norm before clipping.

    Example:
        >>> total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    parameters = _tensors(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(
    parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated alias of `clip_grad_norm_`."""
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp the gradients of `parameters` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with tocha.no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)
