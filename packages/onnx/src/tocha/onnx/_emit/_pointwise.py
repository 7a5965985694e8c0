"""Elementwise emitters: arithmetic, comparisons, unary functions and activations."""

from __future__ import annotations

import math
import operator
from typing import Any

import tocha
import tocha.nn.functional as F

from .._builder import Builder, meta_dtype, onnx_dtype, rank, static_dim


def _out_dtype(node: Any) -> tocha.dtype:
    """The dtype of a node's tensor result (int64 for a symbolic size)."""
    dtype = meta_dtype(node)
    return tocha.int64 if dtype is None else dtype


def _binary(op_type: str):
    def emit(b: Builder, node, input, other, *, alpha=1, out=None):
        dtype = _out_dtype(node)
        x, y = b.operand(input, dtype), b.operand(other, dtype)
        if alpha != 1:
            y = b.op("Mul", [y, b.scalar(alpha, dtype)])
        return b.op(op_type, [x, y])

    return emit


def _reversed(op_type: str):
    def emit(b: Builder, node, input, other, *, alpha=1):
        return _binary(op_type)(b, node, other, input, alpha=alpha)

    return emit


def _div(b: Builder, node, input, other, *, rounding_mode=None, out=None):
    dtype = _out_dtype(node)
    if rounding_mode is not None and not dtype.is_floating_point:
        x, y = b.operand(input, tocha.float64), b.operand(other, tocha.float64)
        q = b.op("Floor" if rounding_mode == "floor" else "Identity", [b.op("Div", [x, y])])
        if rounding_mode == "trunc":
            q = b.op("Mul", [b.op("Sign", [q]), b.op("Floor", [b.op("Abs", [q])])])
        return b.op("Cast", [q], to=onnx_dtype(dtype))
    x, y = b.operand(input, dtype), b.operand(other, dtype)
    q = b.op("Div", [x, y])
    if rounding_mode == "floor":
        return b.op("Floor", [q])
    if rounding_mode == "trunc":
        return b.op("Mul", [b.op("Sign", [q]), b.op("Floor", [b.op("Abs", [q])])])
    return q


def _floordiv(b: Builder, node, a, c):
    dtype = _out_dtype(node)
    if dtype.is_floating_point:
        return b.op("Floor", [b.op("Div", [b.operand(a, dtype), b.operand(c, dtype)])])
    return _div(b, node, a, c, rounding_mode="floor")


def _compare(op_type: str, negate: bool = False):
    def emit(b: Builder, node, input, other, *, out=None):
        dtypes = [meta_dtype(v) or tocha.int64 for v in (input, other) if b.is_value(v)]
        dtype = tocha.promote_types(*dtypes) if len(dtypes) == 2 else dtypes[0]
        r = b.op(op_type, [b.operand(input, dtype), b.operand(other, dtype)])
        return b.op("Not", [r]) if negate else r

    return emit


def _unary(op_type: str):
    def emit(b: Builder, node, input, *args, **kwargs):
        return b.op(op_type, [b.operand(input, _out_dtype(node))])

    return emit


def _pow(b: Builder, node, input, exponent, *, out=None):
    dtype = _out_dtype(node)
    return b.op("Pow", [b.operand(input, dtype), b.operand(exponent, dtype)])


def _rsqrt(b: Builder, node, input, *, out=None):
    return b.op("Reciprocal", [b.op("Sqrt", [b.operand(input, _out_dtype(node))])])


def _gelu(b: Builder, node, input, approximate="none"):
    dtype = _out_dtype(node)
    x = b.value(input)
    if b.opset >= 20:
        return b.op("Gelu", [x], approximate=approximate)
    if approximate == "tanh":
        cube = b.op("Mul", [b.op("Mul", [x, x]), x])
        inner = b.op("Add", [x, b.op("Mul", [cube, b.scalar(0.044715, dtype)])])
        t = b.op("Tanh", [b.op("Mul", [inner, b.scalar(math.sqrt(2 / math.pi), dtype)])])
    elif approximate == "none":
        t = b.op("Erf", [b.op("Div", [x, b.scalar(math.sqrt(2.0), dtype)])])
    else:
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate}")
    half_x = b.op("Mul", [x, b.scalar(0.5, dtype)])
    return b.op("Mul", [half_x, b.op("Add", [t, b.scalar(1.0, dtype)])])


def _silu(b: Builder, node, input, inplace=False):
    x = b.value(input)
    return b.op("Mul", [x, b.op("Sigmoid", [x])])


def _leaky_relu(b: Builder, node, input, negative_slope=0.01, inplace=False):
    return b.op("LeakyRelu", [b.value(input)], alpha=float(negative_slope))


def _elu(b: Builder, node, input, alpha=1.0, inplace=False):
    return b.op("Elu", [b.value(input)], alpha=float(alpha))


def _hardtanh(b: Builder, node, input, min_val=-1.0, max_val=1.0, inplace=False):
    dtype = _out_dtype(node)
    return b.op("Clip", [b.value(input), b.scalar(min_val, dtype), b.scalar(max_val, dtype)])


def _relu6(b: Builder, node, input, inplace=False):
    return _hardtanh(b, node, input, 0.0, 6.0)


def _hardsigmoid(b: Builder, node, input, inplace=False):
    return b.op("HardSigmoid", [b.value(input)], alpha=1 / 6, beta=0.5)


def _hardswish(b: Builder, node, input, inplace=False):
    return b.op("HardSwish", [b.value(input)])


def _softplus(b: Builder, node, input, beta=1.0, threshold=20.0):
    dtype = _out_dtype(node)
    x = b.value(input)
    bx = b.op("Mul", [x, b.scalar(beta, dtype)])
    soft = b.op("Div", [b.op("Softplus", [bx]), b.scalar(beta, dtype)])
    return b.op("Where", [b.op("Greater", [bx, b.scalar(threshold, dtype)]), x, soft])


