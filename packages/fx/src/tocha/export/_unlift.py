"""`ExportedProgram.module()`: the flat graph turned back into a module that owns its state.

Lifted placeholders become ``get_attr`` nodes of the module's parameters, buffers and
constants; the user inputs become one placeholder per argument (nested inputs are taken
apart with ``operator.getitem``); buffer updates computed out of place (after
`run_decompositions`) are copied into the buffers; outputs are nested back as the original
module returned them. A forward pre-hook checks the inputs' sizes; ``train()`` and ``eval()``
raise, as in PyTorch (the graph was traced in one mode).
"""

from __future__ import annotations

import inspect
import operator
from typing import Any

import tocha
from tocha.fx.graph import Graph
from tocha.fx.graph_module import GraphModule

from ._layout import rebuild
from .graph_signature import ConstantArgument, InputKind, OutputKind

__all__ = ["InputGuard", "unlift"]


class InputGuard:
    """A forward pre-hook raising PyTorch's AssertionError for an input whose rank or static
    size differs from the example's, or whose dynamic size leaves its range."""

    def __init__(self, names: list[str], layouts: list[Any], checks: list[list]) -> None:
        self.names = names
        self.layouts = layouts
        self.checks = checks

    def mismatch(self, args: tuple, kwargs: dict) -> ValueError:
        expected = ", ".join(self.names)
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}=..." for k in kwargs])
        return ValueError(
            f"Trying to flatten user inputs with exported input tree spec: ({expected}) but "
            f"actually got inputs with tree spec of: ({got}). Please check that the inputs "
            "have the same number and type of args and kwargs as the ones you used when "
            "tracing."
        )

    def __call__(self, module: Any, args: tuple, kwargs: dict) -> None:
        params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in self.names]
        try:
            bound = inspect.Signature(params).bind(*args, **kwargs)
        except TypeError:
            raise self.mismatch(args, kwargs) from None
        leaves: list[Any] = []
        for name, layout in zip(self.names, self.layouts):
            _leaves(bound.arguments.get(name), layout, leaves)
        if len(leaves) != len(self.checks) or any(
            isinstance(v, tocha.Tensor) != (sizes is not None)
            for v, (_, sizes, _) in zip(leaves, self.checks)
        ):
            raise self.mismatch(args, kwargs)
        first: dict[str, tuple[str, int, int]] = {}  # symbol -> where it was first seen
        for value, (label, sizes, ranges) in zip(leaves, self.checks):
            if sizes is None:
                if value != ranges["equals"]:
                    raise AssertionError(f"Guard failed: {label} == {ranges['equals']!r}")
                continue
            if value.ndim != len(sizes):
                raise AssertionError(f"Guard failed: {label}.dim() == {len(sizes)}")
            for d, size in enumerate(sizes):
                actual = value.shape[d]
                if size is not None and actual != size:
                    raise AssertionError(f"Guard failed: {label}.size()[{d}] == {size}")
                if size is None:
                    lower, upper, *symbol = ranges[str(d)]
                    if symbol:
                        seen = first.setdefault(symbol[0], (label, d, actual))
                        if seen[2] != actual:
                            raise AssertionError(
                                f"Guard failed: {label}.size()[{d}] == {seen[0]}.size()[{seen[1]}]"
                            )
                    # a lower bound of 2 or less is the tracer's (sizes 0 and 1 specialise),
                    # not the program's: PyTorch's module accepts them
                    if lower > 2 and actual < lower:
                        raise AssertionError(f"Guard failed: {label}.size()[{d}] >= {lower}")
                    if upper is not None and actual > upper:
                        raise AssertionError(f"Guard failed: {label}.size()[{d}] <= {upper}")


