"""Derivatives of the shape and math extras (tocha/_ops/arrangement.py, math_extra.py) and of
`poisson` and `binomial`, one line each, in the form of `_formulas`.

Complex gradients follow PyTorch's convention (the gradient of a real loss by ``z`` is
``dL/dx + i dL/dy``).
"""

from __future__ import annotations

import tocha

from ._formulas import _constant, _plus, _times, conj, d, zero
from ._forward import fwd, fwd_linear


def _not_implemented(name: str):
    def formula(g, out, *args):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return formula


def _no_forward(name: str):
    """The forward rule of an op PyTorch declares without one."""

    def rule(t, out, *args):
        raise NotImplementedError(
            f"Trying to use forward AD with aten::{name} that does not support it."
        )

    return rule


def _unimplemented(name_of):
    """The derivative of an op whose derivative PyTorch declares but has not implemented
    (NotImplementedError naming the op, `name_of(*args)`), and its forward rule."""

    def formula(g, out, *args):
        raise NotImplementedError(f"the derivative for '{name_of(*args)}' is not implemented.")

    def rule(t, out, *args):
        _forward_not_implemented(name_of(*args))

    return formula, rule


def _forward_not_implemented(name: str):
    raise NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not "
        "been implemented yet.\nPlease file an issue to PyTorch at "
        "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
        "we can prioritize its implementation or submit a PR adding the implementation to "
        "derivatives.yaml"
    )


def _log_parts(v):
    """The logs of the positive and negative parts of `v` (the lowest float, not -inf, where
    a part is 0: -inf - -inf would make NaNs downstream)."""
    lowest = tocha.finfo(v.dtype).min

    def part(mask, magnitude):
        return tocha.where(mask, tocha.where(mask, magnitude, 1.0).log(), lowest)

    return part(v > 0, v), part(v < 0, -v)


def _logcumsumexp(g, out, x, dim):
    """Sums ``g[k] * exp(x[j] - out[k])`` over ``k >= j`` as reversed logcumsumexps of the
    positive and negative parts of the gradient (stable, and differentiable again; PyTorch's
    and TensorFlow's formula)."""
    if x.dim() == 0:
        return g, None
    if x.is_complex():  # one complex logcumsumexp carries the signs in its imaginary parts
        reversed_sums = (g.log() - out.conj()).flip(dim).logcumsumexp(dim).flip(dim)
        return (reversed_sums + x.conj()).exp(), None
    positive, negative = (
        ((log_g - out).flip(dim).logcumsumexp(dim).flip(dim) + x).exp() for log_g in _log_parts(g)
    )
    return positive - negative, None


def _logcumsumexp_fwd(t, out, x, dim):
    """Sums ``t[j] * exp(x[j] - out[k])`` over ``j <= k``, as logcumsumexps of the positive
    and negative parts of the tangent."""
    if x.dim() == 0:
        return t[0]
    if x.is_complex():
        return ((t[0].log() + x).logcumsumexp(dim) - out).exp()
    positive, negative = (((log_t + x).logcumsumexp(dim) - out).exp() for log_t in _log_parts(t[0]))
    return positive - negative


def _angle(g, out, x):
    if not x.is_complex():
        return zero(x)
    return tocha.where(x == 0, 0.0, g * x / (x.abs() ** 2) * 1j)


def _angle_fwd(t, out, x):
    """d angle(z) = Im(conj(z) dz) / |z|^2 (0 at 0, and for real z)."""
    if not x.is_complex():
        return tocha.zeros_like(out)
    size2 = x.abs() ** 2
    return tocha.where(size2 == 0, 0.0, (conj(x) * t[0]).imag / tocha.where(size2 == 0, 1.0, size2))


# -- shape extras ---------------------------------------------------------------------------
d("flip", "", lambda g, out, x, dims: (g.flip(dims), None))
fwd_linear("flip")
d(
    "roll",
    "",
    lambda g, out, x, shifts, dims: (
        g.roll(-shifts if dims is None else tuple(-s for s in shifts), dims),
        None,
        None,
    ),
)
fwd_linear("roll")
d("tril", "", lambda g, out, x, k: (g.tril(k), None))
d("triu", "", lambda g, out, x, k: (g.triu(k), None))
fwd_linear("tril", "triu")
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
fwd_linear("diagonal")
d("logcumsumexp", "0o", _logcumsumexp)
fwd("logcumsumexp", _logcumsumexp_fwd)

