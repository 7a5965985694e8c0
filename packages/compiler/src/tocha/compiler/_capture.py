"""Capture: one real call of the program traced into a graph of primitives, with its backward.

The call runs once, for real, inside `make_fx`: its outputs are the call's outputs (with
their eager autograd history, so the first call behaves exactly as eager), and every kernel
it runs is recorded. When grad mode is on and an input requires grad, the traced function
also asks autograd for the gradients of the differentiable outputs with respect to every
tensor the outputs depend on that requires grad (the *grad inputs*: inputs, parameters, and
tensors the program reads from elsewhere), given placeholder output gradients: the recorded
graph is then the **joint** forward and backward graph, which `partition` splits.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import tocha
from tocha.fx import GraphModule, Node
from tocha.fx.experimental.proxy_tensor import make_fx, python_value
from tocha.library import generator_stream

__all__ = ["Capture", "GraphBreak", "capture", "flatten", "partition"]

# Reads of tensor values into Python that a graph cannot check cheaply or replay (printing,
# floats, whole arrays): the program runs eagerly instead.
_BREAKING_READS = frozenset(
    {"item", "tolist", "numpy", "__float__", "__complex__", "__repr__", "__str__", "__format__"}
)


class GraphBreak(Exception):
    """The program did something a graph cannot replay: ``args[0]`` says what, ``args[1]``
    is the call's result (the call ran, eagerly)."""


@dataclass
class Capture:
    """A traced call. `gm`'s placeholders are the `inputs` (tensors, by position), then one
    gradient per differentiable output when `grad_inputs` is not empty; its output is the
    flat outputs, then the gradient of each grad input."""

    gm: GraphModule
    inputs: list
    outputs: list
    rebuild: Any
    differentiable: list[int] = field(default_factory=list)
    grad_inputs: list[int] = field(default_factory=list)


def capture(fn: Any, args: tuple, kwargs: dict, state: list, slots: list | None = None) -> Capture:
    """Run ``fn(*args, **kwargs)`` once and trace it. `state`: the tensors it reads besides its
    arguments that must be inputs (a module's parameters and buffers), in a fixed order;
    `slots`: where each is held (a dict and its key), so that the call reads a parameter
    through a view of it, whose gradient the capture takes: autograd.grad runs the hooks of a
    leaf it is asked for, and those belong to the backward that later runs the graph."""
    flat_args, rebuild_args = flatten((args, kwargs))
    user = [i for i, v in enumerate(flat_args) if isinstance(v, tocha.Tensor)]
    inputs = [flat_args[i] for i in user] + list(state)
    result: dict[str, Any] = {}
    before = _state_of(inputs)

    def traced(*tensors: Any) -> Any:
        leaves = list(flat_args)
        for i, t in zip(user, tensors):
            leaves[i] = t
        call_args, call_kwargs = rebuild_args(leaves)
        with _read_through_views(state, slots or []) as views:
            out = fn(*call_args, **call_kwargs)
        flat_out, rebuild_out = flatten(out)
        result["out"], result["rebuild"] = out, rebuild_out
        result["flat"] = flat_out
        _check_grads(inputs, before)
        if not tocha.is_grad_enabled():
            return flat_out
        differentiable = [
            k for k, v in enumerate(flat_out) if isinstance(v, tocha.Tensor) and v.requires_grad
        ]
        if not differentiable:
            return flat_out
        viewed = [views.get(id(t), t) for t in inputs]
        grad_inputs = _grad_inputs([flat_out[k] for k in differentiable], viewed)
        seeds = [tocha.empty_like(flat_out[k]) for k in differentiable]
        result["seeds"], result["differentiable"] = seeds, differentiable
        originals = {id(v): t for t, v in zip(inputs, viewed)}
        result["grad_inputs"] = [originals.get(id(t), t) for t in grad_inputs]
        try:
            grads = tocha.autograd.grad(
                [flat_out[k] for k in differentiable],
                grad_inputs,
                seeds,
                retain_graph=True,
                allow_unused=True,
            )
        except RuntimeError as exc:
            if "backward through the graph a second time" in str(exc):
                raise GraphBreak("the program runs backward() itself") from None
            raise
        return flat_out, list(grads)

    try:
        gm = make_fx(traced)(*inputs)
    except GraphBreak as exc:
        raise GraphBreak(exc.args[0], result["out"]) from None
    _fetch_streams(gm, inputs)
    try:
        _check_reads(gm)
        _check_effects(gm, inputs, before)
    except GraphBreak as exc:
        raise GraphBreak(exc.args[0], result["out"]) from None
    cap = Capture(gm, inputs, result["flat"], result["rebuild"])
    cap.first_result = result["out"]  # type: ignore[attr-defined]
    if "seeds" in result:
        _seeds_to_placeholders(gm, result["seeds"])
        cap.differentiable = result["differentiable"]
        positions = {id(t): i for i, t in enumerate(inputs)}
        for t in result["grad_inputs"]:
            if id(t) not in positions:
                positions[id(t)] = len(cap.inputs)
                cap.inputs.append(t)
                _constant_to_placeholder(gm, t)
            cap.grad_inputs.append(positions[id(t)])
    _flatten_output(gm)
    return cap


