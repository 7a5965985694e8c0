"""`custom_fwd` and `custom_bwd`: autocast for the forward and backward of a custom
`tocha.autograd.Function`, as `torch.amp.custom_fwd` and `torch.amp.custom_bwd`."""

from __future__ import annotations

import functools

from .._tensor import Tensor
from ._autocast import autocast, get_autocast_dtype, is_autocast_enabled

__all__ = ["custom_bwd", "custom_fwd"]


def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def _cast(value, dtype):
    """`value` with its floating tensors on `device` cast to `dtype`, through lists, tuples
    and dicts."""
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate a custom Function's ``forward(ctx, ...)`` for autocast on `device_type`.

    Inside an autocast region, with `cast_inputs` a dtype, the floating tensors among the
    arguments are cast to it and the forward runs with autocast off; without it, the
    forward runs under the region as it is. Either way `custom_bwd` runs the backward in the
    autocast state the forward had. Outside a region it changes nothing.
    """
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(ctx, *args, **kwargs):
        enabled = is_autocast_enabled(device_type)
        ctx._tocha_autocast = (enabled, get_autocast_dtype(device_type))
        if cast_inputs is None or not enabled:
            return fwd(ctx, *args, **kwargs)
        ctx._tocha_autocast = (False, ctx._tocha_autocast[1])
        with autocast(device_type, enabled=False):
            return fwd(ctx, *_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))

    return forward


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom Function's ``backward(ctx, ...)`` to run in the autocast state (on
    or off, and its dtype) that its `custom_fwd` forward ran in."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(ctx, *args, **kwargs):
        enabled, dtype = getattr(ctx, "_tocha_autocast", (False, None))
        with autocast(device_type, dtype=dtype, enabled=enabled):
            return bwd(ctx, *args, **kwargs)

    return backward
