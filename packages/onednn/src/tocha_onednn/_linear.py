"""``linear_pointwise`` on oneDNN: ``act(x @ w.T + b)`` as one matmul primitive with the
bias and the activation fused (an eltwise post-op).

The input is read as its (rows, in_features) matrix and the weight (out, in) as its
transpose without a copy (a strided descriptor); the bias is a (1, out) row. float32, and
bfloat16 where oneDNN has a bfloat16 matmul on this CPU (AVX-512 BF16 or AMX; on others it
refuses to create the primitive, and the call is declined once per shape); the activations
oneDNN has as post-ops: relu, gelu (erf and tanh), tanh, sigmoid (its logistic) and silu
(swish with alpha 1). Other calls go to the built-in kernel.
"""

from __future__ import annotations

import numpy as np

from . import _dnnl as D
from ._plan import Cache, Plan
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
_cache = Cache()

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


def _ok(x, w, bias, activation) -> bool:
    if activation not in POST_OPS or x.ndim < 1 or w.ndim != 2 or x.size == 0 or w.size == 0:
        return False
    return _dtype(x) is not None and all(a.dtype == x.dtype for a in (w, *bias))


def _build(m, k, n, bias, activation, dtype):
    lib = library()
    src, dst = D.shape_desc(lib, (m, k), dtype), D.shape_desc(lib, (m, n), dtype)
    weights = D.MemoryDesc.strided(lib, (k, n), (1, k), dtype)
    row = D.shape_desc(lib, (1, n), dtype) if bias else None
    post = POST_OPS[activation]
    attr = D.eltwise_attr(lib, post[0], post[1]) if post else None
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
    if bias:
        args.append((D.ARG_BIAS, row, False))
    args.append((D.ARG_DST, dst, True))
    return Plan(lib, pd, args)


def linear_pointwise(fallback):
    """``linear_pointwise(x, w, [b], activation)`` on oneDNN's matmul."""

    def kernel(x, w, *rest):
        *bias, activation = rest
        if not _ok(x, w, bias, activation) or x.shape[-1] != w.shape[1]:
            return fallback(x, w, *rest)
        x = x if x.flags.c_contiguous else np.ascontiguousarray(x)
        w = w if w.flags.c_contiguous else np.ascontiguousarray(w)
        k, n = w.shape[1], w.shape[0]
        m = x.size // k
        dtype = _dtype(x)
        plan = _cache.get(
            ("mm", m, k, n, bool(bias), activation, dtype, threads()),
            lambda: _build(m, k, n, bool(bias), activation, dtype),
        )
        if plan is None:
            return fallback(x, w, *rest)
        out = np.empty(x.shape[:-1] + (n,), x.dtype)
        if bias:
            plan.run(x, w, np.ascontiguousarray(bias[0]), out)
        else:
            plan.run(x, w, out)
        return out

    return kernel
