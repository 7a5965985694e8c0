"""Normalizations over groups and instances, and RMS norm (batch and layer norm are in
`_nn`, as ONNX has an operator for each)."""

from __future__ import annotations

import numpy as np

import tocha.nn.functional as F

from .._builder import Builder, meta_dtype, np_dtype, rank


def _per_channel(b: Builder, x: str, tensor, ndim: int, op_type: str) -> str:
    """`x` times (or plus) a per-channel tensor, shaped ``(C, 1, ...)`` to broadcast."""
    if tensor is None:
        return x
    shaped = b.op("Reshape", [b.value(tensor), b.ints([-1] + [1] * (ndim - 2))])
    return b.op(op_type, [x, shaped])


def _standardized(b: Builder, x: str, axes: list[int], eps: float, dtype) -> str:
    """``(x - mean) / sqrt(var + eps)`` over `axes` (biased variance)."""
    centred = b.op("Sub", [x, b.reduce("ReduceMean", x, axes)])
    var = b.reduce("ReduceMean", b.op("Mul", [centred, centred]), axes)
    return b.op("Div", [centred, b.op("Sqrt", [b.op("Add", [var, b.scalar(eps, dtype)])])])


def _group_norm(b: Builder, node, input, num_groups, weight=None, bias=None, eps=1e-5):
    dtype = meta_dtype(input)
    ndim = rank(input)
    x = b.value(input)
    grouped = b.op("Reshape", [x, b.ints([0, int(num_groups), -1])])
    y = _standardized(b, grouped, [2], eps, dtype)
    y = b.op("Reshape", [y, b.op("Shape", [x])])
    y = _per_channel(b, y, weight, ndim, "Mul")
    return _per_channel(b, y, bias, ndim, "Add")


def _instance_norm(
    b: Builder,
    node,
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    dtype = meta_dtype(input)
    ndim = rank(input)
    x = b.value(input)
    if not use_input_stats:
        shape = b.ints([-1] + [1] * (ndim - 2))
        mean = b.op("Reshape", [b.value(running_mean), shape])
        var = b.op("Reshape", [b.value(running_var), shape])
        std = b.op("Sqrt", [b.op("Add", [var, b.scalar(eps, dtype)])])
        y = b.op("Div", [b.op("Sub", [x, mean]), std])
    else:
        y = _standardized(b, x, list(range(2, ndim)), eps, dtype)
    y = _per_channel(b, y, weight, ndim, "Mul")
    return _per_channel(b, y, bias, ndim, "Add")


def _rms_norm(b: Builder, node, input, normalized_shape, weight=None, eps=None):
    dtype = meta_dtype(input)
    count = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    if eps is None:
        eps = float(np.finfo(np_dtype(dtype)).eps)
    x = b.value(input)
    axes = list(range(rank(input) - count, rank(input)))
    mean_square = b.reduce("ReduceMean", b.op("Mul", [x, x]), axes)
    rms = b.op("Sqrt", [b.op("Add", [mean_square, b.scalar(eps, dtype)])])
    y = b.op("Div", [x, rms])
    return y if weight is None else b.op("Mul", [y, b.value(weight)])


FUNCTIONS = {
    F.group_norm: _group_norm,
    F.instance_norm: _instance_norm,
    F.rms_norm: _rms_norm,
}
