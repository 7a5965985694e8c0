"""Kernels for the special functions NumPy lacks, written against ``xp``, in float64.

- lgamma: Stirling's series for x >= 15, reached by the recurrence Gamma(x + 1) = x Gamma(x),
  and the reflection formula below 0.5.
- digamma: its asymptotic series plus the recurrence; reflection below 0.5.
- zeta (Hurwitz): Euler-Maclaurin summation (Cephes' scheme: direct terms until q + k >= 9,
  then 12 Bernoulli corrections). polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x).
- i0, i1 (and the scaled i0e, i1e): their power series up to |x| = 20, Hankel's asymptotic
  series beyond, both of all-positive or rapidly decreasing terms.
- erfcx: Cody's rational approximations of exp(x^2) erfc(x) (shared with erf and erfc).
- ndtri: a start from erfinv (or the asymptotic tail), polished by Newton steps on log ndtr.

Each ``*64(xp, x)`` takes and returns float64 arrays; `unary_factory` and `binary_factory`
make kernels that compute in float64 and round once to the input's dtype.
"""

from __future__ import annotations

import contextlib
import math

from ._special_math import (
    _C,
    _D,
    _P,
    _Q,
    _RSQRTPI,
    _THRESHOLD,
    _erf_small,
    _horner,
    erfc64,
    erfinv64,
)

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_SQRT2 = math.sqrt(2.0)
# B_2k / (2k (2k - 1)) for k = 1..8: the coefficients of Stirling's series of lgamma.
_STIRLING = (
    1 / 12,
    -1 / 360,
    1 / 1260,
    -1 / 1680,
    1 / 1188,
    -691 / 360360,
    1 / 156,
    -3617 / 122400,
)
# B_2k / (2k) for k = 1..8: the asymptotic series of digamma.
_DIGAMMA = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12, -3617 / 8160)
# (2k)! / B_2k for k = 1..12: the Euler-Maclaurin corrections of zeta (Cephes' A[]).
_ZETA_A = (
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.8924375803183791606e9,
    7.47242496e10,
    -2.950130727918164224e12,
    1.1646782814350067249e14,
    -4.5979787224074726105e15,
    1.8152105401943546773e17,
    -7.1661652561756670113e18,
)
_SHIFT = 15.0
_TAYLOR_TERMS = 32
_EULER = 0.57721566490153286061


def _sinpi(xp, x):
    """sin(pi x), exact (0) at the integers."""
    r = x - 2.0 * xp.round(x / 2.0)  # exact, in [-1, 1]
    return xp.sin(math.pi * r) * (xp.abs(r) != 1.0)


def _reduce_to_two(xp, y):
    """(z, up, down) for y >= 0.5: z = y shifted by whole steps into [1.5, 2.5); `up` marks
    y < 1.5 (one step up); `down` holds the points y - 1, y - 2, ... passed on the way down
    (as a list of arrays, 1 where an element took fewer steps)."""
    up = y < 1.5
    z = xp.where(up, y + 1.0, xp.where(y < _SHIFT, y, 2.0))
    down = []
    for _ in range(int(_SHIFT) - 2):
        high = z >= 2.5
        z = xp.where(high, z - 1.0, z)
        down.append(xp.where(high, z, 1.0))
    return z, up, down


def _stirling_lgamma(xp, y):
    z = 1.0 / (y * y)
    return (y - 0.5) * xp.log(y) - y + _LOG_SQRT_2PI + _horner(z, _STIRLING[::-1]) / y


def lgamma64(xp, x):
    """log |Gamma(x)|; +inf at the poles (0, -1, -2, ...)."""
    reflect = x < 0.5
    y = xp.where(reflect, 1.0 - x, x)
    y = xp.where(xp.isfinite(y), y, 2.0)
    z, up, down = _reduce_to_two(xp, y)
    product = xp.ones_like(y)
    for factor in down:
        product = product * factor
    near_two = (z - 2.0) * _horner(z - 2.0, _LGAMMA_NEAR_TWO)
    near_two = near_two + xp.log(product) - xp.where(up, xp.log1p(y - 1.0), 0.0)
    result = xp.where(y < _SHIFT, near_two, _stirling_lgamma(xp, xp.maximum(y, _SHIFT)))
    with _quiet(xp):
        reflected = math.log(math.pi) - xp.log(xp.abs(_sinpi(xp, x))) - result
    result = xp.where(reflect, reflected, result)
    return xp.where(xp.isinf(x), xp.inf, xp.where(xp.isnan(x), x, result))


