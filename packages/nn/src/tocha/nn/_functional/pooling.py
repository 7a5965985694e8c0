"""Pooling: max, average, adaptive, power-average pooling and max unpooling, in 1, 2 and 3-D.

One N-d implementation serves every dimensionality. Windows are strided views of the padded
input (as in `conv`). Primitives:

- ``max_pool`` and ``adaptive_max_pool`` return the maxima and their flat indices into each
  input plane (as PyTorch); the gradient goes to the argmax through ``scatter_add`` (whose
  own derivative is a gather, so double backward works); in forward mode the tangent is
  gathered at the argmax;
- ``avg_pool`` and its adjoint ``avg_pool_backward`` are linear: each is the other's
  derivative and its own forward rule.

Adaptive average pooling is a matmul by an averaging matrix per spatial dim; power-average
pooling and max unpooling are composites.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import tocha
from tocha import Tensor
from tocha.autograd.derivatives import d, fwd, fwd_linear
from tocha.library import (
    GRAD_MODE,
    LAYERS,
    TITLE,
    autocast_op,
    call,
    computed_in_float32,
    defop,
    expect_tensor,
    keep_format,
    not_a_tensor,
)

from .activation import relu
from .conv import _col2im, _pad, _windows

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


# -- kernels --------------------------------------------------------------------------------
def _fit_pads(size, ksize, stride, pads, dilation, out_size):
    """Padding whose high side is grown (ceil_mode) so that every window fits."""
    fitted = []
    for n, k, s, (lo, hi), dd, o in zip(size, ksize, stride, pads, dilation, out_size):
        needed = (o - 1) * s + dd * (k - 1) + 1
        fitted.append((lo, max(hi, needed - n - lo)))
    return tuple(fitted)


def _lowest(xp, dtype):
    floating = dtype.kind == "f" or dtype.name == "bfloat16"
    return -xp.inf if floating else xp.iinfo(dtype).min


def _flat_index(xp, size, starts, offsets):
    """Flat indices into a plane of `size`: per dim, a window start (shaped to broadcast over
    the output) plus an offset within the window."""
    flat = 0
    for i, n in enumerate(size):
        flat = flat * n + (starts[i] + offsets[i])
    return flat


def _max_pool_kernel(xp):
    def kernel(x, ksize, stride, pads, dilation, out_size):
        nd = len(ksize)
        size = x.shape[2:]
        padded = _pad(
            xp, x, _fit_pads(size, ksize, stride, pads, dilation, out_size), _lowest(xp, x.dtype)
        )
        win = _windows(xp, padded, ksize, stride, dilation, out_size)
        order = (0, 1, *range(2 + nd, 2 + 2 * nd), *range(2, 2 + nd))
        win = win.transpose(order).reshape(x.shape[:2] + tuple(out_size) + (-1,))
        arg = win.argmax(-1)
        values = xp.take_along_axis(win, arg[..., None], -1)[..., 0]
        offsets = [k * dd for k, dd in zip(xp.unravel_index(arg, ksize), dilation)]
        starts = [
            (xp.arange(o) * s - lo).reshape((o,) + (1,) * (nd - 1 - i))
            for i, (o, s, (lo, _)) in enumerate(zip(out_size, stride, pads))
        ]
        return values, _flat_index(xp, size, starts, offsets).astype(xp.int64)

    return kernel


def _adaptive_bounds(n: int, o: int):
    """Start and end of each of the `o` adaptive windows over `n` positions."""
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def _adaptive_max_kernel(xp):
    def kernel(x, out_size):
        nd = len(out_size)
        size = x.shape[2:]
        index, picks = (slice(None), slice(None)), []
        for i, (n, o) in enumerate(zip(size, out_size)):
            start, end = _adaptive_bounds(n, o)
            width = int((end - start).max()) if o else 1
            pick = np.minimum(start[:, None] + np.arange(width), end[:, None] - 1)
            shape = [1] * (2 * nd)
            shape[i], shape[nd + i] = o, width
            picks.append(xp.asarray(pick.reshape(shape)))
        win = x[index + tuple(picks)]
        win = win.reshape(x.shape[:2] + tuple(out_size) + (-1,))
        arg = win.argmax(-1) if win.size else xp.zeros(win.shape[:-1], xp.int64)
        values = xp.take_along_axis(win, arg[..., None], -1)[..., 0]
        widths = [p.shape[nd + i] for i, p in enumerate(picks)]
        offsets = xp.unravel_index(arg, widths)
        columns = [p.reshape(p.shape[i], p.shape[nd + i]) for i, p in enumerate(picks)]
        coords = []
        for i, (col, off) in enumerate(zip(columns, offsets)):
            rows = xp.arange(col.shape[0]).reshape((-1,) + (1,) * (nd - 1 - i))
            coords.append(col[rows, off])
        return values, _flat_index(xp, size, [0] * nd, coords).astype(xp.int64)

    return kernel


def _divisors(size, ksize, stride, pads, out_size, count_include_pad, divisor_override):
    """The divisor of each output of an average pooling, as PyTorch counts it."""
    if divisor_override:
        return float(divisor_override)
    total = np.ones((), np.float64)
    for n, k, s, (lo, _), o in zip(size, ksize, stride, pads, out_size):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, n + lo)
        count = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        total = np.multiply.outer(total, count)
    return total


def _avg_pool_kernel(xp):
    def kernel(x, ksize, stride, pads, out_size, count_include_pad, divisor_override):
        nd = len(ksize)
        ones = (1,) * nd
        size = x.shape[2:]
        padded = _pad(xp, x, _fit_pads(size, ksize, stride, pads, ones, out_size))
        win = _windows(xp, padded, ksize, stride, ones, out_size)
        total = win.sum(tuple(range(2, 2 + nd)))
        div = _divisors(size, ksize, stride, pads, out_size, count_include_pad, divisor_override)
        return (total / xp.asarray(div, dtype=x.dtype)).astype(x.dtype, copy=False)

    return kernel


def _avg_pool_backward_kernel(xp):
    def kernel(g, size, ksize, stride, pads, count_include_pad, divisor_override):
        nd = len(ksize)
        ones = (1,) * nd
        out_size = g.shape[2:]
        div = _divisors(size, ksize, stride, pads, out_size, count_include_pad, divisor_override)
        scaled = (g / xp.asarray(div, dtype=g.dtype)).astype(g.dtype, copy=False)
        cols = xp.broadcast_to(
            scaled[(slice(None), slice(None)) + (None,) * nd],
            g.shape[:2] + tuple(ksize) + tuple(out_size),
        )
        fitted = _fit_pads(size, ksize, stride, pads, ones, out_size)
        return _col2im(xp, cols, size, stride, fitted, ones)

    return kernel


max_pool_op = defop("max_pool", _max_pool_kernel, layout=(0,))
adaptive_max_pool_op = defop("adaptive_max_pool", _adaptive_max_kernel, layout=(0,))
avg_pool_op = defop("avg_pool", _avg_pool_kernel, opmath=True, layout=(0,))
avg_pool_backward_op = defop("avg_pool_backward", _avg_pool_backward_kernel, opmath=True)


# -- derivatives ----------------------------------------------------------------------------
def _to_argmax(g, out, x):
    """The gradient of the maxima, sent to the input positions they came from."""
    values, indices = g[0], out[1]
    n, c = x.shape[:2]
    flat = tocha.zeros((n, c, math.prod(x.shape[2:])), dtype=values.dtype, device=values.device)
    flat = flat.scatter_add(2, indices.reshape(n, c, -1), values.reshape(n, c, -1))
    return flat.reshape(x.shape)


def _avg_pool_grad(g, out, x, ksize, stride, pads, out_size, count_include_pad, divisor):
    return call(
        avg_pool_backward_op,
        (g,),
        tuple(x.shape[2:]),
        ksize,
        stride,
        pads,
        count_include_pad,
        divisor,
    )


def _avg_pool_backward_grad(gg, out, g, size, ksize, stride, pads, count_include_pad, divisor):
    return call(
        avg_pool_op, (gg,), ksize, stride, pads, tuple(g.shape[2:]), count_include_pad, divisor
    )


def _at_argmax(t, out, x, *args):
    """The forward rule of max pooling: the input's tangent where each maximum came from."""
    values, indices = out
    n, c = x.shape[:2]
    picked = t[0].reshape(n, c, -1).gather(2, indices.reshape(n, c, -1))
    return picked.reshape(values.shape), None


