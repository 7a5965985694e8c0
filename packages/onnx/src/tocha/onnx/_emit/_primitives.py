"""Emitters of tocha-nn's layer primitives, which graphs hold where a module reaches the
dispatcher without a public function (``nn.Conv2d``, ``nn.MaxPool2d``, the projections of
``nn.MultiheadAttention``). Their arguments are their kernels': the tensors first, then the
settings, sizes already resolved (explicit ``(low, high)`` pads per dimension and the output
size), so the ONNX nodes reproduce the kernels exactly. Activation primitives take their
public function's positional arguments and share its emitter."""

from __future__ import annotations

import math

import numpy as np

import tocha
import tocha.nn.functional as F

from .._builder import Builder, meta_dtype, meta_shape, np_dtype, rank
from . import _nn, _pointwise
from ._nn import _linear


def _split(b: Builder, args: tuple) -> tuple[list, list]:
    """The leading graph values of a primitive's arguments, and the settings after them."""
    k = 0
    while k < len(args) and b.is_value(args[k]):
        k += 1
    return list(args[:k]), list(args[k:])


def _fitted(size, ksize, stride, pads, dilation, out_size) -> list[tuple[int, int]]:
    """Pads whose high side grows so that every one of `out_size` windows fits (ceil_mode)."""
    fitted = []
    for n, k, s, (lo, hi), d, o in zip(size, ksize, stride, pads, dilation, out_size):
        needed = (o - 1) * s + d * (k - 1) + 1
        fitted.append((lo, max(hi, needed - n - lo)))
    return fitted


def _onnx_pads(pads: list[tuple[int, int]]) -> list[int]:
    return [lo for lo, _ in pads] + [hi for _, hi in pads]


def _padded(b: Builder, x: str, pads: list[tuple[int, int]], value: float, dtype) -> str:
    """`x` padded on its spatial dims (all but the first two) with `value`."""
    if not any(lo or hi for lo, hi in pads):
        return x
    full = [(0, 0), (0, 0), *pads]
    return b.op("Pad", [x, b.ints(_onnx_pads(full)), b.scalar(value, dtype)], mode="constant")


def _convolution(b: Builder, node, *args):
    """``(x, w, [bias], stride, pads, dilation, groups, out_size, needs)``."""
    tensors, (stride, pads, dilation, groups, *_rest) = _split(b, args)
    x, w, *bias = tensors
    return b.op(
        "Conv",
        [b.value(x), b.value(w), b.value(bias[0]) if bias else None],
        strides=list(stride),
        pads=_onnx_pads(list(pads)),
        dilations=list(dilation),
        group=int(groups),
    )


def _max_pool(b: Builder, node, x, ksize, stride, pads, dilation, out_size):
    """``(x, ksize, stride, pads, dilation, out_size)`` -> ``(values, indices)``; the indices
    are not written (a graph that uses them raises)."""
    dtype = meta_dtype(x)
    fitted = _fitted(meta_shape(x)[2:], ksize, stride, pads, dilation, out_size)
    padded = _padded(b, b.value(x), fitted, -math.inf, dtype)
    values = b.op(
        "MaxPool",
        [padded],
        kernel_shape=list(ksize),
        strides=list(stride),
        dilations=list(dilation),
    )
    return values, None


def _avg_divisors(size, ksize, stride, pads, out_size, count_include_pad) -> np.ndarray:
    """How many elements each output of an average pooling is divided by, per PyTorch."""
    total = np.ones((), np.float64)
    for n, k, s, (lo, _), o in zip(size, ksize, stride, pads, out_size):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, n + lo)
        count = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        total = np.multiply.outer(total, count)
    return total


def _avg_pool(
    b: Builder, node, x, ksize, stride, pads, out_size, count_include_pad, divisor_override
):
    """``(x, ksize, stride, pads, out_size, count_include_pad, divisor_override)``: the
    window sums (a zero-padded input's average times the window size) over PyTorch's
    divisors."""
    dtype = meta_dtype(x)
    size = meta_shape(x)[2:]
    ones = [1] * len(ksize)
    fitted = _fitted(size, ksize, stride, pads, ones, out_size)
    padded = _padded(b, b.value(x), fitted, 0.0, dtype)
    mean = b.op("AveragePool", [padded], kernel_shape=list(ksize), strides=list(stride))
    window = float(np.prod(ksize))
    if divisor_override:
        divisors = np.full(tuple(out_size), float(divisor_override))
    else:
        divisors = _avg_divisors(size, ksize, stride, pads, out_size, count_include_pad)
    if np.all(divisors == window):
        return mean
    scale = (window / divisors).astype(np_dtype(dtype))
    return b.op("Mul", [mean, b.const(scale)])


def _linear_primitive(b: Builder, node, x, w, bias=None):
    """``(x, w, [bias])``: ``x @ w.T + bias``."""
    return _linear(b, node, x, w, bias)


def _embedding(b: Builder, node, weight, indices, *settings):
    """``(weight, indices, padding_idx, scale_grad_by_freq, sparse)``: rows of the weight."""
    return b.op("Gather", [b.value(weight), b.operand(indices, tocha.int64)], axis=0)


def _constant_pad(b: Builder, node, x, pads, value):
    """``(x, pads, value)``: `pads` are ``(low, high)`` for the last dims (negative crops)."""
    lead = [(0, 0)] * (rank(x) - len(pads))
    full = [*lead, *pads]
    dtype = meta_dtype(x)
    return b.op("Pad", [b.value(x), b.ints(_onnx_pads(full)), b.scalar(value, dtype)])


PRIMITIVES = {
    "convolution": _convolution,
    "max_pool": _max_pool,
    "avg_pool": _avg_pool,
    "linear": _linear_primitive,
    "embedding": _embedding,
    "constant_pad_nd": _constant_pad,
    "gelu": _pointwise.FUNCTIONS[F.gelu],
    "silu": _pointwise.FUNCTIONS[F.silu],
    "softplus": _pointwise.FUNCTIONS[F.softplus],
    "leaky_relu": _pointwise.FUNCTIONS[F.leaky_relu],
    "hardtanh": _pointwise.FUNCTIONS[F.hardtanh],
    "hardsigmoid": _pointwise.FUNCTIONS[F.hardsigmoid],
    "hardswish": _pointwise.FUNCTIONS[F.hardswish],
    "softmax": _nn.FUNCTIONS[F.softmax],
    "log_softmax": _nn.FUNCTIONS[F.log_softmax],
}
