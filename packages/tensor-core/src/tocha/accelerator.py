"""``tocha.accelerator``: the one accelerator a program may use, as ``torch.accelerator``.

tocha's accelerator is CUDA, through the tocha-cuda plugin; without it (or without a GPU)
there is none and `current_accelerator` is None.
"""

from __future__ import annotations

from . import cuda
from ._device import device

__all__ = [
    "is_available",
    "current_accelerator",
    "device_count",
    "current_device_index",
    "synchronize",
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


def current_device_index() -> int:
    """The index of the current accelerator device."""
    return cuda.current_device()


def synchronize(device=None) -> None:
    """Wait for the accelerator's queued work to finish."""
    cuda.synchronize(device)