def _prelu(b: Builder, node, input, weight):
    slope = b.value(weight)
    ndim = rank(input)
    if static_dim(weight, 0) != 1 and ndim > 2:
        slope = b.op("Reshape", [slope, b.ints([-1] + [1] * (ndim - 2))])
    return b.op("PRelu", [b.value(input), slope])


def _mish(b: Builder, node, input, inplace=False):
    x = b.value(input)
    if b.opset >= 18:
        return b.op("Mish", [x])
    return b.op("Mul", [x, b.op("Tanh", [b.op("Softplus", [x])])])


def _selu(b: Builder, node, input, inplace=False):
    return b.op("Selu", [b.value(input)])


def _celu(b: Builder, node, input, alpha=1.0, inplace=False):
    return b.op("Celu", [b.value(input)], alpha=float(alpha))


def _logsigmoid(b: Builder, node, input):
    x = b.value(input)
    return b.op("Neg", [b.op("Softplus", [b.op("Neg", [x])])])


def _softsign(b: Builder, node, input):
    return b.op("Softsign", [b.value(input)])


def _tanhshrink(b: Builder, node, input):
    x = b.value(input)
    return b.op("Sub", [x, b.op("Tanh", [x])])


def _shrink(soft: bool):
    def emit(b: Builder, node, input, lambd=0.5):
        bias = float(lambd) if soft else 0.0
        return b.op("Shrink", [b.value(input)], lambd=float(lambd), bias=bias)

    return emit


def _threshold(b: Builder, node, input, threshold, value, inplace=False):
    dtype = _out_dtype(node)
    x = b.value(input)
    above = b.op("Greater", [x, b.scalar(threshold, dtype)])
    return b.op("Where", [above, x, b.scalar(value, dtype)])


def _glu(b: Builder, node, input, dim=-1):
    d = dim + rank(input) if dim < 0 else dim
    half = static_dim(input, d) // 2
    a, g = b.op("Split", [b.value(input), b.ints([half, half])], outputs=2, axis=d)
    return b.op("Mul", [a, b.op("Sigmoid", [g])])


def _clamp(b: Builder, node, input, min=None, max=None, *, out=None):
    dtype = _out_dtype(node)
    lo = None if min is None else b.operand(min, dtype)
    hi = None if max is None else b.operand(max, dtype)
    return b.op("Clip", [b.value(input), lo, hi])


def _where(b: Builder, node, condition, input, other, *, out=None):
    dtype = _out_dtype(node)
    cond = b.operand(condition, tocha.bool)
    return b.op("Where", [cond, b.operand(input, dtype), b.operand(other, dtype)])


def _masked_fill(b: Builder, node, input, mask, value):
    dtype = _out_dtype(node)
    cond = b.operand(mask, tocha.bool)
    return b.op("Where", [cond, b.operand(value, dtype), b.value(input)])


BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "maximum": "Max", "minimum": "Min"}
UNARY = {
    "relu": "Relu",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "neg": "Neg",
    "abs": "Abs",
    "sin": "Sin",
    "cos": "Cos",
    "erf": "Erf",
    "reciprocal": "Reciprocal",
    "floor": "Floor",
    "ceil": "Ceil",
    "sign": "Sign",
    "logical_not": "Not",
}
COMPARE = {
    "eq": ("Equal", False),
    "ne": ("Equal", True),
    "lt": ("Less", False),
    "le": ("LessOrEqual", False),
    "gt": ("Greater", False),
    "ge": ("GreaterOrEqual", False),
}


def _table() -> dict:
    table: dict = {}

    def put(name: str, emit, functional: bool = False) -> None:
        for owner in (tocha, tocha.Tensor) + ((F,) if functional else ()):
            fn = getattr(owner, name, None)
            if fn is not None:
                table[fn] = emit

    for name, op_type in BINARY.items():
        put(name, _binary(op_type))
    for name, op_type in UNARY.items():
        put(name, _unary(op_type), functional=True)
    for name, (op_type, negate) in COMPARE.items():
        put(name, _compare(op_type, negate))
    put("rsub", _reversed("Sub"))
    put("div", _div)
    put("true_divide", _div)
    put("pow", _pow)
    put("rsqrt", _rsqrt)
    put("clamp", _clamp)
    put("clip", _clamp)
    put("where", _where)
    put("masked_fill", _masked_fill)
    put("gelu", _gelu, functional=True)
    put("silu", _silu, functional=True)
    put("leaky_relu", _leaky_relu, functional=True)
    put("elu", _elu, functional=True)
    put("hardtanh", _hardtanh, functional=True)
    put("relu6", _relu6, functional=True)
    put("hardsigmoid", _hardsigmoid, functional=True)
    put("hardswish", _hardswish, functional=True)
    put("softplus", _softplus, functional=True)
    put("prelu", _prelu, functional=True)
    put("mish", _mish, functional=True)
    put("selu", _selu, functional=True)
    put("celu", _celu, functional=True)
    put("logsigmoid", _logsigmoid, functional=True)
    put("softsign", _softsign, functional=True)
    put("tanhshrink", _tanhshrink, functional=True)
    put("hardshrink", _shrink(False), functional=True)
    put("softshrink", _shrink(True), functional=True)
    put("threshold", _threshold, functional=True)
    put("glu", _glu, functional=True)
    for fn, op_type in ((operator.add, "Add"), (operator.sub, "Sub"), (operator.mul, "Mul")):
        table[fn] = _binary(op_type)
    table[operator.truediv] = _div
    table[operator.floordiv] = _floordiv
    table[operator.neg] = _unary("Neg")
    return table


FUNCTIONS = _table()
