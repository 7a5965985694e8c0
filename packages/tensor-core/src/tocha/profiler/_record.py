"""Recording: the instrumentation that times every op while a profiler records, and
`record_function`.

Nothing here touches the hot path while no profiler records. The first recorder to start
replaces every cached kernel in each op's per-device cache (`Op.kernels`, a `_Kernels` dict)
by a `_Timed` wrapper, in place, so the modules that keep a reference to a cache (reduction's
``_SUM_KERNELS``, matmul's ``_matmul_kernels``) see the wrappers too, and switches each
cache's class to `_TimedKernels`, whose misses wrap the kernel they build. The last recorder
to stop puts the kernels and the class back. Other packages add their own instrumentation
with `add_instrumentation` (tocha-autograd times its backward nodes so).
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from contextlib import ContextDecorator

from .._dispatch import REGISTRY, _Kernels
from ._events import FunctionEvent

__all__ = ["Recorder", "record_function", "add_instrumentation"]

_perf_ns = time.perf_counter_ns
_native_id = threading.get_native_id
_IDS = itertools.count(1)


class _State:
    """The recorders now recording, what any of them asks for, and how to undo the
    instrumentation."""

    def __init__(self):
        self.recorders: tuple = ()
        self.shapes = False
        self.memory = False
        self.stack = False
        self.flops = False
        self.undo: list = []
        self.instrumentations: list = []
        self.lock = threading.RLock()


STATE = _State()
_LOCAL = threading.local()


class Recorder:
    """One recording: the events made between `start` and `stop`."""

    def __init__(
        self, record_shapes=False, profile_memory=False, with_stack=False, with_flops=False
    ):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.events: list = []
        self.recording = False

    def start(self) -> None:
        with STATE.lock:
            if self.recording:
                return
            if not STATE.recorders:
                _instrument()
            self.recording = True
            STATE.recorders += (self,)
            _settle()

    def stop(self) -> None:
        with STATE.lock:
            if not self.recording:
                return
            self.recording = False
            STATE.recorders = tuple(r for r in STATE.recorders if r is not self)
            _settle()
            if not STATE.recorders:
                _restore()
                _close_open_events(self.events)


def _close_open_events(events) -> None:
    """End the events still open when the last recorder stops (a range entered before and
    left after `stop`) there, and forget this thread's open ranges."""
    now = _perf_ns()
    for event in events:
        if not event.end_ns:
            event.end_ns = now
    _LOCAL.stack = []


def _settle() -> None:
    recorders = STATE.recorders
    STATE.shapes = any(r.record_shapes for r in recorders)
    STATE.memory = any(r.profile_memory for r in recorders)
    STATE.stack = any(r.with_stack for r in recorders)
    STATE.flops = any(r.with_flops for r in recorders)


def open_event(name: str, kind: str, args=None, device: str = "cpu") -> FunctionEvent:
    """Start an event on this thread, inside the event open there (its parent)."""
    stack = _LOCAL.__dict__.get("stack")
    if stack is None:
        stack = _LOCAL.stack = []
    parent = stack[-1] if stack else None
    event = FunctionEvent(next(_IDS), name, _native_id(), kind, parent, device)
    if parent is not None:
        parent.cpu_children.append(event)
    if args is not None and STATE.shapes:
        event.input_shapes = [list(getattr(a, "shape", ())) for a in args]
    if STATE.stack:
        event.stack = _user_stack()
    for recorder in STATE.recorders:
        recorder.events.append(event)
    stack.append(event)
    event.start_ns = _perf_ns()
    return event


def close_event(event: FunctionEvent) -> None:
    if not event.end_ns:
        event.end_ns = _perf_ns()
    stack = _LOCAL.__dict__.get("stack", ())
    if stack and stack[-1] is event:
        stack.pop()
    elif event in stack:
        stack.remove(event)


def _tocha_folders() -> tuple:
    import tocha

    return tuple(os.path.join(p, "") for p in tocha.__path__)


def _user_stack() -> list:
    """The caller's Python frames outside tocha, innermost first, as ``file(line): name``."""
    folders = _tocha_folders()
    frames = []
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(folders):
            frames.append(f"{filename}({frame.f_lineno}): {frame.f_code.co_name}")
        frame = frame.f_back
    return frames