# -- math extras ----------------------------------------------------------------------------
d(
    "logaddexp",
    "01",
    lambda g, out, x, y: (g / conj(1 + (y - x).exp()), g / conj(1 + (x - y).exp())),
)
fwd(
    "logaddexp",
    lambda t, out, x, y: _plus(_times(t[0], (x - out).exp()), _times(t[1], (y - out).exp())),
)
d("logaddexp2", "01", lambda g, out, x, y: (g / (1 + (y - x).exp2()), g / (1 + (x - y).exp2())))
fwd(
    "logaddexp2",
    lambda t, out, x, y: _plus(_times(t[0], (x - out).exp2()), _times(t[1], (y - out).exp2())),
)
d("heaviside", "", _not_implemented("heaviside"))
fwd("heaviside", _no_forward("heaviside"))
for _name in ("floor_divide", "detach_copy"):
    d(_name, "", _not_implemented(_name))
    fwd(_name, _no_forward(_name))


def _incomplete_gamma(name: str, sign: int):
    """igamma/igammac's derivative and forward rule: by `other` (x), ``sign * x^(a-1) e^-x /
    Gamma(a)``; by `input` (a) PyTorch has none, so they raise when that one is wanted."""

    def slope(a, x):
        return sign * ((a - 1) * x.log() - x - a.lgamma()).exp()

    def formula(g, out, a, x, value, needs=(True, True, False)):
        if needs[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        return None, g * slope(a, x) if needs[1] else None, None

    def rule(t, out, a, x, value):
        if t[0] is not None:
            _forward_not_implemented(name)
        return None if t[1] is None else t[1] * slope(a, x)

    formula.takes_needs = True
    return formula, rule


for _name, _sign in (("igamma", 1), ("igammac", -1)):
    _formula, _rule = _incomplete_gamma(_name, _sign)
    d(_name, "01", _formula)
    fwd(_name, _rule)
for _name in ("div_floor", "div_trunc"):  # div's rounding modes: piecewise constant
    d(_name, "", lambda g, out, x, y: (zero(g), zero(g)))
    fwd(_name, _constant)
for _name, _name_of in (
    ("unique", lambda x, inverse, counts, dim: "_unique2" if dim is None else "unique_dim"),
    ("unique_consecutive", lambda *args: "unique_consecutive"),
):
    _formula, _rule = _unimplemented(_name_of)
    d(_name, "", _formula)
    fwd(_name, _rule)
_formula, _rule = _unimplemented(lambda x: "geqrf")
d("geqrf", "", _formula)
fwd("geqrf", _rule)
# PyTorch's choice: x's derivative taken as 1 except where x == y (the result is y), y's as 0
d("nextafter", "01", lambda g, out, x, y: (g * (x != y), zero(g)))
fwd("nextafter", lambda t, out, x, y: None if t[0] is None else t[0] * (x != y))
d("frexp", "o1", lambda g, out, x: g[0] / out[1].to(g[0].dtype).exp2())
fwd("frexp", lambda t, out, x: (t[0] / out[1].to(t[0].dtype).exp2(), None))
d("conj", "", lambda g, out, x: g.conj())
d("angle", "0", _angle)
fwd("angle", _angle_fwd)
d("complex", "", lambda g, out, re, im: (g.real, g.imag))
d("real", "", lambda g, out, x: g * (1 + 0j))
d("imag", "", lambda g, out, x: g * 1j)
d("view_as_real", "", lambda g, out, x: tocha.view_as_complex(g.contiguous()))
fwd_linear("conj", "complex", "real", "imag", "view_as_real")
d("view_as_complex", "", lambda g, out, x: tocha.view_as_real(g))
fwd("view_as_complex", lambda t, out, x: tocha.view_as_complex(t[0].contiguous()))

# -- random ---------------------------------------------------------------------------------
d("poisson", "", lambda g, out, rates, generator: (zero(g), None))
fwd("poisson", _constant)
d("binomial", "", _not_implemented("binomial"))
fwd("binomial", _no_forward("binomial"))
