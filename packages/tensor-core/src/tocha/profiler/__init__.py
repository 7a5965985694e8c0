"""tocha.profiler, as ``torch.profiler``: `profile` with its `schedule`, `record_function`,
the averages table and Chrome traces.

Op events are named ``tocha::<op>`` (PyTorch's are ``aten::<op>``). While no profiler
records, nothing is instrumented: profiling swaps timed wrappers into the ops' kernel caches
and takes them out when it stops (see `tocha.profiler.profiler`).
"""

from typing import TYPE_CHECKING

from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = [
    "profile",
    "schedule",
    "ProfilerAction",
    "ProfilerActivity",
    "record_function",
    "supported_activities",
    "tensorboard_trace_handler",
]

# Hidden from type checkers, so that they report the names tocha lacks.
if not TYPE_CHECKING:

    def __getattr__(name):
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)