d("max_pool", "o1", lambda g, out, x, *args: _to_argmax(g, out, x))
fwd("max_pool", _at_argmax)
d("adaptive_max_pool", "o1", lambda g, out, x, out_size: _to_argmax(g, out, x))
fwd("adaptive_max_pool", _at_argmax)
d("avg_pool", "", _avg_pool_grad)
d("avg_pool_backward", "", _avg_pool_backward_grad)
fwd_linear("avg_pool", "avg_pool_backward")


# -- argument handling ----------------------------------------------------------------------
def _tuple(value, nd: int, name: str, fn: str) -> tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * nd
    if not isinstance(value, (tuple, list)) or not all(map(_is_int, value)):
        raise TypeError(
            f"{fn}(): argument '{name}' must be tuple of ints, not {type(value).__name__}"
        )
    value = tuple(value)
    if len(value) == 1:
        return value * nd
    if len(value) != nd:
        count = {1: "a single int", 2: "a tuple of two ints", 3: "a tuple of three ints"}[nd]
        raise RuntimeError(f"{fn}: {name} must either be a single int, or {count}")
    return value


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _pool_args(fn, nd, kernel_size, stride, padding, dilation):
    ksize = _tuple(kernel_size, nd, "kernel_size", fn)
    stride = ksize if stride is None or stride == [] else _tuple(stride, nd, "stride", fn)
    return ksize, stride, _tuple(padding, nd, "padding", fn), _tuple(dilation, nd, "dilation", fn)


