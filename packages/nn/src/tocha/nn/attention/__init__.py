"""``tocha.nn.attention``, as ``torch.nn.attention``: the choice of attention kernels for
`F.scaled_dot_product_attention` (`SDPBackend`, `sdpa_kernel`), and `flex_attention`
(attention with a score modification and a mask given as Python functions,
``tocha.nn.attention.flex_attention``).

On the CPU, tocha's attention is one kernel that serves as PyTorch's math and flash kernels
alike (the same values); with both turned off no kernel is left, as in PyTorch.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator

from tocha.backends import cuda as _flags

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The kernels behind `F.scaled_dot_product_attention`."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    def __hash__(self) -> int:
        return hash(self.value)


# Each backend's switch in tocha.backends.cuda: (query, set).
_SWITCHES = {
    SDPBackend.MATH: (_flags.math_sdp_enabled, _flags.enable_math_sdp),
    SDPBackend.FLASH_ATTENTION: (_flags.flash_sdp_enabled, _flags.enable_flash_sdp),
    SDPBackend.EFFICIENT_ATTENTION: (
        _flags.mem_efficient_sdp_enabled,
        _flags.enable_mem_efficient_sdp,
    ),
    SDPBackend.CUDNN_ATTENTION: (_flags.cudnn_sdp_enabled, _flags.enable_cudnn_sdp),
}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False) -> Iterator[None]:
    """Allow only `backends` (one `SDPBackend` or a list) for scaled-dot-product attention
    inside the block (a context manager, or a decorator); the switches in
    ``tocha.backends.cuda`` come back as they were when it ends. `set_priority` (the order
    of a list as the order to try) is accepted: the CPU has one kernel.

    Example:
        >>> with sdpa_kernel(SDPBackend.MATH):
        ...     y = F.scaled_dot_product_attention(q, k, v)
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
            f"{type(backends).__name__}"
        )
    chosen = {backends} if isinstance(backends, SDPBackend) else set(backends)
    before = {backend: query() for backend, (query, _) in _SWITCHES.items()}
    try:
        for backend, (_, enable) in _SWITCHES.items():
            enable(backend in chosen)
        yield
    finally:
        for backend, (_, enable) in _SWITCHES.items():
            enable(before[backend])
