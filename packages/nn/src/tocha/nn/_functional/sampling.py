"""Resampling: interpolate (upsample), pixel_shuffle, pixel_unshuffle, channel_shuffle,
grid_sample and affine_grid.

Every op is a composite of differentiable tocha ops. interpolate is separable: along each
spatial dim it gathers the source positions of every output position (`index_select`, whose
gradient is the transposed index-add) and blends them with weights computed once per dim in
PyTorch's arithmetic (float32 for float32 inputs). grid_sample gathers the corners of every
sampling point from the flattened input (`gather`) and weights them with functions of the
grid, so the grid gets its gradient too.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

import tocha
from tocha import Tensor
from tocha.library import TITLE, autocast_op, computed_in_float32, keep_format, not_a_tensor

from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = [
    "affine_grid",
    "channel_shuffle",
    "native_channel_shuffle",
    "grid_sample",
    "interpolate",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

CUBIC_A = -0.75
_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}
_AREA = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}
_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


# -- interpolate ------------------------------------------------------------------------------
def _opmath(dtype) -> type:
    """The NumPy type PyTorch computes source coordinates in for inputs of `dtype`."""
    return np.float64 if dtype == tocha.float64 else np.float32


def _scale(n_in: int, n_out: int, scale, align_corners: bool, ft):
    """Source distance between neighbouring output positions (PyTorch's
    ``area_pixel_compute_scale``)."""
    if align_corners:
        return ft((n_in - 1) / (n_out - 1)) if n_out > 1 else ft(0)
    return ft(1.0 / scale) if scale is not None and scale > 0 else ft(ft(n_in) / ft(n_out))


def _source(n_in, n_out, scale, align_corners, cubic, ft) -> np.ndarray:
    """The real source coordinate of each output position."""
    s = _scale(n_in, n_out, scale, align_corners, ft)
    dst = np.arange(n_out, dtype=ft)
    if align_corners:
        return s * dst
    src = s * (dst + ft(0.5)) - ft(0.5)
    return src if cubic else np.maximum(src, ft(0))


def _nearest_index(n_in, n_out, scale, exact: bool, ft) -> np.ndarray:
    s = _scale(n_in, n_out, scale, False, ft)
    dst = np.arange(n_out, dtype=ft)
    src = np.floor((dst + ft(0.5)) * s if exact else dst * s).astype(np.int64)
    return np.minimum(src, n_in - 1)


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """The four bicubic convolution weights (A = -0.75) at fractional offset `t`."""
    a = CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(n_in, n_out, scale, mode, align_corners, ft) -> list:
    """(source index, weight) pairs whose weighted sum is each output position."""
    if mode in ("nearest", "nearest-exact"):
        return [(_nearest_index(n_in, n_out, scale, mode == "nearest-exact", ft), None)]
    src = _source(n_in, n_out, scale, align_corners, mode == "bicubic", ft)
    if mode == "bicubic":
        i0 = np.floor(src)
        weights = _cubic_weights((src - i0).astype(ft))
        i0 = i0.astype(np.int64)
        return [(np.clip(i0 - 1 + k, 0, n_in - 1), w) for k, w in enumerate(weights)]
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    lam = np.clip(src - i0, 0, 1).astype(ft)
    i1 = i0 + (i0 < n_in - 1)
    return [(i0, 1 - lam), (i1, lam)]


def _resample(x: Tensor, dim: int, n_out: int, scale, mode: str, align_corners) -> Tensor:
    """`x` resampled to `n_out` positions along `dim`."""
    n_in = x.shape[dim]
    if n_in == n_out and mode in ("nearest", "nearest-exact"):
        return x
    trailing = (1,) * (x.dim() - dim - 1)
    out = None
    for index, weight in _taps(n_in, n_out, scale, mode, align_corners, _opmath(x.dtype)):
        term = x.index_select(dim, tocha.from_numpy(index).to(x.device))
        if weight is not None:
            w = tocha.from_numpy(weight.reshape((n_out,) + trailing)).to(x.device, x.dtype)
            term = term * w
        out = term if out is None else out + term
    return out


def _triangle(x: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, 1.0 - np.abs(x))


def _cubic(x: np.ndarray, a: float = -0.5) -> np.ndarray:
    """The cubic convolution kernel (PIL's a = -0.5, which PyTorch's antialiasing uses)."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _lanczos(x: np.ndarray, lobes: int = 3) -> np.ndarray:
    return np.where(np.abs(x) < lobes, np.sinc(x) * np.sinc(x / lobes), 0.0)


