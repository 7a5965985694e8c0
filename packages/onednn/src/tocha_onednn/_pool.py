"""Pooling kernels on oneDNN: tocha-nn's ``max_pool``, ``avg_pool`` and ``avg_pool_backward``
(1 to 3 spatial dims).

- ``max_pool(x, ksize, stride, pads, dilation, out_size) -> (values, indices)``: oneDNN's
  max pooling (training), whose workspace holds each maximum's offset within its window;
  tocha's indices (flat positions in the input plane, as PyTorch's) are a table of those
  offsets' plane positions plus each window's start. The gradient stays tocha-nn's (a
  scatter to these indices).
- ``avg_pool(x, ksize, stride, pads, out_size, count_include_pad, divisor_override)`` and
  its adjoint ``avg_pool_backward(g, size, ...)``: oneDNN's average pooling, padding
  counted or not.

Ceil mode grows the right padding so that the last windows fit (as the built-in kernels do).
The pooling runs on the channel-blocked layout oneDNN's convolutions use (its JIT kernels),
with cached reorders from and to C order. Declined, to the built-in kernels: not float32,
empty inputs, a max pooling whose input is not finite (oneDNN's maximum skips NaN where
PyTorch's returns it, and its start value is not -inf), a divisor override, and padding
counted in a ceil-mode window that reaches past it (PyTorch does not count that part).
"""

from __future__ import annotations

import math

import numpy as np

from . import _dnnl as D
from ._plan import Cache, Plan, channel_blocked
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
_cache = Cache()


def _ok(x) -> bool:
    return x.dtype == _F32 and 3 <= x.ndim <= 5 and x.size > 0


def _contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _fitted(size, ksize, stride, pads, dilation, out_size) -> tuple:
    """Right padding grown so that every window of `out_size` fits (ceil mode)."""
    fitted = []
    for n, k, s, (lo, hi), dd, o in zip(size, ksize, stride, pads, dilation, out_size):
        needed = (o - 1) * s + dd * (k - 1) + 1
        fitted.append((lo, max(hi, needed - n - lo)))
    return tuple(fitted)


def _forward_pd(lib, alg, src_shape, dst_shape, ksize, stride, pads, dilation):
    src, dst = channel_blocked(lib, src_shape), D.MemoryDesc.any(lib, dst_shape)
    pd = D.create_pd(
        lib,
        "dnnl_pooling_forward_primitive_desc_create",
        D.FORWARD_TRAINING,
        alg,
        src.handle,
        dst.handle,
        D.dims(stride),
        D.dims(ksize),
        D.dims([dd - 1 for dd in dilation]),
        D.dims([lo for lo, _ in pads]),
        D.dims([hi for _, hi in pads]),
    )
    return pd, src


def _build_max(src, dst, ksize, stride, pads, dilation):
    lib = library()
    pd, _ = _forward_pd(lib, D.POOLING_MAX, src, dst, ksize, stride, pads, dilation)
    ws = lib.lib.dnnl_primitive_desc_query_md(pd, D.QUERY_EXEC_ARG_MD, D.ARG_WORKSPACE)
    wide = lib.lib.dnnl_memory_desc_get_size(ws) >= 4 * math.prod(dst)
    plan = Plan(
        lib,
        pd,
        [
            (D.ARG_SRC, D.shape_desc(lib, src), False),
            (D.ARG_DST, D.shape_desc(lib, dst), True),
            (
                D.ARG_WORKSPACE,
                D.MemoryDesc.strided(lib, dst, _strides(dst), D.S32 if wide else D.U8),
                True,
            ),
        ],
    )
    return plan, np.dtype(np.int32 if wide else np.uint8), _offsets(src[2:], ksize, dilation)


def _strides(shape) -> list:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return strides[::-1]


def _offsets(size, ksize, dilation) -> np.ndarray:
    """The plane position, relative to its window's start, of each offset in a window."""
    table = np.zeros((), np.int64)
    for n_after, k, dd in zip(_strides(size), ksize, dilation):
        table = np.add.outer(table, np.arange(k, dtype=np.int64) * dd * n_after)
    return table.reshape(-1)


def _starts(size, stride, pads, out_size) -> np.ndarray:
    """The plane position of each window's first element (broadcast over the output)."""
    total = np.zeros((), np.int64)
    for n_after, s, (lo, _), o in zip(_strides(size), stride, pads, out_size):
        total = np.add.outer(total, (np.arange(o, dtype=np.int64) * s - lo) * n_after)
    return total


