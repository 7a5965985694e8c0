"""``split_module``: a GraphModule cut into one submodule per partition, as torch.fx's.

Each node other than the inputs (placeholders), the attribute reads (``get_attr``) and the
output is given a partition by a callback. Every partition becomes a ``GraphModule`` named
``submod_<partition>`` whose inputs are the values it reads from the graph's inputs and
attributes or from other partitions, and whose outputs are those the rest of the program
reads (a single value as itself, several as a tuple, unpacked by ``getitem`` nodes). The
returned module calls the partitions in an order that respects their dependencies.

Example:
    >>> from tocha.fx.passes.split_module import split_module
    >>> split = split_module(traced, model, lambda node: 0 if node.name == "linear" else 1)
    >>> split(x)  # the same values as traced(x)
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from tocha.nn import Module

from ..graph import Graph
from ..graph_module import GraphModule
from ..node import Node, map_arg

__all__ = ["Partition", "split_module"]


class Partition:
    """One partition while splitting: its nodes, the names of the values it reads
    (``inputs``) and of those it hands on (``outputs``), in order of discovery."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.submod_name = f"submod_{name}"
        self.node_names: list[str] = []
        self.inputs: dict[str, None] = {}
        self.outputs: dict[str, None] = {}
        self.dependencies: dict[str, None] = {}
        self.dependents: dict[str, None] = {}
        self.graph = Graph()
        self.environment: dict[Node, Node] = {}
        self.targets: dict[str, Any] = {}

    def __repr__(self) -> str:
        return (
            f"name: {self.name},\n nodes: {self.node_names},\n inputs: {list(self.inputs)},\n"
            f" outputs: {list(self.outputs)},\n partitions depended on: "
            f"{list(self.dependencies)},\n partition dependents: {list(self.dependents)}"
        )


def _get_attr(root: Module, target: str) -> Any:
    value: Any = root
    for part in target.split("."):
        value = getattr(value, part)
    return value


