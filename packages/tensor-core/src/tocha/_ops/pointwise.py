"""Elementwise ops: unary math, binary math, comparisons, logical and bitwise ops.

Each family is one table ``name: kernel factory`` written once against an array namespace
``xp``; the loops at the bottom of each table declare the ops, their public functions,
Tensor methods, in-place forms and operators. Every elementwise kernel accepts ``out=``.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._api import PUBLIC, export
from .._dispatch import (
    _scalar_like,
    binary,
    broadcast_error,
    call,
    defop,
    device_mismatch,
    not_a_tensor,
    unary,
)
from .._opmath import HALF_CHARS
from .._tensor import Tensor
from ..overrides import hand_over
from . import _special_math as special
from ._argcheck import check_scalar_converts, check_scalar_fits, index_arg
from ._out import CPP_NAMES, assign, check_castable, check_shape, inplace, write_out


def uf(name):
    """Factory of a kernel that is the namespace's own ufunc `name`."""
    return lambda xp: getattr(xp, name)


def _logical(name):
    """Factory of the logical ufunc `name`, complex operands counting as true where nonzero
    (CuPy's logical ufuncs take no complex arrays)."""

    def factory(xp):
        ufunc = getattr(xp, name)

        def kernel(*arrays, out=None):
            arrays = tuple(
                a != 0 if getattr(a, "dtype", None) is not None and a.dtype.kind == "c" else a
                for a in arrays
            )
            return ufunc(*arrays, out=out)

        return kernel

    return factory


def _sigmoid(xp, x):
    """``1 / (1 + exp(-x))``; for complex x, 0 where ``exp(-x)`` overflows (its limit, which
    NumPy's complex division gives and CuPy's does not)."""
    e = xp.exp(-x)
    result = 1 / (1 + e)
    if x.dtype.kind != "c":
        return result
    return xp.where(xp.isinf(e), xp.zeros((), result.dtype), result)


def _composite(build):
    """Factory of a kernel ``k(*arrays, out=None)`` from ``build(xp, *arrays) -> array``.
    float16 and bfloat16 operands are computed in float32 and rounded once, as PyTorch does."""

    def factory(xp):
        def kernel(*arrays, out=None):
            d = _dtype_of(arrays)
            if d is not None and d.itemsize == 2 and d.kind in "fV":
                wide = [a.astype(xp.float32) if hasattr(a, "dtype") else a for a in arrays]
                result = build(xp, *wide).astype(d)
            else:
                result = build(xp, *arrays)
            if out is None:
                return result
            out[...] = result
            return out

        return kernel

    return factory


def _int_identity(factory):
    """A rounding kernel that returns integer inputs unchanged (as PyTorch's floor of ints)."""

    def wrapped(xp):
        float_kernel = factory(xp)

        def kernel(x, out=None):
            if x.dtype.kind in "biu":
                if out is None:
                    return x.copy()
                out[...] = x
                return out
            return float_kernel(x, out=out)

        return kernel

    return wrapped


def _title(np_dtype) -> str:
    """PyTorch's name of a NumPy dtype in its error messages ('Float', 'ComplexDouble')."""
    return _dtype.TITLE[_dtype.from_np(np_dtype)]


def _dtype_of(arrays):
    """The dtype of the first array among a kernel's operands (others may be Python scalars)."""
    for x in arrays:
        d = getattr(x, "dtype", None)
        if d is not None:
            return d
    return None


def refusing(factory, *rules):
    """A kernel that raises PyTorch's error for operand dtypes PyTorch has no kernel for.

    Each rule is ``(kinds, message)`` or ``(kinds, message, exception type)``: `kinds` are
    NumPy dtype kinds (``b`` bool, ``iu`` integers, ``f`` and ``V`` (bfloat16) floats, ``c``
    complex) of the first array operand; ``{}`` in `message` becomes PyTorch's dtype name.
    """

    def wrapped(xp):
        kernel = factory(xp)

        def checked(*args, out=None):
            d = _dtype_of(args)
            for kinds, message, *exc in rules:
                if d is not None and d.kind in kinds:
                    raise (exc[0] if exc else NotImplementedError)(message.format(_title(d)))
            return kernel(*args, out=out)

        return checked

    return wrapped


def _reciprocal(xp):
    """``1 / x``: real floats through the divide ufunc (bit for bit the same; NumPy's
    reciprocal has no SIMD loop for them and takes twice as long), complex through
    reciprocal."""

    def kernel(x, out=None):
        if x.dtype.kind == "c":
            return xp.reciprocal(x, out=out)
        return xp.divide(1, x, out=out)

    return kernel


def _relu(xp):
    """``max(x, 0)`` against a cached zero of x's dtype (NumPy takes an array operand far
    faster than a Python 0); max is exact, so half precision needs no widening."""
    zeros = {}

    def kernel(x, out=None):
        zero = zeros.get(x.dtype)
        if zero is None:
            if x.dtype.kind == "b":
                raise RuntimeError("Boolean inputs not supported for relu")
            if x.dtype.kind == "c":
                raise NotImplementedError("clamp is not supported for complex types")
            zero = zeros[x.dtype] = xp.zeros((), x.dtype)
        return xp.maximum(x, zero, out=out)

    return kernel


def _no(name: str) -> str:
    """PyTorch's "not implemented for" message of the kernel `name`."""
    return f"\"{name}\" not implemented for '{{}}'"


BOOL, INTS, FLOATS, COMPLEX = "b", "iu", "fV", "c"
ROUNDING = ((BOOL, _no("{name}_vml_cpu")), (COMPLEX, "{name} is not supported for complex inputs"))


def _rounding(name):
    rules = [(kinds, message.replace("{name}", name)) for kinds, message in ROUNDING]
    return refusing(_int_identity(uf(name)), *rules)


def _sign(xp, x):
    """-1, 0 or 1 as PyTorch's ``(0 < x) - (x < 0)``: 0 for NaN (NumPy's sign gives NaN)."""
    if x.dtype.kind == "b":
        return x.copy()
    s = xp.sign(x)
    if s.dtype.kind != "f":
        return s
    return xp.where(xp.isnan(s), xp.zeros((), s.dtype), s)


