"""`autocast`: a region where ops run in mixed precision.

The dispatcher asks `cast_inputs` (installed as ``LAYERS.autocast``) only while some
autocast region is active (``STATE.autocast`` is not None), so outside one it costs one
attribute read per op. Casts go through the differentiable ``to_dtype`` op, so gradients
flow back in each input's own dtype.
"""

from __future__ import annotations

import functools
import warnings

from .. import _dtype
from .._dispatch import LAYERS
from .._grad_mode import STATE, F
from .._ops.creation import to
from .._tensor import Tensor
from ._policy import FP32, LOWER, policy_for

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype"]

_ELIGIBLE = {_dtype.float16, _dtype.bfloat16, _dtype.float32}
_DEFAULT_DTYPE = {"cpu": _dtype.bfloat16}  # float16 elsewhere


class autocast:  # noqa: N801 - PyTorch's name
    """Run the ops of a region in mixed precision, as `torch.autocast`: a context manager and
    a decorator.

    Args:
        device_type: the device type whose tensors are cast (``"cuda"``, ``"cpu"``...).
        dtype: the lower precision (default float16, bfloat16 on the CPU).
        enabled: False turns autocast off for the region (inside an enabled one too).
        cache_enabled: accepted for PyTorch's signature; tocha does not cache casts.

    Example::

        with tocha.autocast("cpu", dtype=tocha.bfloat16):
            y = model(x)      # matmuls and convolutions in bfloat16
            loss = F.cross_entropy(y, target)   # float32
    """

    def __init__(
        self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None
    ):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device_type = device_type
        self.fast_dtype = dtype or _DEFAULT_DTYPE.get(device_type, _dtype.float16)
        self._enabled = bool(enabled)
        if self._enabled and self.fast_dtype not in (_dtype.float16, _dtype.bfloat16):
            warnings.warn(
                f"In {device_type} autocast, but the target dtype {self.fast_dtype} is not "
                "supported. Disabling autocast.",
                stacklevel=2,
            )
            self._enabled = False
        self._prev = None

    def __enter__(self):
        self._prev = STATE.autocast
        regions = dict(self._prev or {})
        if self._enabled:
            regions[self.device_type] = self.fast_dtype
        else:
            regions.pop(self.device_type, None)
        STATE.autocast = regions or None
        return self

    def __exit__(self, *exc):
        STATE.autocast = self._prev
        return False

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether an autocast region for `device_type` is active in this thread."""
    regions = STATE.autocast
    return regions is not None and device_type in regions


def get_autocast_dtype(device_type: str):
    """The lower precision autocast uses for `device_type` (its default outside a region)."""
    regions = STATE.autocast or {}
    return regions.get(device_type, _DEFAULT_DTYPE.get(device_type, _dtype.float16))


def cast_inputs(op, inputs: tuple) -> tuple:
    """`inputs` of `op` cast as the active region's op list says (unchanged when the op is
    not listed or its tensors are on a device type without a region)."""
    first = next((x for x in inputs if isinstance(x, Tensor)), None)
    if first is None:
        return inputs
    device_type = first._device.type
    low = STATE.autocast.get(device_type)
    rule = None if low is None else policy_for(device_type).get(op.name)
    if rule is None:
        return inputs
    if rule is LOWER:
        target = low
    elif rule is FP32:
        target = _dtype.float32
    else:
        floats = [x.dtype for x in inputs if isinstance(x, Tensor) and x.is_floating_point()]
        if not floats:
            return inputs
        target = functools.reduce(_dtype.promote_types, floats)
    return tuple(
        to(x, target)
        if isinstance(x, Tensor)
        and x.dtype in _ELIGIBLE
        and x.dtype is not target
        and x._device.type == device_type
        else x
        for x in inputs
    )


LAYERS.autocast = cast_inputs
