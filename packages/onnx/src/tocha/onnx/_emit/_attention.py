"""Scaled dot-product attention, as the public function and as tocha-nn's primitive (which
nn.MultiheadAttention runs)."""

from __future__ import annotations

import math

import numpy as np

import tocha
import tocha.nn.functional as F

from .._builder import Builder, is_static, meta_dtype, meta_shape, np_dtype, rank


def _swap_last(b: Builder, x: str, ndim: int) -> str:
    perm = list(range(ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return b.op("Transpose", [x], perm=perm)


def _causal(b: Builder, query, key, dtype) -> str:
    """The additive mask that hides the keys after each query (top-left aligned): a
    constant for static lengths, else built from the lengths at run time."""
    rows, cols = meta_shape(query)[-2], meta_shape(key)[-2]
    if is_static(rows) and is_static(cols):
        hidden = np.triu(np.ones((rows, cols), dtype=bool), k=1)
        return b.const(np.where(hidden, -np.inf, 0).astype(np_dtype(dtype)))
    zero, one = b.scalar(0, tocha.int64), b.scalar(1, tocha.int64)
    lengths = []
    for x in (query, key):
        size = b.op("Shape", [b.value(x)], start=rank(x) - 2, end=rank(x) - 1)
        lengths.append(b.op("Squeeze", [size, b.ints([0])]))
    row = b.op("Unsqueeze", [b.op("Range", [zero, lengths[0], one]), b.ints([1])])
    col = b.op("Unsqueeze", [b.op("Range", [zero, lengths[1], one]), b.ints([0])])
    hidden = b.op("Greater", [col, row])
    return b.op("Where", [hidden, b.scalar(-math.inf, dtype), b.scalar(0.0, dtype)])


def _additive(b: Builder, mask, dtype) -> str:
    """A bool mask (True: may attend) as an additive float mask; a float mask as it is."""
    if meta_dtype(mask) == tocha.bool:
        ninf = b.scalar(-math.inf, dtype)
        return b.op("Where", [b.value(mask), b.scalar(0.0, dtype), ninf])
    return b.operand(mask, dtype)


def _attend(b: Builder, query, key, value, mask: str | None, scale: float, zero_empty: bool):
    """``softmax(q @ k^T * scale + mask)`` and its product with `value`: `key` and `value`
    are ``(fx node, ONNX name)`` pairs (the name of the key's heads repeated for GQA)."""
    dtype = meta_dtype(query)
    keys_t = _swap_last(b, key[1], rank(key[0]))
    scores = b.op("Mul", [b.op("MatMul", [b.value(query), keys_t]), b.scalar(scale, dtype)])
    if mask is not None:
        scores = b.op("Add", [scores, mask])
    weights = b.op("Softmax", [scores], axis=-1)
    if zero_empty and mask is not None:
        nan = b.op("IsNaN", [weights])
        weights = b.op("Where", [nan, b.scalar(0.0, dtype), weights])
    return b.op("MatMul", [weights, value[1]]), weights


def _repeat_heads(b: Builder, x, heads: int) -> str:
    """Key or value heads (dim -3) each repeated for a group of query heads."""
    shape = meta_shape(x)
    groups = heads // shape[-3]
    name = b.op("Unsqueeze", [b.value(x), b.ints([len(shape) - 2])])
    target = [*shape[:-2], groups, *shape[-2:]]
    name = b.op("Expand", [name, b.ints(target)])
    return b.op("Reshape", [name, b.ints([*shape[:-3], heads, *shape[-2:]])])


def _sdpa(
    b: Builder,
    node,
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
):
    if dropout_p > 0.0:
        raise NotImplementedError("scaled_dot_product_attention with dropout_p > 0")
    dtype = meta_dtype(query)
    if scale is None:
        scale = 1.0 / math.sqrt(meta_shape(query)[-1])
    mask = _causal(b, query, key, dtype) if is_causal else None
    if attn_mask is not None:
        mask = _additive(b, attn_mask, dtype)
    k, v = (key, b.value(key)), (value, b.value(value))
    heads = meta_shape(query)[-3] if rank(query) >= 3 else None
    if enable_gqa and heads is not None and meta_shape(key)[-3] != heads:
        k, v = (key, _repeat_heads(b, key, heads)), (value, _repeat_heads(b, value, heads))
    return _attend(b, query, k, v, mask, scale, zero_empty=True)[0]


def _sdpa_primitive(b: Builder, node, *args):
    """tocha-nn's attention primitive: ``(q, k, v, [mask], [keep], scale, causal, code)`` ->
    ``(output, weights)``; code's ``"m"`` marks a mask, ``"d"`` dropout's keep mask, and
    ``"n"`` that fully masked rows give NaN."""
    *tensors, scale, causal, code = args
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = list(tensors[0])
    query, key, value = tensors[:3]
    if "d" in code:
        raise NotImplementedError("attention with dropout (a random keep mask)")
    dtype = meta_dtype(query)
    mask = _causal(b, query, key, dtype) if causal else None
    if "m" in code:
        mask = _additive(b, tensors[3], dtype)
    k, v = (key, b.value(key)), (value, b.value(value))
    return _attend(b, query, k, v, mask, float(scale), zero_empty="n" not in code)


FUNCTIONS = {F.scaled_dot_product_attention: _sdpa}
PRIMITIVES = {"scaled_dot_product_attention": _sdpa_primitive}
