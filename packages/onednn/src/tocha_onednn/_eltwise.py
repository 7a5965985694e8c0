"""GELU on oneDNN's eltwise primitives, forward and backward (tocha-nn's ``gelu`` and
``gelu_backward``; erf or tanh form): one pass over memory where NumPy's erf takes some
thirty. float32 and C-ordered operands of up to oneDNN's rank; other calls go to the
built-in kernels."""

from __future__ import annotations

import numpy as np

from . import _dnnl as D
from ._plan import Cache, Plan
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
_cache = Cache()
ALGORITHMS = {"none": D.ELTWISE_GELU_ERF, "tanh": D.ELTWISE_GELU_TANH}


def _ok(*arrays) -> bool:
    for a in arrays:
        if a.dtype != _F32 or a.size == 0 or not 1 <= a.ndim <= D.MAX_NDIMS:
            return False
        if not a.flags.c_contiguous:
            return False
    return True


def _forward_pd(lib, shape, alg):
    md = D.shape_desc(lib, shape)
    pd = D.create_pd(
        lib,
        "dnnl_eltwise_forward_primitive_desc_create",
        D.FORWARD_TRAINING,
        alg,
        md.handle,
        md.handle,
        0.0,
        0.0,
    )
    return pd, md


def _build_forward(shape, alg):
    lib = library()
    pd, md = _forward_pd(lib, shape, alg)
    return Plan(lib, pd, [(D.ARG_SRC, md, False), (D.ARG_DST, md, True)])


def _build_backward(shape, alg):
    lib = library()
    hint, md = _forward_pd(lib, shape, alg)
    pd = D.create_backward_pd(
        lib,
        "dnnl_eltwise_backward_primitive_desc_create",
        alg,
        md.handle,
        md.handle,
        md.handle,
        0.0,
        0.0,
        hint=hint,
    )
    args = [(D.ARG_SRC, md, False), (D.ARG_DIFF_DST, md, False), (D.ARG_DIFF_SRC, md, True)]
    return Plan(lib, pd, args)


def gelu(fallback):
    """``gelu(x, approximate)`` on oneDNN's gelu_erf / gelu_tanh."""

    def kernel(x, approximate):
        alg = ALGORITHMS.get(approximate)
        if alg is None or not _ok(x):
            return fallback(x, approximate)
        plan = _cache.get(("fwd", alg, x.shape, threads()), lambda: _build_forward(x.shape, alg))
        if plan is None:
            return fallback(x, approximate)
        out = np.empty(x.shape, _F32)
        plan.run(x, out)
        return out

    return kernel


def gelu_backward(fallback):
    """``g * gelu'(x)`` on oneDNN's backward gelu_erf / gelu_tanh."""

    def kernel(g, x, approximate):
        alg = ALGORITHMS.get(approximate)
        if alg is None or g.shape != x.shape or not _ok(g, x):
            return fallback(g, x, approximate)
        plan = _cache.get(("bwd", alg, x.shape, threads()), lambda: _build_backward(x.shape, alg))
        if plan is None:
            return fallback(g, x, approximate)
        gx = np.empty(x.shape, _F32)
        plan.run(x, g, gx)
        return gx

    return kernel
