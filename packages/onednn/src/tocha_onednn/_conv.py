"""Convolution kernels on oneDNN: tocha-nn's three convolution primitives.

- ``convolution(x, w, [b], stride, pads, dilation, groups, out_size, needs)``: oneDNN's
  forward convolution;
- ``convolution_transpose(x, w, [b], ...)``: oneDNN's backward-data convolution (x is the
  gradient of a convolution's output, w its weight), plus the bias;
- ``convolution_backward_weight(x, g, stride, pads, dilation, groups, ksize)``: oneDNN's
  backward-weights convolution.

1, 2 and 3 spatial dims; stride, padding (each side its own), dilation and groups. Each
primitive lets oneDNN choose its layouts (blocked on AVX2/AVX-512) and reorders to and from
NumPy's C order around it. float32, and bfloat16 where oneDNN creates bfloat16 convolutions
on this CPU (AVX-512 BF16, AMX; not AVX2, where such calls are declined once per shape).
Other dtypes, and shapes oneDNN refuses, go to the built-in kernel.
"""

from __future__ import annotations

import numpy as np

from . import _dnnl as D
from ._plan import Cache, Plan
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
_cache = Cache()
FEW_CHANNELS = 4


def _dtype(a) -> int | None:
    """oneDNN's data type of the array `a`: float32 or bfloat16; None for any other."""
    if a.dtype == _F32:
        return D.F32
    return D.BF16 if a.dtype.name == "bfloat16" else None


def _ok(*arrays) -> bool:
    """Whether oneDNN may take these operands: all float32 or all bfloat16, 3 to 5 dims,
    nothing empty."""
    first = arrays[0]
    if _dtype(first) is None:
        return False
    for a in arrays:
        if a.dtype != first.dtype or a.size == 0:
            return False
    return 3 <= first.ndim <= 5


