"""`profile`, its `schedule` and the trace handlers, as ``torch.profiler.profile``.

Events are named after tocha's ops, ``tocha::add`` where PyTorch says ``aten::add``;
`record_function` ranges keep the names given, and backward nodes are named as PyTorch
names them (``MulBackward0``). Times are host times, measured around each op's kernel.
"""

from __future__ import annotations

import enum
import os
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ._events import EventList, FunctionEvent, FunctionEventAvg
from ._record import Recorder, add_instrumentation, record_function

__all__ = [
    "profile",
    "schedule",
    "ProfilerAction",
    "ProfilerActivity",
    "tensorboard_trace_handler",
    "supported_activities",
    "record_function",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "add_instrumentation",
]


class ProfilerActivity(enum.Enum):
    """What a profiler records. tocha records host-side events for every activity asked
    for; device kernels are timed from the host."""

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does at a step, as a `schedule` says."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """The activities this process can profile: CPU, and CUDA where tocha-cuda has a GPU."""
    import tocha

    activities = {ProfilerActivity.CPU}
    if tocha.cuda.is_available():
        activities.add(ProfilerActivity.CUDA)
    return activities


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Callable[[int], ProfilerAction]:
    """The action at each step: after `skip_first` steps, cycles of `wait` idle steps,
    `warmup` steps and `active` recorded steps, the last of which saves the trace;
    `repeat` cycles (0: until the profiler stops). With `skip_first_wait`, the first cycle
    has no wait."""
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"step should be >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step >= repeat * cycle:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
) -> Callable[[Any], None]:
    """An `on_trace_ready` that writes each trace to `dir_name` as
    ``{worker_name}.{time_ns}.pt.trace.json`` (``.gz`` with `use_gzip`), the files
    TensorBoard's profiler plugin and Perfetto read. `worker_name` defaults to
    ``{hostname}_{pid}``."""

    def handler(prof) -> None:
        import socket

        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns()}.pt.trace.json")
        prof.export_chrome_trace(path + ".gz" if use_gzip else path)

    return handler


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:
    """Profile the code run inside ``with profile(...) as prof:`` (or between `start` and
    `stop`): every op, `record_function` range and backward node, as events.

    `schedule` (from `schedule`) decides at each `step` whether to record; a recorded cycle
    ends by calling ``on_trace_ready(prof)``. `record_shapes` keeps the input shapes of each
    op, `profile_memory` the bytes its result allocates, `with_stack` the Python frames that
    called it, `with_flops` the floating point operations of matrix products (``matmul``,
    ``linear``) and elementwise arithmetic. `with_modules`, `experimental_config` and the
    others are accepted and change nothing.
    """

    def __init__(
        self,
        *,
        activities: Iterable[ProfilerActivity] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[..., Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback: Callable[[], str] | None = None,
        post_processing_timeout_s: float | None = None,
    ) -> None:
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if use_cuda:
            warnings.warn(
                "`use_cuda` is deprecated and will be removed in a future release. Please use "
                "`activities` argument instead.",
                FutureWarning,
                stacklevel=2,
            )
            self.activities.add(ProfilerActivity.CUDA)
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.on_trace_ready = on_trace_ready
        self.acc_events = acc_events
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None
        self.step_num = 0
        self.current_action = self.schedule(0)
        self.profiler: Recorder | None = None
        self._saved: list = []
        self._metadata: dict = {}
        self._step_range: record_function | None = None

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self._transit(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self) -> None:
        self._exit_step()
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Mark the end of a training step: the schedule's next action starts."""
        self._exit_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._enter_step()

    def _enter_step(self) -> None:
        if self.record_steps and self.current_action in _RECORDING:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()
            event = self._step_range._open[-1]
            if event is not None:
                event.name = "ProfilerStep*"

    def _exit_step(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _transit(self, previous: ProfilerAction, current: ProfilerAction | None) -> None:
        """Move from one step's action to the next's (None: the profiler stops)."""
        A = ProfilerAction
        if previous is A.NONE:
            if current is A.WARMUP:
                self._prepare()
            elif current in _RECORDING:
                self._prepare()
                self.profiler.start()
        elif previous is A.WARMUP:
            if current in _RECORDING:
                self.profiler.start()
            elif current is A.NONE:
                warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
        elif previous is A.RECORD:
            if current is None:
                self.profiler.stop()
                self._save()
            elif current is A.NONE or current is A.WARMUP:
                warnings.warn(
                    f"Incorrect schedule: RECORD followed by {current.name}", stacklevel=3
                )
                self.profiler.stop()
        else:  # RECORD_AND_SAVE: the cycle ends
            self.profiler.stop()
            self._save()
            if current is A.WARMUP:
                self._prepare()
            elif current in _RECORDING:
                self._prepare()
                self.profiler.start()

    def _prepare(self) -> None:
        self.profiler = Recorder(
            self.record_shapes, self.profile_memory, self.with_stack, self.with_flops
        )

    def _save(self) -> None:
        if self.acc_events:
            self._saved.extend(self.profiler.events)
        else:
            self._saved = list(self.profiler.events)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def events(self) -> EventList:
        """The events of the last trace (of every trace with `acc_events`)."""
        if self.profiler is not None and self.profiler.recording:
            current = self.profiler.events
            events = [*self._saved, *current] if self.acc_events else current
        else:
            events = self._saved
        return EventList(events, self.profile_memory, self.with_flops)

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """The events averaged by name (and input shapes, or stack frames)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Write the trace as JSON in the Chrome trace event format (gzipped when `path` ends
        in ``.gz``), for chrome://tracing, Perfetto or TensorBoard."""
        self.events().export_chrome_trace(path, self._metadata)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write the events' stacks (with ``with_stack=True``) for flame graph tools."""
        self.events().export_stacks(path, metric)

    def add_metadata(self, key: str, value: str) -> None:
        """A string written at the top level of the exported trace."""
        self._metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        """A JSON value written at the top level of the exported trace."""
        import json

        self._metadata[key] = json.loads(value)
