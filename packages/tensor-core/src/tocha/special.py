"""tocha.special: special functions, as `torch.special`.

Primitives (kernels in `tocha._ops.special_kernels`, computed in float64 and rounded once to
the input's dtype): lgamma, digamma, polygamma, i0, i0e, i1, i1e, erfcx, ndtri, log_ndtr,
entr, sinc, xlogy, xlog1py, zeta. The others compose tocha ops (logit, ndtr, multigammaln,
softmax, log_softmax) or are tocha's own functions under torch.special's names (expit, erf,
exp2, logsumexp...). Integer inputs are computed in the default float dtype.

The top-level functions and Tensor methods torch has (``tocha.lgamma``, ``x.digamma()``,
``tocha.polygamma``, ``tocha.mvlgamma``, ``tocha.i0``, ``tocha.xlogy``, ``tocha.logit``,
``tocha.sinc``) are published here too.
"""

from __future__ import annotations

import math

import numpy as np

from . import _dtype
from ._api import PUBLIC, export
from ._dispatch import binary, call, defop, expect_tensor, unary
from ._grad_mode import STATE, no_grad
from ._ops import aliases as _aliases
from ._ops import special_kernels as _k
from ._ops._argcheck import index_arg
from ._ops._out import write_out
from ._tensor import Tensor

__all__ = [
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "sinc",
    "softmax",
    "xlog1py",
    "xlogy",
    "zeta",
]

# op name: float64 function; the op names are PyTorch's (aten) names.
_UNARY = {
    "lgamma": _k.lgamma64,
    "digamma": _k.digamma64,
    "i0": _k.i0_64,
    "special_i0e": _k.i0e64,
    "special_i1": _k.i1_64,
    "special_i1e": _k.i1e64,
    "special_erfcx": _k.erfcx64,
    "special_ndtri": _k.ndtri64,
    "special_log_ndtr": _k.log_ndtr64,
    "special_entr": _k.entr64,
    "sinc": _k.sinc64,
}
_BINARY = {"xlogy": _k.xlogy64, "special_xlog1py": _k.xlog1py64, "special_zeta": _k.zeta64}

# sinc also takes complex inputs, as PyTorch's
_COMPLEX = {"sinc": _k.sinc_complex}
OPS = {
    name: defop(name, _k.unary_factory(name, fn, _COMPLEX.get(name))) for name, fn in _UNARY.items()
}
OPS.update({name: defop(name, _k.binary_factory(name, fn)) for name, fn in _BINARY.items()})
OPS["polygamma"] = defop("polygamma", _k.polygamma_factory)


def _finish(result: Tensor, out: Tensor | None) -> Tensor:
    return result if out is None else write_out(out, result)


def _no_kernel(kernel: str, dtype: _dtype.dtype) -> NotImplementedError:
    """PyTorch's error for a kernel (`kernel`, its C++ name) with no version for `dtype`."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.TITLE[dtype]}'")


def _refuse_half_or_complex(kernel: str, dtype: _dtype.dtype) -> None:
    """PyTorch's error for a kernel of float32 and float64 (and integers) only."""
    if dtype.is_complex or dtype in (_dtype.float16, _dtype.bfloat16):
        raise _no_kernel(kernel, dtype)


def _unary_function(op_name: str, public_name: str, summary: str, kernel: str | None = None):
    """`kernel`: PyTorch's CPU kernel of float32/float64 (and integers) only, whose refusal
    of float16, bfloat16 and complex inputs the function repeats."""
    op = OPS[op_name]

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        x = expect_tensor(public_name, input)
        if kernel is not None:
            _refuse_half_or_complex(kernel, x.dtype)
        return _finish(unary(op, x, True), out)

    fn.__name__ = fn.__qualname__ = public_name
    fn.__doc__ = f"{summary}, elementwise. Integer inputs give the default float dtype."
    return fn


