"""Kernels for special functions NumPy lacks: erf, erfc, erfinv, written against ``xp``.

erf and erfc use W. J. Cody's rational Chebyshev approximations (Math. Comp. 23, 1969; the
CALERF routine of SPECFUN), accurate to a few ulps in float64 over the whole real line,
including erfc's tail down to the subnormals. erfinv starts from M. Giles' approximation
("Approximating the erfinv function", GPU Computing Gems, 2011) and refines it with two
Halley steps on erf (on log erfc near +-1, where ``1 - |y|`` holds the information). Lower
precision inputs are computed in float64 and rounded once to their own dtype, except erf of
float32, float16 and bfloat16, which is computed in float32 (`erf32`, one rational) to within
7 float32 ulp of the true erf (then rounded to the half dtypes).

Each factory ``f(xp)`` returns a kernel ``kernel(x, out=None)``.
"""

from __future__ import annotations

import math

from .._memory_format import elementwise_layout

# erf(x) = x * A(x^2) / B(x^2) for |x| <= 0.46875 (highest degree first).
_A = (
    1.85777706184603153e-1,
    3.16112374387056560e00,
    1.13864154151050156e02,
    3.77485237685302021e02,
    3.20937758913846947e03,
)
_B = (
    1.0,
    2.36012909523441209e01,
    2.44024637934444173e02,
    1.28261652607737228e03,
    2.84423683343917062e03,
)
# erfc(x) = exp(-x^2) * C(x) / D(x) for 0.46875 < x <= 4.
_C = (
    2.15311535474403846e-8,
    5.64188496988670089e-1,
    8.88314979438837594e00,
    6.61191906371416295e01,
    2.98635138197400131e02,
    8.81952221241769090e02,
    1.71204761263407058e03,
    2.05107837782607147e03,
    1.23033935479799725e03,
)
_D = (
    1.0,
    1.57449261107098347e01,
    1.17693950891312499e02,
    5.37181101862009858e02,
    1.62138957456669019e03,
    3.29079923573345963e03,
    4.36261909014324716e03,
    3.43936767414372164e03,
    1.23033935480374942e03,
)
# erfc(x) = exp(-x^2) / x * (1/sqrt(pi) - z P(z) / Q(z)), z = 1/x^2, for x > 4.
_P = (
    1.63153871373020978e-2,
    3.05326634961232344e-1,
    3.60344899949804439e-1,
    1.25781726111229246e-1,
    1.60837851487422766e-2,
    6.58749161529837803e-4,
)
_Q = (
    1.0,
    2.56852019228982242e00,
    1.87295284992346047e00,
    5.27905102951428412e-1,
    6.05183413124413191e-2,
    2.33520497626869185e-3,
)
# Giles' erfinv: x = y * p(w), w = -log((1 - y)(1 + y)); central (w < 5) and tail pieces.
_GILES_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_GILES_TAIL = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)

# erf32: erf(x) = t P(t^2) / Q(t^2), t = x clamped to [-4, 4] (erfc(4) is below half a
# float32 ulp of 1). A (7, 4) rational of least maximum relative error over [0, 4] (bisection
# on linear programs, the problem linearised in P and Q), its float32 coefficients then moved
# by a few ulp each where that lowered the largest error of the float32 evaluation (highest
# degree first; P's constant is 2/sqrt(pi) rounded).
_ERF32_P = (
    -1.0510857739731705e-09,
    9.744406526124294e-08,
    -4.131233708903892e-06,
    0.00012880493886768818,
    0.0007808460504747927,
    0.04181740805506706,
    0.11959028989076614,
    1.128379225730896,
)
_ERF32_Q = (
    0.00039357668720185757,
    0.008406459353864193,
    0.0834956094622612,
    0.43931835889816284,
    1.0,
)

# erf32's rational, published (tocha.library) for kernel providers that evaluate it
ERF32_RATIONAL = (_ERF32_P, _ERF32_Q)

_ERF32_BLOCK = 32768

_THRESHOLD = 0.46875
_SQRTPI = math.sqrt(math.pi)
_RSQRTPI = 1 / _SQRTPI
_TWO_RSQRTPI = 2 / math.sqrt(math.pi)
# erfc(x) is 0 in float64 beyond x = 27.3; clamping keeps inf out of the exp arguments.
_ERFC_ZERO = 40.0


def _horner(z, coeffs):
    """The polynomial with `coeffs` (highest degree first) at array `z`, in one new array."""
    acc = z * coeffs[0]
    acc += coeffs[1]
    for c in coeffs[2:]:
        acc *= z
        acc += c
    return acc


def _erf_small(x):
    """erf of float64 values with |x| <= 0.46875."""
    z = x * x
    return x * _horner(z, _A) / _horner(z, _B)


def _erfc_large(xp, y):
    """erfc of float64 values y > 0.46875 (or nan)."""
    scaled = xp.empty_like(y)
    mid = y <= 4.0
    ym = y[mid]
    scaled[mid] = _horner(ym, _C) / _horner(ym, _D)
    tail = ~mid
    yt = y[tail]
    z = 1.0 / (yt * yt)
    scaled[tail] = (_RSQRTPI - z * _horner(z, _P) / _horner(z, _Q)) / yt
    # exp(-y^2) as exp(-k^2) exp(-(y - k)(y + k)), k = y rounded down to 1/16: k^2 is exact.
    y = xp.minimum(y, _ERFC_ZERO)
    k = xp.trunc(y * 16.0) / 16.0
    return xp.exp(-k * k) * (xp.exp(-(y - k) * (y + k)) * scaled)


