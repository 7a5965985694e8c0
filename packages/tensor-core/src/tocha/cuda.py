"""`tocha.cuda`: the CUDA facade, as `torch.cuda`.

Each function forwards to the backend of device type ``cuda`` (the tocha-cuda distribution)
when it is installed, loads, and sees a GPU. Otherwise the queries answer as PyTorch's do
without CUDA (``is_available()`` is False, ``device_count()`` and the memory statistics are
0, seeding does nothing), and the functions that need a GPU raise a RuntimeError saying why.

Memory statistics use PyTorch's key names (``allocated_bytes.all.current``...), which a cuda
backend's ``memory_stats`` returns. `amp` is `tocha.amp` (``tocha.cuda.amp.autocast``).
"""

from __future__ import annotations

import sys
from collections import OrderedDict, namedtuple

from . import _backend
from ._device import device as _device
from ._dtype import bfloat16 as _bfloat16
from ._errors import OutOfMemoryError
from ._ops.random import manual_seed_device_type
from .amp import _cuda as amp

# `amp` is an attribute; a path makes ``import torch.cuda.amp`` reach the torch alias's finder,
# and the module table answers ``import tocha.cuda.amp``.
__path__: list[str] = []
sys.modules[f"{__name__}.amp"] = amp

__all__ = [
    "CUDAGraph",
    "StreamContext",
    "graph",
    "is_current_stream_capturing",
    "OutOfMemoryError",
    "Event",
    "Stream",
    "amp",
    "current_device",
    "current_stream",
    "device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "is_available",
    "is_bf16_supported",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_peak_memory_stats",
    "set_device",
    "stream",
    "synchronize",
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
        from ._missing import BACKENDS, not_installed

        raise RuntimeError(
            "tocha has no CUDA support installed: the cuda backend comes from "
            + not_installed(BACKENDS["cuda"])
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


def max_memory_reserved(device=None) -> int:
    """The peak of `memory_reserved` since the program started (0 without CUDA)."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None) -> None:
    """Start the peaks of `max_memory_allocated` and `max_memory_reserved` from now."""
    backend = _require()
    backend.reset_peak_memory_stats(_resolve(backend, device))


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of a GPU's memory, as the driver counts them."""
    backend = _require()
    return backend.mem_get_info(_resolve(backend, device))


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """The memory statistics of a GPU as a table of text."""
    dev = _resolve(_require(), device)
    stats = memory_stats(dev)
    width = max(len(k) for k in stats) if stats else 0
    lines = [f"tocha CUDA memory summary, device {dev.index}", "-" * (width + 18)]
    lines += [f"{key:<{width}}  {value:>16,}" for key, value in stats.items()]
    return "\n".join(lines) + "\n"


# -- devices --------------------------------------------------------------------------------
def set_device(device) -> None:
    """Make a GPU the current one (where ``cuda`` tensors go and ops run)."""
    backend = _require()
    backend.set_device(_resolve(backend, device).index)


class device:  # noqa: N801 - PyTorch's name
    """Context manager making a GPU current inside it: ``with tocha.cuda.device(1):``.
    ``device(None)`` or a negative index does nothing, as in PyTorch."""

    def __init__(self, device):
        self.idx = _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None and self.idx >= 0:
            backend = _require()
            self.prev_idx = backend.current_device()
            backend.set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            _require().set_device(self.prev_idx)
        return False


def _index(device) -> int | None:
    if device is None or isinstance(device, int):
        return device
    dev = _device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return dev.index if dev.index is not None else current_device()


_CudaDeviceProperties = namedtuple(
    "_CudaDeviceProperties", "name major minor total_memory multi_processor_count"
)


def get_device_properties(device=None) -> _CudaDeviceProperties:
    """Name, compute capability, memory and multiprocessor count of a GPU."""
    backend = _require()
    props = backend.device_properties(_resolve(backend, device).index)
    return _CudaDeviceProperties(**props)


def get_device_name(device=None) -> str:
    """The name of a GPU (``"NVIDIA H100 80GB HBM3"``)."""
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple[int, int]:
    """The compute capability of a GPU as ``(major, minor)``."""
    props = get_device_properties(device)
    return props.major, props.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 tensors can live on the current GPU: an Ampere or later GPU whose
    backend can hold bfloat16 arrays (CuPy cannot: False with tocha-cuda)."""
    backend = _usable()
    if backend is None:
        return False
    return get_device_capability()[0] >= 8 and backend.supports_dtype(_bfloat16.np)


# -- streams and events ---------------------------------------------------------------------
class Stream:
    """A queue of GPU work, as `torch.cuda.Stream`; ``with tocha.cuda.stream(s):`` makes it
    current. Wraps the backend's native stream (``cupy.cuda.Stream``)."""

    def __init__(self, device=None, priority: int = 0, *, _native=None):
        backend = _require()
        self.device = _resolve(backend, device)
        self._native = _native or backend.new_stream(self.device.index, priority)

    def synchronize(self) -> None:
        """Wait until the work queued on this stream has finished."""
        self._native.synchronize()

    def query(self) -> bool:
        """Whether all the work queued on this stream has finished."""
        return bool(self._native.done)

    def record_event(self, event=None):
        """Record an event (a new one by default) on this stream; returns it."""
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event) -> None:
        """Make later work on this stream wait for `event`."""
        self._native.wait_event(event._native)

    def wait_stream(self, stream) -> None:
        """Make later work on this stream wait for the work queued on `stream` so far."""
        self.wait_event(stream.record_event())

    @property
    def cuda_stream(self) -> int:
        return self._native.ptr

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device))

    def __repr__(self) -> str:
        return f"<tocha.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A marker in a stream's work, as `torch.cuda.Event`: `record`, `synchronize`, `query`
    and `elapsed_time` (milliseconds, with ``enable_timing=True``)."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ):
        if interprocess:
            raise NotImplementedError("interprocess CUDA events are not supported by tocha")
        self._backend = _require()
        self._native = self._backend.new_event(enable_timing, blocking)

    def record(self, stream=None) -> None:
        """Record the event on `stream` (default: the current stream)."""
        stream = stream or current_stream()
        self._native.record(stream._native)

    def synchronize(self) -> None:
        """Wait until the work before the event has finished."""
        self._native.synchronize()

    def query(self) -> bool:
        return bool(self._native.done)

    def wait(self, stream=None) -> None:
        """Make later work on `stream` (default: the current one) wait for this event."""
        (stream or current_stream()).wait_event(self)

    def elapsed_time(self, end_event) -> float:
        """Milliseconds between this event and `end_event` (both recorded and finished)."""
        return self._backend.elapsed_time(self._native, end_event._native)