def _contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _weights_desc(lib, shape, groups, dt):
    """The C-ordered weight ``(O, C/g, *k)`` as oneDNN's grouped ``(g, O/g, C/g, *k)``."""
    if groups == 1:
        return D.shape_desc(lib, shape, dt)
    return D.shape_desc(lib, (groups, shape[0] // groups, *shape[1:]), dt)


def _geometry(stride, pads, dilation):
    return (
        D.dims(stride),
        D.dims([d - 1 for d in dilation]),
        D.dims([lo for lo, _ in pads]),
        D.dims([hi for _, hi in pads]),
    )


def _forward_pd(lib, src, wshape, bias, dst, groups, geometry, dt):
    """A forward-training convolution descriptor on layouts oneDNN chooses."""
    if groups > 1:
        wshape = (groups, wshape[0] // groups, *wshape[1:])
    w = D.MemoryDesc.any(lib, wshape, dt)
    b = D.shape_desc(lib, (dst[1],), dt) if bias else None
    # An input of 1 to 3 channels (an image) stays in C order: padded to a channel block it
    # costs more (its backward-data above all) than oneDNN's kernels for plain inputs.
    few = groups == 1 and src[1] < FEW_CHANNELS
    s = D.shape_desc(lib, src, dt) if few else D.MemoryDesc.any(lib, src, dt)
    d = D.MemoryDesc.any(lib, dst, dt)
    pd = D.create_pd(
        lib,
        "dnnl_convolution_forward_primitive_desc_create",
        D.FORWARD_TRAINING,
        D.CONVOLUTION_DIRECT,
        s.handle,
        w.handle,
        b.handle if b else None,
        d.handle,
        *geometry,
    )
    return pd, (s, w, b, d)


def _build_forward(src, wshape, bias, dst, groups, geometry, dt):
    lib = library()
    pd, _ = _forward_pd(lib, src, wshape, bias, dst, groups, geometry, dt)
    args = [
        (D.ARG_SRC, D.shape_desc(lib, src, dt), False),
        (D.ARG_WEIGHTS, _weights_desc(lib, wshape, groups, dt), False),
    ]
    if bias:
        args.append((D.ARG_BIAS, D.shape_desc(lib, (dst[1],), dt), False))
    args.append((D.ARG_DST, D.shape_desc(lib, dst, dt), True))
    return Plan(lib, pd, args)


def _build_backward_data(src, wshape, dst, groups, geometry, dt):
    """diff_src (shape `src`) from diff_dst (shape `dst`) and weights."""
    lib = library()
    hint, keep = _forward_pd(lib, src, wshape, False, dst, groups, geometry, dt)
    s, w, _, d = keep
    pd = D.create_backward_pd(
        lib,
        "dnnl_convolution_backward_data_primitive_desc_create",
        D.CONVOLUTION_DIRECT,
        s.handle,
        w.handle,
        d.handle,
        *geometry,
        hint=hint,
    )
    args = [
        (D.ARG_DIFF_DST, D.shape_desc(lib, dst, dt), False),
        (D.ARG_WEIGHTS, _weights_desc(lib, wshape, groups, dt), False),
        (D.ARG_DIFF_SRC, D.shape_desc(lib, src, dt), True),
    ]
    return Plan(lib, pd, args)


def _build_backward_weights(src, wshape, dst, groups, geometry, dt):
    lib = library()
    hint, keep = _forward_pd(lib, src, wshape, False, dst, groups, geometry, dt)
    s, w, _, d = keep
    pd = D.create_backward_pd(
        lib,
        "dnnl_convolution_backward_weights_primitive_desc_create",
        D.CONVOLUTION_DIRECT,
        s.handle,
        w.handle,
        None,
        d.handle,
        *geometry,
        hint=hint,
    )
    args = [
        (D.ARG_SRC, D.shape_desc(lib, src, dt), False),
        (D.ARG_DIFF_DST, D.shape_desc(lib, dst, dt), False),
        (D.ARG_DIFF_WEIGHTS, _weights_desc(lib, wshape, groups, dt), True),
    ]
    return Plan(lib, pd, args)


def convolution(fallback):
    """The forward convolution kernel."""

    def kernel(x, w, *rest):
        *bias, stride, pads, dilation, groups, out_size, _ = rest
        if not _ok(x, w, *bias):
            return fallback(x, w, *rest)
        x, w = _contiguous(x), _contiguous(w)
        dst, dt = (x.shape[0], w.shape[0], *out_size), _dtype(x)
        key = ("fwd", x.shape, w.shape, bool(bias), stride, pads, dilation, groups, dst, dt)
        plan = _cache.get(
            key + (threads(),),
            lambda: _build_forward(
                x.shape, w.shape, bool(bias), dst, groups, _geometry(stride, pads, dilation), dt
            ),
        )
        if plan is None:
            return fallback(x, w, *rest)
        out = np.empty(dst, x.dtype)
        if bias:
            plan.run(x, w, _contiguous(bias[0]), out)
        else:
            plan.run(x, w, out)
        return out

    return kernel


def convolution_transpose(fallback):
    """The transposed convolution kernel: a backward-data convolution, plus the bias."""

    def kernel(x, w, *rest):
        *bias, stride, pads, dilation, groups, out_size, _ = rest
        if not _ok(x, w, *bias):
            return fallback(x, w, *rest)
        x, w = _contiguous(x), _contiguous(w)
        src, dt = (x.shape[0], w.shape[1] * groups, *out_size), _dtype(x)
        key = ("bwd_data", x.shape, w.shape, stride, pads, dilation, groups, src, dt)
        plan = _cache.get(
            key + (threads(),),
            lambda: _build_backward_data(
                src, w.shape, x.shape, groups, _geometry(stride, pads, dilation), dt
            ),
        )
        if plan is None:
            return fallback(x, w, *rest)
        out = np.empty(src, x.dtype)
        plan.run(x, w, out)
        if bias:
            out += bias[0].reshape((-1,) + (1,) * len(out_size))
        return out

    return kernel


def convolution_backward_weight(fallback):
    """The weight-gradient kernel of a convolution."""

    def kernel(x, g, stride, pads, dilation, groups, ksize):
        if not _ok(x, g):
            return fallback(x, g, stride, pads, dilation, groups, ksize)
        x, g = _contiguous(x), _contiguous(g)
        wshape, dt = (g.shape[1], x.shape[1] // groups, *ksize), _dtype(x)
        key = ("bwd_w", x.shape, g.shape, stride, pads, dilation, groups, wshape, dt)
        plan = _cache.get(
            key + (threads(),),
            lambda: _build_backward_weights(
                x.shape, wshape, g.shape, groups, _geometry(stride, pads, dilation), dt
            ),
        )
        if plan is None:
            return fallback(x, g, stride, pads, dilation, groups, ksize)
        out = np.empty(wshape, x.dtype)
        plan.run(x, g, out)
        return out

    return kernel
