"""Writing into existing tensors: `copy_`, `fill_`, `zero_`."""

from __future__ import annotations

import numbers

import numpy as np

from .._api import export
from .._backend import backend_of
from .._dispatch import broadcast_error, expect_tensor
from .._tensor import Tensor
from ._argcheck import fill_fits
from ._out import inplace
from .creation import full_like, warn_complex_to_real


def _values(self: Tensor, src: Tensor):
    """`src`'s data on self's device, as an array that broadcasts to self's shape."""
    data = src._data
    if src._device is not self._device:
        host = backend_of(src._device).to_host(data)
        data = backend_of(self._device).from_host(host, self._device)
    if data.dtype.kind == "c" and self._data.dtype.kind != "c":
        warn_complex_to_real()
        data = data.real
    return data


def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy `src` (broadcast to self's shape, cast to self's dtype, from any device) into
    self's memory; differentiable with respect to `src`. A Python number fills self."""
    if non_blocking is not False and non_blocking is not True:
        raise TypeError(
            f"copy_(): argument 'non_blocking' must be bool, not {type(non_blocking).__name__}"
        )
    if isinstance(src, (int, float, complex)):
        return self.fill_(src)
    expect_tensor("copy_", src, "other")
    _check_broadcast(src._data.shape, self._data.shape)
    return inplace(self, (src,), _cast_to, _copy_direct, self, src)


def _cast_to(self: Tensor, src: Tensor) -> Tensor:
    """`src` on self's device, of self's dtype and shape."""
    return src.to(self._device, self.dtype).expand(tuple(self.shape))


def _copy_direct(self: Tensor, src: Tensor) -> None:
    if src._data is not self._data:
        self._data[...] = _values(self, src)


def _check_broadcast(src_shape, shape) -> None:
    try:
        broadcast = np.broadcast_shapes(src_shape, shape)
    except ValueError:
        raise broadcast_error(tuple(shape), tuple(src_shape)) from None
    if broadcast != tuple(shape):
        raise RuntimeError(
            f"output with shape {list(shape)} doesn't match the broadcast shape {list(broadcast)}"
        )


def fill_(self: Tensor, value) -> Tensor:
    """Fill self with `value` (a number or a 0-dim tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        return copy_(self, value)
    return inplace(self, (), full_like, _fill_direct, self, value, fills=True)


def _fill_direct(self: Tensor, value) -> None:
    try:
        if value is None:  # NumPy would fill NaN
            raise TypeError
        data = self._data
        kind = type(value)
        # within float16's range an int fits every floating dtype, and NumPy refuses one
        # beyond an integer dtype (below); a float is checked unless it fills a float array
        if kind is int or kind is float:
            if not -65504 <= value <= 65504 or (kind is float and data.dtype.kind not in "fc"):
                value = fill_fits(value, self.dtype, data.size)
        elif kind is not bool:
            value = fill_fits(value, self.dtype, data.size)
        try:
            data.fill(value)
        except OverflowError:  # an int beyond an integer dtype: PyTorch's error, or it wraps
            data.fill(fill_fits(value, self.dtype, data.size))
    except (TypeError, ValueError):
        if isinstance(value, numbers.Number):
            raise
        raise TypeError(
            f"fill_(): argument 'value' (position 1) must be Number, not {type(value).__name__}"
        ) from None


def zero_(self: Tensor) -> Tensor:
    """Fill self with zeros."""
    return fill_(self, 0)


export(copy_, method=True, function=False)
export(fill_, method=True)
export(zero_, method=True)
