"""`make_fx`: a function traced on real values into a graph of tocha's primitives.

As ``torch.fx.experimental.proxy_tensor.make_fx`` records ATen operators, `make_fx` records
every kernel the dispatcher runs while the function runs, each as a call of the primitive
``tocha.export.ops.<name>``: calls of public functions, modules, autograd's backward and
optimizers alike are seen as the primitives they run. Grad mode stays as the caller set it,
so a function that calls ``tocha.autograd.grad`` or ``backward`` is traced through its
backward pass. Writes into an input become out-of-place primitives, and the input's last
value is copied back into it at the end of the graph (``Tensor.copy_``). Tensors the
function reads that are not among its inputs are held by the graph module as constants
(``_tensor_constant0``...), by reference. A Python value read from a traced tensor
(``bool(t)``, ``t.item()``, printing it) becomes a `python_value` node that checks, when the
graph runs on other values, that the read still gives what the trace saw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tocha
from tocha.fx.graph_module import GraphModule
from tocha.fx.node import has_side_effect

__all__ = ["DataDependentValueChanged", "make_fx", "python_value"]


class DataDependentValueChanged(RuntimeError):
    """A graph made by `make_fx` ran on values for which a Python value the trace read from a
    tensor (``bool(t)``, ``t.item()``...) differs: the traced control flow does not hold."""


@has_side_effect
def python_value(tensor: tocha.Tensor, conversion: str, *args: Any) -> Any:
    """``getattr(tensor, conversion)(*args[:-1])``, checked against ``args[-1]``, the value the
    trace saw; raises `DataDependentValueChanged` when it differs."""
    *call_args, expected = args
    value = getattr(tensor, conversion)(*call_args)
    if conversion == "numpy":
        same = value.shape == expected.shape and bool((value == expected).all())
    else:
        same = value == expected
    if not same:
        raise DataDependentValueChanged(
            f"the graph was traced where {conversion}() of a tensor gave {expected!r}, "
            f"and now it gives {value!r}"
        )
    return value


# The write-backs into inputs that graphs made here end with are effects, never dead code.
has_side_effect(tocha.Tensor.copy_)


def make_fx(
    f: Callable,
    decomposition_table: dict | None = None,
    tracing_mode: str = "real",
    _allow_non_fake_inputs: bool = False,
    *,
    pre_dispatch: bool = False,
    record_module_stack: bool = False,
) -> Callable[..., GraphModule]:
    """A function that traces ``f(*args)`` and returns the `GraphModule` of the primitives it
    ran (see the module docstring). Its placeholders are the leaves of ``args`` (tensors and
    Python values, flattened through lists, tuples and dicts), named ``arg0_1``, ``arg1_1``...;
    its output has the structure of ``f``'s result.

    Only ``tracing_mode="real"`` exists (tocha has no fake tensors); `decomposition_table`
    must be empty: every call is recorded as the primitives it runs.

    Example:
        >>> gm = make_fx(lambda x: x.sin().sum())(tocha.ones(3))
        >>> [n.target.name for n in gm.graph.nodes if n.op == "call_function"]
        ['sin', 'sum']
    """
    if tracing_mode != "real":
        raise NotImplementedError(
            f"make_fx: tracing_mode={tracing_mode!r} needs fake tensors, which tocha does not "
            "have; use tracing_mode='real'"
        )
    if decomposition_table:
        raise NotImplementedError(
            "make_fx: tocha records the primitives each call runs; a decomposition table "
            "cannot change them"
        )

    def wrapped(*args: Any) -> GraphModule:
        return trace_primitives(f, args)

    return wrapped


def trace_primitives(f: Callable, args: tuple) -> GraphModule:
    """``make_fx(f)(*args)``."""
    from tocha.export._intercept import recording
    from tocha.export._tracer import Tracer

    flat, rebuild = _flatten(list(args))
    tracer = Tracer(primitive=True)
    placeholders = []
    for i, value in enumerate(flat):
        name = f"arg{i}_1"
        if isinstance(value, tocha.Tensor):
            placeholders.append(tracer.placeholder(name, value))
        else:
            node = tracer.graph.placeholder(name)
            node.meta["val"] = value
            placeholders.append(node)
    with recording(tracer, [], [], grad=True, reads=True):
        out = f(*rebuild(flat))
        copies = [
            (node, tracer.node_of(value))
            for value, node in zip(flat, placeholders)
            if isinstance(value, tocha.Tensor) and tracer.node_of(value) is not node
        ]
        out_flat, out_rebuild = _flatten(out)
        out_args = [tracer.to_args(v) for v in out_flat]
    for target, source in copies:
        tracer.graph.call_function(tocha.Tensor.copy_, (target, source))
    tracer.graph.output(out_rebuild(out_args))
    root = tocha.nn.Module()
    for i, (_, value, node) in enumerate(tracer.lifted):
        name = f"_tensor_constant{i}"
        setattr(root, name, value)
        with tracer.graph.inserting_before(node):
            attr = tracer.graph.get_attr(name)
        attr.meta = dict(node.meta)
        node.replace_all_uses_with(attr)
        tracer.graph.erase_node(node)
    return GraphModule(root, tracer.graph)


def _flatten(value: Any) -> tuple[list, Callable[[list], Any]]:
    """The leaves of `value` (through lists, tuples and dicts) and a function rebuilding it
    from a list of new leaves."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        parts = [_flatten(v) for v in value]
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
        flat_values, rebuild_values = _flatten([value[k] for k in keys])
        return flat_values, lambda leaves: dict(zip(keys, rebuild_values(leaves)))
    return [value], lambda leaves: leaves[0]