@contextlib.contextmanager
def _read_through_views(state: list, slots: list) -> Iterator[dict]:
    """Within the block, each leaf parameter of `state` requiring grad (with grad mode on) is
    held in its slot as a view of itself; yields the views by the parameter's id."""
    views: dict[int, Any] = {}
    swapped = []
    if tocha.is_grad_enabled():
        for t, (store, name) in zip(state, slots):
            if t.requires_grad and t.grad_fn is None and store.get(name) is t:
                views[id(t)] = view = t.view_as(t)
                store[name] = view
                swapped.append((store, name, t))
    try:
        yield views
    finally:
        for store, name, t in swapped:
            store[name] = t


def _fetch_streams(gm: GraphModule, inputs: list) -> None:
    """The default generator's random stream, which re-seeding replaces, is fetched when the
    graph runs (``tocha.library.generator_stream``) rather than kept from the trace."""
    devices = {t.device for t in inputs if isinstance(t, tocha.Tensor)} or {tocha.device("cpu")}
    streams = {id(generator_stream(None, d)): d for d in devices}
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        args = list(node.args)
        for i, arg in enumerate(args):
            if id(arg) in streams:
                with graph.inserting_before(node):
                    args[i] = graph.call_function(generator_stream, (None, streams[id(arg)]))
        node.args = tuple(args)
    gm.recompile()


def _grad_inputs(outputs: list, inputs: list) -> list:
    """The tensors requiring grad whose gradients the outputs' histories reach: the inputs
    (where the walk stops), and the leaves it reaches otherwise."""
    stops = {id(t.grad_fn): t for t in inputs if t.requires_grad and t.grad_fn is not None}
    found: dict[int, Any] = {id(t): t for t in inputs if t.requires_grad and t.grad_fn is None}
    reached: dict[int, Any] = {}
    seen: set[int] = set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    for t in outputs:
        if t.grad_fn is None and id(t) in found:
            reached[id(t)] = t
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in stops:
            reached[id(stops[id(node)])] = stops[id(node)]
            continue
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached[id(variable)] = variable
            continue
        stack.extend(fn for fn, _ in node.next_functions)
    ordered = [t for t in inputs if id(t) in reached]
    ordered += [t for k, t in reached.items() if not any(k == id(i) for i in inputs)]
    return ordered


def _state_of(inputs: list) -> list:
    """What a call may change in its inputs outside the kernels a graph records: each one's
    version counter (bumped by every write) and its ``.grad``."""
    return [(t._version, t.grad if t.requires_grad else None) for t in inputs]


def _check_effects(gm: GraphModule, inputs: list, before: list) -> None:
    """A graph break when the call wrote into an input other than through recorded kernels
    (an optimizer's step) or set a ``.grad`` (``backward()`` inside the program): a graph
    would not repeat those writes."""
    copied = {
        id(node.args[0].meta.get("val"))
        for node in gm.graph.nodes
        if node.op == "call_function" and node.target is tocha.Tensor.copy_
    }
    _check_grads(inputs, before)
    outputs = next(n for n in gm.graph.nodes if n.op == "output").all_input_nodes
    if not outputs and not copied:
        raise GraphBreak(
            "the program computes no tensor: only its effects matter, which run eagerly"
        )
    for t, (version, _) in zip(inputs, before):
        if t._version != version and id(t) not in copied:
            raise GraphBreak(
                "the program writes into a tensor outside tocha's kernels (an optimizer step?)"
            )


def _check_grads(inputs: list, before: list) -> None:
    for t, (_, grad) in zip(inputs, before):
        if t.requires_grad and t.grad is not grad:
            raise GraphBreak("the program sets a tensor's .grad (backward() inside the program)")


def _check_reads(gm: GraphModule) -> None:
    for node in gm.graph.nodes:
        if node.target is python_value and node.args[1] in _BREAKING_READS:
            what = node.args[1].strip("_")
            raise GraphBreak(
                f"the program reads a tensor's value into Python ({what}()), which a graph "
                "cannot replay"
            )


def _value_node(gm: GraphModule, tensor: Any) -> Node | None:
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        if isinstance(val, tocha.Tensor) and val._data is tensor._data:
            return node
    return None


