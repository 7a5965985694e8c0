"""Writing results into existing tensors: ``out=`` arguments and in-place ops' dtype rule."""

from __future__ import annotations

from .. import _dtype
from .._dispatch import bump_version, device_mismatch
from .._grad_mode import STATE
from .._tensor import Tensor


def inplace_result(target: Tensor, result_dtype: _dtype.dtype, op_name: str) -> None:
    """Refuse an in-place write whose result dtype cannot be cast to the target's (PyTorch
    allows no cast to a lower category, e.g. float into an integer tensor)."""
    if not _dtype.can_cast(result_dtype, target.dtype):
        raise RuntimeError(
            f"result type {_dtype.TITLE[result_dtype]} can't be cast to the desired output type "
            f"{_dtype.TITLE[target.dtype]}"
        )


def write_out(out: Tensor, result: Tensor, exact: bool = False) -> Tensor:
    """Copy `result` into the ``out=`` tensor, resizing `out` when its shape differs. With
    `exact`, `out` must have the result's dtype (PyTorch's rule for ops that keep the input's
    dtype, such as ``abs`` and ``floor``); else the result must cast to it safely."""
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if exact and out._data.dtype != result._data.dtype:
        raise RuntimeError(
            f"Found dtype {_dtype.TITLE[out.dtype]} but expected {_dtype.TITLE[result.dtype]}"
        )
    if out._device is not result._device:
        raise device_mismatch(result._device, out._device)
    if STATE.grad_enabled and (result._ag is not None or out._ag is not None):
        raise RuntimeError(
            "out=... arguments don't support automatic differentiation, but one of the "
            "arguments requires grad."
        )
    inplace_result(out, result.dtype, "")
    if out._data.shape != result._data.shape:
        out._data = result._data.astype(out._data.dtype)
    else:
        out._data[...] = result._data
    bump_version(out)
    return out