def digamma64(xp, x):
    """The logarithmic derivative of Gamma: -inf at 0, nan at the negative integers."""
    reflect = x < 0.5
    y = xp.where(reflect, 1.0 - x, x)
    y = xp.where(xp.isfinite(y), y, 2.0)
    z, up, down = _reduce_to_two(xp, y)
    total = xp.zeros_like(y)
    for point in down:
        total = total + xp.where(point == 1.0, 0.0, 1.0 / point)
    near_two = _horner(z - 2.0, _DIGAMMA_NEAR_TWO) + total - xp.where(up, 1.0 / y, 0.0)
    w = xp.maximum(y, _SHIFT)
    v = 1.0 / (w * w)
    far = xp.log(w) - 0.5 / w - v * _horner(v, _DIGAMMA[::-1])
    result = xp.where(y < _SHIFT, near_two, far)
    with _quiet(xp):
        pole = (x == xp.floor(x)) & reflect
        cot = xp.cos(math.pi * x) / _sinpi(xp, x)
        at_pole = xp.where(x == 0, xp.where(xp.signbit(x), xp.inf, -xp.inf), xp.nan)
        reflected = xp.where(pole, at_pole, result - math.pi * cot)
    result = xp.where(reflect, reflected, result)
    return xp.where(x == xp.inf, xp.inf, xp.where(xp.isinf(x) | xp.isnan(x), xp.nan, result))


def zeta64(xp, s, q):
    """The Hurwitz zeta function sum_k (k + q)^-s (Cephes' domain, checked in this order: inf
    at s = 1, nan for s < 1; then inf at q a non-positive integer, nan for q < 0 with s not
    an integer)."""
    s, q = xp.broadcast_arrays(s, q)
    with _quiet(xp):
        total = q**-s
        a = q.copy()
        active = xp.ones(q.shape, bool)
        count = 0
        while True:
            active &= ((a < 9.0) & xp.isfinite(a)) | (count < 9)  # q = -inf never reaches 9
            if not active.any():
                break
            a = xp.where(active, a + 1.0, a)
            total = xp.where(active, total + a**-s, total)
            count += 1
        w = a
        total = total + w ** (1.0 - s) / (s - 1.0) - 0.5 * w**-s
        factor = xp.ones_like(s)
        term_power = w**-s
        for k, a_k in enumerate(_ZETA_A):
            factor = factor * (s + 2 * k)
            correction = factor * term_power / w / a_k
            total = total + correction
            factor = factor * (s + 2 * k + 1)
            term_power = term_power / (w * w)
        negative = q <= 0.0
        total = xp.where(negative & (q == xp.floor(q)), xp.inf, total)
        total = xp.where(negative & (q != xp.floor(q)) & (s != xp.floor(s)), xp.nan, total)
        total = xp.where(s < 1.0, xp.nan, total)  # s's domain first, then q's poles
        return xp.where(s == 1.0, xp.inf, total)


def _near_two_tables():
    """Taylor coefficients at 2 (highest degree first): lgamma(2 + z) = z * sum c_k z^k,
    c_0 = 1 - gamma, c_k = (-1)^(k+1) (zeta(k + 1) - 1) / (k + 1); and digamma(2 + z) =
    1 - gamma + sum_k (-1)^(k+1) (zeta(k + 1) - 1) z^k. zeta(k) - 1 is zeta(k, 2)."""
    import numpy as np

    k = np.arange(2.0, 2.0 + _TAYLOR_TERMS)
    tail = zeta64(np, k, np.full_like(k, 2.0))  # zeta(k) - 1 for k = 2, 3, ...
    signs = (-1.0) ** k
    lgamma = [1.0 - _EULER] + list(signs * tail / k)
    digamma = [1.0 - _EULER] + list(signs * tail)
    return tuple(lgamma[::-1]), tuple(digamma[::-1])


