"""`tocha.cuda.amp`: PyTorch's older CUDA-only spellings of `autocast` and `GradScaler`."""

from __future__ import annotations

import warnings

from .. import _dtype
from ._autocast import autocast as _autocast
from ._grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "autocast"]


def autocast(enabled: bool = True, dtype=_dtype.float16, cache_enabled: bool = True):
    """``tocha.autocast("cuda", dtype, enabled)``, as `torch.cuda.amp.autocast` (deprecated)."""
    warnings.warn(
        f"`{_dtype.SHOWN_MODULE}.cuda.amp.autocast(args...)` is deprecated. Please use "
        f"`{_dtype.SHOWN_MODULE}.amp.autocast('cuda', args...)` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return _autocast("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def GradScaler(
    init_scale: float = 2.0**16,
    growth_factor: float = 2.0,  # noqa: N802
    backoff_factor: float = 0.5,
    growth_interval: int = 2000,
    enabled: bool = True,
) -> _GradScaler:
    """``tocha.amp.GradScaler("cuda", ...)``, as `torch.cuda.amp.GradScaler` (deprecated)."""
    warnings.warn(
        f"`{_dtype.SHOWN_MODULE}.cuda.amp.GradScaler(args...)` is deprecated. Please use "
        f"`{_dtype.SHOWN_MODULE}.amp.GradScaler('cuda', args...)` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return _GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