class _Unsupported:
    """``train``/``eval`` of an exported module: its graph was traced in one mode, so
    PyTorch refuses to switch it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"Calling {self.name}() is not supported yet.")


def _leaves(value: Any, layout: Any, out: list) -> None:
    if "leaf" in layout or "const" in layout:
        out.append(value)
    elif "tuple" in layout or "list" in layout:
        for i, sub in enumerate(layout.get("tuple", layout.get("list"))):
            _leaves(
                value[i] if isinstance(value, (tuple, list)) and i < len(value) else None, sub, out
            )
    elif "dict" in layout:
        for k, sub in layout["dict"]:
            _leaves(value.get(k) if isinstance(value, dict) else None, sub, out)


def _register(
    root: tocha.nn.Module,
    target: str,
    value: tocha.Tensor,
    kind: InputKind,
    persistent: bool | None,
) -> None:
    *path, field = target.split(".")
    module = root
    for part in path:
        child = getattr(module, part, None)
        if not isinstance(child, tocha.nn.Module):
            child = tocha.nn.Module()
            setattr(module, part, child)
        module = child
    if kind is InputKind.PARAMETER:
        module.register_parameter(field, value)
    elif kind is InputKind.BUFFER:
        module.register_buffer(field, value, persistent=bool(persistent))
    else:
        setattr(module, field, value)


def _extract(graph: Graph, node: Any, layout: Any, leaves: dict[int, Any]) -> None:
    if "leaf" in layout:
        leaves[layout["leaf"]] = node
        return
    items = layout.get("tuple") or layout.get("list")
    pairs = list(enumerate(items)) if items is not None else layout.get("dict", [])
    for key, sub in pairs:
        if "const" not in sub:
            _extract(graph, graph.call_function(operator.getitem, (node, key)), sub, leaves)


def unlift(ep: Any) -> GraphModule:
    signature = ep.graph_signature
    root = tocha.nn.Module()
    for spec in signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            value = ep.state_dict.get(spec.target)
            if value is None:
                value = ep.constants[spec.target]
            _register(root, spec.target, value, spec.kind, spec.persistent)
    graph = Graph()
    names = [name for name, _ in ep.call_spec[0]]
    layouts = [layout for _, layout in ep.call_spec[0]]
    user_leaves: dict[int, Any] = {}
    for name, layout in ep.call_spec[0]:
        _extract(graph, graph.placeholder(name), layout, user_leaves)
    env: dict[Any, Any] = {}
    user_index = 0
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    for node, spec in zip(placeholders, signature.input_specs):
        if isinstance(spec.arg, ConstantArgument):
            env[node] = spec.arg.value
        elif spec.kind is InputKind.USER_INPUT:
            env[node] = user_leaves[user_index]
            user_index += 1
        else:
            env[node] = graph.get_attr(spec.target)
            env[node].meta = dict(node.meta)
    outputs: tuple = ()
    for node in ep.graph.nodes:
        if node.op == "call_function":
            env[node] = graph.node_copy(node, lambda n: env[n])
        elif node.op == "output":
            outputs = tuple(env[a] if hasattr(a, "op") else a for a in node.args[0])
    user_outputs = []
    state_nodes = {
        spec.target: env[n]
        for n, spec in zip(placeholders, signature.input_specs)
        if spec.kind is not InputKind.USER_INPUT
    }
    input_nodes = {n.name: env[n] for n in placeholders}
    for value, spec in zip(outputs, signature.output_specs):
        if spec.kind is OutputKind.BUFFER_MUTATION:
            graph.call_function(tocha.Tensor.copy_, (state_nodes[spec.target], value))
        elif spec.kind is OutputKind.USER_INPUT_MUTATION:
            graph.call_function(tocha.Tensor.copy_, (input_nodes[spec.target], value))
        else:
            user_outputs.append(value)
    graph.output(rebuild(ep.call_spec[1], user_outputs))
    module = GraphModule(root, graph)
    module.train = _Unsupported("train")
    module.eval = _Unsupported("eval")
    module.register_forward_pre_hook(InputGuard(names, layouts, ep._input_checks), with_kwargs=True)
    return module
