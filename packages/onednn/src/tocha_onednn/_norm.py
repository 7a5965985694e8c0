"""Normalization kernels on oneDNN: tocha-nn's layer norm, group norm and training batch
norm, forward and backward.

tocha's primitives keep the inverse standard deviation (``rstd``/``invstd``) where oneDNN
keeps the variance: the forward turns oneDNN's variance into ``1 / sqrt(var + eps)``, and the
backward hands oneDNN ``1 / rstd**2`` as the variance with an epsilon of 0, which is the same
normalisation. float32 only, with both affine parameters or none; other calls go to the
built-in kernels. Batch norm runs on oneDNN from `BATCH_MIN_THREADS` threads: on one, the
reorders to and from the channel-blocked layout make it no faster than tocha's NumPy kernel
(measured on AVX2: 4.8 ms against 3.7 for a (32, 16, 32, 32) forward and backward).

oneDNN 3.2 has no group normalization, and its layer norm kernel walks strided rows as if
they were dense, so it cannot normalize one group's rows (every G-th row) with that group's
weights. Group norm over (N, C, *) with G groups is its layer norm, without affine
parameters, of the (N * G, C / G * spatial) rows, then the per-channel weight and bias
applied in place in one pass of oneDNN's binary primitive (with a binary post-op). The
backward with a weight gets the per-(sample, channel) sums of ``g`` and ``g * x`` from NumPy
and the weight and bias gradients and the input gradient's coefficients from them: the
input gradient ``a * g + b * x + c`` (``a`` per channel, ``b`` and ``c`` per group of each
sample) is one binary pass, ``((x * b/a + c/a) + g) * a``, or two where a weight of 0 leaves
``b/a`` infinite. Without a weight it is layer norm's backward on ``g``. Affine calls under
`GROUP_AFFINE_SMALL` elements and strided inputs go to the built-in kernel.
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
# Below this many elements NumPy's affine group norm is quicker than the four oneDNN calls
# (1 thread, forward and backward of (8, 32, 8, 8): 109 us against 129; equal at 32768).
GROUP_AFFINE_SMALL = 32768


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
_ROW, _FULL = False, True
# the input gradient ``((x * p + q) + g) * a`` in one pass, or, where a weight of 0 rules out
# p = b / a and q = c / a, ``t = x * b + c`` then ``g * a + t``
_FUSED = ((D.BINARY_MUL, _ROW), (D.BINARY_ADD, _ROW), (D.BINARY_ADD, _FULL), (D.BINARY_MUL, _ROW))
_LINEAR = ((D.BINARY_MUL, _ROW), (D.BINARY_ADD, _ROW))
_SCALE_ADD = ((D.BINARY_MUL, _ROW), (D.BINARY_ADD, _FULL))


def _buffer(shape) -> np.ndarray:
    """This thread's scratch array of `shape` (float32), reused from call to call: a fresh
    full-size array each call would page-fault."""
    size = math.prod(shape)
    buf = getattr(_scratch, "buf", None)
    if buf is None or buf.size < size:
        buf = _scratch.buf = np.empty(size, _F32)
    return buf[:size].reshape(shape)


def _group_ok(x, groups: int, affine: str, *arrays) -> bool:
    """float32, not empty, C-contiguous (the rows are a view of it: a strided input would
    take a copy, which costs what oneDNN saves), and not a small affine call."""
    if x.ndim < 2 or not x.flags.c_contiguous or x.shape[0] * groups == 0:
        return False
    if affine and x.size < GROUP_AFFINE_SMALL:
        return False
    return _ok("", x, *arrays)


def _group_rows(x, groups: int):
    """``(N, C, M)`` and the rows ``(N * groups, C / groups * M)`` layer norm normalizes."""
    n, c = x.shape[0], x.shape[1]
    m = x.size // (n * c)
    return (n, c, m), (n * groups, x.size // (n * groups))


def _build_chain(rows, ops):
    """``dst = ((src op_0 v_0) op_1 v_1) ...`` on (R, L) arrays: oneDNN's binary primitive and
    its binary post-ops, one per ``(BINARY_*, full)`` of `ops`, whose operand ``v_i`` is an
    (R, L) array where `full`, else one value per row (R,). oneDNN sees (1, R, L): its 3.2
    broadcasts (A, R, 1) arrays wrongly when A > 1."""
    lib = library()
    src, row = D.shape_desc(lib, (1, *rows)), D.shape_desc(lib, (1, rows[0], 1))
    operands = [(alg, src if full else row) for alg, full in ops]
    attr = D.chain_attr(lib, operands[1:])
    try:
        pd = D.create_pd(
            lib,
            "dnnl_binary_primitive_desc_create",
            operands[0][0],
            src.handle,
            operands[0][1].handle,
            src.handle,
            attr=attr,
        )
    finally:
        lib.lib.dnnl_primitive_attr_destroy(attr)
    args = [(D.ARG_SRC, src, False), (D.ARG_SRC_1, operands[0][1], False)]
    args += [(D.post_op_arg(i), md, False) for i, (_, md) in enumerate(operands[1:])]
    return Plan(lib, pd, [*args, (D.ARG_DST, src, True)])


def _chain(rows, ops, n_threads: int):
    """The cached plan of `_build_chain` (None where oneDNN declines it)."""
    return _cache.get(("chain", rows, ops, n_threads), lambda: _build_chain(rows, ops))


def _affine_ops(affine: str):
    """The chain of the per-channel affine map `affine` asks for: times w, then plus b."""
    return tuple(
        (alg, _ROW)
        for letter, alg in (("w", D.BINARY_MUL), ("b", D.BINARY_ADD))
        if letter in affine
    )


def _per_channel_rows(params, n: int) -> np.ndarray:
    """The per-channel `params` (each (C,)) repeated for each of `n` samples: (P, N, C)."""
    rows = np.empty((len(params), n, params[0].shape[0]), _F32)
    for row, p in zip(rows, params):
        row[...] = p
    return rows


def group_norm(fallback):
    """``native_group_norm(x, [w], [b], groups, eps, affine) -> (y, mean, rstd)``: oneDNN's
    layer norm without affine parameters on the groups, then the per-channel affine map in
    place in one binary primitive, the weight and bias repeated for each sample."""

    def kernel(x, *rest):
        *params, groups, eps, affine = rest
        if not _group_ok(x, groups, affine, *params):
            return fallback(x, *rest)
        (n, c, m), rows = _group_rows(x, groups)
        n_threads = threads()
        plans = [
            _cache.get(
                ("ln", rows, eps, "", n_threads), lambda: _build_layer_forward(rows, eps, "")
            )
        ]
        if affine:
            plans.append(_chain((n * c, m), _affine_ops(affine), n_threads))
        if None in plans:
            return fallback(x, *rest)
        y = np.empty(x.shape, _F32)
        mean, var = np.empty(rows[0], _F32), np.empty(rows[0], _F32)
        plans[0].run(x, y, mean, var)
        if affine:
            plans[1].run(y, *_per_channel_rows(params, n), y)
        var += np.float32(eps)
        rstd = np.sqrt(var, out=var)
        np.divide(np.float32(1), rstd, out=rstd)
        return y, mean.reshape(-1, groups), rstd.reshape(-1, groups)

    return kernel


def _channel_sums(g, x, mean, rstd, ncm) -> np.ndarray:
    """``sum g`` and ``sum g * xhat`` over each channel of each sample: (2, N, G, C / G),
    from the sums of ``g`` and ``g * x`` and the group statistics (N, G). The sums are
    NumPy's vecdot, on this thread: a threaded BLAS product's spinning threads would hold
    the cores oneDNN's next call wants (at 2 threads, (32, 16, 32, 32) forward and backward
    took 1.4 ms with a BLAS product for ``sum g``, 0.29 ms with vecdot)."""
    n, c, m = ncm
    g2, x2 = g.reshape(n * c, m), x.reshape(n * c, m)
    sums = np.empty((2, n * c), _F32)
    np.vecdot(g2, np.ones(m, _F32), out=sums[0])
    np.vecdot(g2, x2, out=sums[1])
    sums = sums.reshape(2, *mean.shape, -1)
    sums[1] -= mean[..., None] * sums[0]
    sums[1] *= rstd[..., None]
    return sums


def _input_grad(g, x, sums, mean, rstd, w, plans):
    """The input gradient ``a * g + b * x + c`` (the shape of `x`), with ``a = rstd * w``
    per channel and ``b``, ``c`` per group of each sample, from the channel `sums` of
    `_channel_sums`, the group statistics (N, G) and the weight `w` (G, C / G): by the
    `plans` of `_FUSED` in one pass, or of `_LINEAR` and `_SCALE_ADD` where a weight of 0
    leaves ``b / a`` or ``c / a`` infinite."""
    a = rstd[..., None] * w
    dy, dy_xhat = np.vecdot(sums, w)
    rstd_k = rstd / np.float32(x.size // rstd.size)
    bc = np.empty((2, *rstd.shape), _F32)
    b, c = bc
    np.multiply(rstd * rstd_k, -dy_xhat, out=b)
    np.multiply(b, mean, out=c)
    c += rstd_k * dy
    np.negative(c, out=c)
    gx = np.empty(x.shape, _F32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pq = bc[..., None] / a
    if np.isfinite(pq).all():
        plans[0].run(x, pq[0], pq[1], g, a, gx)
    else:
        t = _buffer(x.shape)
        plans[1].run(x, *np.repeat(bc, a.shape[2], axis=2), t)
        plans[2].run(g, a, t, gx)
    return gx


def _weighted_backward(g, x, mean, rstd, w, affine: str, ncm, plans):
    """``(gx, gw, [gb])`` with the weight `w` (G, C / G), `x` seen as ``ncm`` (N, C, M): the
    channel sums of `_channel_sums`, the input gradient from them by the `plans` of
    `_input_grad`."""
    sums = _channel_sums(g, x, mean, rstd, ncm)
    gx = _input_grad(g, x, sums, mean, rstd, w, plans)
    sum_g, sum_gxhat = sums.sum(axis=1).reshape(2, -1)
    return (gx, sum_gxhat, sum_g) if "b" in affine else (gx, sum_gxhat)


def _unweighted_backward(g, x, mean, rstd, affine: str, ncm, plan):
    """``(gx, [gb])`` without a weight, `x` seen as ``ncm`` (N, C, M): oneDNN's layer norm
    backward `plan` of the groups on ``g``, the bias gradient from the channel sums of
    ``g``."""
    r = rstd.reshape(-1)
    gx = np.empty(x.shape, _F32)
    plan.run(g, x, _contiguous(mean.reshape(-1)), np.divide(np.float32(1), r * r), gx)
    if "b" not in affine:
        return (gx,)
    return gx, np.vecdot(g.reshape(ncm), np.ones(ncm[2], _F32)).sum(axis=0)


def group_norm_backward(fallback):
    """``native_group_norm_backward(g, x, mean, rstd, [w], groups, affine) -> (gx, [gw],
    [gb])``: `_weighted_backward` with a weight, else `_unweighted_backward`."""

    def kernel(g, x, mean, rstd, *rest):
        *w, groups, affine = rest
        if not (_group_ok(x, groups, affine, g, mean, rstd, *w) and g.flags.c_contiguous):
            return fallback(g, x, mean, rstd, *rest)
        ncm, rows = _group_rows(x, groups)
        n_threads = threads()
        if w:
            channel_rows = (ncm[0] * ncm[1], ncm[2])
            plans = [_chain(channel_rows, ops, n_threads) for ops in (_FUSED, _LINEAR, _SCALE_ADD)]
        else:
            key = ("ln_bwd", rows, "", n_threads)
            plans = [_cache.get(key, lambda: _build_layer_backward(rows, ""))]
        if None in plans:
            return fallback(g, x, mean, rstd, *rest)
        if w:
            weight = w[0].reshape(groups, -1)
            return _weighted_backward(g, x, mean, rstd, weight, affine, ncm, plans)
        return _unweighted_backward(g, x, mean, rstd, affine, ncm, plans[0])

    return kernel