def _binary_function(op_name: str, public_name: str, summary: str, refuse_half: bool = False):
    op = OPS[op_name]

    def fn(input, other, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise TypeError(f"{public_name}(): expected at least one Tensor argument")
        if refuse_half:
            _refuse_half_or_complex(f"{public_name}_cpu", _dtype.promote_operands((input, other)))
        return _finish(binary(op, input, other, True), out)

    fn.__name__ = fn.__qualname__ = public_name
    fn.__doc__ = (
        f"{summary}, elementwise, broadcast (either operand may be a number). "
        "Integer inputs give the default float dtype."
    )
    return fn


def _floating(x: Tensor) -> Tensor:
    """`x`, cast to the default float dtype when it is bool or integer."""
    return x if x.dtype.rank >= _dtype.FLOATING else x.to(_dtype.DEFAULTS.float)


gammaln = _unary_function("lgamma", "lgamma", "The log of the absolute value of Gamma")
digamma = _unary_function("digamma", "digamma", "The logarithmic derivative of Gamma")
i0 = _unary_function("i0", "i0", "The modified Bessel function of the first kind, order 0")
i0e = _unary_function("special_i0e", "i0e", "exp(-|x|) i0(x), the scaled Bessel function")
i1 = _unary_function("special_i1", "i1", "The modified Bessel function of the first kind, order 1")
i1e = _unary_function("special_i1e", "i1e", "exp(-|x|) i1(x), the scaled Bessel function")
erfcx = _unary_function(
    "special_erfcx",
    "erfcx",
    "The scaled complementary error function exp(x^2) erfc(x)",
    "erfcx_cpu",
)
ndtri = _unary_function(
    "special_ndtri",
    "ndtri",
    "The inverse of the standard normal distribution function",
    "ndtri_cpu",
)
log_ndtr = _unary_function(
    "special_log_ndtr",
    "log_ndtr",
    "The log of the standard normal distribution function",
    "log_ndtr_cpu",
)
entr = _unary_function(
    "special_entr", "entr", "The entropy term -x log(x) (0 at 0, -inf for x < 0)"
)
sinc = _unary_function("sinc", "sinc", "The normalised sinc, sin(pi x) / (pi x) (1 at 0)")
xlogy = _binary_function("xlogy", "xlogy", "x log(y), 0 where x is 0 (unless y is nan)")
xlog1py = _binary_function(
    "special_xlog1py", "xlog1py", "x log1p(y), 0 where x is 0 (unless y is nan)"
)
zeta = _binary_function(
    "special_zeta", "zeta", "The Hurwitz zeta function sum_k (k + other)^-input", True
)
psi = digamma


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The `n`-th derivative of digamma, elementwise (``polygamma(0, x)`` is digamma).

    Example: ``tocha.polygamma(1, tocha.tensor([1.0]))`` is pi^2 / 6.
    """
    if type(n) is not int or not -(2**63) <= n < 2**63:
        n = index_arg("polygamma", n, "n")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _floating(expect_tensor("polygamma", input))
    if x.dtype.is_complex:
        raise NotImplementedError(f"\"polygamma\" not implemented for '{_dtype.TITLE[x.dtype]}'")
    return _finish(call(OPS["polygamma"], (x,), int(n)), out)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``polygamma(n, self)``."""
    return polygamma(n, self)


# The most lgamma terms (p times the input's elements) one mvlgamma call computes at once.
MVLGAMMA_TERMS = 2**27


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The log of the multivariate gamma function of dimension `p`:
    ``p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(input - j / 2)``."""
    if type(p) is not int or not -(2**63) <= p < 2**63:
        p = index_arg("mvlgamma", p, "p")
    if expect_tensor("mvlgamma", input).dtype is _dtype.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _floating(input)
    if p * max(x.numel(), 1) > MVLGAMMA_TERMS:
        raise RuntimeError(
            f"mvlgamma: p = {p} needs {p} terms per element, more than the "
            f"{MVLGAMMA_TERMS} this input allows"
        )
    halves = PUBLIC["arange"](p, dtype=x.dtype, device=x.device) / 2
    total = gammaln(x.unsqueeze(-1) - halves).sum(-1)
    return _finish(total + p * (p - 1) / 4 * math.log(math.pi), out)


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """log(x / (1 - x)), as log(x) - log1p(-x), with `input` first clamped to [eps, 1 - eps]
    when `eps` is given."""
    x = _floating(expect_tensor("logit", input))
    if x.dtype.is_complex:
        raise _no_kernel("logit_cpu", x.dtype)
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    elif x.requires_grad:
        # NaN where x is outside [0, 1] (its value is NaN there already), so that the
        # gradient is NaN there too, as PyTorch's.
        x = x + PUBLIC["where"]((x < 0) | (x > 1), math.nan, 0.0).to(x.dtype)
    return _finish(x.log() - (-x).log1p(), out)  # gradient 1/x + 1/(1 - x): inf at 0 and 1


def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The standard normal distribution function, ``erfc(-x / sqrt(2)) / 2``."""
    x = _floating(expect_tensor("ndtr", input))
    return _finish((x * -math.sqrt(0.5)).erfc() * 0.5, out)


def softmax(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along `dim` (computed in `dtype` when given): ``tocha.softmax``
    (its dtype checks included)."""
    return PUBLIC["softmax"](input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """``x - logsumexp(x)`` along `dim` (computed in `dtype` when given):
    ``tocha.log_softmax``."""
    return PUBLIC["log_softmax"](input, dim, dtype=dtype)


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:  # noqa: A001
    """``tocha.round`` of a floating or complex input (PyTorch's special.round has no integer
    or bool kernel)."""
    if expect_tensor("round", input).dtype.rank < _dtype.FLOATING:
        raise _no_kernel("round_vml_cpu", input.dtype)
    return PUBLIC["round"](input, decimals=decimals, out=out)


# torch.special's names for functions tocha has at the top level.
expit = PUBLIC["sigmoid"]
erf, erfc, erfinv = PUBLIC["erf"], PUBLIC["erfc"], PUBLIC["erfinv"]
exp2, expm1, log1p = PUBLIC["exp2"], PUBLIC["expm1"], PUBLIC["log1p"]
logsumexp = PUBLIC["logsumexp"]

for _fn, _name in (
    (gammaln, "lgamma"),
    (digamma, "digamma"),
    (polygamma, "polygamma"),
    (multigammaln, "mvlgamma"),
    (i0, "i0"),
    (xlogy, "xlogy"),
    (logit, "logit"),
    (sinc, "sinc"),
):
    export(_fn, _name, method=_name != "polygamma")
export(_polygamma_method, "polygamma", method=True, function=False)


# -- the rest of torch.special, composed of tocha ops in float64 ------------------------------
def _result_dtype(*operands) -> _dtype.dtype:
    """The promoted dtype of the operands, the default float dtype for integers."""
    dtype = _dtype.promote_operands(operands)
    return dtype if dtype.rank >= _dtype.FLOATING else _dtype.DEFAULTS.float


def _as64(x) -> Tensor:
    return (
        x.to(_dtype.float64)
        if isinstance(x, Tensor)
        else PUBLIC["tensor"](float(x), dtype=_dtype.float64)
    )


def _polynomial(name: str, first, step, shifted: bool = False):
    """A family of orthogonal polynomials from its first two members (functions of x) and
    its recurrence ``p_{k+1} = step(k, x, p_k, p_{k-1})``; `n` a number or a tensor."""

    def fn(input, n, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"{name}(): expected at least one Tensor argument")
        dtype = _result_dtype(input, n)
        _refuse_half_or_complex(f"{name}_cpu", dtype)
        x = _as64(input)
        if shifted:
            x = 2 * x - 1
        n64 = _as64(n).trunc()  # PyTorch reads the degree as an integer (2.5 is 2)
        # a degree that is no int64 (NaN, infinite, 2**63 or more) reads as negative
        n64 = PUBLIC["where"](n64.isfinite() & (n64 < 2.0**63), n64, -1.0)
        x, n64 = PUBLIC["broadcast_tensors"](x, n64)
        top = int(n64.max().item()) if n64.numel() else 0
        previous, current = PUBLIC["ones_like"](x), first(x)
        result = PUBLIC["where"](n64 == 0, previous, PUBLIC["zeros_like"](x))
        for k in range(1, top + 1):
            result = PUBLIC["where"](n64 == k, current, result)
            previous, current = current, step(k, x, current, previous)
        return _finish(result.to(dtype), out)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _chebyshev(name: str, first, shifted: bool = False):
    return _polynomial(name, first, lambda k, x, p, q: 2 * x * p - q, shifted)


chebyshev_polynomial_t = _chebyshev("chebyshev_polynomial_t", lambda x: x)
chebyshev_polynomial_u = _chebyshev("chebyshev_polynomial_u", lambda x: 2 * x)
chebyshev_polynomial_v = _chebyshev("chebyshev_polynomial_v", lambda x: 2 * x - 1)
chebyshev_polynomial_w = _chebyshev("chebyshev_polynomial_w", lambda x: 2 * x + 1)
shifted_chebyshev_polynomial_t = _chebyshev("shifted_chebyshev_polynomial_t", lambda x: x, True)
shifted_chebyshev_polynomial_u = _chebyshev("shifted_chebyshev_polynomial_u", lambda x: 2 * x, True)
shifted_chebyshev_polynomial_v = _chebyshev(
    "shifted_chebyshev_polynomial_v", lambda x: 2 * x - 1, True
)
shifted_chebyshev_polynomial_w = _chebyshev(
    "shifted_chebyshev_polynomial_w", lambda x: 2 * x + 1, True
)
hermite_polynomial_h = _polynomial(
    "hermite_polynomial_h", lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - 2 * k * q
)
hermite_polynomial_he = _polynomial(
    "hermite_polynomial_he", lambda x: x, lambda k, x, p, q: x * p - k * q
)
laguerre_polynomial_l = _polynomial(
    "laguerre_polynomial_l",
    lambda x: 1 - x,
    lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1),
)
legendre_polynomial_p = _polynomial(
    "legendre_polynomial_p",
    lambda x: x,
    lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1),
)
for _fn, _what in (
    (chebyshev_polynomial_t, "Chebyshev polynomial of the first kind T_n"),
    (chebyshev_polynomial_u, "Chebyshev polynomial of the second kind U_n"),
    (chebyshev_polynomial_v, "Chebyshev polynomial of the third kind V_n"),
    (chebyshev_polynomial_w, "Chebyshev polynomial of the fourth kind W_n"),
    (shifted_chebyshev_polynomial_t, "shifted Chebyshev polynomial T_n(2x - 1)"),
    (shifted_chebyshev_polynomial_u, "shifted Chebyshev polynomial U_n(2x - 1)"),
    (shifted_chebyshev_polynomial_v, "shifted Chebyshev polynomial V_n(2x - 1)"),
    (shifted_chebyshev_polynomial_w, "shifted Chebyshev polynomial W_n(2x - 1)"),
    (hermite_polynomial_h, "physicists' Hermite polynomial H_n"),
    (hermite_polynomial_he, "probabilists' Hermite polynomial He_n"),
    (laguerre_polynomial_l, "Laguerre polynomial L_n"),
    (legendre_polynomial_p, "Legendre polynomial P_n"),
):
    _fn.__doc__ = (
        f"The {_what} of `input`, elementwise; `n` a number or a tensor (broadcast); 0 for n < 0."
    )

# Nodes and weights of Gauss-Legendre quadrature on [0, 1].
_NODES, _WEIGHTS = (a / 2 for a in np.polynomial.legendre.leggauss(96))
_NODES = _NODES + 0.5


def _quadrature(integrand, lower: Tensor, upper: Tensor) -> Tensor:
    """The integral of ``integrand(t)`` (t broadcast against the bounds with a trailing dim
    of quadrature nodes) from `lower` to `upper`, by Gauss-Legendre with 96 nodes."""
    nodes = PUBLIC["tensor"](_NODES, dtype=_dtype.float64)
    weights = PUBLIC["tensor"](_WEIGHTS, dtype=_dtype.float64)
    span = (upper - lower)[..., None]
    t = lower[..., None] + span * nodes
    return (integrand(t) * weights).sum(-1) * span.squeeze(-1)


def _hankel(order: int, x: Tensor, terms: int = 14):
    """Hankel's asymptotic P, Q of order `order` at large x: J = sqrt(2/(pi x)) (P cos w -
    Q sin w), Y = sqrt(2/(pi x)) (P sin w + Q cos w), w = x - order pi / 2 - pi / 4."""
    mu = 4.0 * order * order
    p, q = PUBLIC["ones_like"](x), PUBLIC["zeros_like"](x)
    coefficient = 1.0
    power = PUBLIC["ones_like"](x)
    for k in range(1, terms):
        coefficient *= (mu - (2 * k - 1) ** 2) / (k * 8.0)
        power = power / x
        term = power * coefficient
        if k % 2:
            q = q + term * (-1) ** ((k - 1) // 2)
        else:
            p = p + term * (-1) ** (k // 2)
    w = x - (order / 2 + 0.25) * math.pi
    scale = (2 / (math.pi * x)).sqrt()
    return scale, p, q, w


def _bessel_first(order: int, x: Tensor) -> Tensor:
    """J_order(x) for real x: (1 / 2 pi) times the integral of cos(order t - x sin t) over a
    period (the trapezoidal rule, spectrally accurate) for |x| <= 25, Hankel's expansion
    beyond."""
    ax = x.abs()
    small = ax.clamp(max=25.0)
    t = PUBLIC["arange"](128, dtype=_dtype.float64) * (2 * math.pi / 128)
    near = (order * t - small[..., None] * t.sin()).cos().mean(-1)
    big = ax.clamp(min=25.0)
    scale, p, q, w = _hankel(order, big)
    far = scale * (p * w.cos() - q * w.sin())
    value = PUBLIC["where"](ax <= 25.0, near, far)
    return value * x.sign() if order % 2 else value


def _bessel_second(order: int, x: Tensor) -> Tensor:
    """Y_order(x), x > 0: (1/pi) int_0^pi sin(x sin t - order t) dt - (1/pi) int_0^inf
    (e^{order t} + (-1)^order e^{-order t}) e^{-x sinh t} dt for x <= 25, Hankel's expansion
    beyond; -inf at 0, nan below."""
    small = x.clamp(min=1e-300, max=25.0)
    zero = PUBLIC["zeros_like"](small)
    first = _quadrature(
        lambda t: (small[..., None] * t.sin() - order * t).sin(), zero, zero + math.pi
    )
    sign = (-1) ** order
    second = _quadrature(
        lambda t: (
            ((order * t).exp() + sign * (-order * t).exp()) * (-small[..., None] * t.sinh()).exp()
        ),
        zero,
        (60.0 / small).asinh(),
    )
    near = (first - second) / math.pi
    big = x.clamp(min=25.0)
    scale, p, q, w = _hankel(order, big)
    far = scale * (p * w.sin() + q * w.cos())
    value = PUBLIC["where"](x <= 25.0, near, far)
    value = PUBLIC["where"](x == 0, -math.inf, value)
    return PUBLIC["where"](x < 0, math.nan, value)


def _bessel_k(order: float, x: Tensor, scaled: bool) -> Tensor:
    """K_order(x), x > 0 (times e^x when `scaled`): int_0^inf e^{-x cosh t} cosh(order t) dt;
    inf at 0, nan below."""
    positive = x.clamp(min=1e-300)
    zero = PUBLIC["zeros_like"](positive)
    shift = positive[..., None] if scaled else 0.0
    value = _quadrature(
        lambda t: (shift - positive[..., None] * t.cosh()).exp() * (order * t).cosh(),
        zero,
        (1 + 60.0 / positive).acosh(),
    )
    value = PUBLIC["where"](x == 0, math.inf, value)
    return PUBLIC["where"](x < 0, math.nan, value)


# Coefficients u_k of the Airy functions' asymptotic expansion for large negative x.
_AIRY_U = (
    1.0,
    0.0694444444444444,
    0.0371334876543210,
    0.0379930591278006,
    0.0576491904126697,
    0.1160990640255154,
    0.2915914288925744,
)


def _airy_ai(x: Tensor) -> Tensor:
    """Ai(x): (1/pi) sqrt(x/3) K_{1/3}(zeta) for x > 0, (sqrt(z)/3) (J_{1/3} + J_{-1/3})(zeta)
    at x = -z in [-16, 0), where J of order nu is (1/pi) int_0^pi cos(nu t - zeta sin t) dt
    - (sin(nu pi)/pi) int_0^inf e^{-zeta sinh t - nu t} dt; the asymptotic expansion below
    -16 (zeta = 2/3 |x|^{3/2})."""
    z = x.abs()
    zeta = (2.0 / 3.0) * z * z.sqrt()
    positive = _bessel_k(1 / 3, zeta, False) * (z / 3).sqrt() / math.pi
    near_zeta = zeta.clamp(min=1e-300, max=43.0)
    zero = PUBLIC["zeros_like"](near_zeta)
    total = 0
    for nu in (1 / 3, -1 / 3):
        oscillating = _quadrature(
            lambda t, nu=nu: (nu * t - near_zeta[..., None] * t.sin()).cos(), zero, zero + math.pi
        )
        decaying = _quadrature(
            lambda t, nu=nu: (-near_zeta[..., None] * t.sinh() - nu * t).exp(),
            zero,
            (60.0 / near_zeta).asinh() + 1.0,
        )
        total = total + (oscillating - math.sin(nu * math.pi) * decaying) / math.pi
    near = z.sqrt() / 3 * total
    far_zeta = zeta.clamp(min=43.0)
    phase = far_zeta + math.pi / 4
    even = sum((-1) ** k * _AIRY_U[2 * k] * far_zeta ** (-2 * k) for k in range(4))
    odd = sum((-1) ** k * _AIRY_U[2 * k + 1] * far_zeta ** (-2 * k - 1) for k in range(3))
    far = (phase.sin() * even - phase.cos() * odd) / (math.sqrt(math.pi) * z.clamp(min=1.0) ** 0.25)
    negative = PUBLIC["where"](z <= 16.0, near, far)
    value = PUBLIC["where"](x > 0, positive, negative)
    return PUBLIC["where"](x == 0, 0.35502805388781723926, value)


def _bessel_function(name: str, compute, summary: str):
    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        x = expect_tensor(name, input)
        _refuse_half_or_complex(f"{name}_cpu", x.dtype)
        return _finish(compute(_as64(x)).to(_result_dtype(x)), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{summary}, elementwise (computed in float64)."
    return fn


bessel_j0 = _bessel_function(
    "bessel_j0", lambda x: _bessel_first(0, x), "The Bessel function of the first kind J0"
)
bessel_j1 = _bessel_function(
    "bessel_j1", lambda x: _bessel_first(1, x), "The Bessel function of the first kind J1"
)
bessel_y0 = _bessel_function(
    "bessel_y0", lambda x: _bessel_second(0, x), "The Bessel function of the second kind Y0"
)
bessel_y1 = _bessel_function(
    "bessel_y1", lambda x: _bessel_second(1, x), "The Bessel function of the second kind Y1"
)
modified_bessel_k0 = _bessel_function(
    "modified_bessel_k0",
    lambda x: _bessel_k(0, x, False),
    "The modified Bessel function of the second kind K0",
)
modified_bessel_k1 = _bessel_function(
    "modified_bessel_k1",
    lambda x: _bessel_k(1, x, False),
    "The modified Bessel function of the second kind K1",
)
scaled_modified_bessel_k0 = _bessel_function(
    "scaled_modified_bessel_k0", lambda x: _bessel_k(0, x, True), "exp(x) K0(x)"
)
scaled_modified_bessel_k1 = _bessel_function(
    "scaled_modified_bessel_k1", lambda x: _bessel_k(1, x, True), "exp(x) K1(x)"
)
modified_bessel_i0 = _bessel_function(
    "modified_bessel_i0",
    lambda x: i0(x),
    "The modified Bessel function of the first kind I0",
)
modified_bessel_i1 = _bessel_function(
    "modified_bessel_i1",
    lambda x: i1(x),
    "The modified Bessel function of the first kind I1",
)
airy_ai = _bessel_function("airy_ai", _airy_ai, "The Airy function Ai")
spherical_bessel_j0 = _bessel_function(
    "spherical_bessel_j0",
    lambda x: PUBLIC["where"](x == 0, 1.0, x.sin() / PUBLIC["where"](x == 0, 1.0, x)),
    "The spherical Bessel function of the first kind j0, sin(x) / x",
)


def _gammainc(a: Tensor, x: Tensor, upper: bool) -> Tensor:
    """The regularized incomplete gamma functions P(a, x) (Q when `upper`) in float64: the
    series for x < a + 1, Lentz's continued fraction beyond."""
    a, x = PUBLIC["broadcast_tensors"](a, x)
    safe_a = a.clamp(min=1e-300)
    safe_x = x.clamp(min=1e-300)
    log_front = safe_a * safe_x.log() - safe_x
    use_series = x < a + 1
    # series: P = x^a e^-x / Gamma(a + 1) sum_k x^k / ((a + 1) ... (a + k))
    xs = PUBLIC["where"](use_series, safe_x, PUBLIC["zeros_like"](x))
    term = PUBLIC["ones_like"](x)
    total = PUBLIC["ones_like"](x)
    for k in range(1, 600):
        term = term * xs / (safe_a + k)
        total = total + term
    lower_p = (log_front - gammaln(safe_a + 1)).exp() * total
    # continued fraction: Q = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...))
    tiny = 1e-300
    b = safe_x + 1 - safe_a
    c = PUBLIC["full_like"](x, 1 / tiny)
    d = 1 / PUBLIC["where"](b.abs() < tiny, tiny, b)
    h = d
    for i in range(1, 300):
        an = -i * (i - safe_a)
        b = b + 2
        d = an * d + b
        d = 1 / PUBLIC["where"](d.abs() < tiny, tiny, d)
        c = b + an / c
        c = PUBLIC["where"](c.abs() < tiny, tiny, c)
        h = h * d * c
    upper_q = (log_front - gammaln(safe_a)).exp() * h
    p = PUBLIC["where"](use_series, lower_p, 1 - upper_q)
    q = PUBLIC["where"](use_series, 1 - lower_p, upper_q)
    value = q if upper else p
    value = PUBLIC["where"](x == 0, 1.0 if upper else 0.0, value)
    value = PUBLIC["where"](x == math.inf, 0.0 if upper else 1.0, value)
    return PUBLIC["where"]((a <= 0) | (x < 0), math.nan, value)


def _incomplete_gamma_dtype(kernel: str, input, other) -> _dtype.dtype:
    """The promoted dtype of igamma's operands, which PyTorch takes in floating dtypes only."""
    dtype = _dtype.promote_operands((input, other))
    if dtype.is_complex or dtype.rank < _dtype.FLOATING:
        raise _no_kernel(kernel, dtype)
    return dtype


# The incomplete gamma functions' values come from the composite `_gammainc`, computed off
# the tape; where autograd records them, these ops pass the values through so that it
# records PyTorch's derivative (by `other` only: by `input` PyTorch has none).
igamma_op = defop("igamma", lambda xp: lambda a, x, value: value)
igammac_op = defop("igammac", lambda xp: lambda a, x, value: value)


def _incomplete_gamma(op, input, other, upper: bool, out: Tensor | None) -> Tensor:
    dtype = _incomplete_gamma_dtype(f"{op.name}_cpu", input, other)
    with no_grad():
        value = _gammainc(_as64(input), _as64(other), upper).to(dtype)
    tensors = [t for t in (input, other) if isinstance(t, Tensor)]
    if STATE.grad_enabled and any(t.requires_grad for t in tensors):
        value = call(op, (_as_tensor(input, dtype), _as_tensor(other, dtype), value))
    return _finish(value, out)


def _as_tensor(x, dtype) -> Tensor:
    return x if isinstance(x, Tensor) else PUBLIC["tensor"](x, dtype=dtype)


def gammainc(input, other, *, out: Tensor | None = None) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other), elementwise,
    broadcast (nan where input <= 0 or other < 0)."""
    return _incomplete_gamma(igamma_op, input, other, False, out)


def gammaincc(input, other, *, out: Tensor | None = None) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P, elementwise."""
    return _incomplete_gamma(igammac_op, input, other, True, out)


export(gammainc, "igamma", method=True)
export(gammaincc, "igammac", method=True)
__all__ += [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "gammainc",
    "gammaincc",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "spherical_bessel_j0",
]

_aliases.alias_module(globals())
