"""Fusion: chains of elementwise primitives (and one reduction closing a chain) become one
generated kernel each.

Walking the nodes in order, an elementwise node of a supported dtype joins the group of one
of its producers when it has the same shape, and when every value of the group that is used
outside it is used after the node (the group runs where its last node was). A reduction
(``sum``, ``mean``, ``amax``, ``amin``) whose input is the last value of a group and has no
other user closes the group. Each group of two or more primitives becomes a `FusedSpec`,
compiled by numba on the CPU (NumPy with reused buffers when numba is missing) and by the
CUDA generator on cuda. On the CPU a chain over fewer than `MIN_FUSED_SIZE` elements is not
fused: NumPy's calls cost less than a generated kernel's there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tocha
from tocha.export import ops
from tocha.fx import Node

from . import _logging
from ._dynamic import Sym, SymFloat
from ._spec import FusedSpec, Reduce, Step

__all__ = ["FusedGroup", "fuse"]

_SAME = {
    name: name
    for name in """add sub mul div pow maximum minimum atan2 neg abs square reciprocal rsqrt exp
    exp2 expm1 log log2 log10 log1p sqrt sin cos tan tanh sigmoid erf relu silu leaky_relu clamp
    floor ceil trunc sign eq ne lt le gt ge logical_not logical_and logical_or where""".split()
}
# Primitives written as several steps (`_expand`), and those worth a generated kernel even
# alone (the generators' float32 transcendentals vectorise; NumPy's call libm per element).
_EXPANDED = frozenset({"gelu", "gelu_backward", "to_dtype", "masked_fill"})
_COSTLY = frozenset({"gelu", "gelu_backward", "erf", "tanh", "sigmoid", "silu", "exp"})
_COMPARISONS = frozenset(
    {"eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and", "logical_or"}
)
_REDUCTIONS = frozenset({"sum", "mean", "amax", "amin"})
_DTYPES = frozenset({"float32", "float64", "int32", "int64", "bool"})


# On the CPU, chains over fewer elements stay separate NumPy calls: a generated kernel's call
# costs about 10 us, three small ufunc calls less.
MIN_FUSED_SIZE = 8192


def _size(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class FusedGroup:
    """Nodes computed by one generated kernel: `nodes` in order, the kernel's `inputs`
    (nodes), the `outputs` it returns (nodes, in the kernel's order) and the `kernel`."""

    def __init__(self, first: Node, shape: tuple) -> None:
        self.nodes = [first]
        self.shape = shape
        self.reduction: Node | None = None
        self.inputs: list[Node] = []
        self.outputs: list[Node] = []
        self.kernel: Any = None


def fuse(nodes: list[Node], keep: set, device: Any) -> dict[Node, FusedGroup]:
    """The fused groups among `nodes`, keyed by each group's last node; `keep`: values needed
    after `nodes` (outputs, saved for backward)."""
    compiler = _compiler_for(device)
    if compiler is None:
        return {}
    order = {n: i for i, n in enumerate(nodes)}
    group_of: dict[Node, FusedGroup] = {}
    groups: list[FusedGroup] = []
    for node in nodes:
        reduction = _reduction(node)
        if reduction is not None:
            source = node.args[0]
            group = group_of.get(source) if isinstance(source, Node) else None
            if (
                group is not None
                and group.reduction is None
                and group.nodes[-1] is source
                and len(source.users) == 1
                and source not in keep
                and _outside_users_after(group, node, order, keep)
            ):
                group.nodes.append(node)
                group.reduction = node
                group_of[node] = group
            continue
        shape = _elementwise_shape(node)
        if shape is None:
            continue
        joined = None
        for arg in node.all_input_nodes:
            group = group_of.get(arg)
            if (
                group is not None
                and group.reduction is None
                and group.shape == shape
                and _outside_users_after(group, node, order, keep)
            ):
                joined = group
                break
        if joined is None:
            joined = FusedGroup(node, shape)
            groups.append(joined)
        else:
            joined.nodes.append(node)
        group_of[node] = joined
    fused: dict[Node, FusedGroup] = {}
    for group in groups:
        alone = len(group.nodes) == 1 and group.nodes[0].target.name not in _COSTLY
        if alone or (device.type == "cpu" and _size(group.shape) < MIN_FUSED_SIZE):
            continue
        spec = _spec(group, keep)
        try:
            group.kernel = compiler(spec)
        except NotImplementedError as exc:
            _logging.fallback(f"a fused group stays unfused: {exc}")
            continue
        fused[group.nodes[-1]] = group
        _logging.kernel(spec, group.kernel)
    return fused


def _compiler_for(device: Any) -> Any:
    if device.type == "cpu":
        from . import _codegen_numba, _codegen_numpy

        if _codegen_numba.available():
            return _codegen_numba.compile_numba
        return _codegen_numpy.compile_numpy
    if device.type == "cuda":
        from . import _codegen_cupy

        xp = tocha.library.backend_of(device).xp
        return lambda spec: _codegen_cupy.compile_cupy(spec, xp)
    return None


def _outside_users_after(group: FusedGroup, node: Node, order: dict, keep: set) -> bool:
    """Whether every user outside the group (and `node`) of the group's values comes after
    `node`."""
    for member in group.nodes:
        for user in member.users:
            if user is node or user in group.nodes:
                continue
            if order.get(user, len(order)) < order[node]:
                return False
    return True


def _dtype_name(node: Any) -> str | None:
    val = node.meta.get("val") if isinstance(node, Node) else None
    if not isinstance(val, tocha.Tensor):
        return None
    return val._data.dtype.name


def _elementwise_shape(node: Node) -> tuple | None:
    """The shape of `node`'s value when it is a supported elementwise primitive."""
    if node.op != "call_function" or not isinstance(node.target, ops.Primitive):
        return None
    name = node.target.name
    if name not in _SAME and name not in _EXPANDED:
        return None
    if _dtype_name(node) not in _DTYPES or node.kwargs:
        return None
    if name == "masked_fill" and _dtype_name(node) not in ("float32", "float64"):
        return None
    for arg in node.args:
        if isinstance(arg, Node):
            if _dtype_name(arg) not in _DTYPES:
                return None
        elif not isinstance(arg, (bool, int, float, str, type(None), tocha.dtype)):
            return None
        elif isinstance(arg, (Sym, SymFloat)):  # follows a dynamic size: not a kernel's constant
            return None
    return tuple(node.meta["val"].shape)


def _reduction(node: Node) -> Reduce | None:
    if node.op != "call_function" or not isinstance(node.target, ops.Primitive):
        return None
    name = node.target.name
    if name not in _REDUCTIONS or _dtype_name(node) not in _DTYPES:
        return None
    source = node.args[0]
    if not isinstance(source, Node) or _dtype_name(source) not in ("float32", "float64"):
        return None
    dims, keepdim = node.args[1], node.args[2]
    if len(node.args) > 3 and node.args[3] is not None:
        return None
    ndim = source.meta["val"].dim()
    if dims is None:
        dims = ()
    dims = tuple(sorted(d % ndim for d in dims)) if ndim else ()
    if dims == tuple(range(ndim)):
        dims = ()
    return Reduce(name, dims, bool(keepdim), _dtype_name(node))


def _spec(group: FusedGroup, keep: set) -> FusedSpec:
    names: dict[Node, str] = {}
    inputs: list[tuple[str, str]] = []
    steps: list[Step] = []
    members = [n for n in group.nodes if n is not group.reduction]
    for node in members:
        args = []
        for arg in node.args:
            if isinstance(arg, Node):
                if arg not in names:
                    names[arg] = f"in{len(inputs)}"
                    inputs.append((names[arg], _dtype_name(arg)))
                    group.inputs.append(arg)
                args.append(names[arg])
            else:
                args.append(arg)
        dtype = _dtype_name(node)
        for op, step_args in _expand(node, args):
            here = len(steps)
            step_args = tuple(f"s{here + a}" if isinstance(a, _Local) else a for a in step_args)
            steps.append(Step(f"s{here}", op, step_args, dtype, _compute(node, op, dtype)))
        names[node] = steps[-1].name
    last = members[-1]
    outputs = [n for n in members[:-1] if n in keep or any(u not in group.nodes for u in n.users)]
    outputs.append(last)
    reduce = _reduction(group.reduction) if group.reduction is not None else None
    group.outputs = outputs[:-1] + [group.reduction if group.reduction is not None else last]
    return FusedSpec(tuple(inputs), tuple(steps), tuple(names[n] for n in outputs), reduce)


class _Local(int):
    """A reference, in `_expand`'s steps, to the step this many places before the one being
    written (``_Local(-1)``: the previous step)."""


_SQRT_HALF = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_SQRT_2_OVER_PI = 0.7978845608028654


def _expand(node: Node, args: list) -> list[tuple[str, tuple]]:
    """`node` as steps: ``(op, args)`` pairs, args naming inputs, earlier steps of this node
    (`_Local`) or constants; the last step gives the node's value."""
    name = node.target.name
    prev = _Local(-1)
    if name == "gelu":
        return [("gelu_tanh" if args[1] == "tanh" else "gelu", (args[0],))]
    if name == "to_dtype":
        return [("cast", (args[0],))]
    if name == "masked_fill":
        return [("where", (args[1], args[2], args[0]))]
    if name != "gelu_backward":
        return [(name, tuple(args))]
    grad, x = args[0], args[1]
    if args[2] == "tanh":  # d/dx of x/2 (1 + tanh(k (x + c x^3))), k = sqrt(2/pi)
        return [
            ("mul", (x, x)),  # 0: x^2
            ("mul", (prev, x)),  # 1: x^3
            ("mul", (prev, 0.044715)),
            ("add", (x, prev)),
            ("mul", (prev, _SQRT_2_OVER_PI)),
            ("tanh", (prev,)),  # 5: t
            ("add", (prev, 1.0)),
            ("mul", (prev, 0.5)),  # 7: (1 + t) / 2
            ("mul", (_Local(-3), _Local(-3))),  # 8: t^2
            ("sub", (1.0, prev)),  # 9: 1 - t^2
            ("mul", (_Local(-10), 0.134145)),  # 10: 3 c x^2
            ("add", (prev, 1.0)),
            ("mul", (prev, _SQRT_2_OVER_PI)),
            ("mul", (_Local(-4), prev)),  # 13: (1 - t^2) k (1 + 3 c x^2)
            ("mul", (prev, x)),
            ("mul", (prev, 0.5)),
            ("add", (_Local(-9), prev)),  # 16: the derivative
            ("mul", (grad, prev)),
        ]
    return [  # d/dx of x Phi(x) = Phi(x) + x phi(x)
        ("mul", (x, _SQRT_HALF)),
        ("erf", (prev,)),
        ("add", (prev, 1.0)),
        ("mul", (prev, 0.5)),  # 3: Phi(x)
        ("mul", (x, x)),
        ("mul", (prev, -0.5)),
        ("exp", (prev,)),
        ("mul", (prev, _INV_SQRT_2PI)),
        ("mul", (prev, x)),  # 8: x phi(x)
        ("add", (_Local(-6), prev)),
        ("mul", (grad, prev)),
    ]


def _compute(node: Node, op: str, dtype: str) -> str:
    """The dtype `op` computes in: the operands' common type for comparisons and logical ops,
    the result's otherwise."""
    if op not in _COMPARISONS:
        return dtype
    operands = [
        np.dtype(_dtype_name(a)) if isinstance(a, Node) else a
        for a in node.args
        if isinstance(a, Node) or isinstance(a, (bool, int, float))
    ]
    return np.result_type(*operands).name