def erf64(xp, x):
    """erf of a float64 array."""
    result = xp.empty_like(x)
    small = xp.abs(x) <= _THRESHOLD
    result[small] = _erf_small(x[small])
    large = ~small
    xl = x[large]
    result[large] = xp.copysign(1.0 - _erfc_large(xp, xp.abs(xl)), xl)
    return result


def erf32(xp, x):
    """erf of a float32 array, in float32 (`_ERF32_P`, `_ERF32_Q`): within 7 float32 ulp of the
    true erf (1.2 on average), with no float64 temporaries and no exp. The rational is written
    in place into the result with two scratch arrays; on the CPU (NumPy) its two dozen passes
    run over blocks of `_ERF32_BLOCK` elements, whose scratch stays in cache; other namespaces
    (a GPU's) take the array in one block."""
    flat = x.reshape(-1)
    result = xp.empty_like(flat)
    step = _ERF32_BLOCK if xp.__name__ == "numpy" else max(flat.size, 1)
    n = min(flat.size, step)
    scratch = [xp.empty(n, xp.float32) for _ in range(2)]
    for start in range(0, flat.size, step):
        block = flat[start : start + step]
        size = block.size
        _erf32_block(xp, block, result[start : start + size], *(a[:size] for a in scratch))
    return result.reshape(x.shape)


def _erf32_block(xp, x, out, t, z):
    xp.clip(x, -4.0, 4.0, out=t)
    xp.multiply(t, t, out=z)
    _horner_into(xp, z, _ERF32_P, out)
    out *= t
    xp.divide(out, _horner_into(xp, z, _ERF32_Q, t), out=out)


def _horner_into(xp, z, coeffs, out):
    """The polynomial with `coeffs` (highest degree first) at array `z`, written into `out`."""
    xp.multiply(z, coeffs[0], out=out)
    out += coeffs[1]
    for c in coeffs[2:]:
        out *= z
        out += c
    return out


def erfc64(xp, x):
    """erfc of a float64 array."""
    result = xp.empty_like(x)
    small = xp.abs(x) <= _THRESHOLD
    result[small] = 1.0 - _erf_small(x[small])
    large = ~small
    xl = x[large]
    tail = _erfc_large(xp, xp.abs(xl))
    result[large] = xp.where(xl < 0, 2.0 - tail, tail)
    return result


def erfinv64(xp, y):
    """erfinv of a float64 array: +-inf at +-1, nan beyond."""
    a = xp.abs(y)
    inside = a < 1.0
    a = xp.where(inside, a, 0.0)
    q = 1.0 - a  # exact for a >= 0.5, where the residual is taken on erfc(x) = q
    x = a * _erfinv_start(xp, a, q)
    near_one = a >= 0.5
    c = _TWO_RSQRTPI
    for _ in range(2):
        # Halley's step on erf(x) = a below 0.5, on log(erfc(x) / q) = 0 above.
        slope = c * xp.exp(-x * x)
        tail = erfc64(xp, x)
        h = slope / tail
        g = xp.log1p((tail - q) / q)
        step_tail = (g / h) / (1.0 - g * (2.0 * x - h) / (2.0 * h))
        u = (erf64(xp, x) - a) / slope
        x = x + xp.where(near_one, step_tail, -u / (1.0 + x * u))
    x = xp.where(inside, x, xp.where(xp.abs(y) == 1.0, xp.inf, xp.nan))
    return xp.copysign(x, y)


def _erfinv_start(xp, a, q):
    """erfinv(a) / a to about 1e-4 (Giles' pieces; an asymptotic series very near 1)."""
    w = -xp.log(q * (1.0 + a))
    central = _horner(w - 2.5, _GILES_CENTRAL)
    tail = _horner(xp.sqrt(xp.maximum(w, 5.0)) - 3.0, _GILES_TAIL)
    # erfc(x) ~ exp(-x^2) / (x sqrt(pi)) (1 - 1 / (2 x^2)), solved for x by fixed point.
    far = w >= 16.0
    big_l = -xp.log(xp.where(far, q, 1e-8))
    x = xp.sqrt(big_l)
    for _ in range(3):
        x = xp.sqrt(big_l - xp.log(x * _SQRTPI) + xp.log1p(-0.5 / (x * x)))
    return xp.where(w < 5.0, central, xp.where(far, x / xp.where(far, a, 1.0), tail))


def _single_or_half(dtype) -> bool:
    """float32, float16 or bfloat16 (NumPy kind ``V``, from ml_dtypes)."""
    return dtype.kind in "fV" and dtype.itemsize <= 4


def _kernel_factory(name, fn64, fn32=None):
    def factory(xp):
        def kernel(x, out=None):
            if x.dtype.kind == "c":
                raise NotImplementedError(f'"{name}" not implemented for complex tensors')
            if fn32 is not None and _single_or_half(x.dtype):
                result = fn32(xp, x.astype(xp.float32, copy=False))
            else:
                result = fn64(xp, x.astype(xp.float64, copy=False))
            if out is None:
                if not x.flags.c_contiguous:  # laid out as x, as an elementwise op's result
                    result = elementwise_layout(result, (x,), xp)
                return result.astype(x.dtype, copy=False)
            out[...] = result
            return out

        return kernel

    factory.__name__ = name
    factory.__doc__ = f"Kernel factory of elementwise ``{name}``: ``f(xp)(x, out=None)``."
    return factory


erf = _kernel_factory("erf", erf64, erf32)
erfc = _kernel_factory("erfc", erfc64)
erfinv = _kernel_factory("erfinv", erfinv64)
