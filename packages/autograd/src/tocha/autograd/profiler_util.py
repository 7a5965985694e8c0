"""tocha.autograd.profiler_util, as ``torch.autograd.profiler_util``: the profiler's event
types (`EventList`, `FunctionEvent`, `FunctionEventAvg`)."""

from __future__ import annotations

from tocha.profiler.profiler import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]
