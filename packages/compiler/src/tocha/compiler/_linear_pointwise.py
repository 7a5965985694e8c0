"""A graph pass: in graphs of inference (no gradient), a ``linear`` whose only use is an
activation becomes one ``linear_pointwise`` (``tocha.export.ops.linear_pointwise``), so that
a kernel provider (tocha-onednn: a matmul with the bias and the activation fused) runs both
as one call. Graphs that compute gradients (a ``tangents_*`` input) are left as they are:
their backward reads the linear map's own output."""

from __future__ import annotations

from tocha.export import ops
from tocha.fx import GraphModule, Node

__all__ = ["fuse_linear_activations"]

# (primitive, its arguments after the input) -> linear_pointwise's activation
_ACTIVATIONS = {
    ("relu", ()): "relu",
    ("gelu", ("none",)): "gelu",
    ("gelu", ("tanh",)): "gelu_tanh",
    ("tanh", ()): "tanh",
    ("sigmoid", ()): "sigmoid",
    ("silu", ()): "silu",
}


def _primitive(node: Node) -> str | None:
    if node.op == "call_function" and isinstance(node.target, ops.Primitive):
        return node.target.name
    return None


def _activation(node: Node) -> str | None:
    name = _primitive(node)
    if name is None or node.kwargs or not node.args:
        return None
    try:
        return _ACTIVATIONS.get((name, tuple(node.args[1:])))
    except TypeError:  # an unhashable argument
        return None


def fuse_linear_activations(gm: GraphModule) -> None:
    """Rewrite ``act(linear(x, w, [b]))`` to ``linear_pointwise(x, w, [b], act)`` in place,
    where the linear map has no other use and the graph computes no gradient."""
    graph = gm.graph
    if any(n.op == "placeholder" and n.name.startswith("tangents_") for n in graph.nodes):
        return
    for node in list(graph.nodes):
        activation = _activation(node)
        source = node.args[0] if activation else None
        if not isinstance(source, Node) or _primitive(source) != "linear":
            continue
        if len(source.users) != 1 or source.kwargs:
            continue
        with graph.inserting_before(node):
            fused = graph.call_function(ops.get("linear_pointwise"), (*source.args, activation))
        node.replace_all_uses_with(fused)
        graph.erase_node(node)
        graph.erase_node(source)