def _pool_out(n: int, k: int, s: int, p: int, dd: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size; in ceil mode the last window must start in the input or
    its left padding."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > (dd * (k - 1) + 1) // 2:
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got "
            f"pad={p}, kernel_size={k} and dilation={dd}"
        )
    span = n + 2 * p - dd * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = span // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_input(input: Tensor, nd: int, message: str) -> tuple[Tensor, bool]:
    """`input` batched (unbatched inputs get a batch dim) after PyTorch's dim check."""
    if input.dim() not in (nd + 1, nd + 2) or 0 in input.shape[-nd - 1 :]:
        raise RuntimeError(message.format(shape=list(input.shape)))
    unbatched = input.dim() == nd + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched


def _pool_message(nd: int, name: str) -> str:
    if nd == 1:
        return (
            "Expected 2 to 3 dimensions, but got {dims}-dimensional tensor for argument #1 "
            f"'self' (while checking arguments for {name})"
        )
    return f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input"


def _no_dim(ndim: int, dim: int) -> IndexError:
    """PyTorch's IndexError for reading the size of a dim a tensor does not have."""
    if ndim == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return IndexError(
        f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})"
    )


def _check_pool_input(input: Tensor, nd: int, name: str):
    expect_tensor(name, input, "input", 1)
    message = _pool_message(nd, name).replace("{dims}", str(input.dim()))
    return _pool_input(input, nd, message)


def _output_sizes(x, ksize, stride, padding, dilation, ceil_mode):
    out = tuple(
        _pool_out(n, k, s, p, dd, ceil_mode)
        for n, k, s, p, dd in zip(x.shape[2:], ksize, stride, padding, dilation)
    )
    if any(o <= 0 for o in out):
        shape = "x".join(map(str, x.shape[1:]))
        raise RuntimeError(
            f"Given input size: ({shape}). Calculated output size: "
            f"({'x'.join(map(str, (x.shape[1],) + out))}). Output size is too "
            "small"
        )
    return out


