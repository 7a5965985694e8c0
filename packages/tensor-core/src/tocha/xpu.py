"""``tocha.xpu``: Intel GPUs, which tocha does not have. As ``torch.xpu`` in a build without
them: nothing is available, seeding does nothing, and what needs a device says so."""

from __future__ import annotations

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_name",
    "is_available",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "memory_allocated",
    "max_memory_allocated",
    "seed",
    "seed_all",
    "set_device",
    "synchronize",
]

_NOT_COMPILED = "Torch not compiled with XPU enabled"


def is_available() -> bool:
    """Whether an XPU can be used: never, in tocha."""
    return False


def is_initialized() -> bool:
    """Whether XPU state was initialized: no."""
    return False


def device_count() -> int:
    """The number of XPUs: 0."""
    return 0


def _unavailable():
    raise AssertionError(_NOT_COMPILED)


def current_device() -> int:
    """The current XPU (there is none: AssertionError, as PyTorch's)."""
    _unavailable()
    return 0


def set_device(device) -> None:
    """Select an XPU (there is none: AssertionError)."""
    _unavailable()


def synchronize(device=None) -> None:
    """Wait for an XPU (there is none: AssertionError)."""
    _unavailable()


def get_device_name(device=None) -> str:
    """An XPU's name (there is none: AssertionError)."""
    _unavailable()
    return ""


def empty_cache() -> None:
    """Free the XPU allocator's cache: nothing to free."""


def memory_allocated(device=None) -> int:
    """Bytes XPU tensors occupy: 0."""
    return 0


def max_memory_allocated(device=None) -> int:
    """The most bytes XPU tensors occupied: 0."""
    return 0


def manual_seed(seed) -> None:
    """Seed the XPU generators: nothing to seed."""


def manual_seed_all(seed) -> None:
    """Seed every XPU generator: nothing to seed."""


def seed() -> None:
    """Seed the XPU generator randomly: nothing to seed."""


def seed_all() -> None:
    """Seed every XPU generator randomly: nothing to seed."""
