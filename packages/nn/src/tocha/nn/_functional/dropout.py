"""Dropout: dropout, dropout1d/2d/3d (whole channels), alpha_dropout, feature_alpha_dropout.

Each is the input times a constant random mask, the identity outside training. Plain
dropout is one primitive, ``native_dropout``, that draws the mask and applies it (a backend
may do both in one kernel); the others multiply by a mask drawn with ``rand``.
"""

from __future__ import annotations

import warnings

import numpy as np

import tocha
from tocha import Tensor
from tocha.autograd.derivatives import d, fwd
from tocha.library import TITLE, assign, bernoulli_mask, call, defop, generator_stream

__all__ = [
    "alpha_dropout",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
]

SELU_NEG = 1.7580993408473766  # SELU's scale * alpha: the value SELU saturates to (negated)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _native_dropout_kernel(xp):
    def kernel(x, stream, p):
        """``(x * keep / (1 - p), keep)``, keep a Bernoulli(1 - p) draw: 32-bit words below
        ``(1 - p) * 2**32`` from tocha's default stream, float64 uniforms ``u < 1 - p`` from
        PyTorch's (its values)."""
        if type(stream) is np.random.Generator:
            keep = bernoulli_mask(stream, x.shape, 1.0 - p)
        else:
            keep = _uniform_in_memory_order(stream, x) < 1.0 - p
        if x.dtype.char in "fd":
            out = xp.multiply(x, 1.0 / (1.0 - p))
            out *= keep
            return out, keep
        out = keep.astype(x.dtype)
        out /= 1.0 - p
        out *= x
        return out, keep

    return kernel


def _uniform_in_memory_order(stream, x):
    """Float64 uniforms of `x`'s shape, drawn in the order of `x`'s memory when `x` is a
    dense permutation (a transposed view): PyTorch's dropout fills its mask, laid out as its
    input, in memory order, so the same seed gives the same mask."""
    shape, strides = x.shape, x.strides
    order = sorted(range(x.ndim), key=lambda i: -abs(strides[i]))
    if order == sorted(order) or any(s == 0 and n > 1 for s, n in zip(strides, shape)):
        return stream.random(shape, dtype=np.float64)
    u = stream.random(tuple(shape[i] for i in order), dtype=np.float64)
    return u.transpose(np.argsort(order))


native_dropout_op = defop("native_dropout", _native_dropout_kernel)
d(
    "native_dropout",
    "o1",
    lambda grads, out, x, stream, p: (grads[0] * (1.0 / (1.0 - p)) * out[1],) + (None, None),
)
fwd(
    "native_dropout",
    lambda t, out, x, stream, p: (t[0] * out[1].to(t[0].dtype) * (1.0 / (1.0 - p)), None),
)


def _noise(input: Tensor, p: float, feature: bool) -> Tensor:
    """Bernoulli(1 - p) keep-mask in input's dtype: input's shape, or one per channel
    (``(N, C, 1, ...)``) for feature dropout."""
    shape = input.shape
    if feature:
        shape = tuple(shape[:2]) + (1,) * (input.dim() - 2)
    return tocha.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)


def _no_random_mask(dtype, alpha: bool) -> Exception:
    """PyTorch's error for dropout of a tensor that is not floating: its mask (complex) or its
    scaled result (integers, bool) has no kernel."""
    if dtype.is_complex:
        return NotImplementedError(
            f"\"bernoulli_scalar_cpu_\" not implemented for '{TITLE[dtype]}'"
        )
    shown = "Long" if alpha and dtype == tocha.bool else TITLE[dtype]
    return RuntimeError(f"result type Float can't be cast to the desired output type {shown}")


def _dropout(
    input: Tensor, p: float, training: bool, inplace: bool, feature: bool, alpha: bool
) -> Tensor:
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p < 1 and not input.dtype.is_floating_point:
        raise _no_random_mask(input.dtype, alpha)
    if 0 < p < 1 and not feature and not alpha:
        out = call(native_dropout_op, (input,), generator_stream(None, input.device), p)[0]
        return assign(input, out) if inplace else out
    with tocha.no_grad():
        if p == 1:
            scale = tocha.zeros((), dtype=input.dtype, device=input.device)
            shift = None
        else:
            noise = _noise(input, p, feature)
            if alpha:
                a = (1.0 / ((SELU_NEG**2 * p + 1) * (1 - p))) ** 0.5
                shift = (noise - 1) * (SELU_NEG * a) + SELU_NEG * a * p
                scale = noise * a
            else:
                scale, shift = noise * (1.0 / (1 - p)), None
    out = input * scale
    if shift is not None:
        out = out + shift
    return assign(input, out) if inplace else out


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """In training, zero each element with probability `p` and scale the rest by
    ``1 / (1 - p)``; the identity otherwise."""
    return _dropout(input, p, training, inplace, False, False)


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout that keeps SELU's self-normalisation: dropped elements take SELU's negative
    saturation value, then an affine map restores the mean and variance."""
    return _dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """`alpha_dropout` of whole channels."""
    return _dropout(input, p, training, inplace, True, True)


def _feature_note(n: int, dims: str) -> str:
    return (
        f"Note that dropout{n}d exists to provide channel-wise dropout on inputs with {n} "
        f"spatial dimension{'s' if n > 1 else ''}, a channel dimension, and an optional "
        f"batch dimension (i.e. {dims} inputs)."
    )


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a ``(N, C, L)`` or ``(C, L)`` input with probability `p`."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
            "input. " + _feature_note(1, "2D or 3D")
        )
    return _batched_feature(input, p, training, inplace, input.dim() == 2)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a ``(N, C, H, W)`` or ``(C, H, W)`` input with probability
    `p`."""
    _check_p(p)
    if input.dim() not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. " + _feature_note(2, "3D or 4D"),
            stacklevel=2,
        )
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _batched_feature(input, p, training, inplace, False)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with
    probability `p`."""
    _check_p(p)
    if input.dim() not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. " + _feature_note(3, "4D or 5D"),
            stacklevel=2,
        )
    return _batched_feature(input, p, training, inplace, input.dim() != 5)


def _batched_feature(
    input: Tensor, p: float, training: bool, inplace: bool, unbatched: bool
) -> Tensor:
    """Feature dropout, an unbatched input first given a batch dim of 1."""
    if not unbatched:
        return _dropout(input, p, training, inplace, True, False)
    out = _dropout(input.unsqueeze(0), p, training, inplace, True, False)
    return input if inplace else out.squeeze(0)
