"""``torch.export.unflatten``: an exported program's flat graph rebuilt as the module
hierarchy it was traced from.

Export stamps each node with the module calls under way when it was recorded
(``meta['nn_module_stack']``). Unflattening walks the program's module graph (`ExportedProgram.
module()`): a run of consecutive nodes made inside one call of a submodule becomes a
``call_module`` node of the caller, and the run itself that submodule's graph, recursively.
A value a run reads from outside is an input of the submodule's graph (a parameter, buffer or
constant the submodule owns is a ``get_attr`` in its graph instead), and a value used after it
is an output. Each submodule is an `InterpreterModule` registered under its original name and
owning its original parameters and buffers; the root is an `UnflattenedModule`. A module
called several times keeps the graph of its first call.
"""

from __future__ import annotations

import operator
from typing import Any

import tocha
from tocha.fx.graph import Graph
from tocha.fx.interpreter import Interpreter
from tocha.fx.node import Node

from ._unlift import InputGuard, unlift

__all__ = ["InterpreterModule", "UnflattenedModule", "unflatten"]


class InterpreterModule(tocha.nn.Module):
    """A submodule of an unflattened program: runs its `graph` node by node on itself."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        names = [n.target for n in self.graph.nodes if n.op == "placeholder"]
        values = list(args)
        for name in names[len(args) :]:
            if name not in kwargs:
                raise TypeError(f"forward() missing required argument: '{name}'")
            values.append(kwargs.pop(name))
        if kwargs or len(values) != len(names):
            raise TypeError(
                f"forward() takes {len(names)} arguments ({', '.join(names)}) but got "
                f"{len(args)} positional and {sorted(kwargs)} keyword arguments"
            )
        return Interpreter(self, graph=self.graph).run(*values)


class UnflattenedModule(InterpreterModule):
    """The root of an unflattened program: its inputs and outputs are the exported module's
    (nested as they were), and its inputs are checked as ``ExportedProgram.module()``'s."""


def unflatten(module: Any, flat_args_adapter: Any = None) -> UnflattenedModule:
    """Rebuild the module hierarchy of the `ExportedProgram` `module`: an
    `UnflattenedModule` whose submodules carry the original names, each an
    `InterpreterModule` with its own ``graph``, holding the parameters and buffers under
    their original names; calling it gives the program's outputs."""
    if flat_args_adapter is not None:
        raise NotImplementedError(
            "unflatten(flat_args_adapter=...): tocha keeps the exported input layout, so no "
            "adapter is needed"
        )
    if not hasattr(module, "graph_signature"):
        raise TypeError(f"unflatten() expects an ExportedProgram, got {type(module).__name__}")
    flat = unlift(module)
    graphs: dict[str, Graph] = {}
    root_graph = Graph()
    env: dict[Node, Node] = {}
    nodes = list(flat.graph.nodes)
    for node in nodes:
        if node.op == "placeholder":
            env[node] = root_graph.placeholder(node.target)
            env[node].meta = dict(node.meta)
    body = [n for n in nodes if n.op in ("call_function", "call_method")]
    _emit(root_graph, "", 1, body, env, graphs)
    for node in nodes:
        if node.op == "output":
            root_graph.output(_mapped(root_graph, "", node.args[0], env))
    root = UnflattenedModule(root_graph)
    for path in sorted(graphs, key=lambda p: p.count(".")):
        owner, _, name = path.rpartition(".")
        _module_at(root, owner).add_module(name, InterpreterModule(graphs[path]))
    for name, value in flat.named_parameters(remove_duplicate=False):
        owner, _, field = name.rpartition(".")
        _module_at(root, owner).register_parameter(field, value)
    persistent = set(flat.state_dict(keep_vars=True))
    for name, value in flat.named_buffers(remove_duplicate=False):
        owner, _, field = name.rpartition(".")
        _module_at(root, owner).register_buffer(field, value, persistent=name in persistent)
    for name, value in _constants(flat):
        owner, _, field = name.rpartition(".")
        setattr(_module_at(root, owner), field, value)
    names = [name for name, _ in module.call_spec[0]]
    layouts = [layout for _, layout in module.call_spec[0]]
    guard = InputGuard(names, layouts, module._input_checks)
    root.register_forward_pre_hook(guard, with_kwargs=True)
    return root