def split_module(
    m: GraphModule,
    root_m: Module,
    split_callback: Callable[[Node], int],
    qualname_map: dict[str, str] | None = None,
    keep_original_order: bool | None = False,
    keep_original_node_name: bool | None = False,
    keep_original_input_name: bool = True,
    *,
    partition_affix: str | None = None,
    tuple_return: bool = False,
) -> GraphModule:
    """`m` split into submodules ``submod_<n>``, one for each partition ``n`` that
    `split_callback` gives its nodes (`root_m`, the module `m` was traced from, is not
    used). `qualname_map`, when given, receives each new ``submod_<n>.<name>`` module
    target and the original target it stands for. `keep_original_order` calls the
    partitions in the order of their first nodes; `keep_original_node_name` keeps the
    nodes' names inside the partitions; `partition_affix` names them
    ``submod_<affix>_<n>``; `tuple_return` makes a partition with one output return a
    tuple. RuntimeError when partitions depend on each other in a cycle."""
    del root_m
    partitions: dict[str, Partition] = {}
    orig_nodes: dict[str, Node] = {}
    placement: dict[str, str] = {}  # node name -> partition name

    def record(def_node: Node, use_node: Node | None) -> None:
        def_partition = placement.get(def_node.name)
        use_partition = placement.get(use_node.name) if use_node is not None else None
        if def_partition != use_partition:
            if def_partition is not None:
                partitions[def_partition].outputs.setdefault(def_node.name)
                if use_partition is not None:
                    partitions[def_partition].dependents.setdefault(use_partition)
            if use_partition is not None:
                partitions[use_partition].inputs.setdefault(def_node.name)
                if def_partition is not None:
                    partitions[use_partition].dependencies.setdefault(def_partition)

    for node in m.graph.nodes:
        orig_nodes[node.name] = node
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        name = str(split_callback(node))
        partition = partitions.get(name)
        if partition is None:
            partition = partitions[name] = Partition(name)
            if partition_affix is not None:
                partition.submod_name = f"submod_{partition_affix}_{name}"
        partition.node_names.append(node.name)
        placement[node.name] = name

    for node in m.graph.nodes:
        if node.op == "output":
            map_arg(node.args[0], lambda n: record(n, None))
        elif node.op not in ("placeholder", "get_attr"):
            map_arg(node.args, lambda n, user=node: record(n, user))
            map_arg(node.kwargs, lambda n, user=node: record(n, user))

    # Partitions without dependencies first; the last found is taken first, as torch.fx's.
    pending = {name: len(p.dependencies) for name, p in partitions.items()}
    ready = [name for name, count in pending.items() if count == 0]
    order: list[str] = []
    while ready:
        name = ready.pop()
        order.append(name)
        for dependent in partitions[name].dependents:
            pending[dependent] -= 1
            if pending[dependent] == 0:
                ready.append(dependent)
    if len(order) != len(partitions):
        raise RuntimeError("cycle exists between partitions!")
    if keep_original_order:
        order = list(partitions)

    # Each partition's graph: its inputs, then its nodes copied.
    for partition in partitions.values():
        for input_name in partition.inputs:
            original = orig_nodes[input_name]
            placeholder = partition.graph.placeholder(
                input_name if keep_original_input_name else f"input_{len(partition.environment)}",
                type_expr=original.type,
            )
            placeholder.meta = dict(original.meta)
            partition.environment[original] = placeholder

    for node in m.graph.nodes:
        name = placement.get(node.name)
        if name is None:
            continue
        partition = partitions[name]
        env = partition.environment
        args = map_arg(node.args, env.__getitem__)
        kwargs = map_arg(node.kwargs, env.__getitem__)
        target = node.target
        if node.op == "call_module":
            target = str(node.target)
            local = target.replace(".", "_")
            partition.targets[local] = _get_attr(m, target)
            if qualname_map is not None:
                qualname_map[f"{partition.submod_name}.{local}"] = target
            target = local
        new_node = partition.graph.create_node(
            node.op,
            target,
            args,  # type: ignore[arg-type]
            kwargs,  # type: ignore[arg-type]
            name=node.name if keep_original_node_name else None,
            type_expr=node.type,
        )
        new_node.meta = dict(node.meta)
        env[node] = new_node

    # The module that calls them: the inputs and attribute reads, then the partitions.
    base_graph = Graph()
    base_env: dict[Node, Node] = {}
    base_targets: dict[str, Any] = {}
    for node in m.graph.nodes:
        if node.op == "placeholder":
            base_env[node] = base_graph.node_copy(node, lambda n: base_env[n])
        elif node.op == "get_attr":
            base_env[node] = base_graph.node_copy(node, lambda n: base_env[n])
            base_targets[str(node.target)] = _get_attr(m, str(node.target))

    for name in order:
        partition = partitions[name]
        outputs = [partition.environment[orig_nodes[o]] for o in partition.outputs]
        if len(outputs) == 1 and not tuple_return:
            partition.graph.output(outputs[0])
        else:
            partition.graph.output(tuple(outputs))
        base_targets[partition.submod_name] = GraphModule(partition.targets, partition.graph)
        call = base_graph.call_module(
            partition.submod_name,
            tuple(base_env[orig_nodes[i]] for i in partition.inputs),
        )
        if len(outputs) == 1 and not tuple_return:
            base_env[orig_nodes[next(iter(partition.outputs))]] = call
        else:
            for index, output_name in enumerate(partition.outputs):
                item = base_graph.call_function(operator.getitem, (call, index))
                item.meta = dict(orig_nodes[output_name].meta)
                base_env[orig_nodes[output_name]] = item

    for node in m.graph.nodes:
        if node.op == "output":
            base_graph.output(map_arg(node.args[0], lambda n: base_env[n]), type_expr=node.type)
    return GraphModule(base_targets, base_graph)
