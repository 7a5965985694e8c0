"""The error path of functions that read their arguments' attributes directly: where such a
read failed with an AttributeError, PyTorch's TypeError names the argument that is not a
Tensor (or not a dtype). Called only after the failure, so the fast path pays nothing."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype
from .._dispatch import expect_tensors, not_a_tensor
from .._tensor import Tensor


def check_tensors(fn_name: str, *named: tuple[str, object]) -> None:
    """Raise PyTorch's TypeError for the first ``(argument, value)`` pair whose value is not
    a Tensor; positions count from 1 in the order given."""
    for position, (argument, value) in enumerate(named, 1):
        if not isinstance(value, Tensor):
            raise not_a_tensor(fn_name, value, argument, position)


def check_tensor_list(fn_name: str, tensors, argument: str = "tensors") -> None:
    """Raise PyTorch's TypeError when `tensors` (the first argument) is not a tuple or list
    of Tensors."""
    if not isinstance(tensors, (tuple, list)):
        raise TypeError(
            f"{fn_name}(): argument '{argument}' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    expect_tensors(tensors, 0)


def int_arg(fn_name: str, value, argument: str) -> int:
    """An int argument as PyTorch's parser reads it: a TypeError for a bool or a non-integral
    value, a ValueError beyond int64."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{fn_name}(): argument '{argument}' must be int, not {type(value).__name__}"
        )
    if not -(2**63) <= value < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return int(value)


def index_arg(fn_name: str, value, argument: str, position: int | None = None) -> int:
    """An int argument as PyTorch's parser reads it, for the failure branch of
    ``type(value) is int and -(2**63) <= value < 2**63``: an integer 0-dim tensor or NumPy
    integer is read as its value; a bool, a float or anything else is its TypeError (naming
    the argument's `position` where PyTorch's message does), an int beyond int64 its
    ValueError."""
    if isinstance(value, Tensor):
        integral = value._data.ndim == 0 and value._data.dtype.kind in "iu"
    else:
        integral = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not integral:
        where = "" if position is None else f" (position {position})"
        raise TypeError(
            f"{fn_name}(): argument '{argument}'{where} must be int, not {type(value).__name__}"
        )
    value = int(value)
    if not -(2**63) <= value < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return value


def slice_args(fn_name: str, start, end, step) -> slice:
    """The slice of a ``start:end:step`` given as arguments, each read as PyTorch's parser
    reads an int (`start` and `end` may be None)."""
    if start is not None:
        start = index_arg(fn_name, start, "start")
    if end is not None:
        end = index_arg(fn_name, end, "end")
    return slice(start, end, index_arg(fn_name, step, "step"))


def flag(fn_name: str, value, argument: str) -> bool:
    """A bool argument read where it is used (in place of ``bool(value)``): PyTorch's
    TypeError for anything else (an int, a string, None)."""
    if value is True or value is False:
        return value
    raise TypeError(f"{fn_name}(): argument '{argument}' must be bool, not {type(value).__name__}")


def check_bool(fn_name: str, value, argument: str, position: int | None = None) -> None:
    """PyTorch's TypeError for a flag that is not a bool (naming the argument's `position`
    where PyTorch's message does)."""
    if not isinstance(value, bool):
        where = "" if position is None else f" (position {position})"
        raise TypeError(
            f"{fn_name}(): argument '{argument}'{where} must be bool, not {type(value).__name__}"
        )


def check_dtype(fn_name: str, dtype) -> None:
    """Raise PyTorch's TypeError when `dtype` is neither None nor a dtype."""
    if dtype is not None and not isinstance(dtype, _dtype.dtype):
        raise TypeError(
            f"{fn_name}(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}"
        )


# PyTorch's C++ type names in its scalar-overflow message, and the largest finite value of
# each floating dtype a Python float can overflow.
_SCALAR_TYPES = {
    "float16": ("c10::Half", 65504.0),
    "bfloat16": ("c10::BFloat16", 3.3895313892515355e38),
    "float32": ("float", 3.4028234663852886e38),
    "complex64": ("c10::complex<float>", 3.4028234663852886e38),
}