def _seeds_to_placeholders(gm: GraphModule, seeds: list) -> None:
    """The output gradients the trace made (``empty_like``) become placeholders at the end."""
    graph = gm.graph
    last = [n for n in graph.nodes if n.op == "placeholder"][-1]
    for k, seed in enumerate(seeds):
        made = _value_node(gm, seed)
        with graph.inserting_after(last):
            node = graph.placeholder(f"tangents_{k + 1}")
        node.meta["val"] = seed
        last = node
        if made is not None:
            made.replace_all_uses_with(node)
            graph.erase_node(made)
    graph.eliminate_dead_code()


def _constant_to_placeholder(gm: GraphModule, tensor: Any) -> None:
    """A tensor the program read from elsewhere whose gradient is asked for: its constant
    becomes an input (after the others, before the output gradients)."""
    graph = gm.graph
    made = _value_node(gm, tensor)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    before = next((n for n in placeholders if n.name.startswith("tangents_")), None)
    where = (
        graph.inserting_before(before)
        if before is not None
        else graph.inserting_after(placeholders[-1])
    )
    with where:
        node = graph.placeholder(f"arg_state_{len(placeholders)}")
    node.meta["val"] = tensor
    if made is not None:
        made.replace_all_uses_with(node)
        graph.erase_node(made)


def _flatten_output(gm: GraphModule) -> None:
    """The output node holds one flat tuple: the outputs, then the gradients."""
    graph = gm.graph
    out = next(n for n in graph.nodes if n.op == "output")
    value = out.args[0]
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], list):
        flat = tuple(value[0]) + tuple(value[1])
    else:
        flat = tuple(value)
    out.args = (flat,)
    gm.recompile()


def partition(cap: Capture) -> tuple[list[Node], list[Node], list[Node]]:
    """The joint graph's nodes split into the forward's (what the outputs, the checks of
    values read and the write-backs need), the backward's (the rest of what the gradients
    need) and the values the backward reads from the forward (placeholders included)."""
    graph = cap.gm.graph
    nodes = list(graph.nodes)
    out = nodes[-1]
    flat = out.args[0]
    n_out = len(cap.outputs)
    roots = [v for v in flat[:n_out] if isinstance(v, Node)]
    roots += [n for n in nodes if n.op == "call_function" and _is_effect(n)]
    forward = _ancestors(roots)
    tangents = {n for n in nodes if n.op == "placeholder" and n.name.startswith("tangents_")}
    inputs = {n for n in nodes if n.op == "placeholder"} - tangents
    backward_roots = [v for v in flat[n_out:] if isinstance(v, Node)]
    backward = _ancestors(backward_roots) - forward - inputs - tangents
    for node in nodes:  # the backward reads parts of a forward tuple as saved values
        if node in backward and node.target is operator.getitem and node.args[0] not in backward:
            backward.discard(node)
            forward.add(node)
    saved = []
    seen: set[Node] = set()
    for node in nodes:
        if node not in backward:
            continue
        for arg in node.all_input_nodes:
            if arg not in backward and arg not in tangents and arg not in seen:
                seen.add(arg)
                saved.append(arg)
    for v in backward_roots:
        if v not in backward and v not in tangents and v not in seen:
            seen.add(v)
            saved.append(v)
    order = {n: i for i, n in enumerate(nodes)}
    fwd = sorted(forward - inputs, key=order.__getitem__)
    bwd = sorted(backward, key=order.__getitem__)
    saved.sort(key=order.__getitem__)
    return fwd, bwd, saved


def _is_effect(node: Node) -> bool:
    return node.target is python_value or node.target is tocha.Tensor.copy_


def _ancestors(roots: list[Node]) -> set[Node]:
    found: set[Node] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in found:
            continue
        found.add(node)
        stack.extend(node.all_input_nodes)
    return found


def flatten(value: Any) -> tuple[list, Any]:
    """The leaves of `value` through lists, tuples (not named tuples) and dicts, and a
    function rebuilding it from new leaves."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        parts = [flatten(v) for v in value]
        kind = type(value)

        def rebuild_seq(leaves: list) -> Any:
            items, at = [], 0
            for sub, sub_rebuild in parts:
                items.append(sub_rebuild(leaves[at : at + len(sub)]))
                at += len(sub)
            return items if kind is list else tuple(items)

        return [leaf for sub, _ in parts for leaf in sub], rebuild_seq
    if isinstance(value, dict):
        keys = list(value)
        flat_values, rebuild_values = flatten([value[k] for k in keys])
        return flat_values, lambda leaves: dict(zip(keys, rebuild_values(leaves)))
    return [value], lambda leaves: leaves[0]