def _complex_sgn(xp, x):
    """``z / |z|``, 0 where |z| is 0; NaN parts where a part is NaN (or infinite)."""
    return xp.where(x == 0, 0, x / xp.where(x == 0, 1, xp.abs(x))).astype(x.dtype)


# -- unary ----------------------------------------------------------------------------------
# name: (kernel factory, integer inputs first become the default float dtype)
UNARY = {
    "abs": (refusing(uf("absolute"), (BOOL, _no("abs_cpu"))), False),
    "neg": (uf("negative"), False),
    "exp": (uf("exp"), True),
    "exp2": (uf("exp2"), True),
    "expm1": (uf("expm1"), True),
    "log": (uf("log"), True),
    "log2": (uf("log2"), True),
    "log10": (uf("log10"), True),
    "log1p": (uf("log1p"), True),
    "sqrt": (uf("sqrt"), True),
    "rsqrt": (_composite(lambda xp, x: 1 / xp.sqrt(x)), True),
    "square": (
        _composite(lambda xp, x: xp.square(x.astype(xp.int64) if x.dtype.kind == "b" else x)),
        False,
    ),
    "sin": (uf("sin"), True),
    "cos": (uf("cos"), True),
    "tan": (uf("tan"), True),
    "asin": (uf("arcsin"), True),
    "acos": (uf("arccos"), True),
    "atan": (uf("arctan"), True),
    "sinh": (uf("sinh"), True),
    "cosh": (uf("cosh"), True),
    "tanh": (uf("tanh"), True),
    "asinh": (uf("arcsinh"), True),
    "acosh": (uf("arccosh"), True),
    "atanh": (uf("arctanh"), True),
    "sigmoid": (_composite(lambda xp, x: _sigmoid(xp, x)), True),
    "relu": (_relu, False),
    "erf": (refusing(special.erf, (COMPLEX, _no("erf_vml_cpu"))), True),
    "erfc": (refusing(special.erfc, (COMPLEX, _no("erfc_vml_cpu"))), True),
    "erfinv": (refusing(special.erfinv, (COMPLEX, _no("erfinv_vml_cpu"))), True),
    "floor": (_rounding("floor"), False),
    "ceil": (_rounding("ceil"), False),
    "trunc": (_rounding("trunc"), False),
    "frac": (
        refusing(
            _composite(lambda xp, x: x - xp.trunc(x)), (BOOL + INTS + COMPLEX, _no("frac_cpu"))
        ),
        False,
    ),
    "sign": (
        refusing(
            _composite(_sign),
            (
                COMPLEX,
                "Unlike NumPy, torch.sign is not intended to support complex numbers. "
                "Please use torch.sgn instead.",
            ),
        ),
        False,
    ),
    "sgn": (
        _composite(lambda xp, x: _complex_sgn(xp, x) if x.dtype.kind == "c" else _sign(xp, x)),
        False,
    ),
    "reciprocal": (_reciprocal, True),
    "bitwise_not": (refusing(uf("invert"), (FLOATS + COMPLEX, _no("bitwise_not_cpu"))), False),
    "logical_not": (_logical("logical_not"), False),
    "isnan": (uf("isnan"), False),
    "isinf": (uf("isinf"), False),
    "isfinite": (uf("isfinite"), False),
    "isposinf": (
        refusing(
            uf("isposinf"), (COMPLEX, "isposinf does not support complex inputs.", RuntimeError)
        ),
        False,
    ),
    "isneginf": (
        refusing(
            uf("isneginf"), (COMPLEX, "isneginf does not support complex inputs.", RuntimeError)
        ),
        False,
    ),
    "signbit": (
        refusing(uf("signbit"), (COMPLEX, "signbit is not implemented for complex tensors.")),
        False,
    ),
}
NOT_DIFFERENTIABLE = {
    "bitwise_not",
    "logical_not",
    "isnan",
    "isinf",
    "isfinite",
    "isposinf",
    "isneginf",
    "signbit",
}
# Ops whose result always has the input's dtype, so they have an in-place form.
NO_INPLACE = NOT_DIFFERENTIABLE - {"bitwise_not", "logical_not"}
ALIASES = {
    "absolute": "abs",
    "negative": "neg",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "fix": "trunc",
}


# How each unary function treats ``out=``: the result's dtype exactly, a bool tensor, none.
EXACT_OUT = {"abs", "neg", "floor", "ceil", "trunc", "frac", "sign", "sgn", "bitwise_not"}
BOOL_OUT = {"isposinf", "isneginf", "signbit"}
NO_OUT = {"isnan", "isinf", "isfinite", "relu"}


def _unary_function(op, to_float):
    exact = op.name in EXACT_OUT

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        try:
            result = unary(op, input, to_float)
        except (AttributeError, TypeError):
            if isinstance(input, Tensor):
                raise
            kwargs = {} if out is None else {"out": out}
            return hand_over(fn, (input,), kwargs, not_a_tensor(op.name, input))
        if out is None:
            return result
        if op.name in BOOL_OUT and out._data.dtype.kind != "b":
            raise RuntimeError(f"{op.name} does not support non-boolean outputs.")
        return write_out(out, result, exact and result._data.dtype == input._data.dtype)

    if op.name in NO_OUT:

        def fn(input: Tensor) -> Tensor:  # noqa: F811
            try:
                return unary(op, input, to_float)
            except (AttributeError, TypeError):
                if isinstance(input, Tensor):
                    raise
                return hand_over(fn, (input,), {}, not_a_tensor(op.name, input))

    fn.__name__ = fn.__qualname__ = op.name
    fn.__module__ = "tocha"  # published as tocha.<name>: pickled by reference as that
    fn.hands_over = True  # type: ignore[attr-defined]
    fn.__doc__ = f"Elementwise ``{op.name}`` of `input`; the result has `input`'s shape."
    return fn


NEG_BOOL = (
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
    "to invert a mask, use the `~` or `logical_not()` operator instead."
)
# (op, NumPy dtype kind): the error of an in-place op whose result the tensor cannot hold.
INPLACE_ERRORS = {
    ("neg", "b"): NEG_BOOL,
    ("abs", "c"): "In-place abs is not supported for complex tensors.",
    ("square", "b"): "result type Long can't be cast to the desired output type Bool",
}


