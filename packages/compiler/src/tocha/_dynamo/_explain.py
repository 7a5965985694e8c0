"""``torch._dynamo.explain``: what compiling a function gives, without keeping it compiled.

``explain(fn)(*args, **kwargs)`` compiles `fn` afresh, runs it once on the arguments and
reports the graphs captured, the graph breaks and their reasons, and the operations. tocha
captures every kernel a program runs, wherever its Python goes (a ``print``, a branch on a
tensor's value become guards rather than breaks), so it reports fewer breaks than PyTorch
for the same program: a break is what tocha cannot capture (``item()``, ``tolist()``, a
``backward()`` inside the function...).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tocha
from tocha.compiler._state import counters

__all__ = ["ExplainOutput", "GraphCompileReason", "explain"]


@dataclass
class GraphCompileReason:
    """Why a graph ended: `reason`, and the user's frames when known."""

    reason: str
    user_stack: list = field(default_factory=list)
    graph_break: bool = True


@dataclass
class ExplainOutput:
    """What `explain` found: the graphs compiled (``GraphModule``s), their count, the graph
    breaks (count and `GraphCompileReason`s), the operations (count and per graph), the
    guards (not listed by tocha: empty) and the compile times."""

    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list | None = None
    out_guards: list | None = None
    compile_times: str | None = None

    def __str__(self) -> str:
        output = f"Graph Count: {self.graph_count}\n"
        output += f"Graph Break Count: {self.graph_break_count}\n"
        output += f"Op Count: {self.op_count}\n"
        output += "Break Reasons:\n"
        for index, reason in enumerate(self.break_reasons):
            output += f"  Break Reason {index + 1}:\n"
            output += f"    Reason: {reason.reason}\n"
            output += "    User Stack:\n"
            for frame in reason.user_stack:
                output += f"      {frame}\n"
        if self.ops_per_graph is not None:
            output += "Ops per Graph:\n"
            for index, ops in enumerate(self.ops_per_graph):
                output += f"  Ops {index + 1}:\n"
                for op in ops:
                    output += f"    {op}\n"
        if self.out_guards is not None:
            output += "Out Guards:\n"
            for index, guard in enumerate(self.out_guards):
                output += f"  Guard {index + 1}:\n"
                output += f"    {guard}\n"
        if self.compile_times is not None:
            output += f"Compile Times: {self.compile_times}\n"
        return output


def explain(f: Callable, *extra_args: Any, **extra_kwargs: Any) -> Any:
    """``explain(f)(*args, **kwargs)``: an `ExplainOutput` for one call of `f` compiled.
    The older form ``explain(f, *args, **kwargs)`` warns and runs at once."""

    def inner(*args: Any, **kwargs: Any) -> ExplainOutput:
        graphs: list = []

        def record(gm: Any, example_inputs: list) -> Callable:
            graphs.append(gm)
            return gm.forward

        breaks_before = counters["graph_break"].copy()
        start = time.perf_counter()
        tocha.compile(f, backend=record)(*args, **kwargs)
        elapsed = time.perf_counter() - start
        reasons = []
        for reason, count in counters["graph_break"].items():
            reasons.extend(
                GraphCompileReason(reason) for _ in range(count - breaks_before.get(reason, 0))
            )
        ops_per_graph = [
            [node.target for node in gm.graph.nodes if node.op == "call_function"] for gm in graphs
        ]
        return ExplainOutput(
            graphs,
            len(graphs),
            len(reasons),
            reasons,
            sum(len(ops) for ops in ops_per_graph),
            ops_per_graph,
            [],
            f"TorchDynamo compilation metrics:\nFunction  Runtimes (s)\n"
            f"{getattr(f, '__qualname__', type(f).__name__)}  {elapsed:.4f}",
        )

    if extra_args or extra_kwargs:
        warnings.warn(
            "explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, **kwargs) instead. "
            "If you don't migrate, we may break your explain call in the future if your user "
            "defined kwargs conflict with future kwargs added to explain(f).",
            FutureWarning,
            stacklevel=2,
        )
        return inner(*extra_args, **extra_kwargs)
    return inner
