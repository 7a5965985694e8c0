"""``tocha.mps``: Apple's Metal devices, which tocha does not have. As ``torch.mps`` on a
machine without them: nothing is available, and what needs a device says so."""

from __future__ import annotations

__all__ = [
    "current_allocated_memory",
    "device_count",
    "driver_allocated_memory",
    "empty_cache",
    "get_rng_state",
    "is_available",
    "manual_seed",
    "recommended_max_memory",
    "seed",
    "set_per_process_memory_fraction",
    "set_rng_state",
    "synchronize",
]


def _unavailable(what: str) -> RuntimeError:
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available() -> bool:
    """Whether an MPS device can be used: never, in tocha."""
    return False


def device_count() -> int:
    """The number of MPS devices: 0."""
    return 0


def synchronize() -> None:
    """Wait for the MPS device (there is none: RuntimeError)."""
    raise _unavailable("deviceSynchronize")


def empty_cache() -> None:
    """Free the MPS allocator's cache (there is none: RuntimeError)."""
    raise _unavailable("emptyCache")


def current_allocated_memory() -> int:
    """Bytes MPS tensors occupy (there is no device: RuntimeError)."""
    raise _unavailable("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    """Bytes the Metal driver holds (there is no device: RuntimeError)."""
    raise _unavailable("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    """The recommended working set of the device (there is no device: RuntimeError)."""
    raise _unavailable("getRecommendedMaxMemory")


def set_per_process_memory_fraction(fraction) -> None:
    """Cap the MPS allocator (there is no device: RuntimeError)."""
    raise _unavailable("setMemoryFraction")


def manual_seed(seed) -> None:
    """Seed the MPS generator: nothing to seed without MPS."""


def seed() -> None:
    """Seed the MPS generator randomly (there is none: RuntimeError)."""
    raise _unavailable("getDefaultGenerator")


def get_rng_state(device="mps"):
    """The MPS generator's state (there is none: RuntimeError)."""
    raise _unavailable("getDefaultGenerator")


def set_rng_state(new_state, device="mps") -> None:
    """Set the MPS generator's state (there is none: RuntimeError)."""
    raise _unavailable("getDefaultGenerator")