def polygamma64(xp, n: int, x):
    """The n-th derivative of digamma."""
    if n == 0:
        return digamma64(xp, x)
    sign = 1.0 if n % 2 else -1.0
    if n > 170:  # n! overflows float64 (computing it hung for a huge n): an infinity, as PyTorch
        return xp.where(xp.isnan(x), xp.nan, sign * xp.inf)
    return sign * math.factorial(n) * zeta64(xp, xp.asarray(float(n + 1)), x)


def _bessel(xp, x, nu: int, scaled: bool):
    """I_nu(|x|) (nu 0 or 1), times exp(-|x|) when `scaled`."""
    ax = xp.abs(x)
    small = ax <= 20.0
    xs = xp.where(small, ax, 0.0)
    z = xs * xs / 4.0
    term = xp.ones_like(xs) if nu == 0 else xs / 2.0
    total = term
    for k in range(1, 50):
        term = term * z / (k * (k + nu))
        total = total + term
    series = total * xp.exp(-xs) if scaled else total
    xl = xp.where(small, 20.0, ax)
    mu = 4.0 * nu * nu
    term = xp.ones_like(xl)
    total = term
    for k in range(1, 30):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * xl)
        total = total + term
    tail = total / xp.sqrt(2 * math.pi * xl)
    with _quiet(xp):
        tail = tail if scaled else tail * xp.exp(xl)
    return xp.where(small, series, tail)


def i0_64(xp, x):
    return _bessel(xp, x, 0, False)


def i0e64(xp, x):
    return _bessel(xp, x, 0, True)


def i1_64(xp, x):
    return xp.copysign(_bessel(xp, x, 1, False), x)


def i1e64(xp, x):
    return xp.copysign(_bessel(xp, x, 1, True), x)


def erfcx64(xp, x):
    """exp(x^2) erfc(x), without overflow for large positive x."""
    ax = xp.abs(x)
    small = ax <= _THRESHOLD
    xs = xp.where(small, x, 0.0)
    near = xp.exp(xs * xs) * (1.0 - _erf_small(xs))
    y = xp.where(small, 1.0, ax)
    mid = y <= 4.0
    ym = xp.where(mid, y, 1.0)
    yt = xp.where(mid, 5.0, y)
    zt = 1.0 / (yt * yt)
    scaled = xp.where(
        mid,
        _horner(ym, _C) / _horner(ym, _D),
        (_RSQRTPI - zt * _horner(zt, _P) / _horner(zt, _Q)) / yt,
    )
    with _quiet(xp):
        negative = 2.0 * xp.exp(y * y) - scaled
    return xp.where(small, near, xp.where(x < 0, negative, scaled))


def ndtr64(xp, x):
    """The standard normal distribution function."""
    return 0.5 * erfc64(xp, -x / _SQRT2)


def log_ndtr64(xp, x):
    """log of the standard normal distribution function, accurate in both tails."""
    with _quiet(xp):
        left = xp.log(0.5 * erfcx64(xp, -x / _SQRT2)) - 0.5 * x * x
        right = xp.log1p(-0.5 * erfc64(xp, x / _SQRT2))
    return xp.where(x < -1.0, left, right)


