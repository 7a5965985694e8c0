"""Symbolic sizes: one captured graph that serves every size of a dynamic dimension.

A dimension is *dynamic* when ``tocha._dynamo.mark_dynamic`` marked it, under
``tocha.compile(dynamic=True)`` (dim 0 of the arguments that share the first argument's
dim-0 size: the batch) or, by default, once a function is called with a second size of it
(PyTorch's automatic dynamic shapes): the dims that changed, when they changed together
from one size to another. The graph is then traced twice more, on
*shadow* inputs whose dynamic dims are one and two larger (the rows repeated; module
state and the random stream put back afterwards). Three traces of one structure tell which
integer arguments of the primitives (a ``view``'s shape...) follow the size: each must be
``a * s + c`` for whole `a` and `c`, fitted on two traces and checked on the third. Those
arguments become `Sym` values (floats that are ``1 / n`` or ``n / (n - 1)`` of such a count,
`SymFloat`), written into the generated code as expressions of ``_s``,
which each generated function reads from the shape of one of its inputs; every other
argument, constant and non-tensor output must be equal in the three traces. Otherwise the
sizes stay static (a new size is a new entry). The compiled entry guards on the inputs'
static dims, the dynamic dims' relation to the size, and a size of at least 2 (sizes 0 and 1
change broadcasting: they are specialised, as in PyTorch).

A size the program turns into control flow (``if x.size(0) > 8``) is not seen by the traces
unless it changes the graph between them: such programs should not be compiled with
``dynamic=True``.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

import tocha
from tocha.export import ops
from tocha.fx import Node

from ._capture import Capture, flatten

__all__ = [
    "NotGeneral",
    "Sym",
    "SymFloat",
    "fit",
    "mark",
    "marked_dims",
    "shadow_args",
    "strip_symbols",
    "symbolic_dims",
    "unmark",
]

# id(tensor) -> (a weak reference to it, its dims marked dynamic)
_MARKED: dict[int, tuple[Any, set]] = {}


def mark(t: Any, dims: list[int]) -> None:
    """Remember `dims` of `t` as dynamic (``tocha._dynamo.mark_dynamic``)."""
    key = id(t)
    entry = _MARKED.get(key)
    if entry is None or entry[0]() is not t:
        entry = _MARKED[key] = (weakref.ref(t, lambda _: _MARKED.pop(key, None)), set())
    entry[1].update(d % t.dim() for d in dims)


def unmark(t: Any, dims: list[int] | None) -> None:
    """Forget `dims` of `t` (every dim when None) as dynamic (``mark_static``)."""
    entry = _MARKED.get(id(t))
    if entry is not None and entry[0]() is t:
        if dims is None:
            entry[1].clear()
        else:
            entry[1].difference_update(d % t.dim() for d in dims)


def marked_dims(t: Any) -> set:
    """The dims of `t` marked dynamic."""
    entry = _MARKED.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else set()


class NotGeneral(Exception):
    """The traces do not give one graph for every size."""


class Sym(int):
    """An integer argument that is ``a * s + c`` of the dynamic size ``s`` (its value is the
    one of the traced size)."""

    a: int
    c: int

    def __new__(cls, value: int, a: int, c: int) -> Sym:
        self = super().__new__(cls, value)
        self.a, self.c = a, c
        return self

    def source(self) -> str:
        """Python for the value in generated code, where ``_s`` is the size."""
        term = "_s" if self.a == 1 else f"{self.a} * _s"
        return f"({term} {'+' if self.c >= 0 else '-'} {abs(self.c)})" if self.c else term


class SymFloat(float):
    """A float argument that is a function of a count ``n = a * s + c`` of the dynamic size:
    ``1 / n`` (a mean) or ``n / (n - 1)`` (an unbiased variance's correction)."""

    form: str
    a: int
    c: int

    def __new__(cls, value: float, form: str, a: int, c: int) -> SymFloat:
        self = super().__new__(cls, value)
        self.form, self.a, self.c = form, a, c
        return self

    def source(self) -> str:
        n = Sym(0, self.a, self.c).source()
        return _FORMS[self.form][2].format(n=n)


# name -> (the count n from the value, the value from n, the value's source from n's)
_FORMS = {
    "reciprocal": (lambda v: 1 / v, lambda n: 1 / n, "(1 / {n})"),
    "bessel": (lambda v: v / (v - 1), lambda n: n / (n - 1), "({n} / ({n} - 1))"),
}


def _fit_float(sizes: tuple, values: tuple) -> SymFloat | None:
    """The `SymFloat` giving exactly `values` at the three `sizes`, if one does."""
    for form, (count_of, value_of, _) in _FORMS.items():
        try:
            counts = [round(count_of(v)) for v in values]
        except (ZeroDivisionError, OverflowError, ValueError):
            continue
        ac = _fit(sizes, tuple(counts))
        if ac is None:
            continue
        if [value_of(n) for n in counts] == list(values):
            return SymFloat(values[0], form, *ac)
    return None


def _fit(sizes: tuple, values: tuple) -> tuple[int, int] | None:
    """``(a, c)`` with ``value == a * size + c`` at the three sizes (consecutive), or None."""
    a = values[1] - values[0]
    c = values[0] - a * sizes[0]
    if a == 0 or values[2] != a * sizes[2] + c:
        return None
    return a, c


def shadow_args(args: tuple, kwargs: dict, dims: dict[int, list[int]], size: int) -> tuple:
    """`args` and `kwargs` with each tensor ``k`` of `dims` (flat position -> its dynamic
    dims) grown to `size` along those dims (its rows repeated)."""
    flat, rebuild = flatten((args, kwargs))
    for k, ds in dims.items():
        t = flat[k]
        data = np.asarray(t.detach().cpu().numpy())
        for d in ds:
            data = np.take(data, np.arange(size) % data.shape[d], axis=d)
        made = tocha.from_numpy(np.ascontiguousarray(data)).to(t.device)
        flat[k] = made.requires_grad_() if t.requires_grad else made
    return rebuild(flat)


def fit(caps: list[Capture], sizes: tuple) -> dict[Node, list]:
    """Compare three captures of one program at consecutive `sizes` (optimized graphs):
    write `Sym` arguments into the first's nodes and return its nodes' symbolic dims
    (node -> ``[(dim, a, c)]``); raise `NotGeneral` when the graphs differ otherwise."""
    graphs = [list(cap.gm.graph.nodes) for cap in caps]
    if len({len(g) for g in graphs}) != 1 or len({len(c.inputs) for c in caps}) != 1:
        raise NotGeneral("the traces have different graphs")
    for k in range(1, 3):
        if caps[k].grad_inputs != caps[0].grad_inputs:
            raise NotGeneral("the traces have different gradient inputs")
        for x, y in zip(caps[0].outputs, caps[k].outputs):
            if not isinstance(x, tocha.Tensor) and not _equal(x, y):
                raise NotGeneral("a non-tensor output depends on the size")
    index = [{n: i for i, n in enumerate(g)} for g in graphs]
    dims: dict[Node, list] = {}
    for i, trio in enumerate(zip(*graphs)):
        first = trio[0]
        for other in trio[1:]:
            if other.op != first.op or not _same_target(first.target, other.target):
                raise NotGeneral(f"node {i} differs between the traces")
            if first.op == "get_attr":
                values = [getattr(cap.gm, n.target) for cap, n in zip(caps, trio)]
                if not all(_equal(values[0], v) for v in values[1:]):
                    raise NotGeneral("a constant depends on the size")
        args = _merge([(n.args, n.kwargs) for n in trio], [index[k] for k in range(3)], sizes, i)
        first.args, first.kwargs = args
        symbolic = _value_dims([n.meta.get("val") for n in trio], sizes, first)
        if symbolic:
            dims[first] = symbolic
    caps[0].gm.recompile()
    return dims


def symbolic_dims(shapes: list[tuple], sizes: tuple) -> list | None:
    """``[(dim, a, c)]`` of the dims that follow the size in three shapes (None when one
    changes otherwise)."""
    if len({len(s) for s in shapes}) != 1:
        return None
    found = []
    for d, values in enumerate(zip(*shapes)):
        if len(set(values)) == 1:
            continue
        ac = _fit(sizes, values)
        if ac is None:
            return None
        found.append((d, *ac))
    return found


def _value_dims(vals: list, sizes: tuple, node: Node) -> list:
    if not all(isinstance(v, tocha.Tensor) for v in vals):
        return []
    shapes = [tuple(v.shape) for v in vals]
    found = symbolic_dims(shapes, sizes)
    if found is None:
        raise NotGeneral(f"the size of {node.name} is not linear in the dynamic size: {shapes}")
    return found


def _same_target(a: Any, b: Any) -> bool:
    if isinstance(a, ops.Primitive) and isinstance(b, ops.Primitive):
        return a.name == b.name
    return a is b or a == b


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, tocha.Tensor) or isinstance(b, tocha.Tensor):
        return (
            isinstance(a, tocha.Tensor)
            and isinstance(b, tocha.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and bool(tocha.equal(a, b) or (a.isnan() == b.isnan()).all())
        )
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _merge(trio: list, index: list, sizes: tuple, where: int) -> Any:
    """The first of three argument structures, with `Sym` where the ints follow the size."""
    first = trio[0]
    if isinstance(first, Node):
        if not all(isinstance(v, Node) for v in trio):
            raise NotGeneral(f"node {where} differs between the traces")
        if len({ix[v] for ix, v in zip(index, trio)}) != 1:
            raise NotGeneral(f"node {where} reads other values in another trace")
        return first
    if isinstance(first, (list, tuple)) and not hasattr(first, "_fields"):
        if any(type(v) is not type(first) or len(v) != len(first) for v in trio):
            raise NotGeneral(f"node {where}'s arguments differ between the traces")
        merged = [_merge(list(parts), index, sizes, where) for parts in zip(*trio)]
        return merged if isinstance(first, list) else tuple(merged)
    if isinstance(first, dict):
        if any(list(v) != list(first) for v in trio):
            raise NotGeneral(f"node {where}'s arguments differ between the traces")
        return {k: _merge([v[k] for v in trio], index, sizes, where) for k in first}
    if type(first) is int and all(type(v) is int for v in trio) and len(set(trio)) > 1:
        ac = _fit(sizes, tuple(trio))
        if ac is None:
            raise NotGeneral(f"node {where}'s argument {trio} is not linear in the size")
        return Sym(first, *ac)
    if type(first) is float and all(type(v) is float for v in trio) and len(set(trio)) > 1:
        made = _fit_float(sizes, tuple(trio))
        if made is None:
            raise NotGeneral(f"node {where}'s argument {first!r} depends on the size")
        return made
    if not all(_equal(first, v) for v in trio[1:]):
        raise NotGeneral(f"node {where}'s argument {first!r} depends on the size")
    return first


def strip_symbols(gm: Any) -> None:
    """`Sym` arguments back to plain ints (the graph compiled for its traced sizes)."""

    def plain(value: Any) -> Any:
        if isinstance(value, Sym):
            return int(value)
        if isinstance(value, SymFloat):
            return float(value)
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(plain(v) for v in value)
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    for node in gm.graph.nodes:
        node.args, node.kwargs = plain(node.args), plain(node.kwargs)
    gm.recompile()
