"""`tocha.cpu.amp`: PyTorch's older CPU spellings of `autocast` and `GradScaler`, deprecated
there (a FutureWarning) in favour of ``tocha.amp.autocast("cpu")`` and
``tocha.amp.GradScaler("cpu")``."""

from __future__ import annotations

import warnings

from .. import _dtype
from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast

__all__ = ["GradScaler", "autocast"]


class autocast(_autocast):  # noqa: N801 - PyTorch's name
    """``tocha.amp.autocast("cpu", dtype, enabled)``, as `torch.cpu.amp.autocast`."""

    def __init__(self, enabled: bool = True, dtype=_dtype.bfloat16, cache_enabled: bool = True):
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``tocha.amp.GradScaler("cpu", ...)``, as `torch.cpu.amp.GradScaler`."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
