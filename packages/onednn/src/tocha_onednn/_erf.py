"""erf on oneDNN: tocha's float32 rational (`tocha.library.ERF32_RATIONAL`),
``t * P(t**2) / Q(t**2)`` with ``t`` the input clamped to [-4, 4], evaluated by Horner's
scheme in oneDNN post-op chains: one pass over memory per polynomial where NumPy makes one
per multiply and per add (about two dozen in all).

The passes: NumPy's clip (which keeps NaN, where oneDNN's clip would not) gives ``t``; a
binary primitive ``t * t`` gives ``z``; one computes ``Q(z)``, its post-ops alternating ``*
z`` (binary) and ``+ c`` (eltwise linear); the last computes ``P(z)`` the same way, then
``* t`` and ``/ Q``. Four passes against NumPy's 26: 1M elements in about 0.3 ms against
1.6 ms. float32, C-ordered arrays of `MIN_SIZE` elements or more; other calls go to the
built-in kernel.
"""

from __future__ import annotations

import numpy as np

from tocha.library import ERF32_RATIONAL

from . import _dnnl as D
from ._plan import Cache, Plan
from ._runtime import library, threads

_F32 = np.dtype(np.float32)
_cache = Cache()
# Below this many elements NumPy's passes are quicker than four oneDNN calls' fixed cost.
MIN_SIZE = 16384
_P, _Q = ERF32_RATIONAL


def _ok(x: np.ndarray) -> bool:
    return x.dtype == _F32 and x.size >= MIN_SIZE and x.flags.c_contiguous


def _horner(z, coeffs) -> list:
    """The post-op steps after ``c0 * z + c1`` (an eltwise linear of the primitive's
    result) that evaluate the polynomial `coeffs` (highest degree first) at `z`: ``* z``
    then ``+ c`` for each further coefficient."""
    steps = [(D.ELTWISE_LINEAR, float(coeffs[0]), float(coeffs[1]))]
    for c in coeffs[2:]:
        steps += [(D.BINARY_MUL, z), (D.ELTWISE_LINEAR, 1.0, float(c))]
    return steps


def _build(n: int, tail: str):
    """A plan of ``z = t * t`` followed by `tail`'s post-op steps on (n,) arrays: its
    arguments are t (twice: the binary primitive's two sources), then each binary step's
    operand in order (z for Horner's steps; t and q after P), then dst. `tail` names the
    steps: "square" (``z`` alone), "Q" (``Q(z)``) or "P" (``t * P(z) / q``)."""
    lib = library()
    md = D.shape_desc(lib, (n,))
    steps = []
    if tail != "square":
        steps = _horner(md, _Q if tail == "Q" else _P)
        if tail == "P":
            steps += [(D.BINARY_MUL, md), (D.BINARY_DIV, md)]
    attr = D.chain_attr(lib, steps)
    try:
        pd = D.create_pd(
            lib,
            "dnnl_binary_primitive_desc_create",
            D.BINARY_MUL,
            md.handle,
            md.handle,
            md.handle,
            attr=attr,
        )
    finally:
        lib.lib.dnnl_primitive_attr_destroy(attr)
    args = [(D.ARG_SRC, md, False), (D.ARG_SRC_1, md, False)]
    binary = [i for i, step in enumerate(steps) if step[0] >= D.BINARY_ADD]
    args += [(D.post_op_arg(i), md, False) for i in binary]
    return Plan(lib, pd, [*args, (D.ARG_DST, md, True)])


def _plan(n: int, tail: str):
    return _cache.get((tail, n, threads()), lambda: _build(n, tail))


def erf(fallback):
    """``erf(x, out=None)``: the rational in oneDNN's post-op chains (see the module)."""

    def kernel(x, out=None):
        if not _ok(x):
            return fallback(x) if out is None else fallback(x, out=out)
        n = x.size
        plans = [_plan(n, tail) for tail in ("square", "Q", "P")]
        if None in plans:
            return fallback(x) if out is None else fallback(x, out=out)
        flat = x.reshape(-1)
        t = np.clip(flat, np.float32(-4.0), np.float32(4.0))
        z, q = np.empty(n, _F32), np.empty(n, _F32)
        y = np.empty(n, _F32)
        plans[0].run(t, t, z)
        plans[1].run(t, t, *[z] * (len(_Q) - 2), q)
        plans[2].run(t, t, *[z] * (len(_P) - 2), t, q, y)
        if out is None:
            return y.reshape(x.shape)
        out[...] = y.reshape(x.shape)
        return out

    return kernel
