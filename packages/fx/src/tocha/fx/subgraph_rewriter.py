"""`replace_pattern`: find every occurrence of a pattern graph in a GraphModule and swap in a
replacement graph."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NamedTuple

from tocha.nn import Module

from ._symbolic_trace import symbolic_trace
from .graph import Graph, _has_path
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """One occurrence: ``anchor`` is the graph node matching the pattern's output, and
    ``nodes_map`` maps each pattern node to the graph node it matched."""

    anchor: Node
    nodes_map: dict[Node, Node]


def _as_graph(fn: Callable[..., Any] | GraphModule | Graph) -> Graph:
    if isinstance(fn, Graph):
        return fn
    if isinstance(fn, GraphModule):
        return fn.graph
    return symbolic_trace(fn).graph


class _Matcher:
    """Matches a pattern graph at an anchor node, following inputs backwards; placeholders
    match any node, consistently. A pattern returning several values matches its last
    output at the anchor, then finds each other output among the graph's nodes."""

    def __init__(self, pattern: Graph, graph_nodes: list[Node]) -> None:
        outputs = pattern.output_node().args[0]
        anchors = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
        if not anchors or not all(isinstance(a, Node) for a in anchors):
            raise RuntimeError("replace_pattern: the pattern must return nodes")
        self.anchors: list[Node] = anchors
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]
        self.graph_nodes = graph_nodes

    def match(self, anchor: Node) -> dict[Node, Node] | None:
        nodes_map: dict[Node, Node] = {}
        if not self._match_node(self.anchors[-1], anchor, nodes_map):
            return None
        for other in self.anchors[:-1]:
            if other in nodes_map:
                continue
            if not any(self._match_node(other, gn, nodes_map) for gn in self.graph_nodes):
                return None
        # A matched inner node must not be read outside the match, or replacing would
        # leave that reader without its input.
        matched = set(nodes_map.values())
        for pn, gn in nodes_map.items():
            if pn.op == "placeholder" or pn in self.anchors:
                continue
            if any(user not in matched for user in gn.users):
                return None
        return nodes_map

    def _match_node(self, pn: Node, gn: Node, nodes_map: dict[Node, Node]) -> bool:
        if pn in nodes_map:
            return nodes_map[pn] is gn
        if gn in nodes_map.values():
            return False
        if pn.op == "placeholder":
            nodes_map[pn] = gn
            return True
        if pn.op != gn.op or pn.target != gn.target:
            return False
        if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
            return False
        snapshot = dict(nodes_map)
        nodes_map[pn] = gn
        pairs = list(zip(pn.args, gn.args)) + [(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs]
        if all(self._match_arg(pa, ga, nodes_map) for pa, ga in pairs):
            return True
        nodes_map.clear()
        nodes_map.update(snapshot)
        return False

    def _match_arg(self, pa: Any, ga: Any, nodes_map: dict[Node, Node]) -> bool:
        if isinstance(pa, Node):
            return isinstance(ga, Node) and self._match_node(pa, ga, nodes_map)
        if isinstance(pa, (tuple, list)):
            return (
                isinstance(ga, (tuple, list))
                and len(pa) == len(ga)
                and all(self._match_arg(p, g, nodes_map) for p, g in zip(pa, ga))
            )
        return type(pa) is type(ga) and pa == ga


def replace_pattern(
    gm: GraphModule,
    pattern: Callable[..., Any] | GraphModule,
    replacement: Callable[..., Any] | GraphModule,
) -> list[Match]:
    """Replace each non-overlapping occurrence of `pattern` (a function or GraphModule,
    traced) in `gm`'s graph by `replacement`, which takes the same inputs and returns as
    many values, then recompile `gm`. Returns the matches, in graph order."""
    pattern_graph = _as_graph(pattern)
    replacement_graph = _as_graph(replacement)
    graph = gm.graph
    order = {n: i for i, n in enumerate(graph.nodes)}
    matcher = _Matcher(pattern_graph, list(order))
    matches: list[Match] = []
    taken: set[Node] = set()
    for node in reversed(list(order)):
        if node in taken or node.op in ("placeholder", "output"):
            continue
        nodes_map = matcher.match(node)
        if nodes_map is None or not _insertable(matcher, nodes_map, order):
            continue
        inner = {gn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        if inner & taken:
            continue
        taken |= inner
        matches.append(Match(anchor=node, nodes_map=nodes_map))
    matches.reverse()

    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if matches and len(replacement_placeholders) != len(matcher.placeholders):
        raise RuntimeError("replace_pattern: pattern and replacement take different inputs")
    for match in matches:
        _copy_replacement_attrs(gm, replacement)
        inputs = [match.nodes_map[p] for p in matcher.placeholders]
        val_map: dict[Node, Any] = dict(zip(replacement_placeholders, inputs))
        with _insertion_point(graph, matcher, match, inputs):
            result = graph.graph_copy(replacement_graph, val_map)
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        if len(results) != len(matcher.anchors):
            raise RuntimeError(
                f"replace_pattern: the replacement returns {len(results)} values where the "
                f"pattern returns {len(matcher.anchors)}"
            )
        for pattern_anchor, value in zip(matcher.anchors, results):
            if isinstance(value, Node):
                match.nodes_map[pattern_anchor].replace_all_uses_with(value)
        for pn in reversed(list(pattern_graph.nodes)):
            gn = match.nodes_map.get(pn)
            if gn is not None and pn.op != "placeholder" and not gn.users:
                graph.erase_node(gn)
    gm.recompile()
    return matches


def _insertable(matcher: _Matcher, nodes_map: dict[Node, Node], order: dict[Node, int]) -> bool:
    """Whether a multi-output match's replacement, placed after its last input, comes before
    every outside reader of its outputs."""
    if len(matcher.anchors) == 1:
        return True
    last_input = max((order[nodes_map[p]] for p in matcher.placeholders), default=-1)
    matched = set(nodes_map.values())
    return all(
        order[user] > last_input
        for anchor in matcher.anchors
        for user in nodes_map[anchor].users
        if user not in matched
    )


def _insertion_point(graph: Graph, matcher: _Matcher, match: Match, inputs: list[Node]) -> Any:
    """Before the first node reading the match's outputs, as torch.fx places it; with no
    reader, before the anchor for one output and after the last input for several."""
    position = {n: i for i, n in enumerate(graph.nodes)}
    matched = set(match.nodes_map.values())
    readers = [
        user
        for anchor in matcher.anchors
        for user in match.nodes_map[anchor].users
        if user not in matched
    ]
    if readers:
        return graph.inserting_before(min(readers, key=position.__getitem__))
    if len(matcher.anchors) == 1 or not inputs:
        return graph.inserting_before(match.anchor)
    return graph.inserting_after(max(inputs, key=position.__getitem__))


def _copy_replacement_attrs(gm: GraphModule, replacement: Any) -> None:
    """Give `gm` the submodules and attributes a GraphModule replacement refers to."""
    if not isinstance(replacement, GraphModule):
        return
    for node in replacement.graph.nodes:
        if node.op not in ("get_attr", "call_module") or _has_path(gm, str(node.target)):
            continue
        *prefix, field = str(node.target).split(".")
        value: Any = replacement
        for part in str(node.target).split("."):
            value = getattr(value, part)
        if isinstance(value, Module):
            gm.add_submodule(str(node.target), copy.deepcopy(value))
        else:
            owner = gm.get_submodule(".".join(prefix)) if prefix else gm
            setattr(owner, field, value)
