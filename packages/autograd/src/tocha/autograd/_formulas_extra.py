"""Derivatives of the shape and math extras (tocha/_ops/arrangement.py, math_extra.py) and of
`poisson`, one line each, in the form of `_formulas`.

Complex gradients follow PyTorch's convention (the gradient of a real loss by ``z`` is
``dL/dx + i dL/dy``).
"""

from __future__ import annotations

import tocha

from ._formulas import d, zero


def _not_implemented(name: str):
    def formula(g, out, *args):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return formula


def _logcumsumexp(g, out, x, dim):
    """Sums ``g[k] * exp(x[j] - out[k])`` over ``k >= j`` as reversed logcumsumexps of the
    positive and negative parts of the gradient (stable, and differentiable again; PyTorch's
    and TensorFlow's formula)."""
    if x.dim() == 0:
        return g, None
    lowest = tocha.finfo(g.dtype).min  # not -inf: -inf - -inf would make NaNs downstream

    def part(mask, magnitude):
        log_g = tocha.where(mask, tocha.where(mask, magnitude, 1.0).log(), lowest)
        flipped = (log_g - out).flip(dim).logcumsumexp(dim).flip(dim)
        return (flipped + x).exp()

    return part(g > 0, g) - part(g < 0, -g), None


def _angle(g, out, x):
    if not x.is_complex():
        return zero(x)
    return tocha.where(x == 0, 0.0, g * x / (x.abs() ** 2) * 1j)


# -- shape extras ---------------------------------------------------------------------------
d("flip", "", lambda g, out, x, dims: (g.flip(dims), None))
d(
    "roll",
    "",
    lambda g, out, x, shifts, dims: (
        g.roll(-shifts if dims is None else tuple(-s for s in shifts), dims),
        None,
        None,
    ),
)
d("tril", "", lambda g, out, x, k: (g.tril(k), None))
d("triu", "", lambda g, out, x, k: (g.triu(k), None))
d(
    "diagonal",
    "",
    lambda g, out, x, offset, dim1, dim2: (
        tocha.diagonal_scatter(
            tocha.zeros(x.shape, dtype=g.dtype, device=g.device), g, offset, dim1, dim2
        ),
        None,
        None,
        None,
    ),
)
d("logcumsumexp", "0o", _logcumsumexp)

# -- math extras ----------------------------------------------------------------------------
d("logaddexp", "01o", lambda g, out, x, y: (g * (x - out).exp(), g * (y - out).exp()))
d("logaddexp2", "01o", lambda g, out, x, y: (g * (x - out).exp2(), g * (y - out).exp2()))
d("heaviside", "", _not_implemented("heaviside"))
d("nextafter", "", lambda g, out, x, y: (g, zero(g)))  # PyTorch's choice
d("frexp", "o", lambda g, out, x: g[0] / out[1].to(g[0].dtype).exp2())
d("conj", "", lambda g, out, x: g.conj())
d("angle", "0", _angle)
d("complex", "", lambda g, out, re, im: (g.real, g.imag))
d("real", "", lambda g, out, x: g * (1 + 0j))
d("imag", "", lambda g, out, x: g * 1j)
d("view_as_real", "", lambda g, out, x: tocha.view_as_complex(g.contiguous()))
d("view_as_complex", "", lambda g, out, x: tocha.view_as_real(g))

# -- random ---------------------------------------------------------------------------------
d("poisson", "", lambda g, out, rates, generator: (zero(g), None))
