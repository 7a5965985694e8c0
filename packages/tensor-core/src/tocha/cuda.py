"""`tocha.cuda`: the CUDA facade, as `torch.cuda`.

Each function forwards to the backend of device type ``cuda`` (the tocha-cuda distribution)
when it is installed, loads, and sees a GPU. Otherwise the queries answer as PyTorch's do
without CUDA (``is_available()`` is False, ``device_count()`` and the memory statistics are
0, seeding does nothing), and the functions that need a GPU raise a RuntimeError saying why.

Memory statistics use PyTorch's key names (``allocated_bytes.all.current``...), which a cuda
backend's ``memory_stats`` returns.
"""

from __future__ import annotations

from collections import OrderedDict

from . import _backend
from ._device import device as _device
from ._ops.random import manual_seed_device_type

__all__ = [
    "is_available",
    "device_count",
    "current_device",
    "synchronize",
    "memory_stats",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "empty_cache",
    "manual_seed",
    "manual_seed_all",
]


def _usable():
    """The cuda backend when it is installed, loads and sees a GPU; else None."""
    try:
        backend = _backend.get_backend("cuda")
    except RuntimeError:
        return None
    return backend if backend.is_available() else None


def _require():
    """The cuda backend; RuntimeError saying why when there is no usable one."""
    backend = _usable()
    if backend is not None:
        return backend
    _backend._discover()
    if "cuda" not in _backend._entries:
        raise RuntimeError(
            "tocha has no CUDA support installed: the cuda backend comes with the tocha-cuda "
            "distribution (pip install tocha-cuda)"
        )
    _backend.get_backend("cuda")  # raises the error the plugin failed to load with
    raise RuntimeError("No CUDA GPUs are available")


def _resolve(backend, device) -> _device:
    """The cuda device a user's device argument names (None: the current device)."""
    if device is None:
        return _device("cuda", backend.current_device())
    if isinstance(device, int) and not isinstance(device, bool):
        return _device("cuda", device)
    dev = _device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return backend.normalize(dev)


def is_available() -> bool:
    """Whether a CUDA GPU can be used: tocha-cuda is installed, loads, and sees a GPU."""
    return _usable() is not None


def device_count() -> int:
    """The number of CUDA GPUs tocha can use (0 without tocha-cuda or a GPU)."""
    backend = _usable()
    return 0 if backend is None else backend.device_count()


def current_device() -> int:
    """The index of the GPU that CUDA tensors go to when none is named."""
    return _require().current_device()


def synchronize(device=None) -> None:
    """Wait until every kernel queued on a GPU (default: the current one) has finished.

    Args:
        device: a ``tocha.device``, ``"cuda:1"`` or an index; None for the current device.
    """
    backend = _require()
    backend.synchronize(_resolve(backend, device))


def memory_stats(device=None) -> OrderedDict:
    """The memory allocator's statistics of a GPU, keyed by PyTorch's names; empty without
    CUDA."""
    backend = _usable()
    if backend is None:
        return OrderedDict()
    return OrderedDict(sorted(backend.memory_stats(_resolve(backend, device)).items()))


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory that tensors occupy now (0 without CUDA)."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None) -> int:
    """The peak of `memory_allocated` since the program started (0 without CUDA)."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None) -> int:
    """Bytes of GPU memory the allocator holds, used or cached (0 without CUDA)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def empty_cache() -> None:
    """Give the allocator's cached, unused GPU memory back to the device (no-op without
    CUDA)."""
    backend = _usable()
    if backend is not None:
        backend.empty_cache()


def manual_seed(seed: int) -> None:
    """Seed the default generators of the GPUs (does nothing without CUDA, as in PyTorch)."""
    backend = _usable()
    if backend is not None:
        manual_seed_device_type("cuda", int(seed))
        backend.manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed the default generators of all GPUs (the same as `manual_seed`: tocha seeds every
    GPU's default generator at once)."""
    manual_seed(seed)
