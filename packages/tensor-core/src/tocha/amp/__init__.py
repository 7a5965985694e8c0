"""`tocha.amp`: automatic mixed precision, as `torch.amp`.

`autocast` runs chosen ops in a lower precision (float16, bfloat16) and others in float32
inside a region; `GradScaler` scales the loss so that float16 gradients do not underflow,
and skips the optimizer steps whose gradients overflowed.
"""

from ._autocast import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled
from ._custom import custom_bwd, custom_fwd
from ._grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
]
