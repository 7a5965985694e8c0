"""`autocast`: a region where ops run in mixed precision.

The dispatcher asks `cast_inputs` (installed as ``LAYERS.autocast``) only while some
autocast region is active (``STATE.autocast`` is not None), so outside one it costs one
attribute read per op. Casts go through the differentiable ``to_dtype`` op, so gradients
flow back in each input's own dtype.
"""

from __future__ import annotations

import functools
import threading
import warnings

from .. import _dtype
from .._device import device as _device
from .._dispatch import LAYERS
from .._grad_mode import STATE, F
from .._ops._argcheck import check_bool
from .._ops.creation import to
from .._tensor import Tensor
from ._policy import FP32, LOWER, NATIVE, policy_for

__all__ = [
    "autocast",
    "clear_autocast_cache",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

_ELIGIBLE = {_dtype.float16, _dtype.bfloat16, _dtype.float32}
_DEFAULT_DTYPE = {"cpu": _dtype.bfloat16}  # float16 elsewhere


class _Settings(threading.local):
    """This thread's autocast settings outside the regions: each device type's dtype (set by
    `set_autocast_dtype`; an `autocast` region sets it while it lasts) and whether casts are
    cached."""

    def __init__(self):
        self.dtypes: dict = {}
        self.cache_enabled = True


_SETTINGS = _Settings()


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
        self.fast_dtype = dtype or get_autocast_dtype(device_type)
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda" and not _cuda_available():
            warnings.warn(
                "CUDA is not available or torch_xla is imported. Disabling autocast.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled and self.fast_dtype not in (_dtype.float16, _dtype.bfloat16):
            warnings.warn(
                f"In {device_type} autocast, but the target dtype {self.fast_dtype} is not "
                "supported. Disabling autocast.",
                stacklevel=2,
            )
            self._enabled = False
        self._prev = None

    def __enter__(self):
        self._prev = STATE.autocast, _SETTINGS.dtypes.get(self.device_type)
        _SETTINGS.dtypes[self.device_type] = self.fast_dtype
        _set_region(self.device_type, self._enabled)
        return self

    def __exit__(self, *exc):
        regions, dtype = self._prev
        STATE.autocast = regions
        if dtype is None:
            _SETTINGS.dtypes.pop(self.device_type, None)
        else:
            _SETTINGS.dtypes[self.device_type] = dtype
        return False

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def _cuda_available() -> bool:
    from .. import cuda

    return cuda.is_available()


def _set_region(device_type: str, enabled: bool) -> None:
    """Turn autocast for `device_type` on (at its current dtype) or off in this thread."""
    regions = dict(STATE.autocast or {})
    if enabled:
        regions[device_type] = get_autocast_dtype(device_type)
    else:
        regions.pop(device_type, None)
    STATE.autocast = regions or None


def _checked_type(device_type) -> str:
    """`device_type` when it names a device type (PyTorch's RuntimeError otherwise)."""
    return _device(device_type).type


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports `device_type`: the CPU and the accelerators PyTorch lists
    (its device-type names; an unknown name raises)."""
    return _checked_type(device_type) in _AVAILABLE


_AVAILABLE = frozenset(("cpu", "cuda", "xpu", "hpu", "xla", "mps", "mtia", "ipu", "maia"))


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for `device_type` in this thread (an `autocast` region or
    `set_autocast_enabled`); without an argument, for CUDA."""
    regions = STATE.autocast
    if regions is not None and device_type in regions:
        return True
    _checked_type(device_type)
    return False


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Turn autocast on or off for `device_type` in this thread, outside any ``with`` block;
    ``set_autocast_enabled(enabled)`` is PyTorch's older CUDA spelling."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
        check_bool("set_autocast_enabled", enabled, "enabled", 1)
    else:
        check_bool("set_autocast_enabled", enabled, "enabled", 2)
    _set_region(_checked_type(device_type), enabled)


def get_autocast_dtype(device_type: str):
    """The lower precision autocast uses for `device_type` in this thread: the active
    region's, else what `set_autocast_dtype` set, else the default (bfloat16 on the CPU,
    float16 elsewhere)."""
    regions = STATE.autocast
    if regions is not None and device_type in regions:
        return regions[device_type]
    dtype = _SETTINGS.dtypes.get(device_type)
    if dtype is not None:
        return dtype
    return _DEFAULT_DTYPE.get(_checked_type(device_type), _dtype.float16)


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the lower precision autocast uses for `device_type` in this thread (an active
    region's too; leaving a region restores the dtype it found)."""
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(
            "set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
            f"{type(dtype).__name__}"
        )
    device_type = _checked_type(device_type)
    _SETTINGS.dtypes[device_type] = dtype
    regions = STATE.autocast
    if regions is not None and device_type in regions:
        STATE.autocast = {**regions, device_type: dtype}


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches its casts (a setting only: tocha casts each time)."""
    return _SETTINGS.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Set whether autocast caches its casts (kept for PyTorch's API; tocha casts each time)."""
    if type(enabled) is not bool:
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _SETTINGS.cache_enabled = enabled


def clear_autocast_cache() -> None:
    """Drop autocast's cached casts (tocha keeps none)."""


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"torch.{old} is deprecated. Please use torch.{new} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")``, under its deprecated name."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """``set_autocast_enabled("cpu", enabled)``, under its deprecated name."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    check_bool("set_autocast_cpu_enabled", enabled, "enabled", 1)
    _set_region("cpu", enabled)


def get_autocast_cpu_dtype():
    """``get_autocast_dtype("cpu")``, under its deprecated name."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    """``set_autocast_dtype("cpu", dtype)``, under its deprecated name."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def _target(rule, low, tensors, device_type):
    """The dtype `rule` casts to (None: no cast), given the region's lower dtype `low` and
    the tensors among the op's arguments."""
    if rule is LOWER:
        return low
    if rule is FP32:
        return _dtype.float32
    if rule is NATIVE:
        return None
    # PROMOTE: float32 wins, else the region's dtype. (PyTorch raises for a float16 input in a
    # bfloat16 region; tocha's composites call cat and stack where PyTorch's kernels do not,
    # so such inputs are left to the op's own promotion.)
    target = low
    for x in tensors:
        d = x.dtype
        if d in _ELIGIBLE and x._device.type == device_type:
            if d is _dtype.float32:
                return d
            if d is not low:
                target = None
    return target


def _cast(x, target, device_type):
    if isinstance(x, Tensor):
        if x.dtype in _ELIGIBLE and x.dtype is not target and x._device.type == device_type:
            return to(x, target)
        return x
    if type(x) in (list, tuple) and any(isinstance(t, Tensor) for t in x):
        return type(x)(_cast(t, target, device_type) for t in x)
    return x


def _tensors(values):
    for x in values:
        if isinstance(x, Tensor):
            yield x
        elif type(x) in (list, tuple):
            yield from (t for t in x if isinstance(t, Tensor))


def cast_inputs(op, inputs: tuple) -> tuple:
    """`inputs` of `op` (an op, or a name of the op lists) cast as the active region's op list
    says (unchanged when it is not listed or its tensors are on a device type without a
    region)."""
    first = next((x for x in inputs if isinstance(x, Tensor)), None)
    if first is None:
        return inputs
    device_type = first._device.type
    low = STATE.autocast.get(device_type)
    if low is None:
        return inputs
    rule = policy_for(device_type).get(op if type(op) is str else op.name)
    target = None if rule is None else _target(rule, low, _tensors(inputs), device_type)
    if target is None:
        return inputs
    return tuple(_cast(x, target, device_type) for x in inputs)


def call_autocast(name: str, fn, args: tuple, kwargs: dict):
    """Run `fn`, a public function hooked under `name` (`tocha.library.autocast_op`), inside
    an autocast region: its floating tensor arguments cast as the op list says, then `fn`
    with autocast off for their device type, as PyTorch's kernels run below its autocast
    layer (a name not listed for the device is such a kernel too: no cast, none inside)."""
    regions = STATE.autocast
    inner = None
    first = next(_tensors((*args, *kwargs.values())), None)
    if first is not None:
        device_type = first._device.type
        low = regions.get(device_type)
        if low is not None:
            rule = policy_for(device_type).get(name)
            if rule is not None and kwargs.get("out") is None:
                target = _target(rule, low, _tensors((*args, *kwargs.values())), device_type)
                if target is not None:
                    args = tuple([_cast(x, target, device_type) for x in args])
                    kwargs = {k: _cast(v, target, device_type) for k, v in kwargs.items()}
            inner = {k: v for k, v in regions.items() if k != device_type} or None
    STATE.autocast = inner
    try:
        return fn(*args, **kwargs)
    finally:
        STATE.autocast = regions


LAYERS.autocast = cast_inputs
LAYERS.autocast_call = call_autocast