# mode -> (filter, its support in source pixels at scale 1)
_ANTIALIAS_FILTERS = {
    "bilinear": (_triangle, 1.0),
    "bicubic": (_cubic, 2.0),
    "lanczos": (_lanczos, 3.0),
}


def _antialias_weights(n_in: int, n_out: int, scale, mode: str, align_corners: bool) -> np.ndarray:
    """The ``(n_out, n_in)`` weights of antialiased resampling: the filter is stretched by the
    downscaling factor, so each output averages every input pixel it covers, and each row is
    normalised to sum to 1."""
    kernel, support = _ANTIALIAS_FILTERS[mode]
    s = float(_scale(n_in, n_out, scale, align_corners, np.float64))
    stretch = max(s, 1.0)
    reach = support * stretch
    weights = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = s * (i + 0.5)
        lo = max(int(center - reach + 0.5), 0)
        hi = min(int(center + reach + 0.5), n_in)
        w = kernel((np.arange(lo, hi) - center + 0.5) / stretch)
        total = w.sum()
        weights[i, lo:hi] = w / total if total != 0 else w
    return weights


def _tap_weights(n_in: int, n_out: int, scale, mode: str, align_corners) -> np.ndarray:
    """`_taps` as an ``(n_out, n_in)`` matrix."""
    weights = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    for index, w in _taps(n_in, n_out, scale, mode, align_corners, np.float64):
        np.add.at(weights, (rows, index), w)
    return weights


def _fixed_point(weights: np.ndarray) -> tuple[np.ndarray, int]:
    """`weights` as integers over ``2**bits``: PyTorch's uint8 kernels take the most bits that
    keep the largest weight within 16-bit range (at most 22)."""
    bits, largest = 0, weights.max()
    while bits < 22 and np.floor(largest * (1 << (bits + 1)) + 0.5) < (1 << 15):
        bits += 1
    scaled = np.sign(weights) * np.floor(np.abs(weights) * (1 << bits) + 0.5)
    return scaled.astype(np.int64), bits


def _along(x: Tensor, dim: int, weights: Tensor) -> Tensor:
    """``weights @ x`` along `dim` (`weights` is ``(n_out, n_in)``)."""
    return (x.transpose(dim, -1) @ weights.T).transpose(dim, -1)


def _resample_by_matrices(input: Tensor, out_size, scales, mode, align_corners, antialias):
    """Resampling as one weight matrix per spatial dim, the last dim first. uint8 inputs are
    weighted in fixed point and rounded after each dim, as PyTorch's uint8 kernels do."""
    make = _antialias_weights if antialias else _tap_weights
    out = input
    for i in reversed(range(len(out_size))):
        dim = 2 + i
        weights = make(out.shape[dim], out_size[i], scales[i], mode, bool(align_corners))
        if input.dtype == tocha.uint8:
            fixed, bits = _fixed_point(weights)
            acc = _along(out.long(), dim, tocha.from_numpy(fixed).to(out.device))
            out = ((acc + (1 << (bits - 1))) >> bits).clamp(0, 255).to(tocha.uint8)
        else:
            out = _along(out, dim, tocha.from_numpy(weights).to(out.device, out.dtype))
    return out


def _check_dtype(input: Tensor, mode: str, antialias: bool) -> None:
    """PyTorch's error for a dtype its resampling kernels lack: they take floating inputs
    (antialiasing: float32 and float64), and uint8 images in every mode but linear, trilinear
    and area."""
    dtype = input.dtype
    if antialias:
        if dtype in (tocha.float32, tocha.float64, tocha.uint8):
            return
        kernel = "compute_index_ranges_weights"
    elif dtype.is_floating_point or (dtype == tocha.uint8 and mode not in ("linear", "trilinear")):
        return
    elif mode in ("nearest", "nearest-exact"):
        kernel = (
            "upsample_nearest2d_channels_last"
            if input.dim() == 4
            else "compute_indices_weights_nearest"
        )
    elif mode == "bilinear":
        kernel = "upsample_bilinear2d_channels_last"
    elif mode == "bicubic":
        kernel = "compute_indices_weights_cubic"
    else:
        kernel = "compute_indices_weights_linear"
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[dtype]}'")