def _max_pool(input, nd, kernel_size, stride, padding, dilation, ceil_mode):
    name = f"max_pool{nd}d"
    expect_tensor(name, input, "input", 1)
    ksize, stride, padding, dilation = _pool_args(name, nd, kernel_size, stride, padding, dilation)
    _check_flags(name, ceil_mode=ceil_mode)
    if nd == 1:
        message = (
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
            "size for input, but got:{shape}"
        )
        x, unbatched = _pool_input(input, 1, message)
        if padding[0] > ksize[0] // 2:
            raise RuntimeError(
                f"max_pool1d() padding should be at most half of kernel size, "
                f"but got padding={padding[0]} and kernel_size={ksize[0]}"
            )
    else:
        x, unbatched = _check_pool_input(input, nd, name)
    if x.dtype is tocha.bool or x.dtype.is_complex:
        kernel = "max_pool1d_impl" if nd == 1 else f"max_pool{max(nd, 2)}d"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[x.dtype]}'")
    if any(dd <= 0 for dd in dilation):
        parts = " ".join(f"dilation{n}: {v}" for n, v in zip("THW"[3 - nd :], dilation))
        raise RuntimeError(f"dilation should be greater than zero, but got {parts}")
    out_size = _output_sizes(x, ksize, stride, padding, dilation, ceil_mode)
    pads = tuple((p, p) for p in padding)
    values, indices = call(max_pool_op, (x,), ksize, stride, pads, dilation, out_size)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def _check_flags(fn_name: str, **flags) -> None:
    """PyTorch's TypeError for a flag given as other than a bool (its parser's check)."""
    for name, value in flags.items():
        if value is not True and value is not False:
            raise TypeError(
                f"{fn_name}(): argument '{name}' must be bool, not {type(value).__name__}"
            )


# the dtypes of PyTorch's CPU average pooling kernels (int64 alone of the integers)
_AVG_POOL3D_DTYPES = (tocha.float32, tocha.float64, tocha.int64)
_AVG_POOL_DTYPES = (tocha.float16, tocha.bfloat16, *_AVG_POOL3D_DTYPES)


def _avg_pool(
    input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    name = f"avg_pool{nd}d"
    ksize, stride, padding, _ = _pool_args(name, nd, kernel_size, stride, padding, 1)
    _check_flags(name, ceil_mode=ceil_mode, count_include_pad=count_include_pad)
    try:
        x, unbatched = _check_pool_input(input, nd, name)
    except RuntimeError:
        if nd == 2 and input.dim() < 3:  # PyTorch's avg_pool2d reads the size of dim -3 first
            raise _no_dim(input.dim(), -3) from None
        raise
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if x.dtype not in (_AVG_POOL3D_DTYPES if nd == 3 else _AVG_POOL_DTYPES):
        kernel = "avg_pool3d_out_frame" if nd == 3 else "avg_pool2d"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[x.dtype]}'")
    out_size = _output_sizes(x, ksize, stride, padding, (1,) * nd, ceil_mode)
    pads = tuple((p, p) for p in padding)
    out = call(
        avg_pool_op, (x,), ksize, stride, pads, out_size, count_include_pad, divisor_override
    )
    return out.squeeze(0) if unbatched else out


# -- max pooling ----------------------------------------------------------------------------
def max_pool1d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = True,
):
    """`max_pool1d` returning ``(values, indices)``."""
    return _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = True,
):
    """`max_pool2d` returning ``(values, indices)``: each index is the argmax's flat position
    ``h * W + w`` in its input plane."""
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = True,
):
    """`max_pool3d` returning ``(values, indices)``."""
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode)


def _values(result, return_indices: bool):
    return result if return_indices else result[0]


