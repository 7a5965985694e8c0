"""Padding, interpolation and pixel shuffles."""

from __future__ import annotations

import numpy as np

import tocha.nn.functional as F

from .._builder import Builder, meta_dtype, meta_shape, rank, static_dim
from . import _nn

AREA = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad(b: Builder, node, input, pad, mode="constant", value=None):
    """`pad` lists ``(low, high)`` pairs from the last dimension backwards."""
    ndim = rank(input)
    pairs = [(int(pad[k]), int(pad[k + 1])) for k in range(0, len(pad), 2)]
    lows, highs = [0] * ndim, [0] * ndim
    for k, (lo, hi) in enumerate(pairs):
        lows[ndim - 1 - k], highs[ndim - 1 - k] = lo, hi
    if mode == "circular" and b.opset < 19:
        raise NotImplementedError("pad with mode='circular' before opset 19")
    if mode not in PAD_MODES:
        raise ValueError(f"Unrecognised padding mode {mode}")
    fill = None
    if mode == "constant":
        fill = b.scalar(0 if value is None else value, meta_dtype(input))
    return b.op("Pad", [b.value(input), b.ints(lows + highs), fill], mode=PAD_MODES[mode])


def _interpolate(
    b: Builder,
    node,
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    if antialias:
        raise NotImplementedError("interpolate with antialias=True")
    x = b.value(input)
    spatial = rank(input) - 2
    if mode == "area":
        return _nn.FUNCTIONS[AREA[spatial]](b, node, input, list(meta_shape(node)[2:]))
    attrs: dict = {}
    if mode == "nearest":
        attrs = {
            "mode": "nearest",
            "coordinate_transformation_mode": "asymmetric",
            "nearest_mode": "floor",
        }
    elif mode == "nearest-exact":
        attrs = {
            "mode": "nearest",
            "coordinate_transformation_mode": "half_pixel",
            "nearest_mode": "round_prefer_ceil",
        }
    elif mode in ("linear", "bilinear", "trilinear", "bicubic"):
        attrs = {
            "mode": "cubic" if mode == "bicubic" else "linear",
            "coordinate_transformation_mode": (
                "align_corners" if align_corners else "pytorch_half_pixel"
            ),
        }
        if mode == "bicubic":
            attrs["cubic_coeff_a"] = -0.75
    else:
        raise NotImplementedError(f"interpolate with mode={mode!r}")
    if scale_factor is not None and not recompute_scale_factor:
        factors = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor]
        factors = factors * spatial if len(factors) == 1 else factors
        scales = b.const(np.array([1.0, 1.0, *factors], dtype=np.float32))
        return b.op("Resize", [x, None, scales], **attrs)
    out = [static_dim(node, d) for d in range(2, rank(node))]
    sizes = b.op("Concat", [b.op("Shape", [x], start=0, end=2), b.ints(out)], axis=0)
    return b.op("Resize", [x, None, None, sizes], **attrs)


def _pixel_shuffle(b: Builder, node, input, upscale_factor):
    r = int(upscale_factor)
    return b.op("DepthToSpace", [b.value(input)], blocksize=r, mode="CRD")


def _pixel_unshuffle(b: Builder, node, input, downscale_factor):
    r = int(downscale_factor)
    c, h, w = (static_dim(input, d) for d in (-3, -2, -1))
    x = b.op("Reshape", [b.value(input), b.ints([-1, c, h // r, r, w // r, r])])
    x = b.op("Transpose", [x], perm=[0, 1, 3, 5, 2, 4])
    out = b.op("Reshape", [x, b.ints([-1, c * r * r, h // r, w // r])])
    if rank(input) == 3:
        return b.op("Squeeze", [out, b.ints([0])])
    return out


FUNCTIONS = {
    F.pad: _pad,
    F.interpolate: _interpolate,
    F.upsample: _interpolate,
    F.pixel_shuffle: _pixel_shuffle,
    F.pixel_unshuffle: _pixel_unshuffle,
}
