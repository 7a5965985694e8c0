"""`tocha.cpu`: the CPU as a device module, as `torch.cpu` (what `tocha.get_device_module`
returns for the CPU). There is one CPU device; its stream and events are trivial: work on the
CPU is done when the call returns."""

from __future__ import annotations

import contextlib
import threading

from . import amp

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "amp",
    "current_device",
    "current_stream",
    "device_count",
    "get_capabilities",
    "is_available",
    "is_initialized",
    "set_device",
    "stream",
    "synchronize",
]


def is_available() -> bool:
    """Always True."""
    return True


def is_initialized() -> bool:
    """Always True: the CPU needs no initialisation."""
    return True


def device_count() -> int:
    """Always 1."""
    return 1


def current_device() -> str:
    """``"cpu"``."""
    return "cpu"


def set_device(device) -> None:
    """Does nothing: there is one CPU device."""


def synchronize(device=None) -> None:
    """Does nothing: CPU work has finished when its call returns."""


class Stream:
    """The CPU's stream, as `torch.cpu.Stream`: work is never queued, so waiting does
    nothing."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream) -> None:
        """Does nothing."""

    def wait_event(self, event) -> None:
        """Does nothing."""

    def record_event(self) -> None:
        """Does nothing (returns None, as PyTorch's)."""


class Event:
    """A CPU event, as `torch.cpu.Event`: always complete."""

    def query(self) -> bool:
        """Always True."""
        return True

    def record(self, stream=None) -> None:
        """Does nothing."""

    def synchronize(self) -> None:
        """Does nothing."""

    def wait(self, stream=None) -> None:
        """Does nothing."""


class _Current(threading.local):
    stream: Stream | None = None


_DEFAULT_STREAM = Stream()
_CURRENT = _Current()


def current_stream(device=None) -> Stream:
    """This thread's current CPU stream (the default one outside `stream`)."""
    return _CURRENT.stream or _DEFAULT_STREAM


class StreamContext(contextlib.AbstractContextManager):
    """Make `stream` this thread's current CPU stream while the block runs."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self._prev = None

    def __enter__(self):
        self._prev = _CURRENT.stream
        _CURRENT.stream = self.stream
        return self

    def __exit__(self, *exc) -> None:
        _CURRENT.stream = self._prev


def stream(stream) -> StreamContext:
    """A context manager that makes `stream` current (`StreamContext`)."""
    return StreamContext(stream)


def get_capabilities() -> dict:
    """The CPU's instruction-set features as the operating system lists them, each True
    (``{"avx2": True, "sse4_2": True, ...}``; empty where the system has no such list)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return dict.fromkeys(line.partition(":")[2].split(), True)
    except OSError:
        pass
    return {}
