"""Scans, arg-reductions, top-k, max/min with indices, triangles and einsum."""

from __future__ import annotations

import tocha

from .._builder import Builder, meta_dtype, rank


def _dim(dim: int, ndim: int) -> int:
    return dim + ndim if dim < 0 else dim


def _cumsum(b: Builder, node, input, dim, *, dtype=None, out=None):
    x = b.operand(input, meta_dtype(node))
    return b.op("CumSum", [x, b.scalar(_dim(dim, max(rank(input), 1)), tocha.int64)])


def _arg(op_type: str):
    def emit(b: Builder, node, input, dim=None, keepdim=False):
        x = b.value(input)
        if dim is None:
            x = b.op("Reshape", [x, b.ints([-1])])
            index = b.op(op_type, [x], axis=0, keepdims=0, select_last_index=0)
            if keepdim:
                return b.op("Reshape", [index, b.ints([1] * rank(input))])
            return index
        d = _dim(dim, rank(input))
        return b.op(op_type, [x], axis=d, keepdims=int(keepdim), select_last_index=0)

    return emit


def _extreme(reduce: str, arg: str):
    """``max``/``min``: over everything, or ``(values, indices)`` along `dim`."""

    def emit(b: Builder, node, input, dim=None, keepdim=False, *, out=None):
        x = b.value(input)
        if dim is None:
            return b.reduce(reduce, x, list(range(rank(input))), False)
        if b.is_value(dim):  # max(a, b): the elementwise maximum
            return b.op("Max" if reduce == "ReduceMax" else "Min", [x, b.value(dim)])
        d = _dim(dim, rank(input))
        values = b.reduce(reduce, x, [d], keepdim)
        return values, b.op(arg, [x], axis=d, keepdims=int(keepdim), select_last_index=0)

    return emit


def _topk(b: Builder, node, input, k, dim=-1, largest=True, sorted=True, *, out=None):
    d = _dim(dim, rank(input))
    values, indices = b.op(
        "TopK",
        [b.value(input), b.ints([k])],
        outputs=2,
        axis=d,
        largest=int(largest),
        sorted=int(sorted),
    )
    return values, indices


def _triangle(upper: bool):
    def emit(b: Builder, node, input, diagonal=0, *, out=None):
        k = b.scalar(int(diagonal), tocha.int64)
        return b.op("Trilu", [b.value(input), k], upper=int(upper))

    return emit


def _einsum(b: Builder, node, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    dtype = meta_dtype(node)
    return b.op(
        "Einsum", [b.operand(x, dtype) for x in operands], equation=equation.replace(" ", "")
    )


def _prod(b: Builder, node, input, dim=None, keepdim=False, *, dtype=None, out=None):
    x = b.operand(input, meta_dtype(node))
    axes = list(range(rank(input))) if dim is None else [_dim(dim, rank(input))]
    return b.reduce("ReduceProd", x, axes, keepdim and dim is not None)


def _table() -> dict:
    table: dict = {}
    for name, emit in (
        ("cumsum", _cumsum),
        ("argmax", _arg("ArgMax")),
        ("argmin", _arg("ArgMin")),
        ("max", _extreme("ReduceMax", "ArgMax")),
        ("min", _extreme("ReduceMin", "ArgMin")),
        ("topk", _topk),
        ("tril", _triangle(False)),
        ("triu", _triangle(True)),
        ("einsum", _einsum),
        ("prod", _prod),
    ):
        for owner in (tocha, tocha.Tensor):
            fn = getattr(owner, name, None)
            if fn is not None:
                table[fn] = emit
    return table


FUNCTIONS = _table()
