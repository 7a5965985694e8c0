"""Normalization kernels on oneDNN: tocha-nn's layer norm, group norm and training batch
norm, forward and backward.

tocha's primitives keep the inverse standard deviation (``rstd``/``invstd``) where oneDNN
keeps the variance: the forward turns oneDNN's variance into ``1 / sqrt(var + eps)``, and the
backward hands oneDNN ``1 / rstd**2`` as the variance with an epsilon of 0, which is the same
normalisation. float32 only, with both affine parameters or none; other calls go to the
built-in kernels. Batch norm runs on oneDNN from `BATCH_MIN_THREADS` threads: on one, the
reorders to and from the channel-blocked layout make it no faster than tocha's NumPy kernel
(measured on AVX2: 4.8 ms against 3.7 for a (32, 16, 32, 32) forward and backward).

oneDNN 3.2 has no group normalization: group norm over (N, C, *) with G groups is its layer
norm, without affine parameters, of the (N * G, C / G * spatial) rows, then the per-channel
weight and bias applied in place (any of them); the backward hands oneDNN ``g * w`` and
gets the weight and bias gradients from per-(sample, channel) sums of ``g`` and ``g * x``.
Strided inputs go to the built-in kernel.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from . import _dnnl as D
from ._plan import Cache, Plan, channel_blocked
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
_cache = Cache()
# Below this many elements NumPy's kernel is quicker than a oneDNN call's fixed cost.
SMALL = 4096
BATCH_MIN_THREADS = 2


def _ok(affine: str, *arrays) -> bool:
    if affine not in ("", "wb") or arrays[0].size < SMALL:
        return False
    for a in arrays:
        if a.dtype != _F32 or a.size == 0:
            return False
    return True


def _contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _flags(affine: str) -> int:
    return D.USE_SCALE | D.USE_SHIFT if affine else 0


def _vector(lib, n):
    return D.shape_desc(lib, (n,))


# -- layer norm: rows (T, C) ------------------------------------------------------------------
def _layer_forward_pd(lib, rows, eps, flags):
    src = D.shape_desc(lib, rows)
    stat = _vector(lib, rows[0])
    pd = D.create_pd(
        lib,
        "dnnl_layer_normalization_forward_primitive_desc_create",
        D.FORWARD_TRAINING,
        src.handle,
        src.handle,
        stat.handle,
        eps,
        flags,
    )
    return pd, src, stat


def _build_layer_forward(rows, eps, affine):
    lib = library()
    pd, src, stat = _layer_forward_pd(lib, rows, eps, _flags(affine))
    args = [(D.ARG_SRC, src, False)]
    if affine:
        args += [(D.ARG_SCALE, _vector(lib, rows[1]), False)]
        args += [(D.ARG_SHIFT, _vector(lib, rows[1]), False)]
    args += [(D.ARG_DST, src, True), (D.ARG_MEAN, stat, True), (D.ARG_VARIANCE, stat, True)]
    return Plan(lib, pd, args)


def _build_layer_backward(rows, affine):
    lib = library()
    flags = _flags(affine)
    hint, src, stat = _layer_forward_pd(lib, rows, 0.0, flags)
    pd = D.create_backward_pd(
        lib,
        "dnnl_layer_normalization_backward_primitive_desc_create",
        D.BACKWARD,
        src.handle,
        src.handle,
        src.handle,
        stat.handle,
        0.0,
        flags,
        hint=hint,
    )
    args = [
        (D.ARG_DIFF_DST, src, False),
        (D.ARG_SRC, src, False),
        (D.ARG_MEAN, stat, False),
        (D.ARG_VARIANCE, stat, False),
    ]
    if affine:
        args.append((D.ARG_SCALE, _vector(lib, rows[1]), False))
        args.append((D.ARG_SHIFT, _vector(lib, rows[1]), False))
    args.append((D.ARG_DIFF_SRC, src, True))
    if affine:
        args += [
            (D.ARG_DIFF_SCALE, _vector(lib, rows[1]), True),
            (D.ARG_DIFF_SHIFT, _vector(lib, rows[1]), True),
        ]
    return Plan(lib, pd, args)


def _rows_of(x, nd):
    c = math.prod(x.shape[x.ndim - nd :])
    return (x.size // c, c)


def layer_norm(fallback):
    """``native_layer_norm(x, [w], [b], nd, eps, affine) -> (y, mean, rstd)``."""

    def kernel(x, *rest):
        *params, nd, eps, affine = rest
        if not _ok(affine, x, *params):
            return fallback(x, *rest)
        x = _contiguous(x)
        rows = _rows_of(x, nd)
        plan = _cache.get(
            ("ln", rows, eps, affine, threads()), lambda: _build_layer_forward(rows, eps, affine)
        )
        if plan is None:
            return fallback(x, *rest)
        y = np.empty(x.shape, _F32)
        mean = np.empty(rows[0], _F32)
        var = np.empty(rows[0], _F32)
        weights = [_contiguous(p) for p in params]
        plan.run(x, *weights, y, mean, var)
        var += np.float32(eps)
        rstd = np.sqrt(var, out=var)
        np.divide(np.float32(1), rstd, out=rstd)
        stat_shape = x.shape[: x.ndim - nd] + (1,) * nd
        return y, mean.reshape(stat_shape), rstd.reshape(stat_shape)

    return kernel


def layer_norm_backward(fallback):
    """``native_layer_norm_backward(g, x, mean, rstd, [w], nd, affine) -> (gx, [gw], [gb])``."""

    def kernel(g, x, mean, rstd, *rest):
        *w, nd, affine = rest
        if not _ok(affine, g, x, mean, rstd, *w):
            return fallback(g, x, mean, rstd, *rest)
        g, x = _contiguous(g), _contiguous(x)
        rows = _rows_of(x, nd)
        plan = _cache.get(
            ("ln_bwd", rows, affine, threads()), lambda: _build_layer_backward(rows, affine)
        )
        if plan is None:
            return fallback(g, x, mean, rstd, *rest)
        r = rstd.reshape(-1)
        var = np.divide(np.float32(1), r * r)
        gx = np.empty(x.shape, _F32)
        if not affine:
            plan.run(g, x, _contiguous(mean.reshape(-1)), var, gx)
            return (gx,)
        wshape = x.shape[x.ndim - nd :]
        gw, gb = np.empty(wshape, _F32), np.empty(wshape, _F32)
        weight = _contiguous(w[0])  # the shift is not read: any vector of its size
        plan.run(g, x, _contiguous(mean.reshape(-1)), var, weight, weight, gx, gw, gb)
        return gx, gw, gb

    return kernel


# -- batch norm: (N, C, *spatial), statistics per channel ---------------------------------------
def _batch_forward_pd(lib, shape, eps, flags):
    src = channel_blocked(lib, shape)
    pd = D.create_pd(
        lib,
        "dnnl_batch_normalization_forward_primitive_desc_create",
        D.FORWARD_TRAINING,
        src.handle,
        src.handle,
        eps,
        flags,
    )
    return pd, src


def _build_batch_forward(shape, eps, affine):
    lib = library()
    pd, _ = _batch_forward_pd(lib, shape, eps, _flags(affine))
    c, src = _vector(lib, shape[1]), D.shape_desc(lib, shape)
    args = [(D.ARG_SRC, src, False)]
    if affine:
        args += [(D.ARG_SCALE, c, False), (D.ARG_SHIFT, c, False)]
    args += [(D.ARG_DST, src, True), (D.ARG_MEAN, c, True), (D.ARG_VARIANCE, c, True)]
    return Plan(lib, pd, args)


def _build_batch_backward(shape, affine):
    lib = library()
    flags = _flags(affine)
    hint, src = _batch_forward_pd(lib, shape, 0.0, flags)
    pd = D.create_backward_pd(
        lib,
        "dnnl_batch_normalization_backward_primitive_desc_create",
        D.BACKWARD,
        src.handle,
        src.handle,
        src.handle,
        0.0,
        flags,
        hint=hint,
    )
    c, src = _vector(lib, shape[1]), D.shape_desc(lib, shape)
    args = [
        (D.ARG_DIFF_DST, src, False),
        (D.ARG_SRC, src, False),
        (D.ARG_MEAN, c, False),
        (D.ARG_VARIANCE, c, False),
    ]
    if affine:
        args.append((D.ARG_SCALE, c, False))
    args.append((D.ARG_DIFF_SRC, src, True))
    if affine:
        args += [(D.ARG_DIFF_SCALE, c, True), (D.ARG_DIFF_SHIFT, c, True)]
    return Plan(lib, pd, args)


def _batch_ok(x, n_threads: int) -> bool:
    return 2 <= x.ndim <= 5 and n_threads >= BATCH_MIN_THREADS


def batch_norm(fallback):
    """``native_batch_norm(x, [w], [b], eps, affine) -> (y, mean, invstd)`` (training)."""

    def kernel(x, *rest):
        *params, eps, affine = rest
        n_threads = threads()
        if not (_batch_ok(x, n_threads) and _ok(affine, x, *params)):
            return fallback(x, *rest)
        x = _contiguous(x)
        plan = _cache.get(
            ("bn", x.shape, eps, affine, n_threads),
            lambda: _build_batch_forward(x.shape, eps, affine),
        )
        if plan is None:
            return fallback(x, *rest)
        c = x.shape[1]
        y, mean, var = np.empty(x.shape, _F32), np.empty(c, _F32), np.empty(c, _F32)
        plan.run(x, *[_contiguous(p) for p in params], y, mean, var)
        var += np.float32(eps)
        invstd = np.sqrt(var, out=var)
        np.divide(np.float32(1), invstd, out=invstd)
        return y, mean, invstd

    return kernel


def batch_norm_backward(fallback):
    """``native_batch_norm_backward(g, x, mean, invstd, [w], affine) -> (gx, [gw], [gb])``."""

    def kernel(g, x, mean, invstd, *rest):
        *w, affine = rest
        n_threads = threads()
        if not (_batch_ok(x, n_threads) and _ok(affine, g, x, mean, invstd, *w)):
            return fallback(g, x, mean, invstd, *rest)
        g, x = _contiguous(g), _contiguous(x)
        plan = _cache.get(
            ("bn_bwd", x.shape, affine, n_threads), lambda: _build_batch_backward(x.shape, affine)
        )
        if plan is None:
            return fallback(g, x, mean, invstd, *rest)
        var = np.divide(np.float32(1), invstd * invstd)
        gx = np.empty(x.shape, _F32)
        if not affine:
            plan.run(g, x, _contiguous(mean), var, gx)
            return (gx,)
        c = x.shape[1]
        gw, gb = np.empty(c, _F32), np.empty(c, _F32)
        plan.run(g, x, _contiguous(mean), var, _contiguous(w[0]), gx, gw, gb)
        return gx, gw, gb

    return kernel


# -- group norm: layer norm of the (N * groups, C / groups * M) rows, then the affine map ----
_scratch = threading.local()


def _buffer(shape) -> np.ndarray:
    """This thread's scratch array of `shape` (float32), reused from call to call: a fresh
    full-size array each call would page-fault."""
    size = math.prod(shape)
    buf = getattr(_scratch, "buf", None)
    if buf is None or buf.size < size:
        buf = _scratch.buf = np.empty(size, _F32)
    return buf[:size].reshape(shape)


def _group_ok(x, groups: int, *arrays) -> bool:
    """float32, not empty, and C-contiguous (the rows are a view of it: a strided input
    would take a copy, which costs what oneDNN saves)."""
    if x.ndim < 2 or not x.flags.c_contiguous or x.shape[0] * groups == 0:
        return False
    return _ok("", x, *arrays)


def _group_rows(x, groups: int):
    """``(N, C, M)`` and the rows ``(N * groups, C / groups * M)`` layer norm normalizes."""
    n, c = x.shape[0], x.shape[1]
    m = x.size // (n * c)
    return (n, c, m), (n * groups, x.size // (n * groups))


def group_norm(fallback):
    """``native_group_norm(x, [w], [b], groups, eps, affine) -> (y, mean, rstd)``: oneDNN's
    layer norm without affine parameters on the groups, the per-channel affine in place."""

    def kernel(x, *rest):
        *params, groups, eps, affine = rest
        if not _group_ok(x, groups, *params):
            return fallback(x, *rest)
        ncm, rows = _group_rows(x, groups)
        plan = _cache.get(
            ("ln", rows, eps, "", threads()), lambda: _build_layer_forward(rows, eps, "")
        )
        if plan is None:
            return fallback(x, *rest)
        y = np.empty(x.shape, _F32)
        mean, var = np.empty(rows[0], _F32), np.empty(rows[0], _F32)
        plan.run(x, y, mean, var)
        y3 = y.reshape(ncm)
        if "w" in affine:
            y3 *= params[0][:, None]
        if "b" in affine:
            y3 += params[-1][:, None]
        var += np.float32(eps)
        rstd = np.sqrt(var, out=var)
        np.divide(np.float32(1), rstd, out=rstd)
        return y, mean.reshape(-1, groups), rstd.reshape(-1, groups)

    return kernel


def group_norm_backward(fallback):
    """``native_group_norm_backward(g, x, mean, rstd, [w], groups, affine) -> (gx, [gw],
    [gb])``: oneDNN's layer norm backward on ``g * w``; the weight and bias gradients from
    the per-(sample, channel) sums of ``g`` and ``g * x``."""

    def kernel(g, x, mean, rstd, *rest):
        *w, groups, affine = rest
        if not (_group_ok(x, groups, g, mean, rstd, *w) and g.flags.c_contiguous):
            return fallback(g, x, mean, rstd, *rest)
        (n, c, m), rows = _group_rows(x, groups)
        plan = _cache.get(("ln_bwd", rows, "", threads()), lambda: _build_layer_backward(rows, ""))
        if plan is None:
            return fallback(g, x, mean, rstd, *rest)
        g3 = g.reshape(n, c, m)
        scaled = np.multiply(g3, w[0][:, None], out=_buffer(g3.shape)) if w else g3
        r = rstd.reshape(-1)
        gx = np.empty(x.shape, _F32)
        plan.run(scaled, x, _contiguous(mean.reshape(-1)), np.divide(np.float32(1), r * r), gx)
        if not affine:
            return (gx,)
        sum_g = g3 @ np.ones(m, _F32)
        grads = []
        if "w" in affine:
            per_group = c // groups
            sum_gx = np.einsum("ncm,ncm->nc", g3, x.reshape(n, c, m))
            sum_gx -= np.repeat(mean, per_group, axis=1) * sum_g
            sum_gx *= np.repeat(rstd, per_group, axis=1)
            grads.append(sum_gx.sum(axis=0))
        if "b" in affine:
            grads.append(sum_g.sum(axis=0))
        return (gx, *grads)

    return kernel
