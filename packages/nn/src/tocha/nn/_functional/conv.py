"""Convolutions and sliding blocks: conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold.

One N-d implementation serves 1, 2 and 3 spatial dims. A convolution is im2col (a strided
view of the padded input, copied once into a matrix) and one batched GEMM; its transpose is
one GEMM and col2im (an add over the kernel's offsets, each vectorised over everything else).

Three primitives close under differentiation, so double backward works:

- ``conv(x, w) -> y``: d/dx is ``conv_transpose(g, w)``, d/dw is ``conv_weight(x, g)``;
- ``conv_transpose(x, w) -> y`` (the adjoint of conv in x): d/dx is ``conv(g, w)``, d/dw is
  ``conv_weight(g, x)``;
- ``conv_weight(x, g) -> gw`` (the adjoint of conv in w): bilinear, its derivatives are a
  conv_transpose and a conv.

``unfold`` and ``fold`` are the primitives ``im2col`` and ``col2im``, each the other's adjoint.
In forward mode each primitive is (bi)linear: its tangent is the primitive applied to the
tangents, one operand at a time.
Every primitive takes ``pads`` as one ``(low, high)`` pair per spatial dim; conv and
conv_transpose also take ``needs``, whether input and weight required grad when called (as
PyTorch's output mask: a gradient nobody asked for is not computed).
"""

from __future__ import annotations

import itertools
import math

import tocha
from tocha import Tensor
from tocha.autograd.derivatives import d, fwd, fwd_linear, fwd_multilinear
from tocha.library import TITLE, autocast_op, call, defop, expect_tensor, not_a_tensor

from ._dtypes import c_type, keeping_dtype
from ._jvp import plus

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "conv_tbc",
    "fold",
    "unfold",
]


# -- kernels: im2col, col2im and the three convolution primitives ---------------------------
def _pad(xp, x, pads, value=0):
    """`x` padded by `pads` ((low, high) per trailing spatial dim) with `value`."""
    if not any(lo or hi for lo, hi in pads):
        return x
    lead = ((0, 0),) * (x.ndim - len(pads))
    return xp.pad(x, lead + tuple(pads), constant_values=value)


def _windows(xp, x, ksize, stride, dilation, out_size):
    """A view ``(N, C, *kernel, *out)`` of the windows of the (padded) ``(N, C, *S)`` `x`."""
    spatial = x.strides[2:]
    strides = (
        x.strides[:2]
        + tuple(s * d for s, d in zip(spatial, dilation))
        + tuple(s * t for s, t in zip(spatial, stride))
    )
    shape = x.shape[:2] + tuple(ksize) + tuple(out_size)
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def _out_size(size, ksize, stride, pads, dilation):
    """The number of windows along each spatial dim."""
    return tuple(
        (n + lo + hi - d * (k - 1) - 1) // s + 1
        for n, k, s, (lo, hi), d in zip(size, ksize, stride, pads, dilation)
    )


def _col2im(xp, cols, size, stride, pads, dilation):
    """Sum the windows ``cols`` ``(N, C, *kernel, *out)`` back into an ``(N, C, *size)``
    array: one strided add per kernel offset."""
    nd = len(size)
    ksize, osize = cols.shape[2 : 2 + nd], cols.shape[2 + nd :]
    padded_size = tuple(n + lo + hi for n, (lo, hi) in zip(size, pads))
    out = xp.zeros(cols.shape[:2] + padded_size, cols.dtype)
    for offset in itertools.product(*map(range, ksize)):
        region = tuple(
            slice(k * d, k * d + s * (o - 1) + 1, s)
            for k, d, s, o in zip(offset, dilation, stride, osize)
        )
        out[(Ellipsis, *region)] += cols[(slice(None), slice(None), *offset)]
    if padded_size == tuple(size):
        return out
    crop = tuple(slice(lo, lo + n) for n, (lo, _) in zip(size, pads))
    return xp.ascontiguousarray(out[(Ellipsis, *crop)])


