"""``tocha.accelerator``: the one accelerator a program may use, as ``torch.accelerator``.

tocha's accelerator is CUDA, through the tocha-cuda plugin; without it (or without a GPU)
there is none and `current_accelerator` is None.
"""

from __future__ import annotations

import warnings

from . import cuda
from ._device import device

__all__ = [
    "is_available",
    "current_accelerator",
    "device_count",
    "current_device_index",
    "current_device_idx",
    "set_device_index",
    "set_device_idx",
    "device_index",
    "current_stream",
    "synchronize",
    "empty_cache",
    "get_memory_info",
    "memory_stats",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "reset_peak_memory_stats",
    "reset_accumulated_memory_stats",
]


def is_available() -> bool:
    """Whether an accelerator can be used."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """The accelerator's device type (``device('cuda')``), or None when there is none."""
    return device("cuda") if cuda.is_available() else None


def device_count() -> int:
    """How many accelerator devices there are (0 without one)."""
    return cuda.device_count() if cuda.is_available() else 0


def _require() -> None:
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    """The index of the current accelerator device."""
    _require()
    return cuda.current_device()


def current_device_idx() -> int:
    """Deprecated spelling of `current_device_index`."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device) -> None:
    """Make `device` (an index or a device) the current accelerator device."""
    _require()
    cuda.set_device(device)


def set_device_idx(device) -> None:
    """Deprecated spelling of `set_device_index`."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:  # noqa: N801 - PyTorch's name
    """Context manager: `device` (an index, or None for no change) is the current accelerator
    device inside the block."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx is not None:
            set_device_index(self.prev_idx)
        return False


def current_stream(device=None):
    """The current stream of the accelerator device."""
    _require()
    return cuda.current_stream(device)


def synchronize(device=None) -> None:
    """Wait for the accelerator's queued work to finish."""
    _require()
    cuda.synchronize(device)


def empty_cache() -> None:
    """Give the accelerator's cached, unused memory back."""
    _require()
    cuda.empty_cache()


def get_memory_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of the accelerator device."""
    _require()
    return cuda.mem_get_info(device)


def memory_stats(device=None):
    """The accelerator allocator's statistics (as ``tocha.cuda.memory_stats``)."""
    _require()
    return cuda.memory_stats(device)


def memory_allocated(device=None) -> int:
    """Bytes the accelerator's tensors occupy now."""
    _require()
    return cuda.memory_allocated(device)


def max_memory_allocated(device=None) -> int:
    """The most bytes the accelerator's tensors occupied (since the last reset)."""
    _require()
    return cuda.max_memory_allocated(device)


def memory_reserved(device=None) -> int:
    """Bytes the accelerator's allocator holds."""
    _require()
    return cuda.memory_reserved(device)


def max_memory_reserved(device=None) -> int:
    """The most bytes the accelerator's allocator held (since the last reset)."""
    _require()
    return cuda.max_memory_reserved(device)


def reset_peak_memory_stats(device=None) -> None:
    """Start the peaks of `max_memory_allocated` and `max_memory_reserved` again."""
    _require()
    cuda.reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None) -> None:
    """Start the allocator's cumulative counts again (tocha keeps only the peaks)."""
    _require()
    cuda.reset_peak_memory_stats(device)