def max_pool(fallback):
    """The max pooling kernel: ``(values, int64 flat indices into each input plane)``."""

    def kernel(x, ksize, stride, pads, dilation, out_size):
        if not _ok(x) or not np.isfinite(x).all():
            return fallback(x, ksize, stride, pads, dilation, out_size)
        x = _contiguous(x)
        fitted = _fitted(x.shape[2:], ksize, stride, pads, dilation, out_size)
        dst = x.shape[:2] + tuple(out_size)
        key = ("max", x.shape, ksize, stride, fitted, dilation, dst, threads())
        built = _cache.get(key, lambda: _build_max(x.shape, dst, ksize, stride, fitted, dilation))
        if built is None:
            return fallback(x, ksize, stride, pads, dilation, out_size)
        plan, ws_dtype, offsets = built
        values, ws = np.empty(dst, _F32), np.empty(dst, ws_dtype)
        plan.run(x, values, ws)
        indices = offsets.take(ws)
        indices += _starts(x.shape[2:], stride, pads, out_size)
        return values, indices

    return kernel


def _avg_alg(size, ksize, stride, pads, out_size, count_include_pad, divisor_override):
    """oneDNN's algorithm and padding for an average pooling, or None where it differs."""
    if divisor_override:
        return None
    ones = (1,) * len(ksize)
    fitted = _fitted(size, ksize, stride, pads, ones, out_size)
    if not count_include_pad:
        return D.POOLING_AVG_EXCLUDE_PADDING, fitted
    if fitted != tuple(pads):
        return None
    return D.POOLING_AVG_INCLUDE_PADDING, fitted


def _build_avg(alg, src, dst, ksize, stride, pads):
    lib = library()
    pd, _ = _forward_pd(lib, alg, src, dst, ksize, stride, pads, (1,) * len(ksize))
    args = [(D.ARG_SRC, D.shape_desc(lib, src), False), (D.ARG_DST, D.shape_desc(lib, dst), True)]
    return Plan(lib, pd, args)


def _build_avg_backward(alg, src, dst, ksize, stride, pads):
    lib = library()
    dilation = (1,) * len(ksize)
    diff_src, diff_dst = channel_blocked(lib, src), D.MemoryDesc.any(lib, dst)
    hint, _ = _forward_pd(lib, alg, src, dst, ksize, stride, pads, dilation)
    pd = D.create_backward_pd(
        lib,
        "dnnl_pooling_backward_primitive_desc_create",
        alg,
        diff_src.handle,
        diff_dst.handle,
        D.dims(stride),
        D.dims(ksize),
        D.dims([0] * len(ksize)),
        D.dims([lo for lo, _ in pads]),
        D.dims([hi for _, hi in pads]),
        hint=hint,
    )
    args = [
        (D.ARG_DIFF_DST, D.shape_desc(lib, dst), False),
        (D.ARG_DIFF_SRC, D.shape_desc(lib, src), True),
    ]
    return Plan(lib, pd, args)


def avg_pool(fallback):
    """The average pooling kernel."""

    def kernel(x, ksize, stride, pads, out_size, count_include_pad, divisor_override):
        args = (ksize, stride, pads, out_size, count_include_pad, divisor_override)
        how = _avg_alg(x.shape[2:], *args) if _ok(x) else None
        if how is None:
            return fallback(x, *args)
        alg, fitted = how
        x = _contiguous(x)
        dst = x.shape[:2] + tuple(out_size)
        key = ("avg", alg, x.shape, ksize, stride, fitted, dst, threads())
        plan = _cache.get(key, lambda: _build_avg(alg, x.shape, dst, ksize, stride, fitted))
        if plan is None:
            return fallback(x, *args)
        out = np.empty(dst, _F32)
        plan.run(x, out)
        return out

    return kernel


def avg_pool_backward(fallback):
    """The average pooling's adjoint: ``(N, C, *size)`` from the output gradient ``g``."""

    def kernel(g, size, ksize, stride, pads, count_include_pad, divisor_override):
        args = (size, ksize, stride, pads, count_include_pad, divisor_override)
        out_size = g.shape[2:]
        how = (
            _avg_alg(size, ksize, stride, pads, out_size, count_include_pad, divisor_override)
            if _ok(g)
            else None
        )
        if how is None:
            return fallback(g, *args)
        alg, fitted = how
        g = _contiguous(g)
        src = g.shape[:2] + tuple(size)
        key = ("avg_bwd", alg, src, ksize, stride, fitted, g.shape, threads())
        plan = _cache.get(
            key, lambda: _build_avg_backward(alg, src, g.shape, ksize, stride, fitted)
        )
        if plan is None:
            return fallback(g, *args)
        out = np.empty(src, _F32)
        plan.run(g, out)
        return out

    return kernel
