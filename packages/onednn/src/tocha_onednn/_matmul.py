"""oneDNN's matmul primitive: ``matmul`` (2-D and batched), ``linear`` and
``linear_pointwise`` (``act(x @ w.T + b)`` with the bias and the activation fused, an eltwise
post-op).

Operands are read where they lie: each is described to oneDNN with its own strides (a
transposed view, such as a weight read as ``w.T`` or a gradient's ``g.mT``, needs no copy),
as long as one of its two matrix dims is contiguous; other layouts (an expanded gradient,
every other column) are copied first, as NumPy's BLAS calls copy them. Batch dims broadcast
as NumPy's matmul does (a dim of 1 against any size). float32, and bfloat16 where oneDNN has
a bfloat16 matmul on this CPU (AVX-512 BF16 or AMX; on others it refuses to create the
primitive, and the call is declined once per layout). Products too small to repay a
primitive call (fewer than `MIN_WORK` multiply-adds, or a matrix-vector product) stay with
NumPy's BLAS; so do other dtypes and empty operands.
"""

from __future__ import annotations

import numpy as np

from . import _dnnl as D
from ._plan import Cache, Plan
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
# Each plan holds its JIT'd kernel and scratchpad (0.5 to 2 MB for an MLP's layers; the
# first costs about 11 MB more, oneDNN's own start-up): a training step uses a few dozen
# layouts, while a loop over growing sequences makes a new one per length.
_cache = Cache(limit=128)

# Below this many multiply-adds a oneDNN call (about 8 us of fixed cost) loses to BLAS.
MIN_WORK = 1 << 20
MIN_SIDE = 8  # rows or columns: fewer is a matrix-vector product, BLAS's own case

# activation -> (eltwise algorithm, alpha), None: no post-op
POST_OPS = {
    "none": None,
    "relu": (D.ELTWISE_RELU, 0.0),
    "gelu": (D.ELTWISE_GELU_ERF, 0.0),
    "gelu_tanh": (D.ELTWISE_GELU_TANH, 0.0),
    "tanh": (D.ELTWISE_TANH, 0.0),
    "sigmoid": (D.ELTWISE_LOGISTIC, 0.0),
    "silu": (D.ELTWISE_SWISH, 1.0),
}


def _dtype(x) -> int | None:
    """oneDNN's data type for the NumPy dtype of `x`: float32 or bfloat16, else None."""
    if x.dtype == _F32:
        return D.F32
    return D.BF16 if x.dtype.name == "bfloat16" else None


def _layout(a: np.ndarray, ndim: int) -> tuple | None:
    """``(dims, strides)`` in elements of `a` seen with `ndim` dims (leading dims of 1
    added), or None when oneDNN cannot read it in place: a stride that is negative, not a
    whole element, zero on a dim longer than 1, or neither matrix dim contiguous."""
    item = a.itemsize
    shape = (1,) * (ndim - a.ndim) + a.shape
    raw = (0,) * (ndim - a.ndim) + a.strides
    strides = [0] * ndim
    step = 1
    for i in range(ndim - 1, -1, -1):
        n, s = shape[i], raw[i]
        if n == 1:
            s = step  # any stride reads a dim of 1: the one C order gives it
        elif s <= 0 or s % item:
            return None
        else:
            s //= item
        strides[i] = s
        step = max(step, s * n)
    if strides[-1] == 1:  # rows apart by at least a row (no overlapping windows)
        if strides[-2] < shape[-1]:
            return None
    elif strides[-2] != 1 or strides[-1] < shape[-2]:
        return None
    return shape, tuple(strides)


def _build(a_layout, b_layout, bias_dims, activation, dtype) -> Plan:
    """The plan of ``dst = act(a @ b + bias)`` over these layouts (dst in C order)."""
    lib = library()
    a_dims, b_dims = a_layout[0], b_layout[0]
    batch = tuple(max(p, q) for p, q in zip(a_dims[:-2], b_dims[:-2]))
    src = D.MemoryDesc.strided(lib, *a_layout, dtype)
    weights = D.MemoryDesc.strided(lib, *b_layout, dtype)
    dst = D.shape_desc(lib, (*batch, a_dims[-2], b_dims[-1]), dtype)
    row = D.shape_desc(lib, bias_dims, dtype) if bias_dims else None
    post = POST_OPS[activation]
    attr = D.chain_attr(lib, [(post[0], post[1], 0.0)]) if post else None
    try:
        pd = D.create_pd(
            lib,
            "dnnl_matmul_primitive_desc_create",
            src.handle,
            weights.handle,
            row.handle if row else None,
            dst.handle,
            attr=attr,
        )
    finally:
        if attr is not None:
            lib.lib.dnnl_primitive_attr_destroy(attr)
    args = [(D.ARG_SRC, src, False), (D.ARG_WEIGHTS, weights, False)]
    if row is not None:
        args.append((D.ARG_BIAS, row, False))
    args.append((D.ARG_DST, dst, True))
    return Plan(lib, pd, args)


