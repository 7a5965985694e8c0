"""Helpers shared by the distributions: broadcasting parameters, converting between
probabilities and logits, lazily computed attributes and packing triangular matrices."""

from __future__ import annotations

import numbers
from functools import update_wrapper
from typing import Any

import tocha

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

_EMPTY_SHAPE = tocha.Size()  # the default sample shape
euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values: Any) -> tuple[tocha.Tensor, ...]:
    """Broadcasts numbers and tensors to one shape. Numbers become tensors of the first
    tensor's dtype and device (of the default dtype when all are numbers)."""
    if not all(isinstance(v, (tocha.Tensor, numbers.Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "tocha.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, tocha.Tensor) for v in values):
        like = next((v for v in values if isinstance(v, tocha.Tensor)), None)
        options: dict[str, Any] = {"dtype": tocha.get_default_dtype()}
        if like is not None:
            options = {"dtype": like.dtype, "device": like.device}
        values = tuple(
            v if isinstance(v, tocha.Tensor) else tocha.tensor(v, **options) for v in values
        )
    return tuple(tocha.broadcast_tensors(*values))


def _format(value: Any) -> str:
    """`value` as PyTorch's f-strings show it: a tensor without dimensions as its number,
    any other value as its str."""
    if isinstance(value, tocha.Tensor) and value.dim() == 0:
        return format(value.item())
    return str(value)


def _standard_normal(shape, dtype, device, generator=None) -> tocha.Tensor:
    return tocha.randn(tuple(shape), dtype=dtype, device=device, generator=generator)


def _sum_rightmost(value: tocha.Tensor, dim: int) -> tocha.Tensor:
    """Sums out the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: tocha.Tensor, is_binary: bool = False) -> tocha.Tensor:
    """Probabilities from logits: the sigmoid when `is_binary`, else a softmax over the
    last dimension."""
    if is_binary:
        return tocha.sigmoid(logits)
    return tocha.softmax(logits, dim=-1)


def clamp_probs(probs: tocha.Tensor) -> tocha.Tensor:
    """Clamps probabilities into [eps, 1 - eps] of their dtype."""
    eps = tocha.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: tocha.Tensor, is_binary: bool = False) -> tocha.Tensor:
    """Logits from probabilities: log-odds when `is_binary`, else log-probabilities."""
    clamped = clamp_probs(probs)
    if is_binary:
        return tocha.log(clamped) - tocha.log1p(-clamped)
    return tocha.log(clamped)


class lazy_property:
    """A property computed on first access and then stored on the instance (its value is
    built with grad mode on, so that it stays differentiable)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with tocha.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy property looks like on its class: both a lazy_property and a property,
    so that documentation tools see a property."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: tocha.Tensor, diag: int = 0) -> tocha.Tensor:
    """The lower triangle of `mat` (`(..., n, n)`), row by row, as a vector
    `(..., m)`; `diag` shifts the diagonal as `tril`'s offset does."""
    n = mat.shape[-1]
    rows, cols = tocha.tril_indices(n, n, offset=diag, device=mat.device)
    return mat[..., rows, cols]


def _tril_size(n: int, diag: int) -> int:
    return sum(max(0, min(n, row + diag + 1)) for row in range(n))


def vec_to_tril_matrix(vec: tocha.Tensor, diag: int = 0) -> tocha.Tensor:
    """The inverse of :func:`tril_matrix_to_vec`: `(..., m)` to the `(..., n, n)` matrix
    with zeros above the triangle."""
    m = vec.shape[-1]
    n = 0
    while _tril_size(n, diag) < m:
        n += 1
    if _tril_size(n, diag) != m:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    rows, cols = tocha.tril_indices(n, n, offset=diag)
    where = tocha.zeros(n * n, dtype=tocha.int64)
    where[rows * n + cols] = tocha.arange(1, m + 1)
    padded = tocha.cat([vec.new_zeros(tuple(vec.shape[:-1]) + (1,)), vec], dim=-1)
    flat = padded.index_select(-1, where.to(vec.device))
    return flat.reshape(tuple(vec.shape[:-1]) + (n, n))
