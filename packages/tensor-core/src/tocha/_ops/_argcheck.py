"""The error path of functions that read their arguments' attributes directly: where such a
read failed with an AttributeError, PyTorch's TypeError names the argument that is not a
Tensor (or not a dtype). Called only after the failure, so the fast path pays nothing."""

from __future__ import annotations

from .. import _dtype
from .._dispatch import not_a_tensor
from .._tensor import Tensor


def check_tensors(fn_name: str, *named: tuple[str, object]) -> None:
    """Raise PyTorch's TypeError for the first ``(argument, value)`` pair whose value is not
    a Tensor; positions count from 1 in the order given."""
    for position, (argument, value) in enumerate(named, 1):
        if not isinstance(value, Tensor):
            raise not_a_tensor(fn_name, value, argument, position)


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