def _root(array):
    base = getattr(array, "base", None)
    while base is not None and getattr(base, "base", None) is not None:
        base = base.base
    return array if base is None else base


def _new_bytes(result, args, kwargs) -> int:
    """Bytes of the arrays in `result` that share no memory with an input."""
    inputs = {id(_root(a)) for a in (*args, *kwargs.values()) if hasattr(a, "nbytes")}
    total = 0
    for r in result if type(result) in (tuple, list) else (result,):
        nbytes = getattr(r, "nbytes", None)
        if nbytes is not None and id(_root(r)) not in inputs:
            total += int(nbytes)
    return total


# Ops whose floating point operations `with_flops` counts: a product of an (..., k) operand
# (2 k per result element), or elementwise arithmetic (one per element).
_PRODUCTS = frozenset({"matmul", "linear"})
_ELEMENTWISE = frozenset({"add", "sub", "mul", "div"})


def _flops(name: str, args, result) -> int:
    size = getattr(result, "size", None)
    if type(size) is not int:
        return 0
    if name in _PRODUCTS and args and getattr(args[0], "ndim", 0) > 0:
        return 2 * size * args[0].shape[-1]
    return size if name in _ELEMENTWISE else 0


class _Timed:
    """An op's kernel on one device, timed while a profiler records."""

    __slots__ = ("kernel", "op_name", "name", "device")

    def __init__(self, op, device, kernel):
        self.kernel = kernel
        self.op_name = op.name
        self.name = "tocha::" + op.name
        self.device = str(device)

    def __call__(self, *args, **kwargs):
        if not STATE.recorders:
            return self.kernel(*args, **kwargs)
        event = open_event(self.name, "op", args, self.device)
        try:
            result = self.kernel(*args, **kwargs)
        finally:
            close_event(event)
        if STATE.memory:
            event.self_cpu_memory_usage = _new_bytes(result, args, kwargs)
        if STATE.flops:
            event.flops = _flops(self.op_name, args, result)
        return result


class _TimedKernels(_Kernels):
    """An op's kernel cache while a profiler records: a miss builds a timed kernel."""

    __slots__ = ()

    def __missing__(self, dev):
        timed = self[dev] = _Timed(self.op, dev, _Kernels.__missing__(self, dev))
        return timed


def _instrument() -> None:
    for op in list(REGISTRY.values()):
        kernels = op.kernels
        if type(kernels) is not _Kernels:
            continue
        for dev, kernel in list(kernels.items()):
            kernels[dev] = _Timed(op, dev, kernel)
        kernels.__class__ = _TimedKernels
    try:
        for install in STATE.instrumentations:
            STATE.undo.append(install())
    except BaseException:
        _restore()
        raise


def _restore() -> None:
    for op in list(REGISTRY.values()):
        kernels = op.kernels
        if type(kernels) is not _TimedKernels:
            continue
        kernels.__class__ = _Kernels
        for dev, kernel in list(kernels.items()):
            if type(kernel) is _Timed:
                kernels[dev] = kernel.kernel
    undo, STATE.undo = STATE.undo, []
    for step in reversed(undo):
        step()


def add_instrumentation(install) -> None:
    """Have ``install()`` run whenever profiling starts; it returns a function, called when
    profiling stops, that undoes what it did. Both run outside any op, so that nothing costs
    anything while no profiler records (tocha-autograd times its backward nodes so)."""
    with STATE.lock:
        STATE.instrumentations.append(install)
        if STATE.recorders:
            STATE.undo.append(install())


class record_function(ContextDecorator):
    """Label a block of code (``with record_function("name"):``) or a function (as a
    decorator): while a profiler records, the block is one event under that name, holding
    the ops it runs, in the table and the trace. ``args`` is accepted and ignored."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._open: list = []

    def __enter__(self):
        self._open.append(open_event(self.name, "user") if STATE.recorders else None)
        return self

    def __exit__(self, *exc) -> bool:
        event = self._open.pop()
        if event is not None:
            close_event(event)
        return False
