"""`trace`: record a function's or module's tensor operations as code."""

from __future__ import annotations

from typing import Any


class TracerWarning(Warning):
    """A trace may not generalise: a tensor became a Python value, or outputs differ."""


class TracingCheckError(Exception):
    """The checks `trace` runs (``check_trace``) found that the trace is not reproducible."""

    def __init__(
        self, graph_diff_error: str, tensor_compare_error: str, extra_msg: str = ""
    ) -> None:
        self.message = "Tracing failed sanity checks!\n" + extra_msg + graph_diff_error
        self.message += tensor_compare_error
        super().__init__(self.message)


def trace(func: Any, example_inputs: Any = None, **kwargs: Any) -> Any:
    """Not yet available."""
    raise NotImplementedError("tocha.jit.trace")


def trace_module(mod: Any, inputs: dict, **kwargs: Any) -> Any:
    """Not yet available."""
    raise NotImplementedError("tocha.jit.trace_module")