def _emit(
    graph: Graph, path: str, depth: int, nodes: list[Node], env: dict[Node, Node], graphs: dict
) -> None:
    """Copy `nodes` (made inside the call of the module at `path`, `depth` calls deep) into
    `graph`: those of this call itself as they are, each run made inside a submodule's call
    as one ``call_module`` node."""
    i = 0
    while i < len(nodes):
        node = nodes[i]
        key = _key(node, depth)
        if key is None:
            for arg in node.all_input_nodes:
                _mapped(graph, path, arg, env)
            env[node] = graph.node_copy(node, lambda n: env[n])
            i += 1
            continue
        j = i
        while j < len(nodes) and _key(nodes[j], depth) == key:
            j += 1
        _call_child(graph, path, depth, nodes[i:j], key, env, graphs)
        i = j


def _call_child(
    graph: Graph,
    path: str,
    depth: int,
    run: list[Node],
    key: str,
    env: dict[Node, Node],
    graphs: dict,
) -> None:
    child_path = run[0].meta["nn_module_stack"][key][0]
    inside = set(run)
    inputs: list[Node] = []
    for node in run:
        for arg in node.all_input_nodes:
            if arg not in inside and arg not in inputs and not _owned(arg, child_path):
                inputs.append(arg)
    outputs = [n for n in run if any(user not in inside for user in n.users)]
    child = Graph()
    child_env: dict[Node, Node] = {}
    for arg in inputs:
        child_env[arg] = child.placeholder(arg.name)
    _emit(child, child_path, depth + 1, run, child_env, graphs)
    results = [child_env[n] for n in outputs]
    child.output(results[0] if len(results) == 1 else tuple(results))
    graphs.setdefault(child_path, child)
    target = child_path[len(path) + 1 :] if path else child_path
    call = graph.call_module(target, tuple(_mapped(graph, path, a, env) for a in inputs))
    if len(outputs) == 1:
        env[outputs[0]] = call
    else:
        for index, out in enumerate(outputs):
            env[out] = graph.call_function(operator.getitem, (call, index))


def _key(node: Node, depth: int) -> str | None:
    """The key of the submodule call, `depth` calls deep, that `node` was made in."""
    stack = node.meta.get("nn_module_stack")
    if not stack or len(stack) <= depth:
        return None
    return list(stack)[depth]


def _owned(node: Node, path: str) -> bool:
    """Whether `node` reads state that the module at `path` owns."""
    return node.op == "get_attr" and (not path or node.target.startswith(path + "."))


def _mapped(graph: Graph, path: str, value: Any, env: dict[Node, Node]) -> Any:
    """`value` with its nodes replaced by `graph`'s: state owned by the module at `path` is
    read with a ``get_attr`` by its name there."""
    if isinstance(value, Node):
        if value not in env and _owned(value, path):
            relative = value.target[len(path) + 1 :] if path else value.target
            env[value] = graph.get_attr(relative)
            env[value].meta = dict(value.meta)
        return env[value]
    if isinstance(value, (tuple, list)):
        return type(value)(_mapped(graph, path, v, env) for v in value)
    if isinstance(value, dict):
        return {k: _mapped(graph, path, v, env) for k, v in value.items()}
    return value


def _module_at(root: tocha.nn.Module, path: str) -> tocha.nn.Module:
    """The submodule of `root` at `path`, made (an empty module) where missing."""
    module = root
    for part in path.split(".") if path else ():
        child = dict(module.named_children()).get(part)
        if child is None:
            child = tocha.nn.Module()
            module.add_module(part, child)
        module = child
    return module


def _constants(flat: tocha.nn.Module) -> list[tuple[str, Any]]:
    """The constant tensors `flat`'s graph reads that are neither parameters nor buffers."""
    state = {name for name, _ in flat.named_parameters(remove_duplicate=False)}
    state.update(name for name, _ in flat.named_buffers(remove_duplicate=False))
    found = []
    for node in flat.graph.nodes:
        if node.op == "get_attr" and node.target not in state:
            value = flat
            for part in node.target.split("."):
                value = getattr(value, part)
            found.append((node.target, value))
    return found
