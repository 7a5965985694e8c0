"""Padding: ``F.pad`` in the constant, reflect, replicate and circular modes.

Constant padding is one primitive (``constant_pad_nd``, negative widths crop) whose derivative
is the same primitive with the widths negated. The other modes pick, along each padded dim,
the source position of every output position (`index_select`, so the gradient is the
transposed index-add).
"""

from __future__ import annotations

import math

import numpy as np

import tocha
from tocha import Tensor
from tocha.autograd.derivatives import d, fwd
from tocha.library import GRAD_MODE, LAYERS, autocast_op, call, defop, keep_format

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _constant_pad_kernel(xp):
    def kernel(x, pads, value):
        lead = x.ndim - len(pads)
        crop = (slice(None),) * lead + tuple(
            slice(max(-lo, 0), x.shape[lead + i] - max(-hi, 0)) for i, (lo, hi) in enumerate(pads)
        )
        x = x[crop]
        widths = ((0, 0),) * lead + tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
        return xp.pad(x, widths, constant_values=value)

    return kernel


constant_pad_op = defop("constant_pad_nd", _constant_pad_kernel, layout=(0,))
d(
    "constant_pad_nd",
    "",
    lambda g, out, x, pads, value: (
        call(constant_pad_op, (g,), tuple((-lo, -hi) for lo, hi in pads), 0),
        None,
        None,
    ),
)
# the tangent padded with zeros (the padding value is a constant)
fwd("constant_pad_nd", lambda t, out, x, pads, value: call(constant_pad_op, (t[0],), pads, 0))


def _source_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """For each position of a dim of size `n` padded by (`lo`, `hi`): its source position."""
    if mode == "circular":  # as PyTorch: crop by the negative widths, then wrap around
        kept = n + min(lo, 0) + min(hi, 0)
        return max(-lo, 0) + np.arange(-max(lo, 0), kept + max(hi, 0)) % max(kept, 1)
    i = np.arange(-lo, n + hi)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    period = 2 * (n - 1)
    i = np.abs(i) % max(period, 1)
    return np.where(i >= n, period - i, i)


def _check_mode_pads(input: Tensor, pairs: list, mode: str) -> None:
    """PyTorch's checks of the reflect, replicate and circular modes."""
    nd, ndim = len(pairs), input.dim()
    if ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(
            f"Padding size {2 * nd} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    shape = list(input.shape)
    if mode in ("reflect", "replicate") and 0 in (shape[1:] if ndim == nd + 2 else shape):
        raise RuntimeError(
            f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 "
            "batch size and other non-zero dimensions for input, but got: "
            f"{shape}"
        )
    for i, (lo, hi) in enumerate(pairs):
        dim = ndim - nd + i
        n = shape[dim]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                f"Argument #{4 + 2 * (nd - 1 - i)}: Padding size should be less "
                "than the corresponding input dimension, but got: padding "
                f"({lo}, {hi}) at dimension {dim} of input {shape}"
            )
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")


@autocast_op(
    "reflection_pad1d",
    "reflection_pad2d",
    "reflection_pad3d",
    "replication_pad1d",
    "replication_pad2d",
    "replication_pad3d",
    "circular_pad1d",
    "circular_pad2d",
    "circular_pad3d",
    inline=True,
)
def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the trailing dims of `input`: ``pad = (last_lo, last_hi, prev_lo, prev_hi, ...)``.

    Modes: ``constant`` (any number of dims, with `value`; negative widths crop),
    ``reflect`` (mirror without repeating the edge), ``replicate`` (repeat the edge) and
    ``circular`` (wrap around); the last three pad 1 to 3 dims of a (batched) ``(C, *)`` input.

    Example:
        >>> F.pad(tocha.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect")
        tensor([[3., 2., 1., 2., 3., 2.]])
    """
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input "
            f"dimension but got padding length {len(pad)} and input of dimension "
            f"{input.dim()}"
        )
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(len(pad) // 2))]
    if mode == "constant":
        lead = input.dim() - len(pairs)
        for i, (lo, hi) in enumerate(pairs):
            if input.shape[lead + i] + min(lo, 0) + min(hi, 0) < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        try:
            return call(constant_pad_op, (input,), tuple(pairs), 0 if value is None else value)
        except MemoryError:
            sizes = list(input.shape[:lead]) + [
                n + lo + hi for n, (lo, hi) in zip(input.shape[lead:], pairs)
            ]
            raise RuntimeError(
                "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't "
                f"allocate memory: you tried to allocate {math.prod(sizes) * input.element_size()} "
                "bytes. Error code 12 (Cannot allocate memory)"
            ) from None
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if GRAD_MODE.autocast is not None:  # PyTorch's reflection_pad2d, replication_pad1d...
        kind = {"reflect": "reflection", "replicate": "replication"}.get(mode, mode)
        name = f"{kind}_pad{len(pairs)}d"
        return LAYERS.autocast_call(name, _PAD, (input, pad, mode), {})
    _check_mode_pads(input, pairs, mode)
    if input.dtype == tocha.bool and mode != "circular":
        kind = {"reflect": "reflection", "replicate": "replication"}[mode]
        raise NotImplementedError(f"\"{kind}_pad{len(pairs)}d\" not implemented for 'Bool'")
    out = input
    for i, (lo, hi) in enumerate(pairs):
        if lo or hi:
            dim = input.dim() - len(pairs) + i
            index = _source_index(input.shape[dim], lo, hi, mode)
            out = out.index_select(dim, tocha.from_numpy(index).to(input.device))
    return out if mode == "circular" else keep_format(out, input)  # as PyTorch's


_PAD = pad  # (the function: its body names its argument `pad`)
