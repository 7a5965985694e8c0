"""Compile backends: the built-in ones, and those other distributions declare in the
``tocha.compile_backends`` entry-point group (a name -> a callable).

A backend is called as PyTorch calls one: ``backend(gm, example_inputs)`` with a
`GraphModule` and its example inputs, returning a callable that computes the graph. The
built-in backends also compile a capture directly (`Builtin.build`):

- ``inductor`` (the default): forward and backward compiled ahead of time into generated
  functions of kernel calls, elementwise chains fused into generated kernels;
- ``aot_eager``: the same without fusion (each primitive's own kernel);
- ``eager``: the captured graph run node by node through the dispatcher (autograd records
  as in eager mode): for checking that capture is right.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from tocha.fx import GraphModule

from ._capture import Capture
from ._errors import InvalidBackend
from ._runtime import CompiledGraph

__all__ = ["Builtin", "aot_eager", "eager", "inductor", "list_backends", "resolve"]

GROUP = "tocha.compile_backends"


class Builtin:
    """A built-in backend: `aot` compiles forward and backward ahead of time, `fuse` fuses."""

    def __init__(self, name: str, aot: bool, fuse: bool) -> None:
        self.name = name
        self.aot = aot
        self.fuse = fuse

    def __repr__(self) -> str:
        return f"<tocha.compile backend {self.name!r}>"

    def build(self, cap: Capture, name: str, symbols: dict | None = None) -> Any:
        """The compiled form of a capture (`symbols`: its dims that follow a dynamic size,
        for the ahead-of-time backends)."""
        if not self.aot:
            return _NodeByNode(cap)
        return CompiledGraph(cap, self.fuse, _identifier(name), symbols)

    def __call__(self, gm: GraphModule, example_inputs: list) -> Callable:
        """PyTorch's backend protocol: `gm` compiled (for inputs like `example_inputs`, and
        recompiled for others)."""
        from ._frontend import CompiledFunction

        return CompiledFunction(gm, None, self, False, None, None)


class _NodeByNode:
    """The captured forward graph run through the dispatcher, each primitive recorded by
    autograd as in eager mode (the ``eager`` backend)."""

    def __init__(self, cap: Capture) -> None:
        self.gm = forward_graph(cap)

    def __call__(self, tensors: list) -> list:
        return list(self.gm(*tensors))


def forward_graph(cap: Capture) -> GraphModule:
    """The capture's graph without its backward: the outputs only."""
    graph = cap.gm.graph
    out = next(n for n in graph.nodes if n.op == "output")
    out.args = (tuple(out.args[0][: len(cap.outputs)]),)
    graph.eliminate_dead_code()
    for node in list(graph.nodes):
        if node.op == "placeholder" and node.name.startswith("tangents_"):
            graph.erase_node(node)
    for node in graph.nodes:  # the trace's example values would keep its tensors alive
        node.meta.pop("val", None)
        node.meta.pop("tensor_meta", None)
    cap.gm.recompile()
    return cap.gm


def _identifier(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name) or "graph"


inductor = Builtin("inductor", aot=True, fuse=True)
aot_eager = Builtin("aot_eager", aot=True, fuse=False)
eager = Builtin("eager", aot=False, fuse=False)
_BUILTIN = {"inductor": inductor, "aot_eager": aot_eager, "eager": eager}


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """The names of the backends `tocha.compile` accepts, sorted (``eager`` and
    ``aot_eager`` are debugging backends, listed only when `exclude_tags` is empty)."""
    names = {ep.name for ep in entry_points(group=GROUP)} | set(_BUILTIN)
    if exclude_tags:
        names -= {"eager", "aot_eager"}
    return sorted(names)


class _Custom:
    """A backend given as a callable: it receives the captured forward graph."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def build(self, cap: Capture, name: str) -> Any:
        gm = forward_graph(cap)
        compiled = self.fn(gm, list(cap.inputs))
        return lambda tensors: list(compiled(*tensors))


def resolve(backend: Any) -> Any:
    """The backend `tocha.compile(backend=...)` names: a built-in or entry-point name, or a
    callable; raises ``tocha._dynamo.exc.InvalidBackend`` for an unknown name."""
    if backend is None:
        backend = "inductor"
    if isinstance(backend, str):
        found = _BUILTIN.get(backend)
        if found is not None:
            return found
        for ep in entry_points(group=GROUP):
            if ep.name == backend:
                loaded = ep.load()
                return loaded if isinstance(loaded, Builtin) else _Custom(loaded)
        raise InvalidBackend(
            f"Invalid backend: {backend!r}, see `tocha._dynamo.list_backends()` for available "
            "backends."
        )
    if not callable(backend):
        raise TypeError(f"tocha.compile: backend must be a name or a callable, not {backend!r}")
    return backend if isinstance(backend, Builtin) else _Custom(backend)