class CUDAGraph:
    """A captured sequence of GPU work, as `torch.cuda.CUDAGraph`: the type exists (for
    annotations and ``isinstance``), but tocha does not capture graphs yet; constructing one
    raises RuntimeError without a GPU and NotImplementedError with one."""

    def __init__(self, keep_graph: bool = False):
        _require()
        raise NotImplementedError("torch.cuda.CUDAGraph is not in tocha yet")


class graph:  # noqa: N801 - PyTorch's name
    """Context manager capturing GPU work into a `CUDAGraph`, as `torch.cuda.graph`: not in
    tocha yet, as `CUDAGraph`."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode: str = "global"):
        _require()
        raise NotImplementedError("torch.cuda.graph is not in tocha yet")


def is_current_stream_capturing() -> bool:
    """Whether GPU work is being captured into a graph now: never in tocha."""
    return False


def current_stream(device=None) -> Stream:
    """The stream ops on a GPU (default: the current one) are queued on now."""
    backend = _require()
    dev = _resolve(backend, device)
    return Stream(dev, _native=backend.current_stream(dev.index))


class stream:  # noqa: N801 - PyTorch's name
    """Context manager making `stream` the current one inside it (None: does nothing)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream._native.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream._native.__exit__(*exc)
        return False


StreamContext = stream  # PyTorch's name for the context manager that `stream` gives
