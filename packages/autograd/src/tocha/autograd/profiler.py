"""tocha.autograd.profiler, as ``torch.autograd.profiler``: the legacy `profile`
(``with profile() as prof: ...; prof.key_averages().table()``) and `record_function`.

Importing this module (tocha.autograd does) times the backward engine's nodes while a
profiler records: each node is one event named as PyTorch names it (``MulBackward0``),
holding the ops of its formula. The engine is untouched while no profiler records.
"""

from __future__ import annotations

import warnings
from typing import Any

from tocha.profiler.profiler import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    ProfilerActivity,
    add_instrumentation,
    record_function,
)
from tocha.profiler.profiler import profile as _profile

from . import _engine

__all__ = [
    "profile",
    "record_function",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "emit_nvtx",
    "emit_itt",
    "kineto_available",
]


def _time_backward_nodes():
    """Swap the engine's node runner for one that records each node as an event; returns
    the function that puts the original back."""
    apply = _engine._apply

    def timed_apply(node, grads, retain_graph, create_graph):
        with record_function(node.name()):
            return apply(node, grads, retain_graph, create_graph)

    _engine._apply = timed_apply

    def undo() -> None:
        _engine._apply = apply

    return undo


add_instrumentation(_time_backward_nodes)


class profile:
    """Profile the code run inside ``with profile() as prof:``; then
    ``prof.key_averages().table(sort_by=...)``, ``prof.export_chrome_trace(path)``.

    `record_shapes`, `profile_memory` and `with_stack` are as in `tocha.profiler.profile`;
    `use_cuda`, `use_device`, `use_kineto`, `with_flops` and the others are accepted (times are
    host times, on every device). With ``enabled=False`` nothing is recorded.
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config: Any = None,
        acc_events: bool = False,
        custom_trace_id_callback: Any = None,
        post_processing_timeout_s: float | None = None,
        activity_filters: Any = None,
    ) -> None:
        if use_cuda:
            warnings.warn(
                "The attribute `use_cuda` will be deprecated soon, please use "
                "``use_device = 'cuda'`` instead.",
                FutureWarning,
                stacklevel=2,
            )
            use_device = "cuda"
        self.enabled = enabled
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.function_events: EventList | None = None
        self.entered = False
        activities = {ProfilerActivity.CPU} if use_cpu else set()
        if use_device is not None:
            activities.add(ProfilerActivity.CUDA)
        self._profile = _profile(
            activities=activities,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
            acc_events=acc_events,
        )

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._profile.start()
        return self

    def __exit__(self, *exc) -> None:
        if not self.enabled:
            return
        self._profile.stop()
        self.function_events = self._profile.events()

    def _finished(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def __repr__(self) -> str:
        if self.function_events is None:
            return "<unfinished tocha.autograd.profile>"
        return repr(self.function_events)

    def __str__(self) -> str:
        if self.function_events is None:
            return "<unfinished tocha.autograd.profile>"
        return self.function_events.table()

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs) -> str:
        """The events as the profiler table (see `EventList.table`)."""
        return self._finished().table(sort_by, row_limit, **kwargs)

    def key_averages(
        self, group_by_input_shape: bool = False, group_by_stack_n: int = 0, **kwargs
    ) -> EventList:
        """The events averaged by name (and input shapes, or stack frames)."""
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self) -> FunctionEventAvg:
        return self._finished().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The time, in microseconds, of the events outside any other."""
        return self._finished().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (JSON)."""
        self._finished().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write the events' stacks (with ``with_stack=True``) for flame graph tools."""
        self._finished().export_stacks(path, metric)


class _RangeMarkers:
    """A context manager that would mark each op as a range for an external profiler
    (NVIDIA Nsight, Intel VTune); tocha emits none, so it changes nothing."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


class emit_nvtx(_RangeMarkers):
    """``torch.autograd.profiler.emit_nvtx``: accepted, marks nothing (tocha emits no NVTX
    ranges)."""


class emit_itt(_RangeMarkers):
    """``torch.autograd.profiler.emit_itt``: accepted, marks nothing (tocha emits no ITT
    ranges)."""


def kineto_available() -> bool:
    """Whether `tocha.profiler.profile` (PyTorch's Kineto-based profiler) is available: it is."""
    return True
