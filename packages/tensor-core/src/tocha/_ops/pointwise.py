"""Elementwise ops: unary math, binary math, comparisons, logical and bitwise ops.

Each family is one table ``name: kernel factory`` written once against an array namespace
``xp``; the loops at the bottom of each table declare the ops, their public functions,
Tensor methods, in-place forms and operators. Every elementwise kernel accepts ``out=``.
"""

from __future__ import annotations

from .. import _dtype
from .._api import PUBLIC, export
from .._dispatch import (
    LAYERS,
    binary,
    bump_version,
    call,
    defop,
    unary,
)
from .._grad_mode import STATE
from .._tensor import Tensor
from . import _special_math as special
from ._out import inplace_result, write_out


def uf(name):
    """Factory of a kernel that is the namespace's own ufunc `name`."""
    return lambda xp: getattr(xp, name)


def _composite(build):
    """Factory of a kernel ``k(*arrays, out=None)`` from ``build(xp, *arrays) -> array``."""

    def factory(xp):
        def kernel(*arrays, out=None):
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


# -- unary ----------------------------------------------------------------------------------
# name: (kernel factory, integer inputs first become the default float dtype)
UNARY = {
    "abs": (uf("absolute"), False),
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
    "square": (uf("square"), False),
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
    "sigmoid": (_composite(lambda xp, x: 1 / (1 + xp.exp(-x))), True),
    "relu": (_composite(lambda xp, x: xp.maximum(x, 0)), False),
    "erf": (special.erf, True),
    "erfc": (special.erfc, True),
    "erfinv": (special.erfinv, True),
    "floor": (_int_identity(uf("floor")), False),
    "ceil": (_int_identity(uf("ceil")), False),
    "trunc": (_int_identity(uf("trunc")), False),
    "frac": (_composite(lambda xp, x: x - xp.trunc(x)), False),
    "sign": (_composite(lambda xp, x: xp.sign(x) if x.dtype.kind != "b" else x.copy()), False),
    "sgn": (
        _composite(
            lambda xp, x: xp.where(x == 0, 0, x / xp.where(x == 0, 1, xp.abs(x))).astype(x.dtype)
            if x.dtype.kind == "c"
            else xp.sign(x)
        ),
        False,
    ),
    "reciprocal": (uf("reciprocal"), True),
    "bitwise_not": (uf("invert"), False),
    "logical_not": (uf("logical_not"), False),
    "isnan": (uf("isnan"), False),
    "isinf": (uf("isinf"), False),
    "isfinite": (uf("isfinite"), False),
    "isposinf": (uf("isposinf"), False),
    "isneginf": (uf("isneginf"), False),
    "signbit": (uf("signbit"), False),
}
NOT_DIFFERENTIABLE = {
    "bitwise_not", "logical_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
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


def _unary_function(op, to_float):
    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        result = unary(op, input, to_float)
        return result if out is None else write_out(out, result)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise ``{op.name}`` of `input`; the result has `input`'s shape."
    return fn


def _unary_inplace(op, to_float):
    def fn(self: Tensor) -> Tensor:
        if self._ag is not None and STATE.grad_enabled:
            return _rebase_inplace(self, unary(op, self, to_float))
        inplace_result(self, _dtype.DEFAULTS.float if to_float else self.dtype, op.name)
        op.kernels[self._device](self._data, out=self._data)
        bump_version(self)
        return self

    fn.__name__ = fn.__qualname__ = op.name + "_"
    fn.__doc__ = f"In-place form of `{op.name}`."
    return fn


def _rebase_inplace(target: Tensor, result: Tensor) -> Tensor:
    """In-place op on a tensor autograd tracks: the out-of-place result, recorded, is
    written into the target, which takes the result's history."""
    inplace_result(target, result.dtype, "")
    if tuple(result.shape) != tuple(target.shape):
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    LAYERS.rebase(target, result)
    return target


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
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return unary(negative_op, self, False)


export(_neg, "neg", method=True)
export(_neg, "negative", method=True)
Tensor.__neg__ = _neg
Tensor.__abs__ = PUBLIC["abs"]
Tensor.__invert__ = lambda self: unary(UNARY_OPS["bitwise_not"], self, False)


def _positive(input: Tensor) -> Tensor:
    """Returns `input` itself (``+input``)."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


export(_positive, "positive", method=True)
Tensor.__pos__ = _positive


# -- unary ops with parameters ---------------------------------------------------------------
def _round_kernel(xp):
    def kernel(x, decimals, out=None):
        if x.dtype.kind in "biu":
            result = x.copy() if decimals >= 0 else xp.round(x, decimals)
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
    result = call(round_op, (input,), int(decimals))
    return result if out is None else write_out(out, result)


def round_(input: Tensor, *, decimals: int = 0) -> Tensor:
    return _param_inplace(input, round_op, int(decimals))


def _param_inplace(self: Tensor, op, *args) -> Tensor:
    if self._ag is not None and STATE.grad_enabled:
        return _rebase_inplace(self, call(op, (self,), *args))
    inplace_result(self, self.dtype, op.name)
    op.kernels[self._device](self._data, *args, out=self._data)
    bump_version(self)
    return self


export(round, method=True)
export(round_, method=True)


def _nan_to_num_kernel(xp):
    def kernel(x, nan, posinf, neginf, out=None):
        if x.dtype.kind not in "fc":
            result = x.copy()
        else:
            result = xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)
        if out is None:
            return result
        out[...] = result
        return out

    return kernel


nan_to_num_op = defop("nan_to_num", _nan_to_num_kernel)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """Replaces NaN with `nan`, +inf with `posinf` and -inf with `neginf` (defaults: 0 and
    the dtype's largest and smallest finite values)."""
    result = call(nan_to_num_op, (input,), nan, posinf, neginf)
    return result if out is None else write_out(out, result)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    return _param_inplace(input, nan_to_num_op, nan, posinf, neginf)


export(nan_to_num, method=True)
export(nan_to_num_, method=True)


# -- binary ---------------------------------------------------------------------------------
def _int_checked(factory):
    """Integer division kernels raise on a zero divisor, as PyTorch does."""

    def wrapped(xp):
        kernel = factory(xp)

        def checked(x, y, out=None):
            if getattr(y, "dtype", None) is not None and y.dtype.kind in "biu":
                if (y == 0).any():
                    raise ZeroDivisionError("ZeroDivisionError")
            elif type(y) in (int, bool) and y == 0 and getattr(x, "dtype", None) is not None \
                    and x.dtype.kind in "biu":
                raise ZeroDivisionError("ZeroDivisionError")
            return kernel(x, y, out=out)

        return checked

    return wrapped


def _trunc_divide(xp, x, y):
    if getattr(x, "dtype", None) is not None and x.dtype.kind in "biu" and (
        getattr(y, "dtype", None) is None or y.dtype.kind in "biu"
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
    "div_trunc": (_int_checked(_composite(_trunc_divide)), False),
    "floor_divide": (_int_checked(uf("floor_divide")), False),
    "remainder": (_int_checked(uf("remainder")), False),
    "fmod": (_int_checked(uf("fmod")), False),
    "pow": (uf("power"), False),
    "maximum": (uf("maximum"), False),
    "minimum": (uf("minimum"), False),
    "fmax": (uf("fmax"), False),
    "fmin": (uf("fmin"), False),
    "atan2": (uf("arctan2"), True),
    "hypot": (uf("hypot"), True),
    "copysign": (uf("copysign"), True),
    "eq": (uf("equal"), False),
    "ne": (uf("not_equal"), False),
    "lt": (uf("less"), False),
    "le": (uf("less_equal"), False),
    "gt": (uf("greater"), False),
    "ge": (uf("greater_equal"), False),
    "logical_and": (uf("logical_and"), False),
    "logical_or": (uf("logical_or"), False),
    "logical_xor": (uf("logical_xor"), False),
    "bitwise_and": (uf("bitwise_and"), False),
    "bitwise_or": (uf("bitwise_or"), False),
    "bitwise_xor": (uf("bitwise_xor"), False),
    "bitwise_left_shift": (uf("left_shift"), False),
    "bitwise_right_shift": (uf("right_shift"), False),
}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
BOOL_RESULT = COMPARISONS | {"logical_and", "logical_or", "logical_xor"}
NOT_DIFFERENTIABLE_BINARY = BOOL_RESULT | {
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
    "floor_divide", "div_trunc",
}
FLOAT_ONLY = {"hypot"}
INTEGRAL_ONLY = {
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
}
BINARY_OPS = {
    name: defop(name, factory, name not in NOT_DIFFERENTIABLE_BINARY)
    for name, (factory, _) in BINARY.items()
}
TO_FLOAT = {name for name, (_, to_float) in BINARY.items() if to_float}


def _check_kinds(op_name: str, a, b) -> None:
    """PyTorch refuses float operands of bitwise ops and integer operands of float-only ops."""
    for x in (a, b):
        kind = x._data.dtype.kind if isinstance(x, Tensor) else type(x).__name__[0]
        if op_name in INTEGRAL_ONLY and kind in "fcV":
            raise RuntimeError(f'"{op_name}_cpu" not implemented for '
                               f"'{_dtype_title(x)}'")


def _dtype_title(x) -> str:
    return _dtype.TITLE[x.dtype] if isinstance(x, Tensor) else type(x).__name__.capitalize()


def _binary_function(op):
    to_float = op.name in TO_FLOAT
    checked = op.name in INTEGRAL_ONLY

    def fn(input, other, *, out: Tensor | None = None) -> Tensor:
        if checked:
            _check_kinds(op.name, input, other)
        result = binary(op, input, other, to_float)
        return result if out is None else write_out(out, result)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"Elementwise ``{op.name}`` of `input` and `other`, broadcast together."
    return fn


def binary_inplace(op, self: Tensor, other, to_float=False) -> Tensor:
    """``self op= other``: written into self's memory, whose dtype and shape must hold the
    result (PyTorch's casting and broadcasting rules for in-place ops)."""
    if (self._ag is not None or (isinstance(other, Tensor) and other._ag is not None)) and \
            STATE.grad_enabled:
        return _rebase_inplace(self, binary(op, self, other, to_float))
    result_dtype = _dtype.promote_operands((self, other))
    if to_float and result_dtype.rank < _dtype.FLOATING:
        result_dtype = _dtype.DEFAULTS.float
    inplace_result(self, result_dtype, op.name)
    data = self._data
    if isinstance(other, Tensor):
        if other._device is not self._device:
            from .._dispatch import device_mismatch

            raise device_mismatch(self._device, other._device)
        other = other._data
    if data.dtype != result_dtype.np:
        operand = data.astype(result_dtype.np)
        result = op.kernels[self._device](operand, other)
        _check_inplace_shape(data.shape, result.shape)
        data[...] = result
    else:
        try:
            op.kernels[self._device](data, other, out=data)
        except ValueError as exc:
            if "broadcast" not in str(exc):
                raise
            import numpy as np

            _check_inplace_shape(data.shape, np.broadcast_shapes(data.shape, np.shape(other)))
            raise
    bump_version(self)
    return self


def _check_inplace_shape(target, result) -> None:
    if tuple(target) != tuple(result):
        raise RuntimeError(
            f"output with shape {list(target)} doesn't match the broadcast shape {list(result)}"
        )


def _binary_inplace_method(op):
    to_float = op.name in TO_FLOAT
    checked = op.name in INTEGRAL_ONLY

    def fn(self: Tensor, other) -> Tensor:
        if checked:
            _check_kinds(op.name, self, other)
        return binary_inplace(op, self, other, to_float)

    fn.__name__ = fn.__qualname__ = op.name + "_"
    fn.__doc__ = f"In-place form of `{op.name}`."
    return fn


PLAIN_BINARY = {
    "mul", "maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "copysign", "fmod",
    "remainder", "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
    "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "pow",
}
for _name in PLAIN_BINARY:
    export(_binary_function(BINARY_OPS[_name]), method=True)
    if _name not in BOOL_RESULT or _name.startswith("logical"):
        export(_binary_inplace_method(BINARY_OPS[_name]), _name + "_", method=True,
               function=False)
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
_div, _div_trunc, _floor_div = BINARY_OPS["div"], BINARY_OPS["div_trunc"], BINARY_OPS["floor_divide"]


def _scaled(other, alpha):
    if alpha == 1:
        return other
    if isinstance(other, Tensor):
        return binary(_mul, other, alpha)
    return other * alpha


def add(input, other, *, alpha=1, out: Tensor | None = None) -> Tensor:
    """``input + alpha * other``, broadcast and promoted."""
    result = binary(_add, input, _scaled(other, alpha))
    return result if out is None else write_out(out, result)


def sub(input, other, *, alpha=1, out: Tensor | None = None) -> Tensor:
    """``input - alpha * other``, broadcast and promoted."""
    _check_bool_sub(input, other)
    result = binary(_sub, input, _scaled(other, alpha))
    return result if out is None else write_out(out, result)


def _check_bool_sub(a, b) -> None:
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype.kind == "b" and \
            b._data.dtype.kind == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )


def rsub(input, other, *, alpha=1) -> Tensor:
    """``other - alpha * input``."""
    return sub(other, input, alpha=alpha)


def add_(self: Tensor, other, *, alpha=1) -> Tensor:
    return binary_inplace(_add, self, _scaled(other, alpha))


def sub_(self: Tensor, other, *, alpha=1) -> Tensor:
    _check_bool_sub(self, other)
    return binary_inplace(_sub, self, _scaled(other, alpha))


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
        return _floor_div, False
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
    result = add(input, mul(weight, sub(end, input)))
    return result if out is None else write_out(out, result)


mul = PUBLIC["mul"]


def lerp_(self: Tensor, end: Tensor, weight) -> Tensor:
    return binary_inplace(_add, self, mul(weight, sub(end, self)))


export(lerp, method=True)
export(lerp_, method=True, function=False)


# -- clamp ----------------------------------------------------------------------------------
def _clamp_kernel(xp):
    def kernel(x, low, high, out=None):
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
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        result = input
        if min is not None:
            result = binary(BINARY_OPS["maximum"], result, min)
        if max is not None:
            result = binary(BINARY_OPS["minimum"], result, max)
    else:
        bounds_rank = _builtin_max(_dtype.SCALAR_RANK.get(type(b), 0) for b in (min, max)
                                   if b is not None)
        x = input
        if bounds_rank > x.dtype.rank:
            x = x.to(_dtype.default_for_rank(bounds_rank))
        result = call(clamp_op, (x,), min, max)
    return result if out is None else write_out(out, result)


_builtin_max = max


def clamp_(self: Tensor, min=None, max=None) -> Tensor:  # noqa: A002
    if isinstance(min, Tensor) or isinstance(max, Tensor) or (
        self._ag is not None and STATE.grad_enabled
    ):
        return _rebase_inplace(self, clamp(self, min, max))
    return _param_inplace(self, clamp_op, min, max)


def clamp_min(input: Tensor, min) -> Tensor:  # noqa: A002
    return clamp(input, min=min)


def clamp_max(input: Tensor, max) -> Tensor:  # noqa: A002
    return clamp(input, max=max)


export(clamp, method=True)
export(clamp, "clip", method=True)
export(clamp_, method=True)
export(clamp_, "clip_", method=True)
export(clamp_min, method=True)
export(clamp_max, method=True)


# -- operators ------------------------------------------------------------------------------
def _operator(op, reflected=False, to_float=False):
    if reflected:
        def method(self, other):
            return binary(op, other, self, to_float)
    else:
        def method(self, other):
            return binary(op, self, other, to_float)

    return method


def _comparison(op):
    def method(self, other):
        if not isinstance(other, (Tensor, bool, int, float, complex)):
            if other is None or isinstance(other, (str, list, tuple, dict)):
                return NotImplemented
        return binary(op, self, other)

    return method


Tensor.__add__ = _operator(_add)
Tensor.__radd__ = _operator(_add, reflected=True)
Tensor.__iadd__ = lambda self, other: binary_inplace(_add, self, other)
Tensor.__sub__ = lambda self, other: sub(self, other)
Tensor.__rsub__ = lambda self, other: sub(other, self)
Tensor.__isub__ = lambda self, other: sub_(self, other)
Tensor.__mul__ = _operator(_mul)
Tensor.__rmul__ = _operator(_mul, reflected=True)
Tensor.__imul__ = lambda self, other: binary_inplace(_mul, self, other)
Tensor.__truediv__ = _operator(_div, to_float=True)
Tensor.__rtruediv__ = _operator(_div, reflected=True, to_float=True)
Tensor.__itruediv__ = lambda self, other: binary_inplace(_div, self, other, True)
Tensor.__floordiv__ = _operator(_floor_div)
Tensor.__rfloordiv__ = _operator(_floor_div, reflected=True)
Tensor.__ifloordiv__ = lambda self, other: binary_inplace(_floor_div, self, other)
Tensor.__mod__ = _operator(BINARY_OPS["remainder"])
Tensor.__rmod__ = _operator(BINARY_OPS["remainder"], reflected=True)
Tensor.__imod__ = lambda self, other: binary_inplace(BINARY_OPS["remainder"], self, other)
Tensor.__pow__ = _operator(BINARY_OPS["pow"])
Tensor.__rpow__ = _operator(BINARY_OPS["pow"], reflected=True)
Tensor.__ipow__ = lambda self, other: binary_inplace(BINARY_OPS["pow"], self, other)
for _dunder, _name in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                       ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift")):
    _fn = PUBLIC[_name]
    _inplace = getattr(Tensor, _name + "_")
    setattr(Tensor, f"__{_dunder}__", lambda self, other, _fn=_fn: _fn(self, other))
    setattr(Tensor, f"__r{_dunder}__", lambda self, other, _fn=_fn: _fn(other, self))
    setattr(Tensor, f"__i{_dunder}__", _inplace)
Tensor.__eq__ = _comparison(BINARY_OPS["eq"])
Tensor.__ne__ = _comparison(BINARY_OPS["ne"])
Tensor.__lt__ = _comparison(BINARY_OPS["lt"])
Tensor.__le__ = _comparison(BINARY_OPS["le"])
Tensor.__gt__ = _comparison(BINARY_OPS["gt"])
Tensor.__ge__ = _comparison(BINARY_OPS["ge"])
