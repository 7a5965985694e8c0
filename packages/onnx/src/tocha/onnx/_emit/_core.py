"""Emitters of tocha-core's primitives, which the graphs of
``ExportedProgram.run_decompositions()`` call: each takes its kernel's arguments (tensors
first, then settings) and shares the emitter of the public function it implements."""

from __future__ import annotations

from typing import Any

import numpy as np

import tocha
from onnx import TensorProto, numpy_helper

from .._builder import Builder, meta_dtype, meta_shape, np_dtype, rank
from . import _nn, _pointwise, _shape


def _public(name: str) -> Any:
    fn = getattr(tocha, name)
    for table in (_pointwise.FUNCTIONS, _shape.FUNCTIONS, _nn.FUNCTIONS):
        if fn in table:
            return table[fn]
    raise KeyError(name)


def _positional(name: str):
    """A primitive whose positional arguments are its public function's."""
    emit = _public(name)

    def primitive(b: Builder, node, *args):
        return emit(b, node, *args)

    return primitive


def _view(b: Builder, node, x, shape):
    return b.op("Reshape", [b.value(x), b.ints(list(shape))])


def _expand(b: Builder, node, x, shape):
    return b.op("Expand", [b.value(x), b.ints(list(shape))])


def _permute(b: Builder, node, x, dims):
    return b.op("Transpose", [b.value(x)], perm=[d % rank(x) for d in dims])


def _squeeze(b: Builder, node, x, dims):
    dims = dims if isinstance(dims, (tuple, list)) else (dims,)
    return b.op("Squeeze", [b.value(x), b.ints([d % rank(x) for d in dims])])


def _unsqueeze(b: Builder, node, x, dim):
    return b.op("Unsqueeze", [b.value(x), b.ints([dim % (rank(x) + 1)])])


def _split_with_sizes(b: Builder, node, x, sizes, dim):
    names = b.op("Split", [b.value(x), b.ints(list(sizes))], outputs=len(sizes), axis=dim)
    return (names,) if isinstance(names, str) else tuple(names)


def _cat(b: Builder, node, *args):
    *tensors, dim = args
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = list(tensors[0])
    dtype = meta_dtype(node)
    return b.op("Concat", [b.operand(t, dtype) for t in tensors], axis=dim % rank(node))


def _reduction(op_type: str):
    def emit(b: Builder, node, x, dims, keepdim, dtype=None):
        axes = list(range(rank(x))) if dims is None else [d % rank(x) for d in dims]
        source = b.operand(x, meta_dtype(node)) if op_type != "ReduceMin" else b.value(x)
        return b.reduce(op_type, source, axes, keepdim)

    return emit


def _all(b: Builder, node, x, dims, keepdim):
    """All true: no zero, as a ReduceMin of the values cast to int."""
    as_int = b.op("Cast", [b.value(x)], to=TensorProto.INT32)
    axes = list(range(rank(x))) if dims is None else [d % rank(x) for d in dims]
    smallest = b.reduce("ReduceMin", as_int, axes, keepdim)
    return b.op("Cast", [smallest], to=TensorProto.BOOL)


def _isfinite(b: Builder, node, x):
    value = b.value(x)
    if not meta_dtype(x).is_floating_point:
        return b.op("Not", [b.op("IsNaN", [b.op("Cast", [value], to=TensorProto.FLOAT)])])
    bad = b.op("Or", [b.op("IsInf", [value]), b.op("IsNaN", [value])])
    return b.op("Not", [bad])


def _to_dtype(b: Builder, node, x, dtype):
    return b.operand(x, meta_dtype(node))


def _native_layer_norm(b: Builder, node, x, *rest):
    """``(x, [weight], [bias], nd, eps, affine)`` -> ``(out, mean, rstd)``; `affine` names the
    parameters given (``"wb"``, ``"w"``, ``"b"`` or ``""``)."""
    *params, nd, eps, affine = rest
    dtype = meta_dtype(x)
    weight = params[0] if "w" in affine else None
    bias = params[-1] if "b" in affine else None
    shape = list(meta_shape(x)[-nd:])
    if b.target < 17:  # before LayerNormalization
        y, mean, rstd = _nn.layer_norm_parts(b, b.value(x), nd, eps, dtype)
        if weight is not None:
            y = b.op("Mul", [y, b.value(weight)])
        return (y if bias is None else b.op("Add", [y, b.value(bias)]), mean, rstd)
    scale = b.const(np.ones(shape, np_dtype(dtype))) if weight is None else b.value(weight)
    outs = b.op(
        "LayerNormalization",
        [b.value(x), scale, None if bias is None else b.value(bias)],
        outputs=3,
        axis=-nd,
        epsilon=float(eps),
    )
    return tuple(outs)


def _filled(value: float):
    def emit(b: Builder, node, shape, dtype):
        fill = np.array([value], dtype=np_dtype(meta_dtype(node)))
        return b.op("ConstantOfShape", [b.ints(list(shape))], value=numpy_helper.from_array(fill))

    return emit


def _getitem(b: Builder, node, x, key):
    return _shape.FUNCTIONS[tocha.Tensor.__getitem__](b, node, x, key)


def _clamp(b: Builder, node, x, low, high, out=None):
    return _pointwise.FUNCTIONS[tocha.clamp](b, node, x, low, high)


PRIMITIVES: dict = {
    **{
        name: _positional(name)
        for name in (
            "add",
            "sub",
            "mul",
            "div",
            "maximum",
            "minimum",
            "pow",
            "neg",
            "relu",
            "sigmoid",
            "tanh",
            "exp",
            "log",
            "sqrt",
            "rsqrt",
            "abs",
            "erf",
            "sin",
            "cos",
            "reciprocal",
            "floor",
            "ceil",
            "sign",
            "logical_not",
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "where",
            "matmul",
        )
        if getattr(tocha, name, None) is not None
    },
    "view": _view,
    "reshape": _view,
    "expand": _expand,
    "permute": _permute,
    "squeeze": _squeeze,
    "unsqueeze": _unsqueeze,
    "split_with_sizes": _split_with_sizes,
    "cat": _cat,
    "sum": _reduction("ReduceSum"),
    "mean": _reduction("ReduceMean"),
    "amax": _reduction("ReduceMax"),
    "amin": _reduction("ReduceMin"),
    "all": _all,
    "isfinite": _isfinite,
    "to_dtype": _to_dtype,
    "native_layer_norm": _native_layer_norm,
    "getitem": _getitem,
    "zeros": _filled(0),
    "ones": _filled(1),
    "empty": _filled(0),
    "clamp": _clamp,
}