def check_scalar_fits(value, dtype, opmath: bool = False) -> None:
    """PyTorch's RuntimeError for a finite Python float that overflows `dtype` (a float32,
    float16, bfloat16 or complex64 result): ``add(x, y, alpha=1e300)`` (infinities pass).
    For scalar arguments PyTorch converts to the result's type (alpha, value), not for the
    operands of elementwise ops (``x + 1e300`` is inf). With `opmath`, the kernel computes
    float16 and bfloat16 in float32 (addcmul's value)."""
    if type(value) is float and dtype.name in _SCALAR_TYPES:
        if opmath and dtype.name in ("float16", "bfloat16"):
            dtype = _dtype.float32
        name, largest = _SCALAR_TYPES[dtype.name]
        if largest < abs(value) < float("inf"):
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def check_scalar_converts(value, dtype, opmath: bool = False) -> None:
    """PyTorch's RuntimeError where the number `value`, a kernel's scalar argument, does not
    convert to `dtype` (float32 for float16/bfloat16 with `opmath`, where the kernel reads it
    as its computation type): a finite value beyond a floating dtype's range, any value (NaN
    and infinities too) beyond an integer dtype's. For the failure branch of a cheap test
    such as ``-65504.0 <= value <= 65504.0``."""
    if opmath and dtype.itemsize == 2 and dtype.is_floating_point:
        dtype = _dtype.float32
    if dtype.is_floating_point or dtype.is_complex:
        check_scalar_fits(float(value), dtype)
    elif dtype is not _dtype.bool:
        info = np.iinfo(dtype.np)
        if not info.min <= value <= info.max:  # NaN too
            raise RuntimeError(
                f"value cannot be converted to type {_dtype.C_NAME[dtype]} without overflow"
            )


def fill_fits(value, dtype, numel: int):
    """`value` as a fill of `numel` elements of `dtype` takes it (a negative int wraps into an
    unsigned dtype), or PyTorch's RuntimeError where it overflows the dtype: a float beyond an
    integer dtype's range (NaN too), an int beyond it (for an unsigned dtype, beyond it either
    way), a finite float beyond a floating dtype's (not for one float16/bfloat16 element,
    which PyTorch fills with inf)."""
    if type(value) is float and -65504.0 <= value <= 65504.0 and dtype.rank >= _dtype.FLOATING:
        return value  # every floating dtype holds it
    if isinstance(value, np.generic):
        value = value.item()
    if type(value) is complex and not dtype.is_complex:
        if dtype is _dtype.bool:
            return bool(value)
        if value.imag:
            raise RuntimeError(
                f"value cannot be converted to type {_dtype.C_NAME[dtype]} without overflow"
            )
        value = value.real
    kind = dtype.np.kind
    if kind in "iu" and type(value) in (int, float):
        info = np.iinfo(dtype.np)
        if kind == "u" and type(value) is int:
            fits = -info.max <= value <= info.max
        else:
            fits = info.min <= value <= info.max
        if not fits:
            raise RuntimeError(
                f"value cannot be converted to type {_dtype.C_NAME[dtype]} without overflow"
            )
        return value % (info.max + 1) if value < 0 and kind == "u" else value
    if kind == "b":
        return bool(value) if type(value) is int else value
    if type(value) is int and not -(2**63) <= value < 2**63:
        value = float(value)  # NumPy takes no such int for bfloat16
    if dtype.itemsize > 2 or numel != 1:
        check_scalar_fits(float(value) if type(value) is int else value, dtype)
    return value


def allocation_error(exc: Exception, shape, itemsize: int) -> Exception:
    """The error to raise where allocating a ``shape`` array of `itemsize`-byte elements
    failed with `exc`: PyTorch's RuntimeError for a size beyond int64 or beyond memory
    (NumPy's MemoryError, or its ValueError 'array is too big'); `exc` itself otherwise."""
    if not isinstance(exc, MemoryError) and "array is too big" not in str(exc):
        return exc
    nbytes = math.prod(shape) * itemsize
    if nbytes >= 2**63:
        return RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return RuntimeError(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)"
    )
