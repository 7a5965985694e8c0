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
    """Matches a single-output pattern at an anchor node, following inputs backwards;
    placeholders match any node, consistently."""

    def __init__(self, pattern: Graph) -> None:
        self.pattern = pattern
        outputs = pattern.output_node().args[0]
        if not isinstance(outputs, Node):
            raise NotImplementedError("replace_pattern supports patterns returning one value")
        self.pattern_anchor = outputs
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]

    def match(self, anchor: Node) -> dict[Node, Node] | None:
        nodes_map: dict[Node, Node] = {}
        if not self._match_node(self.pattern_anchor, anchor, nodes_map):
            return None
        # A matched inner node must not be read outside the match, or replacing would
        # leave that reader without its input.
        matched = set(nodes_map.values())
        for pn, gn in nodes_map.items():
            if pn.op == "placeholder" or pn is self.pattern_anchor:
                continue
            if any(user not in matched for user in gn.users):
                return None
        return nodes_map

    def _match_node(self, pn: Node, gn: Node, nodes_map: dict[Node, Node]) -> bool:
        if pn in nodes_map:
            return nodes_map[pn] is gn
        if pn.op == "placeholder":
            if gn in nodes_map.values():
                return False
            nodes_map[pn] = gn
            return True
        if pn.op != gn.op or pn.target != gn.target:
            return False
        if gn in nodes_map.values():
            return False
        if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
            return False
        nodes_map[pn] = gn
        pairs = list(zip(pn.args, gn.args)) + [(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs]
        if all(self._match_arg(pa, ga, nodes_map) for pa, ga in pairs):
            return True
        del nodes_map[pn]
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
    traced) in `gm`'s graph by `replacement`, which takes the same inputs, then recompile
    `gm`. Returns the matches, in graph order."""
    pattern_graph = _as_graph(pattern)
    replacement_graph = _as_graph(replacement)
    matcher = _Matcher(pattern_graph)
    graph = gm.graph
    matches: list[Match] = []
    taken: set[Node] = set()
    for node in reversed(list(graph.nodes)):
        if node in taken or node.op in ("placeholder", "output"):
            continue
        nodes_map = matcher.match(node)
        if nodes_map is None:
            continue
        inner = {gn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        if inner & taken:
            continue
        taken |= inner
        matches.append(Match(anchor=node, nodes_map=nodes_map))
    matches.reverse()

    for match in matches:
        _copy_replacement_attrs(gm, replacement)
        inputs = [match.nodes_map[p] for p in matcher.placeholders]
        val_map: dict[Node, Any] = {}
        replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(replacement_placeholders) != len(inputs):
            raise RuntimeError("replace_pattern: pattern and replacement take different inputs")
        val_map.update(zip(replacement_placeholders, inputs))
        with graph.inserting_before(match.anchor):
            result = graph.graph_copy(replacement_graph, val_map)
        if isinstance(result, (tuple, list)):
            if len(result) != 1:
                raise RuntimeError("replace_pattern: the replacement must return one value")
            result = result[0]
        if isinstance(result, Node):
            match.anchor.replace_all_uses_with(result)
        for pn in reversed(list(pattern_graph.nodes)):
            gn = match.nodes_map.get(pn)
            if gn is not None and pn.op != "placeholder" and not gn.users:
                graph.erase_node(gn)
    gm.recompile()
    return matches


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
