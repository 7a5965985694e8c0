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