def max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``; see `max_pool2d`."""
    result = _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode)
    if not return_indices and not result[0].is_floating_point():
        # PyTorch's kernel without indices takes floating dtypes only
        kind = TITLE[result[0].dtype]
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{kind}'")
    return _values(result, return_indices)


def max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """The maximum of each (dilated) window of ``(N, C, H, W)`` or ``(C, H, W)``.

    Args:
        kernel_size, stride (default: kernel_size), padding (implicit -inf, at most half the
            effective kernel), dilation: an int or one per spatial dim.
        ceil_mode: round the output size up (the last window must start inside the input or
            its left padding).
        return_indices: also return the argmax positions (for `max_unpool2d`).

    Shape:
        ``H_out = (H + 2 * padding - dilation * (kH - 1) - 1) // stride + 1`` (floor or ceil).

    Example:
        >>> F.max_pool2d(tocha.randn(1, 3, 8, 8), 2).shape
        torch.Size([1, 3, 4, 4])
    """
    return _values(
        _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode), return_indices
    )


@autocast_op("max_pool3d", inline=True)
def max_pool3d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; see `max_pool2d`."""
    if GRAD_MODE.autocast is not None and not return_indices:  # PyTorch lists no indices
        args = (input, kernel_size, stride, padding, dilation, ceil_mode)
        return LAYERS.autocast_call("max_pool3d", max_pool3d, args, {})
    return _values(
        _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode), return_indices
    )


# -- average pooling ------------------------------------------------------------------------
def avg_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``; see `avg_pool2d`."""
    return _avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each window of ``(N, C, H, W)`` or ``(C, H, W)``.

    Args:
        padding: implicit zeros, at most half the kernel.
        count_include_pad: whether padded zeros count in the divisor.
        divisor_override: divide every window's sum by this instead.

    Example:
        >>> F.avg_pool2d(tocha.ones(1, 1, 4, 4), 2)
        tensor([[[[1., 1.],
                  [1., 1.]]]])
    """
    return _avg_pool(
        input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


@autocast_op("avg_pool3d")
def avg_pool3d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; see `avg_pool2d`."""
    return _avg_pool(
        input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


# -- adaptive pooling -----------------------------------------------------------------------
def _check_output_size(input, output_size, nd: int, name: str) -> None:
    """PyTorch's checks of `output_size` before the input's: 1-d forms take ints only; the
    2-d and 3-d ones, given a sequence, need more input dims than it has entries."""
    if isinstance(output_size, int) or not isinstance(output_size, (tuple, list)):
        return
    if nd == 1:
        for pos, entry in enumerate(output_size):
            if not isinstance(entry, int):
                raise TypeError(
                    f"{name}(): argument 'output_size' (position 2) must be tuple of ints, but "
                    f"found element of type {type(entry).__name__} at pos {pos}"
                )
    elif isinstance(input, Tensor) and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")


def _adaptive_input(input: Tensor, nd: int, name: str, colon: str) -> tuple[Tensor, bool]:
    if not isinstance(input, Tensor):
        raise not_a_tensor(name, input, "input", 1)
    if nd == 1:
        message = (
            "Expected 2 to 3 dimensions, but got {dims}-dimensional tensor for argument "
            f"#1 'self' (while checking arguments for {name})"
        ).replace("{dims}", str(input.dim()))
    else:
        message = f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{colon} {{shape}}"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(message.format(shape=list(input.shape)))
    unbatched = input.dim() == nd + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched


def _adaptive_size(output_size, x: Tensor, nd: int, name: str) -> tuple:
    """The output size, None entries taking the input's size; `name` for its error."""
    size = (
        (output_size,) * nd
        if isinstance(output_size, int) or output_size is None
        else (tuple(output_size))
    )
    if len(size) == 1:
        size = size * nd
    elif nd == 1:
        raise RuntimeError(
            f"{name}() argument 'output_size' should contain one int (got {len(size)})"
        )
    size = tuple(n if o is None else o for o, n in zip(size, x.shape[2:]))
    if min(size) < 0:  # PyTorch runs the 1-d forms as 2-d, and its messages say so
        shown = (1, *size) if nd == 1 else size
        if name.startswith("adaptive_avg"):
            raise RuntimeError(
                f"{name.replace('1d', '2d')}: elements of output_size must be greater than or "
                f"equal to 0 but received {{{', '.join(map(str, shown))}}}"
            )
        shape = [*x.shape[:2], *shown]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {shape}")
    return size


def _averaging(n: int, o: int, like: Tensor) -> Tensor:
    """The ``(o, n)`` matrix averaging each adaptive window."""
    start, end = _adaptive_bounds(n, o)
    positions = np.arange(n)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    matrix = inside / (end - start)[:, None]
    return tocha.from_numpy(matrix).to(like.device, like.dtype)


def _window_means(x: Tensor, dim: int, o: int) -> Tensor:
    """The adaptive windows' means along `dim`, one window at a time: an inf or NaN stays in
    the windows that hold it (the averaging matrix would spread it as ``inf * 0``)."""
    start, end = _adaptive_bounds(x.shape[dim], o)
    windows = [x.narrow(dim, int(s), int(e - s)).mean(dim) for s, e in zip(start, end)]
    return tocha.stack(windows, dim)


@computed_in_float32  # PyTorch sums each window in float32
def _adaptive_avg(input, output_size, nd: int) -> Tensor:
    name = f"adaptive_avg_pool{nd}d"
    _check_output_size(input, output_size, nd, name)
    x, unbatched = _adaptive_input(input, nd, name, "")
    size = _adaptive_size(output_size, x, nd, name)
    if not x.dtype.is_floating_point:
        if set(size) != {1}:
            kernel = "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d"
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[x.dtype]}'")
        if not x.dtype.is_complex:  # PyTorch takes a global pool as a mean
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {TITLE[x.dtype]}"
            )
    out = x
    finite = None
    for i, o in enumerate(size):
        dim = 2 + i
        if o == x.shape[dim]:
            continue
        if o == 1:  # one window: its mean (an inf or NaN stays where it is, and under vmap
            out = out.mean(dim, keepdim=True)  # no data-dependent test is needed)
            continue
        if finite is None:
            finite = not x.is_floating_point() or bool(tocha.isfinite(x).all())
        if not finite and o:
            out = _window_means(out, dim, o)
            continue
        matrix = _averaging(x.shape[dim], o, x)
        out = (out.transpose(dim, -1) @ matrix.T).transpose(dim, -1)
    if out is x:
        out = x.clone()
    out = keep_format(out, x)
    return out.squeeze(0) if unbatched else out