def _im2col_kernel(xp):
    def kernel(x, ksize, stride, pads, dilation):
        x = _pad(xp, x, pads)
        osize = _out_size(x.shape[2:], ksize, stride, ((0, 0),) * len(ksize), dilation)
        cols = _windows(xp, x, ksize, stride, dilation, osize)
        return cols.reshape(x.shape[0], x.shape[1] * math.prod(ksize), math.prod(osize))

    return kernel


def _col2im_kernel(xp):
    def kernel(cols, size, ksize, stride, pads, dilation):
        osize = _out_size(size, ksize, stride, pads, dilation)
        n, ck = cols.shape[:2]
        cols = cols.reshape((n, ck // math.prod(ksize)) + tuple(ksize) + osize)
        return _col2im(xp, cols, size, stride, pads, dilation)

    return kernel


def _add_bias(out, bias, nd):
    if bias:
        out += bias[0].reshape((-1,) + (1,) * nd)
    return out


def _conv_kernel(xp):
    def kernel(x, w, *rest):
        *bias, stride, pads, dilation, groups, out_size, _ = rest
        n, c = x.shape[:2]
        ksize = w.shape[2:]
        cols = _windows(xp, _pad(xp, x, pads), ksize, stride, dilation, out_size)
        cols = cols.reshape(n, groups, c // groups * math.prod(ksize), math.prod(out_size))
        wm = w.reshape(groups, w.shape[0] // groups, -1)
        out = xp.matmul(wm, cols).reshape((n, w.shape[0]) + tuple(out_size))
        return _add_bias(out, bias, len(out_size))

    return kernel


def _conv_transpose_kernel(xp):
    def kernel(x, w, *rest):
        *bias, stride, pads, dilation, groups, out_size, _ = rest
        n, c = x.shape[:2]
        ksize, isize = w.shape[2:], x.shape[2:]
        wm = w.reshape(groups, c // groups, -1).transpose(0, 2, 1)
        cols = xp.matmul(wm, x.reshape(n, groups, c // groups, math.prod(isize)))
        cols = cols.reshape((n, groups * w.shape[1]) + ksize + isize)
        out = _col2im(xp, cols, out_size, stride, pads, dilation)
        return _add_bias(out, bias, len(out_size))

    return kernel


def _conv_weight_kernel(xp):
    def kernel(x, g, stride, pads, dilation, groups, ksize):
        n, c = x.shape[:2]
        cols = _windows(xp, _pad(xp, x, pads), ksize, stride, dilation, g.shape[2:])
        p = math.prod(g.shape[2:])
        cols = cols.reshape(n, groups, c // groups * math.prod(ksize), p)
        gm = g.reshape(n, groups, g.shape[1] // groups, p)
        gw = xp.matmul(gm, cols.transpose(0, 1, 3, 2)).sum(0)
        return gw.reshape((g.shape[1], c // groups) + tuple(ksize))

    return kernel


# channels-last when the input or the weight looks so, as PyTorch's
conv_op = defop("convolution", keeping_dtype(_conv_kernel), layout=(0, 1))
conv_transpose_op = defop(
    "convolution_transpose", keeping_dtype(_conv_transpose_kernel), layout=(0, 1)
)
conv_weight_op = defop("convolution_backward_weight", keeping_dtype(_conv_weight_kernel))
im2col_op = defop("im2col", _im2col_kernel)
col2im_op = defop("col2im", _col2im_kernel)


# -- derivatives ----------------------------------------------------------------------------
def _bias_grad(g):
    return g.sum((0, *range(2, g.dim())))


ALL = (True, True)


def _conj(t):
    """The conjugate of a complex tensor (real tensors unchanged): the gradients of complex
    convolutions pair the gradient with the conjugate of the other operand."""
    return t.conj() if t.is_complex() else t


def _conv_grad(g, out, x, w, *rest):
    *bias, stride, pads, dilation, groups, _, needs = rest
    spec = (stride, pads, dilation, groups)
    x, w = _conj(x), _conj(w)
    gx = call(conv_transpose_op, (g, w), *spec, tuple(x.shape[2:]), ALL) if needs[0] else None
    gw = call(conv_weight_op, (x, g), *spec, tuple(w.shape[2:])) if needs[1] else None
    return (gx, gw, _bias_grad(g)) if bias else (gx, gw)


def _conv_transpose_grad(g, out, x, w, *rest):
    *bias, stride, pads, dilation, groups, _, needs = rest
    spec = (stride, pads, dilation, groups)
    x, w = _conj(x), _conj(w)
    gx = call(conv_op, (g, w), *spec, tuple(x.shape[2:]), ALL) if needs[0] else None
    gw = call(conv_weight_op, (g, x), *spec, tuple(w.shape[2:])) if needs[1] else None
    return (gx, gw, _bias_grad(g)) if bias else (gx, gw)


def _conv_weight_grad(ggw, out, x, g, stride, pads, dilation, groups, ksize):
    spec = (stride, pads, dilation, groups)
    return (
        call(conv_transpose_op, (_conj(g), ggw), *spec, tuple(x.shape[2:]), ALL),
        call(conv_op, (_conj(x), ggw), *spec, tuple(g.shape[2:]), ALL),
    )


def _im2col_grad(g, out, x, ksize, stride, pads, dilation):
    return call(col2im_op, (g,), tuple(x.shape[2:]), ksize, stride, pads, dilation)


def _conv_jvp(op):
    """The forward rule of conv or conv_transpose: bilinear in input and weight, affine in
    bias, so ``op(t_x, w) + op(x, t_w) + t_b`` (the bias tangent broadcast over space)."""

    def rule(t, out, x, w, *rest):
        *bias, stride, pads, dilation, groups, out_size, _ = rest
        spec = (stride, pads, dilation, groups, out_size)

        def term(a, b):
            return call(op, (a, b), *spec, (a.requires_grad, b.requires_grad))

        by_bias = None
        if bias and t[2] is not None:
            by_bias = t[2].reshape((-1,) + (1,) * len(out_size))
        return plus(
            None if t[0] is None else term(t[0], w),
            None if t[1] is None else term(x, t[1]),
            by_bias,
        )

    return rule


d("convolution", "01", _conv_grad)
fwd("convolution", _conv_jvp(conv_op))
d("convolution_transpose", "01", _conv_transpose_grad)
fwd("convolution_transpose", _conv_jvp(conv_transpose_op))
d("convolution_backward_weight", "01", _conv_weight_grad)
fwd_multilinear("convolution_backward_weight")
d("im2col", "", _im2col_grad)
d(
    "col2im",
    "",
    lambda g, out, cols, size, ksize, stride, pads, dilation: call(
        im2col_op, (g,), ksize, stride, pads, dilation
    ),
)
fwd_linear("im2col", "col2im")


# -- argument checks ------------------------------------------------------------------------
def _expand(value, nd: int, name: str) -> tuple:
    """An int or a sequence of `nd` ints as a tuple of `nd` ints."""
    if isinstance(value, int):
        return (value,) * nd
    value = tuple(value)
    if len(value) == 1:
        return value * nd
    if len(value) != nd:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {nd} values to match "
            f"the convolution dimensions, but got {name}={list(value)}"
        )
    return value


def _type_name(t: Tensor) -> str:
    return f"torch.{TITLE[t.dtype]}Tensor"


def _check_tensors(name: str, input, weight, bias) -> None:
    """PyTorch's TypeError for a non-tensor input, weight or bias (the error path)."""
    expect_tensor(name, input, "input", 1)
    expect_tensor(name, weight, "weight", 2)
    if bias is not None:
        expect_tensor(name, bias, "bias", 3)


def _weight_dims_error(name: str, input, weight, bias, groups) -> Exception:
    """PyTorch's error for a weight of fewer than 3 dims, after its argument types."""
    _check_tensors(name, input, weight, bias)
    if not isinstance(groups, int) or isinstance(groups, bool):
        return TypeError(f"{name}(): argument 'groups' must be int, not {type(groups).__name__}")
    return RuntimeError("weight should have at least three dimensions")


def _batched(input: Tensor, nd: int, name: str) -> tuple[Tensor, bool]:
    """`input` with a batch dim (added when unbatched) and whether it was added."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    unbatched = input.dim() == nd + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched


def _check_common(input, weight, bias, stride, dilation, groups, transposed):
    """The checks conv and conv_transpose share (as PyTorch's ``_convolution``)."""
    if bias is not None and not isinstance(bias, Tensor):
        raise not_a_tensor("conv", bias, "bias", None)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(v <= 0 for v in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if not transposed and bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(
            f"Input type ({c_type(input.dtype)}) and bias type ({c_type(bias.dtype)}) should "
            "be the same"
        )
    if input.dtype != weight.dtype:  # PyTorch's words vary with the kernel it picks
        raise RuntimeError(
            f"Input type ({_type_name(input)}) and weight type ({_type_name(weight)}) should "
            "be the same or input should be a MKLDNN tensor and weight is a dense tensor"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{list(weight.shape)}] instead"
        )
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != channels:
        given = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(
            f"Given {given}, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {channels} channels, but got {input.shape[1]} "
            "channels instead"
        )
    if bias is not None:
        out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
        if bias.dim() != 1 or bias.shape[0] != out_channels:
            raise RuntimeError(
                f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
                f"with {out_channels} elements, but got bias of size {list(bias.shape)} instead"
            )
        if bias.dtype != input.dtype:
            raise RuntimeError(
                f"Input type ({TITLE[input.dtype].lower()}) and bias type "
                f"({TITLE[bias.dtype].lower()}) should be the same"
            )


def _conv_pads(padding, ksize, stride, dilation) -> tuple:
    """Per-dim (low, high) zero padding from an int, a tuple, 'valid' or 'same'."""
    nd = len(ksize)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(ksize, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    padding = _expand(padding, nd, "padding")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in padding)


# the integer dtypes PyTorch's transposed convolution kernels do not take
_NO_TRANSPOSED_KERNEL = (tocha.bool, tocha.uint8, tocha.int8, tocha.int16, tocha.int32)


def _check_spatial_dims(k: int, nd: int, stride) -> None:
    """PyTorch's error where the weight has other than `nd` spatial dims (`k`): it reads
    them against the stride, given or expanded to `nd` values."""
    if k != nd:
        raise RuntimeError(
            f"expected stride to be a single integer value or a list of {k} values to match "
            f"the convolution dimensions, but got stride={list(_expand(stride, nd, 'stride'))}"
        )


def _convnd(input, weight, bias, stride, padding, dilation, groups, nd: int) -> Tensor:
    try:
        x, unbatched = _batched(input, nd, f"conv{nd}d")
        k = weight.dim() - 2
    except AttributeError:
        _check_tensors(f"conv{nd}d", input, weight, bias)
        raise
    if k < 1:
        raise _weight_dims_error(f"conv{nd}d", input, weight, bias, groups)
    _check_spatial_dims(k, nd, stride)
    stride, dilation = _expand(stride, k, "stride"), _expand(dilation, k, "dilation")
    ksize = tuple(weight.shape[2:])
    pads = _conv_pads(padding, ksize, stride, dilation)
    _check_common(x, weight, bias, stride, dilation, groups, False)
    if x.dtype is tocha.bool:
        kernel = "compute_columns3d" if k == 3 else "slow_conv2d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads)]
    kernel = [dd * (kk - 1) + 1 for kk, dd in zip(ksize, dilation)]
    if any(p < kk for p, kk in zip(padded, kernel)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater "
            "than actual input size"
        )
    out_size = _out_size(x.shape[2:], ksize, stride, pads, dilation)
    tensors = (x, weight) if bias is None else (x, weight, bias)
    needs = (x.requires_grad, weight.requires_grad)
    out = call(conv_op, tensors, stride, pads, dilation, groups, out_size, needs)
    return out.squeeze(0) if unbatched else out


_DIM_NAMES = {2: ("height", "width"), 3: ("depth", "height", "width")}


def _conv_transposend(
    input, weight, bias, stride, padding, output_padding, groups, dilation, nd: int
) -> Tensor:
    try:
        x, unbatched = _batched(input, nd, f"conv_transpose{nd}d")
        k = weight.dim() - 2
    except AttributeError:
        _check_tensors(f"conv_transpose{nd}d", input, weight, bias)
        raise
    if k < 1:
        raise _weight_dims_error(f"conv_transpose{nd}d", input, weight, bias, groups)
    _check_spatial_dims(k, nd, stride)
    stride, dilation = _expand(stride, k, "stride"), _expand(dilation, k, "dilation")
    padding = _expand(padding, k, "padding")
    output_padding = _expand(output_padding, k, "output_padding")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    _check_common(x, weight, bias, stride, dilation, groups, True)
    if x.dtype in _NO_TRANSPOSED_KERNEL:
        kernel = f"slow_conv_transpose{max(k, 2)}d_out_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[x.dtype]}'")
    if any(op >= s and op >= dd for op, s, dd in zip(output_padding, stride, dilation)):
        settings = (
            ("output_padding", output_padding, 0),
            ("stride", stride, 1),
            ("dilation", dilation, 1),
        )
        if k == 1:  # PyTorch runs 1-D as 2-D of height 1
            settings = tuple((kind, (unit,) + values, unit) for kind, values, unit in settings)
        names = _DIM_NAMES[max(k, 2)]
        parts = [f"{kind}_{n}: {v}" for kind, values, _ in settings for n, v in zip(names, values)]
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but "
            f"got {' '.join(parts)}"
        )
    ksize = tuple(weight.shape[2:])
    out_size = tuple(
        (n - 1) * s - 2 * p + dd * (kk - 1) + op + 1
        for n, s, p, dd, kk, op in zip(
            x.shape[2:], stride, padding, dilation, ksize, output_padding
        )
    )
    if any(n <= 0 for n in out_size):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). Calculated "
            f"output size per channel: ({' x '.join(map(str, out_size))}). Output size is too "
            "small"
        )
    tensors = (x, weight) if bias is None else (x, weight, bias)
    pads = tuple((p, p) for p in padding)
    needs = (x.requires_grad, weight.requires_grad)
    out = call(conv_transpose_op, tensors, stride, pads, dilation, groups, out_size, needs)
    return out.squeeze(0) if unbatched else out


# -- public functions -----------------------------------------------------------------------
@autocast_op("conv1d")
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """1-D cross-correlation of ``(N, C_in, L)`` (or ``(C_in, L)``) by `weight`
    ``(C_out, C_in / groups, kL)``; see `conv2d`."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1)


@autocast_op("conv2d")
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """2-D cross-correlation: ``out[n, o] = bias[o] + sum_c weight[o, c] * input[n, c]`` over
    each window.

    Args:
        input: ``(N, C_in, H, W)`` or ``(C_in, H, W)``.
        weight: ``(C_out, C_in / groups, kH, kW)``.
        bias: ``(C_out,)`` or None.
        stride, dilation: an int or one per spatial dim.
        padding: an int, one per spatial dim, ``"valid"`` (none) or ``"same"`` (output size
            equal to the input's; stride 1 only).
        groups: input and output channels split into this many independent groups.

    Shape:
        output ``(N, C_out, H_out, W_out)`` with
        ``H_out = (H + 2 * padding - dilation * (kH - 1) - 1) // stride + 1``.

    Example:
        >>> F.conv2d(tocha.randn(1, 3, 8, 8), tocha.randn(4, 3, 3, 3), padding=1).shape
        torch.Size([1, 4, 8, 8])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2)


@autocast_op("conv3d")
def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """3-D cross-correlation of ``(N, C_in, D, H, W)`` by `weight`
    ``(C_out, C_in / groups, kD, kH, kW)``; see `conv2d`."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3)


@autocast_op("conv_transpose1d")
def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """1-D transposed convolution; see `conv_transpose2d`."""
    return _conv_transposend(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 1
    )


@autocast_op("conv_transpose2d")
def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """2-D transposed convolution (the gradient of `conv2d` with respect to its input).

    Args:
        input: ``(N, C_in, H, W)`` or ``(C_in, H, W)``.
        weight: ``(C_in, C_out / groups, kH, kW)``.
        padding: ``dilation * (k - 1) - padding`` zeros are added to each side of the input.
        output_padding: extra size added to one side of the output.

    Shape:
        output ``(N, C_out, H_out, W_out)`` with ``H_out = (H - 1) * stride - 2 * padding
        + dilation * (kH - 1) + output_padding + 1``.

    Example:
        >>> F.conv_transpose2d(tocha.randn(1, 4, 5, 5), tocha.randn(4, 2, 3, 3), stride=2).shape
        torch.Size([1, 2, 11, 11])
    """
    return _conv_transposend(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 2
    )


@autocast_op("conv_transpose3d")
def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """3-D transposed convolution; see `conv_transpose2d`."""
    return _conv_transposend(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 3
    )


def _block_args(kernel_size, dilation, padding, stride):
    ksize, dilation = _expand(kernel_size, 2, "kernel_size"), _expand(dilation, 2, "dilation")
    padding, stride = _expand(padding, 2, "padding"), _expand(stride, 2, "stride")
    for what, short, values in (
        ("kernel size", "kernel", ksize),
        ("stride", "stride", stride),
        ("dilation", "dilation", dilation),
    ):
        if min(values) <= 0:
            raise RuntimeError(
                f"{what} should be greater than zero, but got {short}_height: {values[0]} "
                f"{short}_width: {values[1]}"
            )
    if min(padding) < 0:
        raise RuntimeError(
            f"padding should be non-negative, but got pad_height: {padding[0]} "
            f"pad_width: {padding[1]}"
        )
    return ksize, dilation, tuple((p, p) for p in padding), stride


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding blocks: each column holds one ``C * prod(kernel_size)`` window.

    Shape:
        ``(N, C, H, W)`` (or ``(C, H, W)``) -> ``(N, C * kH * kW, L)``, L the number of
        windows.

    Example:
        >>> F.unfold(tocha.randn(1, 2, 4, 4), 2).shape
        torch.Size([1, 8, 9])
    """
    if input.dim() not in (3, 4) or 0 in input.shape[1:]:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: {list(input.shape)}"
        )
    dtype = input.dtype
    if not (dtype.is_floating_point or dtype.is_complex or dtype == tocha.bool):
        raise NotImplementedError(f"\"im2col_out_cpu\" not implemented for '{TITLE[dtype]}'")
    ksize, dilation, pads, stride = _block_args(kernel_size, dilation, padding, stride)
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    out = call(im2col_op, (x,), ksize, stride, pads, dilation)
    return out.squeeze(0) if unbatched else out


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum sliding blocks back into an image (the adjoint of `unfold`; overlaps add up).

    Shape:
        ``(N, C * kH * kW, L)`` (or ``(C * kH * kW, L)``) -> ``(N, C, *output_size)``.

    Example:
        >>> F.fold(tocha.ones(1, 8, 9), (4, 4), 2).shape
        torch.Size([1, 2, 4, 4])
    """
    if input.dim() not in (2, 3) or 0 in input.shape[1:]:
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and non-zero "
            f"dimensions for input, but got: {list(input.shape)}"
        )
    size = _expand(output_size, 2, "output_size")
    ksize, dilation, pads, stride = _block_args(kernel_size, dilation, padding, stride)
    unbatched = input.dim() == 2
    cols = input.unsqueeze(0) if unbatched else input
    blocks = math.prod(ksize)
    if cols.shape[1] % blocks:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={cols.shape[1]} and kernel_size={ksize}."
        )
    counts = _out_size(size, ksize, stride, pads, dilation)
    if cols.shape[2] != math.prod(counts):
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={ksize}, dilation={dilation}, "
            f"padding={tuple(p for p, _ in pads)}, stride={stride}, expected size of input's "
            f"dimension 2 to match the calculated number of sliding blocks "
            f"{' * '.join(map(str, counts))} = {math.prod(counts)}, but got "
            f"input.size(2)={cols.shape[2]}."
        )
    out = call(col2im_op, (cols,), size, ksize, stride, pads, dilation)
    return out.squeeze(0) if unbatched else out


@autocast_op("conv_tbc")
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-d convolution of a (time, batch, channels) sequence; `weight` (kernel width,
    in channels, out channels), `bias` (out channels), `pad` zeros at both ends of time."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("conv_tbc", input, "input", 1)
    if not isinstance(weight, Tensor):
        raise not_a_tensor("conv_tbc", weight, "weight", 2)
    if not isinstance(bias, Tensor):
        raise not_a_tensor("conv_tbc", bias, "bias", 3)
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
        )
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
