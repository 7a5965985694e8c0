"""`make_tensor`, as ``torch.testing.make_tensor``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import tocha
from tocha import Tensor

__all__ = ["make_tensor"]


def _default_range(dtype) -> tuple[int, int]:
    """PyTorch's documented value range [low, high) of each dtype."""
    if dtype is tocha.bool:
        return 0, 2
    if dtype is tocha.uint8:
        return 0, 10
    if dtype.is_floating_point or dtype.is_complex:
        return -9, 9
    return -9, 10


def _clamped(low, high, dtype) -> tuple[Any, Any]:
    """`low` and `high` checked, and clamped to the finite values of `dtype`."""
    default_low, default_high = _default_range(dtype)
    low = default_low if low is None else low
    high = default_high if high is None else high
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if dtype.is_floating_point or dtype.is_complex:
        real = tocha.float32 if dtype is tocha.complex64 else tocha.float64
        info = tocha.finfo(dtype if dtype.is_floating_point else real)
    else:
        info = tocha.iinfo(dtype)
    if low == high and (dtype.is_floating_point or dtype.is_complex):
        warnings.warn(
            "Passing `low==high` to `tocha.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. Use `tocha.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    low, high = max(low, info.min), min(high, info.max)
    if not (dtype.is_floating_point or dtype.is_complex):
        low, high = math.ceil(low), math.ceil(high)
    return low, high


def _uniform(shape, dtype, device, low, high) -> Tensor:
    """Uniform values in [low, high): a draw that rounds up to `high` in a narrow dtype
    becomes the largest value below it."""
    if low == high:
        return tocha.full(shape, low, dtype=dtype, device=device)
    values = tocha.empty(shape, dtype=dtype, device=device).uniform_(low, high)
    top = tocha.tensor(high, dtype=dtype, device=device)
    below = tocha.nextafter(top, tocha.tensor(-math.inf, dtype=dtype, device=device))
    return tocha.where(values >= top, below, values)


def make_tensor(
    *shape: int | tocha.Size | list[int] | tuple[int, ...],
    dtype: tocha.dtype,
    device: str | tocha.device,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """A tensor of `shape`, `dtype` and `device` filled with random values in
    ``[low, high)``, as ``torch.testing.make_tensor``.

    Without `low` and `high` the range is the dtype's: bool ``[0, 2)``, uint8 ``[0, 10)``,
    signed integers ``[-9, 10)``, floating and complex types ``[-9, 9)`` (for complex types,
    each of the real and imaginary parts). Given bounds are clamped to the dtype's finite
    values; bool ignores them. `noncontiguous` returns a view with doubled strides in its last
    dimension (when it has more than one element); `exclude_zero` replaces zeros by one (bool
    and integers) or by the dtype's smallest positive normal number (its real part, for
    complex types).

    Examples:
        >>> tocha.testing.make_tensor(2, 3, dtype=tocha.int64, device="cpu", low=0, high=5).shape
        tocha.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but "
            f"got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    floating = dtype.is_floating_point or dtype.is_complex
    if requires_grad and not floating:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
            f"dtype={dtype}"
        )
    device = tocha.device(device)
    if dtype is tocha.bool:
        result = tocha.randint(0, 2, shape, dtype=dtype, device=device)
    else:
        low, high = _clamped(low, high, dtype)
        if dtype.is_complex:
            part = tocha.float32 if dtype is tocha.complex64 else tocha.float64
            real = _uniform(shape, part, device, low, high)
            imag = _uniform(shape, part, device, low, high)
            result = tocha.complex(real, imag)
        elif floating:
            result = _uniform(shape, dtype, device, low, high)
        else:
            result = tocha.randint(low, high, shape, dtype=dtype, device=device)
    if exclude_zero:
        result = _without_zeros(result)
    if noncontiguous and result.numel() > 1:
        wider = tocha.empty((*result.shape[:-1], 2 * result.shape[-1]), dtype=dtype, device=device)
        result = wider[..., ::2].copy_(result)
    elif memory_format is not None:
        result = result.contiguous(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _without_zeros(t: Tensor) -> Tensor:
    dtype = t.dtype
    if dtype.is_complex:
        part = tocha.float32 if dtype is tocha.complex64 else tocha.float64
        replacement: complex | float | int = complex(tocha.finfo(part).tiny, 0.0)
    elif dtype.is_floating_point:
        replacement = tocha.finfo(dtype).tiny
    else:
        replacement = 1
    return tocha.where(t == 0, tocha.tensor(replacement, dtype=dtype, device=t.device), t)