def ndtri64(xp, p):
    """The inverse of ndtr: -inf at 0, +inf at 1, nan outside [0, 1]."""
    upper = p > 0.5
    q = xp.where(upper, 1.0 - p, p)  # exact for p > 0.5
    inside = (q > 0.0) & (q <= 0.5)
    q = xp.where(inside, q, 0.25)
    with _quiet(xp):
        log_q = xp.log(q)
        t = -2.0 * log_q
        tail = -xp.sqrt(t - xp.log(t) - math.log(2 * math.pi))
        x = xp.where(q > 1e-8, -_SQRT2 * erfinv64(xp, 1.0 - 2.0 * q), tail)
        for _ in range(4):
            # Newton's step on log ndtr(x) = log q; phi / ndtr = sqrt(2/pi) / erfcx(-x/sqrt2)
            ratio = math.sqrt(2 / math.pi) / erfcx64(xp, -x / _SQRT2)
            x = x - (log_ndtr64(xp, x) - log_q) / ratio
    x = xp.where(upper, -x, x)
    edge = xp.where(p == 0.0, -xp.inf, xp.where(p == 1.0, xp.inf, xp.nan))
    return xp.where(inside, x, edge)


def sinc64(xp, x):
    """sin(pi x) / (pi x), 1 at 0."""
    with _quiet(xp):
        return xp.where(x == 0, 1.0, _sinpi(xp, x) / (math.pi * x))


def sinc_complex(xp, z):
    """sin(pi z) / (pi z) of complex z, 1 at 0."""
    with _quiet(xp):
        return xp.where(z == 0, 1.0, xp.sin(math.pi * z) / (math.pi * z))


def entr64(xp, x):
    """-x log x for x > 0, 0 at 0, -inf below."""
    with _quiet(xp):
        value = -x * xp.log(xp.where(x > 0, x, 1.0))
    return xp.where(x > 0, value, xp.where(x == 0, 0.0, xp.where(x < 0, -xp.inf, x)))


def xlogy64(xp, x, y):
    """x log y, 0 where x is 0 (unless y is nan)."""
    with _quiet(xp):
        return xp.where((x == 0) & ~xp.isnan(y), 0.0, x * xp.log(y))


def xlog1py64(xp, x, y):
    """x log1p(y), 0 where x is 0 (unless y is nan)."""
    with _quiet(xp):
        return xp.where((x == 0) & ~xp.isnan(y), 0.0, x * xp.log1p(y))


def _quiet(xp):
    """A context silencing NumPy's floating point warnings (the kernels mask the values they
    concern); CuPy warns of nothing."""
    errstate = getattr(xp, "errstate", None)
    return errstate(all="ignore") if errstate is not None else contextlib.nullcontext()


def _float64_kernel(name, fn64, arity, fn_complex=None):
    def factory(xp):
        def kernel(*operands):
            # a binary op's operands: arrays, or a Python number beside an array
            dt = next(a.dtype for a in operands if hasattr(a, "dtype"))
            if dt.kind == "c" and fn_complex is not None:
                result = fn_complex(xp, *(xp.asarray(a, dtype=xp.complex128) for a in operands))
                return xp.asarray(result).astype(dt, copy=False)
            if dt.kind == "c":
                title = "ComplexFloat" if dt.itemsize == 8 else "ComplexDouble"
                raise NotImplementedError(f"\"{name}\" not implemented for '{title}'")
            result = fn64(xp, *(xp.asarray(a, dtype=xp.float64) for a in operands))
            return xp.asarray(result).astype(dt, copy=False)

        return kernel

    factory.__name__ = name
    factory.__doc__ = f"Kernel factory of elementwise ``{name}``, {arity} operand(s)."
    return factory


def unary_factory(name, fn64, fn_complex=None):
    """Factory of a kernel ``k(x)`` computing `fn64` in float64, rounded to x's dtype (and
    `fn_complex`, when given, in complex128 for complex x; else complex x is refused)."""
    return _float64_kernel(name, fn64, 1, fn_complex)


def binary_factory(name, fn64):
    """Factory of a kernel ``k(x, y)`` (one dtype) computing `fn64` in float64."""
    return _float64_kernel(name, fn64, 2)


def polygamma_factory(xp):
    """Kernel factory of ``polygamma``: ``k(x, n)``."""

    def kernel(x, n):
        return polygamma64(xp, n, x.astype(xp.float64, copy=False)).astype(x.dtype, copy=False)

    return kernel


_LGAMMA_NEAR_TWO, _DIGAMMA_NEAR_TWO = _near_two_tables()