def _unary_inplace(op, to_float):
    def fn(self: Tensor) -> Tensor:
        try:
            error = INPLACE_ERRORS.get((op.name, self._data.dtype.kind))
        except AttributeError:
            raise not_a_tensor(op.name + "_", self) from None
        if error is not None:
            raise RuntimeError(error)
        return inplace(self, (), unary, _unary_direct, op, self, to_float)

    fn.__name__ = fn.__qualname__ = op.name + "_"
    fn.__doc__ = f"In-place form of `{op.name}`."
    return fn


def _unary_direct(op, self: Tensor, to_float: bool) -> None:
    check_castable(self, _dtype.DEFAULTS.float if to_float else self.dtype)
    op.kernels[self._device](self._data, out=self._data)


UNARY_OPS = {}
for _name, (_factory, _to_float) in UNARY.items():
    _op = UNARY_OPS[_name] = defop(_name, _factory, _name not in NOT_DIFFERENTIABLE)
    export(_unary_function(_op, _to_float), method=True)
    if _name not in NO_INPLACE:
        export(_unary_inplace(_op, _to_float), method=True)
for _alias, _target in ALIASES.items():
    export(PUBLIC[_target], _alias, method=True)
    export(PUBLIC[_target + "_"], _alias + "_", method=True)

negative_op = UNARY_OPS["neg"]


def _neg(self: Tensor) -> Tensor:
    if self._data.dtype.kind == "b":
        raise RuntimeError(NEG_BOOL)
    return unary(negative_op, self, False)