@autocast_op("adaptive_avg_pool1d")
def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average pooling to a fixed output size: window i spans
    ``[floor(i * L / L_out), ceil((i + 1) * L / L_out))``."""
    return _adaptive_avg(input, output_size, 1)


@autocast_op("adaptive_avg_pool2d")
def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """2-D adaptive average pooling (`output_size`: an int, or a pair, None keeping the
    input's size); see `adaptive_avg_pool1d`.

    Example:
        >>> F.adaptive_avg_pool2d(tocha.randn(1, 3, 7, 9), (2, None)).shape
        torch.Size([1, 3, 2, 9])
    """
    return _adaptive_avg(input, output_size, 2)


@autocast_op("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """3-D adaptive average pooling; see `adaptive_avg_pool2d`."""
    return _adaptive_avg(input, output_size, 3)


def _adaptive_max(input, output_size, nd: int):
    name = f"adaptive_max_pool{nd}d"
    _check_output_size(input, output_size, nd, name)
    x, unbatched = _adaptive_input(input, nd, name, ":")
    if not x.dtype.is_floating_point:
        kernel = "adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[x.dtype]}'")
    size = _adaptive_size(output_size, x, nd, name)
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {i} being empty"
            )
    if 0 in size or not x.numel():  # no window (a batch or unbatched channels of none)
        shape = (*x.shape[:2], *size)
        values, indices = x.new_empty(shape), x.new_empty(shape, dtype=tocha.int64)
    else:
        values, indices = call(adaptive_max_pool_op, (x,), size)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """`adaptive_max_pool1d` returning ``(values, indices)``."""
    return _adaptive_max(input, output_size, 1)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """`adaptive_max_pool2d` returning ``(values, indices)``."""
    return _adaptive_max(input, output_size, 2)


@autocast_op("adaptive_max_pool3d")
def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """`adaptive_max_pool3d` returning ``(values, indices)``."""
    return _adaptive_max(input, output_size, 3)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling to a fixed output size (windows as `adaptive_avg_pool1d`)."""
    return _values(_adaptive_max(input, output_size, 1), return_indices)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """2-D adaptive max pooling; see `adaptive_max_pool1d`."""
    return _values(_adaptive_max(input, output_size, 2), return_indices)


@autocast_op("adaptive_max_pool3d")
def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """3-D adaptive max pooling; see `adaptive_max_pool1d`."""
    return _values(_adaptive_max(input, output_size, 3), return_indices)


# -- power-average pooling ------------------------------------------------------------------
def _lp_pool(input, nd, norm_type, kernel_size, stride, ceil_mode) -> Tensor:
    ksize = _tuple(kernel_size, nd, "kernel_size", f"avg_pool{nd}d")
    out = _avg_pool(input.pow(norm_type), nd, kernel_size, stride, 0, ceil_mode, True, None)
    return (tocha.sign(out) * relu(out.abs())).mul(math.prod(ksize)).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling: ``(sum over the window of x^p)^(1/p)``."""
    return _lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False
) -> Tensor:
    """2-D power-average pooling; see `lp_pool1d`."""
    return _lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False
) -> Tensor:
    """3-D power-average pooling; see `lp_pool1d`."""
    return _lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode)


# -- max unpooling --------------------------------------------------------------------------
def _unpool_size(input: Tensor, ksize, stride, padding, output_size) -> tuple:
    nd = len(ksize)
    default = [
        (input.shape[-nd + i] - 1) * stride[i] + ksize[i] - 2 * padding[i] for i in range(nd)
    ]
    if output_size is None:
        return tuple(default)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(
            f"output_size should be a sequence containing {nd} or {nd + 2} "
            f"elements, but it has a length of '{len(output_size)}'"
        )
    for i in range(nd):
        low, high = default[i] - stride[i], default[i] + stride[i]
        if not low < output_size[i] < high:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {i} must be between {low} and {high})'
            )
    return tuple(output_size)


def _max_unpool(input, indices, nd, kernel_size, stride, padding, output_size) -> Tensor:
    name = f"max_unpool{nd}d"
    ksize, stride, padding, _ = _pool_args(name, nd, kernel_size, stride, padding, 1)
    size = _unpool_size(input, ksize, stride, padding, output_size)
    lead = tuple(input.shape[:-nd])
    flat = tocha.zeros(lead + (math.prod(size),), dtype=input.dtype, device=input.device)
    out = flat.scatter(-1, indices.reshape(lead + (-1,)), input.reshape(lead + (-1,)))
    return keep_format(out.reshape(lead + size), input)


def max_unpool1d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """The partial inverse of `max_pool1d`: each value goes to its index, zeros elsewhere."""
    return _max_unpool(input, indices, 1, kernel_size, stride, padding, output_size)


@autocast_op("max_unpool2d")
def max_unpool2d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """The partial inverse of `max_pool2d`; see `max_unpool1d`.

    Shape:
        output ``H_out = (H - 1) * stride - 2 * padding + kH`` unless `output_size` says.
    """
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size)


@autocast_op("max_unpool3d")
def max_unpool3d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """The partial inverse of `max_pool3d`; see `max_unpool1d`."""
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size)


# -- fractional max pooling ------------------------------------------------------------------
def _fractional_starts(samples: Tensor, size: int, out: int, kernel: int) -> Tensor:
    """The window starts along one dim (Graham's pseudo-random sequence) for each (N, C)
    sample u in [0, 1): ``floor((i + u) * a) - floor(u * a)``, ``a = (size - kernel) /
    (out - 1)``, the last window ending at the edge. Shape (N, C, out), int64."""
    last = tocha.full((*samples.shape, 1), size - kernel, dtype=tocha.int64)
    if out == 1:
        return last
    alpha = (size - kernel) / (out - 1)
    i = tocha.arange(out - 1, dtype=samples.dtype)
    starts = tocha.floor((i + samples[..., None]) * alpha) - tocha.floor(samples * alpha)[..., None]
    return tocha.cat([starts.to(tocha.int64), last], -1)


def _fractional_max_pool(input, k, kernel_size, output_size, output_ratio, samples, name):
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(
            f"{name}(): Expected {k + 1}D or {k + 2}D tensor, but got: {list(input.shape)}"
        )
    unbatched = input.dim() == k + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c, *sizes = x.shape
    kernel = (kernel_size,) * k if isinstance(kernel_size, int) else tuple(kernel_size)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
        ratio = (output_ratio,) * k if isinstance(output_ratio, (int, float)) else output_ratio
        output_size = tuple(int(size * r) for size, r in zip(sizes, ratio))
    out = (output_size,) * k if isinstance(output_size, int) else tuple(output_size)
    for size, o, kk in zip(sizes, out, kernel):
        if o + kk - 1 > size:
            raise RuntimeError(
                f"{name}(): pool size {kk} too large relative to input size {size} for "
                f"output size {o}"
            )
    if samples is None:
        samples = tocha.rand(n, c, k, dtype=x.dtype, device=x.device)
    # samples[..., 0] drives the last dim (width), as PyTorch's 2-d kernel; 3-d: (t, h, w).
    order = list(range(k))[::-1] if k == 2 else list(range(k))
    flat = None
    shape = (n, c, *out, *kernel)
    for axis in range(k):
        starts = _fractional_starts(samples[..., order[axis]], sizes[axis], out[axis], kernel[axis])
        window = starts[..., None] + tocha.arange(kernel[axis], device=x.device)
        view = [n, c] + [1] * (2 * k)
        view[2 + axis], view[2 + k + axis] = out[axis], kernel[axis]
        window = window.reshape(view)
        flat = window if flat is None else flat * sizes[axis] + window
    flat = flat.expand(shape).reshape(n, c, *out, -1)
    values = x.reshape(n, c, -1)
    gathered = values.gather(2, flat.reshape(n, c, -1)).reshape(flat.shape)
    best, where = gathered.max(-1)
    indices = flat.gather(-1, where[..., None]).squeeze(-1)
    if unbatched:
        best, indices = best.squeeze(0), indices.squeeze(0)
    return best, indices


@autocast_op("fractional_max_pool2d")
def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
):
    """`fractional_max_pool2d` returning ``(values, indices)``."""
    return _fractional_max_pool(
        input,
        2,
        kernel_size,
        output_size,
        output_ratio,
        _random_samples,
        "fractional_max_pool2d",
    )


def fractional_max_pool2d(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
):
    """2-D fractional max pooling (Graham) over ``(N, C, H, W)`` or ``(C, H, W)``: windows of
    `kernel_size` at pseudo-random starts giving `output_size` (or the input size times
    `output_ratio`); `_random_samples` (N, C, 2) in [0, 1) fix the starts."""
    return _values(
        fractional_max_pool2d_with_indices(
            input, kernel_size, output_size, output_ratio, True, _random_samples
        ),
        return_indices,
    )


@autocast_op("fractional_max_pool3d")
def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
):
    """`fractional_max_pool3d` returning ``(values, indices)``."""
    return _fractional_max_pool(
        input,
        3,
        kernel_size,
        output_size,
        output_ratio,
        _random_samples,
        "fractional_max_pool3d",
    )


def fractional_max_pool3d(
    input: Tensor,
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
):
    """3-D fractional max pooling over ``(N, C, T, H, W)`` or ``(C, T, H, W)``; see
    `fractional_max_pool2d` (`_random_samples`: (N, C, 3))."""
    return _values(
        fractional_max_pool3d_with_indices(
            input, kernel_size, output_size, output_ratio, True, _random_samples
        ),
        return_indices,
    )
