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

from . import _dtype
from ._api import PUBLIC, export
from ._dispatch import binary, call, defop, expect_tensor, unary
from ._ops import special_kernels as _k
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

OPS = {name: defop(name, _k.unary_factory(name, fn)) for name, fn in _UNARY.items()}
OPS.update({name: defop(name, _k.binary_factory(name, fn)) for name, fn in _BINARY.items()})
OPS["polygamma"] = defop("polygamma", _k.polygamma_factory)


def _finish(result: Tensor, out: Tensor | None) -> Tensor:
    return result if out is None else write_out(out, result)


def _unary_function(op_name: str, public_name: str, summary: str):
    op = OPS[op_name]

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return _finish(unary(op, expect_tensor(public_name, input), True), out)

    fn.__name__ = fn.__qualname__ = public_name
    fn.__doc__ = f"{summary}, elementwise. Integer inputs give the default float dtype."
    return fn


def _binary_function(op_name: str, public_name: str, summary: str):
    op = OPS[op_name]

    def fn(input, other, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise TypeError(f"{public_name}(): expected at least one Tensor argument")
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
    "special_erfcx", "erfcx", "The scaled complementary error function exp(x^2) erfc(x)"
)
ndtri = _unary_function(
    "special_ndtri", "ndtri", "The inverse of the standard normal distribution function"
)
log_ndtr = _unary_function(
    "special_log_ndtr", "log_ndtr", "The log of the standard normal distribution function"
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
    "special_zeta", "zeta", "The Hurwitz zeta function sum_k (k + other)^-input"
)
psi = digamma


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The `n`-th derivative of digamma, elementwise (``polygamma(0, x)`` is digamma).

    Example: ``tocha.polygamma(1, tocha.tensor([1.0]))`` is pi^2 / 6.
    """
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _floating(expect_tensor("polygamma", input))
    return _finish(call(OPS["polygamma"], (x,), int(n)), out)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``polygamma(n, self)``."""
    return polygamma(n, self)


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The log of the multivariate gamma function of dimension `p`:
    ``p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(input - j / 2)``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _floating(expect_tensor("mvlgamma", input))
    total = gammaln(x)
    for j in range(1, p):
        total = total + gammaln(x - j / 2)
    return _finish(total + p * (p - 1) / 4 * math.log(math.pi), out)


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """log(x / (1 - x)), with `input` first clamped to [eps, 1 - eps] when `eps` is given."""
    x = _floating(expect_tensor("logit", input))
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return _finish((x / (1 - x)).log(), out)


def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The standard normal distribution function, ``erfc(-x / sqrt(2)) / 2``."""
    x = _floating(expect_tensor("ndtr", input))
    return _finish((x * -math.sqrt(0.5)).erfc() * 0.5, out)


def _softmax_input(input: Tensor, dtype, name: str) -> Tensor:
    x = expect_tensor(name, input)
    if dtype is not None:
        return x.to(dtype)
    if x.dtype.rank < _dtype.FLOATING:
        raise NotImplementedError(
            f"\"{name}_lastdim_kernel_impl\" not implemented for '{_dtype.TITLE[x.dtype]}'"
        )
    return x


def softmax(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along `dim` (computed in `dtype` when given)."""
    x = _softmax_input(input, dtype, "softmax")
    return (x - x.logsumexp(dim, keepdim=True)).exp()


def log_softmax(input: Tensor, dim: int, *, dtype: _dtype.dtype | None = None) -> Tensor:
    """``x - logsumexp(x)`` along `dim` (computed in `dtype` when given)."""
    x = _softmax_input(input, dtype, "log_softmax")
    return x - x.logsumexp(dim, keepdim=True)


# torch.special's names for functions tocha has at the top level.
expit = PUBLIC["sigmoid"]
erf, erfc, erfinv = PUBLIC["erf"], PUBLIC["erfc"], PUBLIC["erfinv"]
exp2, expm1, log1p = PUBLIC["exp2"], PUBLIC["expm1"], PUBLIC["log1p"]
round = PUBLIC["round"]  # noqa: A001
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
