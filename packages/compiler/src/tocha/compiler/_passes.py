"""Graph passes run on a capture before it is split: common subexpressions computed once,
and primitives of constants computed at compile time. (Dead code never reaches the
generated functions: each computes only what its outputs need, `_capture.partition`.)"""

from __future__ import annotations

from typing import Any

import tocha
from tocha.export import ops
from tocha.fx import GraphModule, Node

from ._linear_pointwise import fuse_linear_activations

__all__ = ["eliminate_common_subexpressions", "fold_constants", "optimize"]

# Primitives whose every call gives new values, or that write: never merged or folded.
_IMPURE = frozenset(
    """bernoulli native_dropout normal uniform randint randperm multinomial poisson exponential
    geometric log_normal cauchy empty setitem index_put""".split()
)


def optimize(gm: GraphModule) -> None:
    """Run the passes in place on `gm`."""
    fold_constants(gm)
    eliminate_common_subexpressions(gm)
    fuse_linear_activations(gm)
    gm.graph.eliminate_dead_code()
    gm.recompile()


def _pure(node: Node) -> bool:
    return (
        node.op == "call_function"
        and isinstance(node.target, ops.Primitive)
        and node.target.name not in _IMPURE
    )


def _key(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _key(v)) for k, v in value.items())))
    if isinstance(value, slice):
        return ("slice", _key(value.start), _key(value.stop), _key(value.step))
    if isinstance(value, float) and value != value:
        return ("nan",)
    hash(value)
    return (type(value).__name__, value)


def eliminate_common_subexpressions(gm: GraphModule) -> None:
    """A pure primitive called again with the same arguments reuses the first result."""
    seen: dict[Any, Node] = {}
    for node in list(gm.graph.nodes):
        if not _pure(node):
            continue
        try:
            key = (node.target.name, _key(node.args), _key(node.kwargs))
        except TypeError:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = node
            continue
        node.replace_all_uses_with(first)
        gm.graph.erase_node(node)


def fold_constants(gm: GraphModule) -> None:
    """A pure primitive whose tensor arguments are all constants becomes a constant."""
    count = 0
    for node in list(gm.graph.nodes):
        if not _pure(node) or not node.all_input_nodes:
            continue
        if any(arg.op != "get_attr" for arg in node.all_input_nodes):
            continue
        values = {arg: getattr(gm, arg.target) for arg in node.all_input_nodes}
        args = tocha.fx.map_arg(node.args, values.__getitem__)
        with tocha.no_grad():
            value = node.target(*args, **node.kwargs)
        if not isinstance(value, tocha.Tensor):
            continue
        name = f"_folded_constant{count}"
        count += 1
        setattr(gm, name, value)
        with gm.graph.inserting_before(node):
            attr = gm.graph.get_attr(name)
        attr.meta = dict(node.meta)
        node.replace_all_uses_with(attr)
        gm.graph.erase_node(node)