def _sizes(input: Tensor, size, scale_factor, recompute_scale_factor, mode):
    """Output sizes and the scale factors the kernels use (None where sizes rule)."""
    dim = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format."
                )
            if not all(isinstance(s, int) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}"
                )
            out, scales = list(size), None
        else:
            out, scales = [size] * dim, None
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    "...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scales = list(scale_factor)
        else:
            scales = [scale_factor] * dim
        out = [int(n * s) for n, s in zip(spatial, scales)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode != "area" and (min(out, default=1) <= 0 or min(spatial, default=1) <= 0):
        names = ("D", "H", "W")[3 - dim :]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({', '.join(f'{k}: {n}' for k, n in zip(names, spatial))})"
            f"{' and' if dim == 1 else ''} output "
            f"({', '.join(f'{k}: {n}' for k, n in zip(names, out))})"
        )
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scales = None
    return out, scales or [None] * dim


def _mode_error(input: Tensor, mode: str) -> NotImplementedError:
    ndim = input.dim()
    need = _LINEAR.get(mode)
    if need is not None and ndim in (3, 4, 5):
        return NotImplementedError(f"Got {ndim}D input, but {mode} mode needs {need}D input")
    return NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the modes: "
        "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
        f"(got {mode})"
    )


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of a ``(N, C, *spatial)`` input to `size` or by `scale_factor`.

    Modes: ``nearest``, ``nearest-exact``, ``linear`` (3-D input), ``bilinear`` and
    ``bicubic`` (4-D), ``trilinear`` (5-D) and ``area`` (adaptive average pooling).
    `align_corners` maps the corner pixels' centres onto each other (interpolating modes).

    Example:
        >>> F.interpolate(tocha.tensor([[[1.0, 3.0]]]), scale_factor=2, mode="linear")
        tensor([[[1.0000, 1.5000, 2.5000, 3.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating "
                "modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    out_size, scales = _sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias:
        if not (mode in _ANTIALIAS_FILTERS and input.dim() == 4):
            raise ValueError(
                "Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                "modes and requires a 4-D tensor as input"
            )
    elif mode == "lanczos":
        raise ValueError("Lanczos mode requires antialias=True")
    ndim = input.dim()
    if (
        ndim not in (3, 4, 5)
        or (mode in _LINEAR and _LINEAR[mode] != ndim)
        or (mode in ("bicubic", "lanczos") and ndim != 4)
        or mode not in (*_LINEAR, "nearest", "nearest-exact", "area", "bicubic", "lanczos")
    ):
        raise _mode_error(input, mode)
    if mode != "area":
        _check_dtype(input, mode, antialias)
    out = _resampled(input, out_size, scales, mode, align_corners, antialias)
    return keep_format(out, input)  # channels-last in, channels-last out, as PyTorch's


@computed_in_float32
def _resampled(input: Tensor, out_size, scales, mode: str, align_corners, antialias: bool):
    """`input` resampled to `out_size` once the arguments are checked."""
    if mode == "area":
        return _AREA[input.dim()](input, out_size)
    if antialias or input.dtype == tocha.uint8 and mode in ("bilinear", "bicubic"):
        return _resample_by_matrices(input, out_size, scales, mode, align_corners, antialias)
    out = input
    for i, (n, s) in enumerate(zip(out_size, scales)):
        out = _resample(out, 2 + i, n, s, mode, align_corners)
    return out


def upsample(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of `interpolate`."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: `interpolate` in ``nearest`` mode."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: `interpolate` in ``bilinear`` mode with ``align_corners=True``."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- pixel and channel shuffles ------------------------------------------------------------
def _check_shuffle(input: Tensor, factor: int, name: str, word: str) -> None:
    if not isinstance(input, Tensor):
        raise not_a_tensor(name, input, "input", 1)
    if input.dim() < 3:
        raise RuntimeError(
            f"{name} expects input to have at least 3 dimensions, but got input "
            f"with {input.dim()} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {word}, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C * r**2, H, W)`` into ``(*, C, H * r, W * r)``."""
    _check_shuffle(input, upscale_factor, "pixel_shuffle", "upscale_factor")
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be "
            f"divisible by the square of upscale_factor, but input.size(-3)={c} "
            f"is not divisible by {r * r}"
        )
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return keep_format(x.reshape(*lead, c // (r * r), h * r, w * r), input)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r**2, H, W)``."""
    _check_shuffle(input, downscale_factor, "pixel_unshuffle", "downscale_factor")
    r = downscale_factor
    *lead, c, h, w = input.shape
    for size, name, dim in ((h, "height", -2), (w, "width", -1)):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by "
                f"downscale_factor, but input.size({dim})={size} is not "
                f"divisible by {r}"
            )
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return keep_format(x.reshape(*lead, c * r * r, h // r, w // r), input)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``(N, C, *)``: split them into `groups` and transpose."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("channel_shuffle", input, "input", 1)
    if input.dim() <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with "
            f"sizes {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return keep_format(x.reshape(input.shape), input)


native_channel_shuffle = channel_shuffle


# -- grid_sample and affine_grid -------------------------------------------------------------
def _unnormalize(coord: Tensor, n: int, align_corners: bool) -> Tensor:
    """Grid coordinates in [-1, 1] as pixel coordinates."""
    if align_corners:
        return (coord + 1) * ((n - 1) / 2)
    return ((coord + 1) * n - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """`coord` reflected into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    extra = coord.fmod(span)
    flips = (coord / span).floor()
    return tocha.where(flips.remainder(2) == 0, extra + low, span - extra + low)


def _pad_coord(coord: Tensor, n: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (n - 1)) if align_corners else _reflect(coord, -1, 2 * n - 1)
    if padding_mode in ("border", "reflection"):
        coord = coord.clamp(0, n - 1)
    return coord


def _corner_values(flat: Tensor, index: list, sizes) -> Tensor:
    """The input values ``(N, C, P)`` at integer positions `index` (one ``(N, P)`` tensor per
    spatial dim), zero outside the input."""
    inside = None
    linear = None
    for i, n in zip(index, sizes):
        ok = (i >= 0) & (i < n)
        inside = ok if inside is None else inside & ok
        i = i.clamp(0, n - 1)
        linear = i if linear is None else linear * n + i
    n_, c = flat.shape[:2]
    values = flat.gather(2, linear.unsqueeze(1).expand(n_, c, linear.shape[1]))
    return values * inside.unsqueeze(1).to(flat.dtype)


@autocast_op("grid_sample")
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample ``(N, C, H_in, W_in)`` at the ``(x, y)`` points of a ``(N, H, W, 2)`` grid in
    [-1, 1] (volumes: ``(N, C, D, H, W)`` and ``(N, D, H, W, 3)``).

    Modes ``bilinear``, ``nearest`` and (4-D input only) ``bicubic``; `padding_mode`
    ``zeros``, ``border`` or ``reflection`` for points outside the input. The gradient
    reaches input and grid (zero for the grid in ``nearest`` mode).
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("grid_sample", input, "input", 1)
    if not isinstance(grid, Tensor):
        raise not_a_tensor("grid_sample", grid, "grid", 2)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', "
            f"'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
            f"'border', or 'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    shapes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    # PyTorch's order: the batch sizes (an IndexError for a 0-dim tensor), the grid's last
    # dim, then the number of dims
    if grid.size(0) != input.size(0):
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got {shapes}"
        )
    nd = input.dim() - 2
    if grid.shape[-1] != nd:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {nd} in last "
            f"dimension, but got grid with sizes {list(grid.shape)}"
        )
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(
            f"grid_sampler(): expected {4 if input.dim() == 4 else 5}D input and grid with same "
            f"number of dimensions, but got {shapes}"
        )
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    n, c = input.shape[:2]
    sizes = tuple(input.shape[2:])
    points = grid.reshape(n, -1, nd)
    if mode == "bicubic":
        out = _grid_sample_bicubic(
            input.reshape(n, c, -1), points, sizes, padding_mode, align_corners
        )
        return out.reshape(n, c, *grid.shape[1:-1])
    coords = [
        _pad_coord(
            _unnormalize(points[..., nd - 1 - k], sizes[k], align_corners),
            sizes[k],
            padding_mode,
            align_corners,
        )
        for k in range(nd)
    ]
    flat = input.reshape(n, c, -1)
    if mode == "nearest":
        nearest = [p.round() for p in coords]
        out = _corner_values(flat, [q.long() for q in nearest], sizes)
        # A weight of exactly 1 that depends on the grid through round (derivative 0): the
        # grid gets PyTorch's zero gradient instead of none.
        weight = 1 + sum(q - q.detach() for q in nearest)
        out = out * weight.unsqueeze(1)
    else:
        low = [p.floor() for p in coords]
        frac = [p - lo for p, lo in zip(coords, low)]
        low = [lo.long() for lo in low]
        out = None
        for corner in itertools.product((0, 1), repeat=nd):
            weight = None
            for f, k in zip(frac, corner):
                w = f if k else 1 - f
                weight = w if weight is None else weight * w
            values = _corner_values(flat, [lo + k for lo, k in zip(low, corner)], sizes)
            term = values * weight.unsqueeze(1)
            out = term if out is None else out + term
    return out.reshape(n, c, *grid.shape[1:-1])


_CUBIC_A = -0.75  # the cubic convolution kernel's parameter, as PyTorch's bicubic modes


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """The weights of the 4 taps at offsets -1, 0, 1, 2 from floor(x), `t` = x - floor(x)."""
    a = _CUBIC_A

    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_sample_bicubic(
    flat: Tensor, points: Tensor, sizes, padding_mode: str, align_corners: bool
) -> Tensor:
    """Bicubic `grid_sample` of ``flat`` ``(N, C, H * W)`` at ``points`` ``(N, P, 2)``: the
    16 taps around each point weighted by the cubic convolution kernel, each tap's position
    padded (border, reflection) or zero outside (zeros); the grid's gradient comes through
    the weights."""
    coords = [_unnormalize(points[..., 1 - k], sizes[k], align_corners) for k in range(2)]
    low = [p.floor() for p in coords]
    weights = [_cubic_weights(p - lo) for p, lo in zip(coords, low)]
    out = None
    for i in range(4):
        for j in range(4):
            taps = [low[0] + (i - 1), low[1] + (j - 1)]
            taps = [_pad_coord(t, n, padding_mode, align_corners) for t, n in zip(taps, sizes)]
            values = _corner_values(flat, [t.long() for t in taps], sizes)
            term = values * (weights[0][i] * weights[1][j]).unsqueeze(1)
            out = term if out is None else out + term
    return out


def _base_coords(steps: int, align_corners: bool, like: Tensor) -> Tensor:
    """PyTorch's ``linspace_from_neg_one``: `steps` points spanning [-1, 1] (pixel centres
    when not `align_corners`)."""
    if steps <= 1:
        return tocha.zeros(max(steps, 0), dtype=like.dtype, device=like.device)
    points = tocha.linspace(-1, 1, steps, dtype=like.dtype, device=like.device)
    return points if align_corners else points * (steps - 1) / steps  # two roundings, as PyTorch


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) of the affine maps `theta`
    ``(N, 2, 3)`` (or ``(N, 3, 4)``) over an output of `size`, for `grid_sample`."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    nd = len(size) - 2
    if nd not in (2, 3):
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D "
            f"affine transforms, respectively. Got size {size}."
        )
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ValueError(
            f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} "
            f"for size {size}. Got {theta.shape}."
        )
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size "
            "grids when align_corners=True. This is not an issue for standard usage.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    axes = [_base_coords(s, align_corners, theta) for s in reversed(spatial)]
    mesh = tocha.meshgrid(*reversed(axes), indexing="ij")
    ones = tocha.ones(spatial, dtype=theta.dtype, device=theta.device)
    base = tocha.stack([*reversed(mesh), ones], dim=-1).reshape(1, -1, nd + 1)
    grid = base.matmul(theta.transpose(1, 2))
    return grid.reshape(size[0], *spatial, nd)