def neg(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``-input``, elementwise (not for bool tensors: use ``~`` or `logical_not`)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("neg", input)
    result = _neg(input)
    return result if out is None else write_out(out, result, exact=True)


export(neg, method=True)
export(neg, "negative", method=True)
Tensor.__neg__ = _neg
Tensor.__abs__ = PUBLIC["abs"]


def _invert(self: Tensor) -> Tensor:
    if self._data.dtype.kind not in "biu":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return unary(UNARY_OPS["bitwise_not"], self, False)


Tensor.__invert__ = _invert


def _positive(input: Tensor) -> Tensor:
    """Returns `input` itself (``+input``)."""
    try:
        kind = input._data.dtype.kind
    except AttributeError:
        raise not_a_tensor("positive", input) from None
    if kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


export(_positive, "positive", method=True)
Tensor.__pos__ = _positive


# -- unary ops with parameters ---------------------------------------------------------------
def _round_kernel(xp):
    def kernel(x, decimals, out=None):
        if x.dtype.kind in BOOL + COMPLEX or (decimals and x.dtype.kind in INTS):
            name = "round_cpu" if decimals else "round_vml_cpu"
            raise NotImplementedError(_no(name).format(_title(x.dtype)))
        if x.dtype.kind in INTS:
            result = x.copy()
        elif decimals and x.dtype.itemsize == 2:  # float16, bfloat16: scaled in float32
            result = xp.round(x.astype(xp.float32), decimals).astype(x.dtype)
        else:
            result = xp.round(x, decimals)
        if out is None:
            return result
        out[...] = result
        return out

    return kernel


round_op = defop("round", _round_kernel)


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:  # noqa: A001
    """Rounds to the nearest value with `decimals` decimal digits, half to even."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("round", input)
    result = call(round_op, (input,), _decimals(decimals))
    return result if out is None else write_out(out, result, exact=True)


def _decimals(decimals) -> int:
    """`decimals` as an int64; beyond any float's exponent (every result NaN, as in PyTorch)
    it is held to a size NumPy takes."""
    if type(decimals) is not int or not -(2**63) <= decimals < 2**63:
        decimals = index_arg("round", decimals, "decimals")
    return decimals if -10000 < decimals < 10000 else 10000 if decimals > 0 else -10000


def round_(input: Tensor, *, decimals: int = 0) -> Tensor:
    """In-place form of `round`."""
    return _param_inplace(input, round_op, _decimals(decimals))


def _param_inplace(self: Tensor, op, *args) -> Tensor:
    return inplace(self, (), _call_one, _param_direct, op, self, *args)


def _call_one(op, self: Tensor, *args) -> Tensor:
    return call(op, (self,), *args)


def _param_direct(op, self: Tensor, *args) -> None:
    op.kernels[self._device](self._data, *args, out=self._data)


export(round, method=True)
export(round_, method=True)


def _nan_to_num_kernel(xp):
    def kernel(x, nan, posinf, neginf, out=None):
        if x.dtype.kind == "V":  # bfloat16: NumPy knows neither its limits nor its NaNs
            info = _dtype.finfo(_dtype.bfloat16)
            posinf = info.max if posinf is None else posinf
            neginf = info.min if neginf is None else neginf
            result = xp.nan_to_num(
                x.astype(xp.float32), nan=nan, posinf=posinf, neginf=neginf
            ).astype(x.dtype)
        elif x.dtype.kind not in "fc":
            result = x.copy()
        else:
            result = xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)
        if out is None:
            return result
        out[...] = result
        return out

    return kernel


nan_to_num_op = defop("nan_to_num", _nan_to_num_kernel)


def nan_to_num(
    input: Tensor,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """Replaces NaN with `nan`, +inf with `posinf` and -inf with `neginf` (defaults: 0 and
    the dtype's largest and smallest finite values)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("nan_to_num", input)
    result = call(nan_to_num_op, (input,), nan, posinf, neginf)
    if out is not None and out.dtype is not result.dtype:
        raise RuntimeError(
            f"nan_to_num: dtype of out: {_dtype.TITLE[out.dtype]} should be same "
            f"as input: {_dtype.TITLE[result.dtype]}"
        )
    return result if out is None else write_out(out, result)


def nan_to_num_(
    input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    """In-place form of `nan_to_num`."""
    return _param_inplace(input, nan_to_num_op, nan, posinf, neginf)


export(nan_to_num, method=True)
export(nan_to_num_, method=True)


# -- binary ---------------------------------------------------------------------------------
def _int_checked(factory, torch_name):
    """Integer division kernels raise PyTorch's RuntimeError on a zero divisor; bool and
    complex operands are refused as PyTorch's kernel `torch_name` refuses them."""

    def wrapped(xp):
        kernel = factory(xp)

        def checked(x, y, out=None):
            if getattr(y, "dtype", None) is not None and y.dtype.kind in "biu":
                if (y == 0).any():
                    raise RuntimeError("ZeroDivisionError")
            elif type(y) in (int, bool) and y == 0 and _dtype_of((x,)).kind in "biu":
                raise RuntimeError("ZeroDivisionError")
            return kernel(x, y, out=out)

        return checked

    return refusing(wrapped, (BOOL + COMPLEX, _no(torch_name)))


def _pow_kernel(xp):
    """``x ** y``; an integer to negative integer tensor powers gives PyTorch's integer result
    (1 for 1, +-1 for -1, else 0); to a negative integer scalar power it is an error."""

    def kernel(x, y, out=None):
        y_array = isinstance(y, xp.ndarray)
        if not hasattr(x, "dtype"):  # a Python number to a tensor's power (slow path)
            x = xp.asarray(x, dtype=y.dtype)
        y_kind = y.dtype.kind if hasattr(y, "dtype") else _PY_KIND.get(type(y), "f")
        if x.dtype.kind == "b" and y_kind == "b":
            if y_array:
                raise NotImplementedError(_no("pow").format("Bool"))
            return _store(xp.logical_or(x, xp.logical_not(y)), out)
        if x.dtype.kind in INTS and y_kind in INTS and bool((y < 0).any() if y_array else y < 0):
            if not y_array:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            minus_one = x == -1
            negative = (x == 1) + minus_one * (1 - 2 * (y % 2))
            result = xp.where(y < 0, negative, xp.power(x, xp.maximum(y, 0)))
            return _store(result.astype(x.dtype), out)
        if x.dtype.kind in FLOATS and y_kind in "biuf" and (not y_array or _scalar_of(x, y)):
            result = _pow_by_products(xp, x, float(y))
            if result is not None:
                return _store(result, out)
        return xp.power(x, y, out=out)

    return kernel


def _scalar_of(x, y) -> bool:
    """Whether array `y` is a 0-d exponent that leaves float `x`'s dtype as it is."""
    return y.ndim == 0 and (y.dtype == x.dtype or y.dtype.kind in "biu")


def _pow_by_products(xp, x, y: float):
    """``x ** y`` for a float array and a whole or half-integer `y` within +-4, by
    multiplications, a square root and a reciprocal: as fast as those, where NumPy calls
    ``pow`` per element. PyTorch computes 2, 3, -1, -2 and -0.5 this way, so those values are
    PyTorch's exactly (0.5, the correctly rounded square root, is within an ulp of PyTorch's,
    with its -0 at -0 and nan at -inf); the others are within about 2 ulp of ``pow``. float16
    and bfloat16 take whole exponents only (at -0 and -inf PyTorch's half-integer powers of
    those dtypes are not all the square root's), computed in float32 and rounded once. None
    for other exponents, and for a half-integer above 1/2 in magnitude of an array holding
    -inf (``pow`` gives inf or 0 there, the square root nan)."""
    if not (abs(y) <= 4 and (2 * y).is_integer()):
        return None
    dtype = x.dtype
    if y == 0:
        return xp.ones_like(x)
    whole = int(abs(y))
    half = abs(y) != whole
    if dtype.itemsize == 2:
        if half:
            return None
        x = x.astype(xp.float32)
    if half and whole and _holds_minus_inf(xp, x):
        return None
    result = xp.empty_like(x)  # out= throughout: a ufunc of 0-d arrays returns a scalar
    power = x  # x ** abs(y), which the reciprocal reads for a negative y
    if half:
        power = xp.sqrt(x, out=result)
        for _ in range(whole):
            xp.multiply(result, x, out=result)
        if whole == 2:
            xp.abs(result, out=result)  # pow(-0, 2.5) is +0; negative bases stay nan
    elif whole > 1 or y > 0:
        _whole_power(xp, x, whole, result)
        power = result
    if y < 0:
        xp.divide(1, power, out=result)  # reciprocal's loop is twice as slow
    return result.astype(dtype) if result.dtype != dtype else result


def _holds_minus_inf(xp, x) -> bool:
    """Whether array `x` holds -inf: its minimum (one pass), or a compare when a nan hides it."""
    if not x.size:
        return False
    least = xp.min(x)
    return bool(least == -xp.inf or (least != least and xp.any(x == -xp.inf)))


def _whole_power(xp, x, n: int, out) -> None:
    """``x ** n`` for n in 1..4 into `out`: ``x``, ``x * x``, ``x * x * x``, ``(x * x) ** 2``."""
    if n == 1:
        out[...] = x
        return
    xp.multiply(x, x, out=out)
    if n == 3:
        xp.multiply(out, x, out=out)
    elif n == 4:
        xp.multiply(out, out, out=out)


_PY_KIND = {bool: "b", int: "i", float: "f", complex: "c"}


def _store(result, out):
    if out is None:
        return result
    out[...] = result
    return out


def _trunc_divide(xp, x, y):
    if (
        getattr(x, "dtype", None) is not None
        and x.dtype.kind in "biu"
        and (getattr(y, "dtype", None) is None or y.dtype.kind in "biu")
    ):
        q = xp.floor_divide(x, y)
        return q + ((xp.remainder(x, y) != 0) & ((x < 0) != (y < 0)))
    return xp.trunc(xp.true_divide(x, y))


# name: (kernel factory, integer inputs first become the default float dtype)
BINARY = {
    "add": (uf("add"), False),
    "sub": (uf("subtract"), False),
    "mul": (uf("multiply"), False),
    "div": (uf("true_divide"), True),
    "div_trunc": (_int_checked(_composite(_trunc_divide), "div_trunc_cpu"), False),
    "floor_divide": (_int_checked(uf("floor_divide"), "div_floor_cpu"), False),
    # div(rounding_mode="floor"): floor_divide's values, but PyTorch gives it zero gradients
    # where floor_divide's derivative is not implemented
    "div_floor": (_int_checked(uf("floor_divide"), "div_floor_cpu"), False),
    "remainder": (_int_checked(uf("remainder"), "remainder_cpu"), False),
    "fmod": (_int_checked(uf("fmod"), "fmod_cpu"), False),
    "pow": (_pow_kernel, False),
    "atan2": (refusing(uf("arctan2"), (COMPLEX, _no("atan2_cpu"))), True),
    "hypot": (refusing(uf("hypot"), (BOOL + INTS + COMPLEX, _no("hypot_cpu"))), False),
    "copysign": (refusing(uf("copysign"), (COMPLEX, _no("copysign_cpu"))), True),
    "eq": (uf("equal"), False),
    "ne": (uf("not_equal"), False),
    "logical_and": (_logical("logical_and"), False),
    "logical_or": (_logical("logical_or"), False),
    "logical_xor": (_logical("logical_xor"), False),
}
for _name, _ufunc in (
    ("maximum", "maximum"),
    ("minimum", "minimum"),
    ("fmax", "fmax"),
    ("fmin", "fmin"),
):
    BINARY[_name] = (
        refusing(
            uf(_ufunc), (COMPLEX, f"{_name} not implemented for complex tensors.", RuntimeError)
        ),
        False,
    )
for _name, _ufunc in (
    ("lt", "less"),
    ("le", "less_equal"),
    ("gt", "greater"),
    ("ge", "greater_equal"),
):
    BINARY[_name] = (refusing(uf(_ufunc), (COMPLEX, _no(_name + "_cpu"))), False)
for _name, _ufunc in (
    ("bitwise_and", "bitwise_and"),
    ("bitwise_or", "bitwise_or"),
    ("bitwise_xor", "bitwise_xor"),
):
    BINARY[_name] = (refusing(uf(_ufunc), (FLOATS + COMPLEX, _no(_name + "_cpu"))), False)
for _name, _ufunc, _torch in (
    ("bitwise_left_shift", "left_shift", "lshift_cpu"),
    ("bitwise_right_shift", "right_shift", "rshift_cpu"),
):
    BINARY[_name] = (refusing(uf(_ufunc), (BOOL + FLOATS + COMPLEX, _no(_torch))), False)
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
BOOL_RESULT = COMPARISONS | {"logical_and", "logical_or", "logical_xor"}
NOT_DIFFERENTIABLE_BINARY = BOOL_RESULT | {
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
}
# Functions whose second argument must be a Tensor; those whose first may be a number.
TENSOR_OTHER = {
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "atan2",
    "hypot",
    "logical_and",
    "logical_or",
    "logical_xor",
}
NUMBER_INPUT = {
    "mul",
    "floor_divide",
    "remainder",
    "pow",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
}
BINARY_OPS = {
    name: defop(name, factory, name not in NOT_DIFFERENTIABLE_BINARY)
    for name, (factory, _) in BINARY.items()
}
TO_FLOAT = {name for name, (_, to_float) in BINARY.items() if to_float}


def _check_tensors(name: str, input, other) -> None:
    """PyTorch's TypeError for a number where the function takes only a Tensor."""
    if name not in NUMBER_INPUT and not isinstance(input, Tensor):
        raise not_a_tensor(name, input)
    if name in TENSOR_OTHER and not isinstance(other, Tensor):
        raise not_a_tensor(name, other, "other", 2)


def _binary_function(op):
    to_float = op.name in TO_FLOAT

    def fn(input, other, *, out: Tensor | None = None) -> Tensor:
        try:
            _check_tensors(op.name, input, other)
            result = binary(op, input, other, to_float)
        except TypeError as exc:
            return hand_over(fn, (input, other), {} if out is None else {"out": out}, exc)
        return result if out is None else write_out(out, result)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__module__ = "tocha"  # published as tocha.<name>: pickled by reference as that
    fn.hands_over = True  # type: ignore[attr-defined]
    fn.__doc__ = f"Elementwise ``{op.name}`` of `input` and `other`, broadcast together."
    return fn


def binary_inplace(op, self: Tensor, other, to_float=False) -> Tensor:
    """``self op= other``: written into self's memory, whose dtype and shape must hold the
    result (PyTorch's casting and broadcasting rules for in-place ops)."""
    return inplace(self, (other,), binary, _binary_direct, op, self, other, to_float)


def _binary_direct(op, self: Tensor, other, to_float: bool) -> None:
    result_dtype = _dtype.promote_operands((self, other))
    if to_float and result_dtype.rank < _dtype.FLOATING:
        result_dtype = _dtype.DEFAULTS.float
    try:
        check_castable(self, result_dtype)
    except RuntimeError:
        if op.name not in BOOL_RESULT:  # a comparison's bool result fits any tensor
            raise
    data = self._data
    if isinstance(other, Tensor):
        if other._device is not self._device:
            raise device_mismatch(self._device, other._device)
        other = other._data
    elif _dtype.SCALAR_RANK.get(type(other), 9) <= result_dtype.rank:
        if type(other) is float and data.dtype.char in HALF_CHARS and op.name in ("mul", "div"):
            # PyTorch's kernel keeps the scalar in float32: computed there, rounded once
            wide = op.kernels[self._device](data.astype(np.float32), np.float32(other))
            data[...] = wide.astype(data.dtype)
            return
        other = _scalar_like(other, result_dtype.np)
    try:
        if data.dtype != result_dtype.np:
            result = op.kernels[self._device](data.astype(result_dtype.np), other)
            check_shape(data.shape, result.shape)
            data[...] = result
        else:
            op.kernels[self._device](data, other, out=data)
    except ValueError as exc:
        if "broadcast" not in str(exc):
            raise
        _refuse_operand_shape(data.shape, other)
        raise


def _refuse_operand_shape(target_shape, other) -> None:
    """PyTorch's error for an in-place operand whose shape does not broadcast to the
    target's."""
    import numpy as np

    try:
        shape = np.broadcast_shapes(target_shape, np.shape(other))
    except ValueError:
        raise broadcast_error(target_shape, np.shape(other)) from None
    check_shape(target_shape, shape)


def _binary_inplace_method(op):
    to_float = op.name in TO_FLOAT

    def fn(self: Tensor, other) -> Tensor:
        if op.name in TENSOR_OTHER and not isinstance(other, Tensor):
            raise not_a_tensor(op.name + "_", other, "other", 1)
        return binary_inplace(op, self, other, to_float)

    fn.__name__ = fn.__qualname__ = op.name + "_"
    fn.__doc__ = f"In-place form of `{op.name}`."
    return fn


PLAIN_BINARY = {
    "mul",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "atan2",
    "hypot",
    "copysign",
    "fmod",
    "remainder",
    "floor_divide",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "pow",
}
for _name in PLAIN_BINARY:
    export(_binary_function(BINARY_OPS[_name]), method=True)
    if _name not in BOOL_RESULT or _name.startswith("logical"):
        export(_binary_inplace_method(BINARY_OPS[_name]), _name + "_", method=True, function=False)
for _name in COMPARISONS:
    export(_binary_inplace_method(BINARY_OPS[_name]), _name + "_", method=True, function=False)

BINARY_ALIASES = {
    "multiply": "mul",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
    "arctan2": "atan2",
}
for _alias, _target in BINARY_ALIASES.items():
    export(PUBLIC[_target], _alias, method=True)
    export(getattr(Tensor, _target + "_"), _alias + "_", method=True, function=False)


_add, _sub, _mul = BINARY_OPS["add"], BINARY_OPS["sub"], BINARY_OPS["mul"]
_div, _div_trunc = BINARY_OPS["div"], BINARY_OPS["div_trunc"]
_floor_div, _div_floor = BINARY_OPS["floor_divide"], BINARY_OPS["div_floor"]


def _is_bool(x) -> bool:
    return x._data.dtype.kind == "b" if isinstance(x, Tensor) else type(x) is bool


def _scaled(input, other, alpha):
    """``alpha * other``; with bool operands alpha acts as a bool, as in PyTorch. A float
    alpha is refused for integral operands (even 1.0, as PyTorch)."""
    result_dtype = _dtype.promote_operands((input, other)) if isinstance(alpha, float) else None
    if result_dtype is not None and result_dtype.rank < 2:
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if alpha == 1 or (alpha and _is_bool(input) and _is_bool(other)):
        return other
    if result_dtype is not None:
        check_scalar_fits(alpha, result_dtype)
    if isinstance(other, Tensor):
        if isinstance(input, Tensor) and other._data.dtype != input._data.dtype:
            other = other.to(_dtype.promote_operands((input, other)))  # the result's dtype
        return binary(_mul, other, alpha)
    return other * alpha


def add(input, other, *, alpha=1, out: Tensor | None = None) -> Tensor:
    """``input + alpha * other``, broadcast and promoted."""
    if alpha != 1 and _half_pair(input, other):
        result = _half_axpy(input, other, alpha)
    else:
        result = binary(_add, input, _scaled(input, other, alpha))
    return result if out is None else write_out(out, result)


def sub(input, other, *, alpha=1, out: Tensor | None = None) -> Tensor:
    """``input - alpha * other``, broadcast and promoted."""
    _check_bool_sub(input, other)
    if alpha != 1 and _half_pair(input, other):
        result = _half_axpy(input, other, -alpha)
    else:
        result = binary(_sub, input, _scaled(input, other, alpha))
    return result if out is None else write_out(out, result)


def _half_pair(input, other) -> bool:
    """Whether `input` and `other` are tensors of one float16/bfloat16 dtype."""
    return (
        isinstance(input, Tensor)
        and isinstance(other, Tensor)
        and input._data.dtype.char in HALF_CHARS
        and other._data.dtype == input._data.dtype
    )


def _half_axpy(input: Tensor, other: Tensor, alpha) -> Tensor:
    """``input + alpha * other`` for float16/bfloat16 tensors as PyTorch's kernel computes
    it: alpha rounded to their dtype, then one float32 fused multiply-add (run in float64,
    where the product is exact), rounded to their dtype."""
    _scaled(input, other, alpha)  # its checks
    low = input._data.dtype
    factor = float(low.type(alpha))
    wide = add(mul(other.double(), factor), input.double())
    return wide.float().to(input.dtype)


def _check_bool_sub(a, b) -> None:
    bool_tensor = any(isinstance(x, Tensor) and x._data.dtype.kind == "b" for x in (a, b))
    if bool_tensor and not (_is_bool(a) and _is_bool(b)):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )


def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input``."""
    return sub(other, input, alpha=alpha)


def add_(self: Tensor, other, *, alpha=1) -> Tensor:
    return binary_inplace(_add, self, _scaled(self, other, alpha))


def sub_(self: Tensor, other, *, alpha=1) -> Tensor:
    _check_bool_sub(self, other)
    return binary_inplace(_sub, self, _scaled(self, other, alpha))


def div(input, other, *, rounding_mode: str | None = None, out: Tensor | None = None) -> Tensor:
    """``input / other``. `rounding_mode`: None (true division, integers give floats),
    ``"trunc"`` (round toward zero) or ``"floor"`` (round down)."""
    op, to_float = _div_op(rounding_mode)
    result = binary(op, input, other, to_float)
    return result if out is None else write_out(out, result)


def _div_op(rounding_mode):
    if rounding_mode is None:
        return _div, True
    if rounding_mode == "trunc":
        return _div_trunc, False
    if rounding_mode == "floor":
        return _div_floor, False
    raise RuntimeError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'"
    )


def div_(self: Tensor, other, *, rounding_mode: str | None = None) -> Tensor:
    op, to_float = _div_op(rounding_mode)
    return binary_inplace(op, self, other, to_float)


def true_divide(input, other, *, out: Tensor | None = None) -> Tensor:
    """``input / other`` with true division."""
    return div(input, other, out=out)


for _fn in (add, sub, rsub, div, true_divide):
    export(_fn, method=True)
for _fn in (add_, sub_, div_):
    export(_fn, method=True, function=False)
export(sub, "subtract", method=True)
export(div, "divide", method=True)
export(sub_, "subtract_", method=True, function=False)
export(div_, "divide_", method=True, function=False)
export(div_, "true_divide_", method=True, function=False)


def lerp(input: Tensor, end: Tensor, weight, *, out: Tensor | None = None) -> Tensor:
    """Linear interpolation ``input + weight * (end - input)``."""
    if _check_lerp(input, end, weight):
        result = _half_lerp(input, end, weight)
    else:
        result = add(input, mul(weight, sub(end, input)))
    if out is None:
        return result
    return write_out(out, result, isinstance(weight, Tensor) and weight.ndim > 0)


mul = PUBLIC["mul"]


def _check_lerp(input: Tensor, end, weight) -> bool:
    """PyTorch's errors for lerp's arguments; whether `input` is float16/bfloat16."""
    try:
        dtype = input._data.dtype
    except AttributeError:
        raise not_a_tensor("lerp", input) from None
    kind = dtype.kind
    if kind in "biu":
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(_no(kernel).format(_title(input._data.dtype)))
    if type(weight) is float and not -65504.0 <= weight <= 65504.0:
        check_scalar_converts(weight, input.dtype, opmath=True)
    for name, other in (("end", end), ("weight", weight)):
        if isinstance(other, Tensor) and other._data.dtype != input._data.dtype:
            raise RuntimeError(
                f"expected dtype {CPP_NAMES[input.dtype.name]} for `{name}` but got dtype "
                f"{CPP_NAMES[other.dtype.name]}"
            )
    return dtype.char in HALF_CHARS


def lerp_(self: Tensor, end: Tensor, weight) -> Tensor:
    if _check_lerp(self, end, weight):
        return inplace(self, (end, weight), _half_lerp, None, self, end, weight)
    return binary_inplace(_add, self, mul(weight, sub(end, self)))


def _half_lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    """float16/bfloat16 lerp as PyTorch's vectorized kernel computes it: in float32, one fused
    multiply-add from the end nearer to the weight (``end + (weight - 1) * (end - input)`` for
    a weight of 0.5 or more), rounded to the input's dtype. The fused multiply-add runs in
    float64, where the float32 product is exact."""
    start, stop = input.float(), end.float()
    diff = sub(stop, start).double()
    if not isinstance(weight, Tensor):
        w = float(np.float32(weight))
        near_start = abs(w) < 0.5
        coeff = w if near_start else float(np.float32(w - 1))
        result = add(mul(diff, coeff), (start if near_start else stop).double())
    else:
        w = weight.float()
        near_start = w.abs() < 0.5
        coeff = PUBLIC["where"](near_start, w, sub(w, 1)).double()
        base = PUBLIC["where"](near_start, start, stop).double()
        result = add(mul(coeff, diff), base)
    return result.float().to(input.dtype)


export(lerp, method=True)
export(lerp_, method=True, function=False)


# -- clamp ----------------------------------------------------------------------------------
def _clamp_kernel(xp):
    def kernel(x, low, high, out=None):
        if low is not None:
            low = _scalar_like(low, x.dtype)
        if high is not None:
            high = _scalar_like(high, x.dtype)
        if low is not None and high is not None:
            return xp.minimum(xp.maximum(x, low), high, out=out)
        if low is not None:
            return xp.maximum(x, low, out=out)
        return xp.minimum(x, high, out=out)

    return kernel


clamp_op = defop("clamp", _clamp_kernel)


def clamp(input: Tensor, min=None, max=None, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Clamps every element into ``[min, max]``; `min` and `max` are numbers or tensors
    (broadcast); if ``min > max`` every element becomes `max`."""
    return _clamp(input, min, max, out, "clamp")


def _check_clamp(input: Tensor, min, max, name: str) -> bool:  # noqa: A002
    """PyTorch's errors for clamp's arguments; returns whether a bound is a tensor."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    tensor_bounds = isinstance(min, Tensor) or isinstance(max, Tensor)
    try:
        kind = input._data.dtype.kind
    except AttributeError:
        raise not_a_tensor(name, input) from None
    if kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if kind == "b":
        # a bool input computes in the bounds' type: number bounds other than bools promote
        # it (clamp_min(mask, 0.5) is float32); a bool kernel PyTorch has not
        if tensor_bounds and (min is None or max is None):
            return tensor_bounds
        if tensor_bounds or all(type(b) is bool for b in (min, max) if b is not None):
            kernel = "clamp_cpu" if tensor_bounds else f"{name}_scalar_cpu"
            raise NotImplementedError(_no(kernel).format("Bool"))
    return tensor_bounds


def _clamp(input, min, max, out, name):  # noqa: A002
    tensor_bounds = _check_clamp(input, min, max, name)
    if tensor_bounds:
        result = input
        if min is not None:
            result = binary(BINARY_OPS["maximum"], result, min)
        if max is not None:
            result = binary(BINARY_OPS["minimum"], result, max)
    else:
        bounds_rank = _builtin_max(
            _dtype.SCALAR_RANK.get(type(b), 0) for b in (min, max) if b is not None
        )
        x = input
        if bounds_rank > x.dtype.rank:
            x = x.to(_dtype.default_for_rank(bounds_rank))
        if (type(min) is float and not -65504.0 <= min <= 65504.0) or (
            type(max) is float and not -65504.0 <= max <= 65504.0
        ):
            _bounds_fit(x.dtype, min, max)
        result = call(clamp_op, (x,), min, max)
    return result if out is None else write_out(out, result, exact=not tensor_bounds)


_builtin_max = max


def _bounds_fit(dtype: _dtype.dtype, *bounds) -> None:
    """PyTorch's error for a float bound that overflows `dtype` (called where a bound is
    beyond float16's range or NaN)."""
    for bound in bounds:
        if type(bound) is float:
            check_scalar_converts(bound, dtype)


def clamp_(self: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    """In-place form of `clamp`."""
    return _clamp_inplace(self, min, max, "clamp")


def _clamp_inplace(self: Tensor, min, max, name: str) -> Tensor:  # noqa: A002
    """Clamp in place: tensor bounds go through the out-of-place result."""
    if _check_clamp(self, min, max, name):
        return assign(self, _clamp(self, min, max, None, name))
    bounds_rank = _builtin_max(
        _dtype.SCALAR_RANK.get(type(b), 0) for b in (min, max) if b is not None
    )
    if bounds_rank > self.dtype.rank:
        if bounds_rank == _dtype.COMPLEX:  # PyTorch reads a complex bound as a double
            raise RuntimeError("value cannot be converted to type double without overflow")
        result = _dtype.default_for_rank(bounds_rank)
        if not _dtype.can_cast(result, self.dtype):  # PyTorch names the C++ type here
            raise RuntimeError(
                f"result type {_dtype.TITLE[result]} can't be cast to the desired output type "
                f"{CPP_NAMES[self.dtype.name]}"
            )
    if (type(min) is float and not -65504.0 <= min <= 65504.0) or (
        type(max) is float and not -65504.0 <= max <= 65504.0
    ):
        _bounds_fit(self.dtype, min, max)
    return _param_inplace(self, clamp_op, min, max)


def clamp_min(input: Tensor, min, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``clamp(input, min=min)``."""
    return _clamp(input, min, None, out, "clamp_min")


def clamp_max(input: Tensor, max, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``clamp(input, max=max)``."""
    return _clamp(input, None, max, out, "clamp_max")


export(clamp, method=True)
export(clamp, "clip", method=True)
export(clamp_, method=True)
export(clamp_, "clip_", method=True)


def clamp_min_(self: Tensor, min) -> Tensor:  # noqa: A002
    """In-place form of `clamp_min`."""
    return _clamp_inplace(self, min, None, "clamp_min")


def clamp_max_(self: Tensor, max) -> Tensor:  # noqa: A002
    """In-place form of `clamp_max`."""
    return _clamp_inplace(self, None, max, "clamp_max")


for _fn in (clamp_min, clamp_max, clamp_min_, clamp_max_):
    export(_fn, method=True)


# -- operators ------------------------------------------------------------------------------
# An operand that is neither a tensor nor a number makes an operator answer NotImplemented, as
# PyTorch's do: Python then asks the other operand (a NumPy array computes the result, which
# `Tensor.__array_wrap__` makes a tensor) or raises its own TypeError.
_NOT_AN_OPERAND = _dtype.OperandTypeError


def _operator(op, reflected=False, to_float=False):
    if reflected:

        def method(self, other):
            try:
                return binary(op, other, self, to_float)
            except _NOT_AN_OPERAND:
                return NotImplemented
    else:

        def method(self, other):
            try:
                return binary(op, self, other, to_float)
            except _NOT_AN_OPERAND:
                return NotImplemented

    return method


def _inplace_operator(op, to_float=False):
    def method(self, other):
        if type(other) is np.ndarray:  # PyTorch's ``t += array`` rebinds t to a new tensor
            return NotImplemented
        try:
            return binary_inplace(op, self, other, to_float)
        except _NOT_AN_OPERAND:
            return NotImplemented

    return method


def _function_operator(fn, reflected=False):
    """The operator of a public function (`sub`, `bitwise_and`...)."""
    if reflected:

        def method(self, other):
            try:
                return fn(other, self)
            except _NOT_AN_OPERAND:
                return NotImplemented
    else:

        def method(self, other):
            try:
                return fn(self, other)
            except _NOT_AN_OPERAND:
                return NotImplemented

    return method


def _comparison(op):
    equality = op.name in ("eq", "ne")

    def method(self, other):
        try:
            return binary(op, self, other)
        except _NOT_AN_OPERAND:
            if equality and isinstance(other, np.ndarray):  # PyTorch compares it as a tensor
                return binary(op, self, Tensor.__array_wrap__(self, other))
            return NotImplemented

    return method


def _rtruediv(self, other):
    """``other / self``; a NumPy array divided by a tensor is the array times the tensor's
    reciprocal, as in PyTorch (NumPy computes the product, a tensor)."""
    try:
        return binary(_div, other, self, True)
    except _NOT_AN_OPERAND:
        if isinstance(other, np.ndarray):
            return self.reciprocal() * other
        return NotImplemented


Tensor.__add__ = _operator(_add)
Tensor.__radd__ = _operator(_add, reflected=True)
Tensor.__iadd__ = _inplace_operator(_add)
Tensor.__sub__ = _function_operator(sub)
Tensor.__rsub__ = _function_operator(sub, reflected=True)
Tensor.__isub__ = _function_operator(sub_)
Tensor.__mul__ = _operator(_mul)
Tensor.__rmul__ = _operator(_mul, reflected=True)
Tensor.__imul__ = _inplace_operator(_mul)
Tensor.__truediv__ = _operator(_div, to_float=True)
Tensor.__rtruediv__ = _rtruediv
Tensor.__itruediv__ = _inplace_operator(_div, to_float=True)
Tensor.__floordiv__ = _operator(_floor_div)
Tensor.__rfloordiv__ = _operator(_floor_div, reflected=True)
Tensor.__ifloordiv__ = _inplace_operator(_floor_div)
Tensor.__mod__ = _operator(BINARY_OPS["remainder"])
Tensor.__rmod__ = _operator(BINARY_OPS["remainder"], reflected=True)
Tensor.__imod__ = _inplace_operator(BINARY_OPS["remainder"])


_POW = BINARY_OPS["pow"]


def _pow(self, other, modulo=None):
    """``self ** other``; ``pow(self, other, modulo)`` is no tensor operation."""
    if modulo is not None:
        return NotImplemented
    try:
        return binary(_POW, self, other)
    except _NOT_AN_OPERAND:
        return NotImplemented


def _rpow(self, other, modulo=None):
    if modulo is not None:
        return NotImplemented
    try:
        return binary(_POW, other, self)
    except _NOT_AN_OPERAND:
        return NotImplemented


Tensor.__pow__ = _pow
Tensor.__rpow__ = _rpow
Tensor.__ipow__ = _inplace_operator(BINARY_OPS["pow"])
for _dunder, _name in (
    ("and", "bitwise_and"),
    ("or", "bitwise_or"),
    ("xor", "bitwise_xor"),
    ("lshift", "bitwise_left_shift"),
    ("rshift", "bitwise_right_shift"),
):
    setattr(Tensor, f"__{_dunder}__", _function_operator(PUBLIC[_name]))
    setattr(Tensor, f"__r{_dunder}__", _function_operator(PUBLIC[_name], reflected=True))
    setattr(Tensor, f"__i{_dunder}__", _function_operator(getattr(Tensor, _name + "_")))
Tensor.__eq__ = _comparison(BINARY_OPS["eq"])
Tensor.__ne__ = _comparison(BINARY_OPS["ne"])
Tensor.__lt__ = _comparison(BINARY_OPS["lt"])
Tensor.__le__ = _comparison(BINARY_OPS["le"])
Tensor.__gt__ = _comparison(BINARY_OPS["gt"])
Tensor.__ge__ = _comparison(BINARY_OPS["ge"])
