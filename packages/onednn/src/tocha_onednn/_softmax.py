"""softmax and log_softmax on oneDNN, forward and backward (tocha-nn's ``softmax``,
``log_softmax``, ``softmax_backward_data`` and ``log_softmax_backward_data``): float32,
C-ordered operands, any dim; other calls go to the built-in kernels.

A row holding NaN or +inf is all NaN in PyTorch (and the built-in kernel), where oneDNN keeps
the other entries: a result with a NaN (one sum tells) is computed again by the built-in
kernel.
"""

from __future__ import annotations

import numpy as np

from . import _dnnl as D
from ._plan import Cache, Plan
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
_cache = Cache()
# Below this many elements NumPy's kernel is quicker than a oneDNN call's fixed cost.
SMALL = 4096


def _ok(*arrays) -> bool:
    if arrays[0].size < SMALL:
        return False
    for a in arrays:
        if a.dtype != _F32 or a.size == 0 or not 1 <= a.ndim <= D.MAX_NDIMS:
            return False
    return True


def _contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _forward_pd(lib, shape, alg, axis):
    md = D.shape_desc(lib, shape)
    pd = D.create_pd(
        lib,
        "dnnl_softmax_forward_primitive_desc_create",
        D.FORWARD_TRAINING,
        alg,
        md.handle,
        md.handle,
        axis,
    )
    return pd, md


def _build_forward(shape, alg, axis):
    lib = library()
    pd, md = _forward_pd(lib, shape, alg, axis)
    return Plan(lib, pd, [(D.ARG_SRC, md, False), (D.ARG_DST, md, True)])


def _build_backward(shape, alg, axis):
    lib = library()
    hint, md = _forward_pd(lib, shape, alg, axis)
    pd = D.create_backward_pd(
        lib,
        "dnnl_softmax_backward_primitive_desc_create",
        alg,
        md.handle,
        md.handle,
        md.handle,
        axis,
        hint=hint,
    )
    args = [(D.ARG_DST, md, False), (D.ARG_DIFF_DST, md, False), (D.ARG_DIFF_SRC, md, True)]
    return Plan(lib, pd, args)


def _forward(alg):
    def factory(fallback):
        def kernel(x, dim):
            if not _ok(x):
                return fallback(x, dim)
            x = _contiguous(x)
            axis = dim % x.ndim
            key = ("fwd", alg, x.shape, axis, threads())
            plan = _cache.get(key, lambda: _build_forward(x.shape, alg, axis))
            if plan is None:
                return fallback(x, dim)
            out = np.empty(x.shape, _F32)
            plan.run(x, out)
            return fallback(x, dim) if np.isnan(out.sum()) else out

        return kernel

    return factory


def _backward(alg):
    def factory(fallback):
        def kernel(g, out, dim):
            if not _ok(g, out) or g.shape != out.shape:
                return fallback(g, out, dim)
            g, out = _contiguous(g), _contiguous(out)
            axis = dim % out.ndim
            key = ("bwd", alg, out.shape, axis, threads())
            plan = _cache.get(key, lambda: _build_backward(out.shape, alg, axis))
            if plan is None:
                return fallback(g, out, dim)
            gx = np.empty(out.shape, _F32)
            plan.run(out, g, gx)
            return fallback(g, out, dim) if np.isnan(gx.sum()) else gx

        return kernel

    return factory


softmax = _forward(D.SOFTMAX_ACCURATE)
log_softmax = _forward(D.SOFTMAX_LOG)
softmax_backward = _backward(D.SOFTMAX_ACCURATE)
log_softmax_backward = _backward(D.SOFTMAX_LOG)