def _product(a, b, bias, activation: str):
    """``act(a @ b + bias)`` on oneDNN for `a` ``(*, m, k)`` and `b` ``(*, k, n)`` of one
    dtype (bias a C-contiguous ``(n,)`` or None); None where oneDNN declines."""
    dtype = _dtype(a)
    if dtype is None:
        return None
    ndim = max(a.ndim, b.ndim)
    a_layout = _layout(a, ndim) or _layout(a := np.ascontiguousarray(a), ndim)
    b_layout = _layout(b, ndim) or _layout(b := np.ascontiguousarray(b), ndim)
    batch = []
    for p, q in zip(a_layout[0][:-2], b_layout[0][:-2]):
        if p != q and p != 1 and q != 1:
            return None
        batch.append(max(p, q))
    bias_dims = (1,) * (ndim - 1) + (b.shape[-1],) if bias is not None else None
    key = (a_layout, b_layout, bias_dims, activation, dtype, threads())
    plan = _cache.get(key, lambda: _build(a_layout, b_layout, bias_dims, activation, dtype))
    if plan is None:
        return None
    out = np.empty((*batch, a.shape[-2], b.shape[-1]), a.dtype)
    if bias is None:
        plan.run(a, b, out)
    else:
        plan.run(a, b, bias, out)
    return out


def _worth_it(a, b) -> bool:
    """Whether ``a @ b`` (matrices or batches of them) is large enough for oneDNN: at least
    `MIN_WORK` multiply-adds, counted as a's size times b's columns or b's size times a's
    rows (exact unless both have batch dims broadcasting against each other), and neither
    side a vector. Cheap: every product asks."""
    if a.ndim < 2 or b.ndim < 2:
        return False
    m, n = a.shape[-2], b.shape[-1]
    return (
        (a.size * n >= MIN_WORK or b.size * m >= MIN_WORK)
        and m >= MIN_SIDE
        and n >= MIN_SIDE
        and a.dtype == b.dtype
    )


def matmul(fallback):
    """tocha's ``matmul`` kernel ``(a, b)`` on oneDNN for matrices and batches of them."""

    def kernel(a, b):
        if _worth_it(a, b) and a.shape[-1] == b.shape[-2]:
            out = _product(a, b, None, "none")
            if out is not None:
                return out
        return fallback(a, b)

    return kernel


def _as_rows(x):
    """`x` ``(*, k)`` as a C-contiguous ``(rows, k)`` matrix (a copy only if it must)."""
    x = x if x.flags.c_contiguous else np.ascontiguousarray(x)
    return x.reshape(-1, x.shape[-1])


def _pointwise(x, rows, w, bias, activation: str):
    """``act(x @ w.T + bias)`` shaped ``(*, n)`` on oneDNN (`rows` is `x` as a matrix), or
    None where it declines."""
    if bias is not None:
        bias = np.ascontiguousarray(bias)
    out = _product(rows, w.T, bias, activation)
    return None if out is None else out.reshape(x.shape[:-1] + (w.shape[0],))


def _linear_ok(x, w, bias) -> bool:
    if x.ndim < 1 or w.ndim != 2 or x.shape[-1] != w.shape[1] or x.size == 0 or w.size == 0:
        return False
    return all(a.dtype == x.dtype for a in (w, *bias))


def linear(fallback):
    """tocha-nn's ``linear`` kernel ``(x, w, [b])``, ``x @ w.T + b``, on oneDNN for products
    worth a primitive call."""

    def kernel(x, w, *bias):
        if (
            x.ndim >= 2
            and w.ndim == 2
            and x.size * w.shape[0] >= MIN_WORK
            and _linear_ok(x, w, bias)
        ):
            rows = _as_rows(x)
            if _worth_it(rows, w.T):
                out = _pointwise(x, rows, w, bias[0] if bias else None, "none")
                if out is not None:
                    return out
        return fallback(x, w, *bias)

    return kernel


def linear_pointwise(fallback):
    """``linear_pointwise(x, w, [b], activation)`` on oneDNN's matmul, at any size (the
    fused activation saves a pass over the output)."""

    def kernel(x, w, *rest):
        *bias, activation = rest
        if activation in POST_OPS and _linear_ok(x, w, bias):
            out = _pointwise(x, _as_rows(x), w, bias[0] if bias else None, activation)
            if out is not None:
                return out
        return fallback(x, w, *rest)

    return kernel
