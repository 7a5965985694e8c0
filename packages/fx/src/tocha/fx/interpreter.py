"""`Interpreter` runs a GraphModule node by node; `Transformer` rebuilds it into a new one.
Override the per-op methods to change what a node does."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from tocha.nn import Module

from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, Node, Target, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Execute `module`'s graph one node at a time. ``run(*args)`` returns the output;
    subclasses override `run_node` or the per-op methods (`placeholder`, `get_attr`,
    `call_function`, `call_method`, `call_module`, `output`). With `garbage_collect_values`,
    values are dropped after their last use."""

    def __init__(
        self, module: Module, garbage_collect_values: bool = True, graph: Graph | None = None
    ) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph  # type: ignore[union-attr]
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            last_use: dict[Node, Node] = {}
            self.user_to_last_uses: dict[Node, list[Node]] = {}
            for node in reversed(self.graph.nodes):
                for inp in node.all_input_nodes:
                    if inp not in last_use:
                        last_use[inp] = node
                        self.user_to_last_uses.setdefault(node, []).append(inp)

    def run(
        self,
        *args: Any,
        initial_env: dict[Node, Any] | None = None,
        enable_io_processing: bool = True,
    ) -> Any:
        """Run the graph on `args` (the placeholders' values, in order) and return its
        output. `initial_env` pre-fills node values, skipping those nodes."""
        self.env = dict(initial_env) if initial_env is not None else {}
        self.args_iter: Iterator[Any] = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    e.args = (f"{e.args[0]}\n\n{msg}" if e.args else msg, *e.args[1:])
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list: list[Any]) -> Any:
        """`run` with the arguments in a list, which is cleared."""
        args_iter = list(args_list)
        args_list.clear()
        return self.run(*args_iter)

    def run_node(self, n: Node) -> Any:
        """Run one node: fetch its arguments' values and call the method named by its op."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per op --------------------------------------------------------------------
    def placeholder(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """The next positional argument (all the remaining ones for ``*args``; the default
        when they ran out)."""
        if str(target).startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if args:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not passed in!"
            ) from si

    def get_attr(self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]) -> Any:
        """The module attribute at dotted path `target`."""
        return self.fetch_attr(str(target))

    def call_function(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)  # type: ignore[operator]

    def call_method(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """``args[0].<target>(*args[1:], **kwargs)``."""
        self_obj, *rest = args
        return getattr(self_obj, str(target))(*rest, **kwargs)

    def call_module(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Call the submodule at dotted path `target`."""
        return self.fetch_attr(str(target))(*args, **kwargs)

    def output(self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]) -> Any:
        """The value the graph returns (``args[0]``)."""
        return args[0]

    # -- helpers ------------------------------------------------------------------------------
    def fetch_attr(self, target: str) -> Any:
        """The attribute of ``self.module`` at dotted path `target`."""
        obj: Any = self.module
        for i, part in enumerate(target.split(".")):
            if not hasattr(obj, part):
                done = ".".join(target.split(".")[:i])
                raise RuntimeError(f"Node referenced nonexistent target {done or part}")
            obj = getattr(obj, part)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """`n`'s arguments with each node replaced by its computed value."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return tuple(args), dict(kwargs)  # type: ignore[arg-type]

    def map_nodes_to_values(self, args: Argument, n: Node) -> Any:
        """`args` with each node replaced by its value in ``self.env``."""

        def load(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(
                    f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to "
                    "diagnose such issues"
                )
            return self.env[n_arg]

        return _unfreeze(map_arg(args, load))


def _unfreeze(a: Any) -> Any:
    """Nested immutable lists/dicts back to plain ones, as functions expect."""
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return tuple(_unfreeze(x) for x in a)
    if isinstance(a, list):
        return [_unfreeze(x) for x in a]
    if isinstance(a, dict):
        return {k: _unfreeze(v) for k, v in a.items()}
    return a


class Transformer(Interpreter):
    """Rebuild a GraphModule: ``transform()`` runs the graph on Proxies, so each per-op
    method emits nodes into a new graph; override them to rewrite. Returns a new
    GraphModule."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph._tracer_cls = getattr(module.graph, "_tracer_cls", None)
        from ._symbolic_trace import Tracer

        class TransformerTracer(Tracer):
            def __init__(self, graph: Graph) -> None:
                super().__init__()
                self.graph = graph
                self.tensor_attrs: dict[Any, str] = {}

            def is_leaf_module(self, _: Module, __: str) -> bool:
                return True

        self.tracer = TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Proxy:
        """A placeholder with the same name (and default) in the new graph."""
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(str(target), default_value=default), self.tracer)

    def get_attr(self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]) -> Proxy:
        """A get_attr node for `target` in the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """A call_module node for `target` in the new graph."""
        submod = self.fetch_attr(str(target))
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """A call_function node for `target` in the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        """A call_method node for `target` in the new graph."""
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        if isinstance(result, Proxy) and n.op != "output":
            result.node.meta = dict(n.meta)
        return result

    def transform(self) -> GraphModule:
        """Run the pass and return the GraphModule of the graph it produced."""
        from . import _patching
        from ._symbolic_trace import intercept_proxy_calls

        with _patching.Patcher() as patcher:
            # Overrides may call tocha's functions on the Proxies: they record nodes too.
            intercept_proxy_calls(patcher)
            result = super().run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(self.tracer.create_arg(result))
        return GraphModule(self.module, self.new_graph)
