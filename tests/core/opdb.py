"""The op table: one row per op (or per variant of an op) with its sample inputs.

A row (`OpInfo`) names the op by its torch name (tocha's is the same), says how to call it on a
library (``tocha`` or ``torch``: the same function serves both), how to make sample inputs for
a dtype, and what else the op offers (an in-place method, ``out=``, a NumPy reference, whether
it is differentiable). `tests/core/test_ops.py` runs every row against PyTorch and NumPy;
tocha-autograd's gradcheck walks the rows marked ``differentiable``.

Adding an op is adding a row. Samples hold NumPy arrays in their *storage* dtype (bfloat16
values are held as float32, already rounded) and Python scalars; `to_lib` turns an array into a
tensor of the wanted dtype, keeping its strides (so transposed samples stay non-contiguous).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

ALL_DTYPES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")

# NaN with its sign bit set: PyTorch's float32 -> bfloat16 cast sets it on every NaN.
NAN = -np.nan
# Shapes of unary samples: 0-dim, size-0, vector, matrix (also transposed), 3-d.
UNARY_SHAPES = ((), (0,), (7,), (3, 4), (2, 3, 4))
# Pairs of broadcastable shapes for binary samples.
BINARY_SHAPES = (
    ((), ()),
    ((5,), (5,)),
    ((3, 4), (4,)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (3, 1)),
    ((0,), (1,)),
    ((2, 0, 3), (3,)),
    ((4,), ()),
    ((), (2, 3)),
)


@dataclass
class Sample:
    """Arguments of one call: NumPy arrays become tensors, anything else is passed as is."""

    args: tuple
    kwargs: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        parts = [
            f"array{a.shape}{'T' if _transposed(a) else ''}"
            if isinstance(a, np.ndarray)
            else repr(a)
            for a in self.args
        ]
        parts += [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"Sample({', '.join(parts)})"


def _transposed(a: np.ndarray) -> bool:
    return a.ndim > 1 and not a.flags.c_contiguous


@dataclass
class OpInfo:
    """One row of the table.

    name: the op's torch name; ``variant`` tells rows of one op apart (``div`` / ``trunc``).
    call: ``call(lib, *args, **kwargs)``; defaults to ``lib.<name>(*args, **kwargs)``.
    samples: ``samples(rng, dtype) -> [Sample]``.
    dtypes: the dtypes to try; where torch refuses one, tocha must raise the same exception.
    inplace: the Tensor method of the in-place form (``"exp_"``), or None.
    out: whether the function takes ``out=``.
    ref: a NumPy function of the same arrays (or None), checked in float64 without torch.
    differentiable: whether gradcheck applies (float64 and complex128 samples).
    tol: per-dtype ``(rtol, atol)`` overrides.
    """

    name: str
    samples: Callable
    call: Callable | None = None
    variant: str = ""
    dtypes: tuple = ALL_DTYPES
    inplace: str | None = None
    out: bool = True
    ref: Callable | None = None
    differentiable: bool = True
    tol: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.name}.{self.variant}" if self.variant else self.name

    def __call__(self, lib, *args, **kwargs):
        if self.call is not None:
            return self.call(lib, *args, **kwargs)
        return getattr(lib, self.name)(*args, **kwargs)

    def sample_inputs(self, dtype: str, seed: int = 0) -> list:
        return self.samples(np.random.default_rng(seed), dtype)


# -- making arrays --------------------------------------------------------------------------
def storage(dtype: str) -> np.dtype:
    """The NumPy dtype samples of `dtype` are held in (float32 for bfloat16)."""
    return np.dtype("float32" if dtype == "bfloat16" else dtype)


def make_array(
    rng, shape, dtype: str, domain=(-4.0, 4.0), int_domain=(-9, 9), transpose=False
) -> np.ndarray:
    """Random values of `dtype` in `domain` (ints in `int_domain`, clipped to the dtype)."""
    if transpose:
        return make_array(rng, shape[::-1], dtype, domain, int_domain).T
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        low, high = max(int_domain[0], info.min), min(int_domain[1], info.max)
        return np.asarray(rng.integers(low, high + 1, shape), dtype=dtype)
    values = np.asarray(rng.uniform(*domain, size=shape))
    if dtype in COMPLEX_DTYPES:
        values = np.asarray(values + 1j * rng.uniform(*domain, size=shape))
    array = values.astype(storage(dtype))
    if dtype == "bfloat16":
        import ml_dtypes

        array = array.astype(ml_dtypes.bfloat16).astype(np.float32)
    return array


def scalar_for(dtype: str, value: float = 2.5):
    """A Python scalar of `dtype`'s category."""
    if dtype == "bool":
        return True
    if dtype in INT_DTYPES:
        return int(abs(value)) if dtype == "uint8" else int(value)
    if dtype in COMPLEX_DTYPES:
        return complex(value, -1.0)
    return float(value)


def to_lib(lib, value, dtype: str):
    """A library tensor of `dtype` holding a sample array (a fresh copy, strides kept)."""
    if not isinstance(value, np.ndarray):
        return value
    t = lib.from_numpy(np.copy(value, order="K"))
    return t.to(lib.bfloat16) if dtype == "bfloat16" else t


# -- sample generators ----------------------------------------------------------------------
def unary_samples(domain=(-4.0, 4.0), int_domain=(-9, 9), special=False, **kwargs):
    """Samples of a unary op: every shape of UNARY_SHAPES, a transposed matrix, and (with
    `special`) NaN and infinities for floating dtypes."""

    def samples(rng, dtype):
        out = [
            Sample((make_array(rng, s, dtype, domain, int_domain),), dict(kwargs))
            for s in UNARY_SHAPES
        ]
        out.append(
            Sample((make_array(rng, (3, 4), dtype, domain, int_domain, True),), dict(kwargs))
        )
        if special and dtype in FLOAT_DTYPES + COMPLEX_DTYPES:
            values = np.array([NAN, np.inf, -np.inf, 0.0, -0.0, 1.5], dtype=storage(dtype))
            out.append(Sample((values,), dict(kwargs)))
        return out

    return samples


def binary_samples(
    domain=(-4.0, 4.0),
    other_domain=None,
    int_domain=(-9, 9),
    other_int_domain=None,
    scalars=True,
    nonzero_other=False,
    special=False,
    **kwargs,
):
    """Samples of a binary op: broadcastable shape pairs, a transposed operand, a Python
    scalar on the right, both operands of `dtype`. `other_*` restrict the second operand
    (a divisor's domain, a shift count); `nonzero_other` keeps zero out of it."""
    other_domain = other_domain or domain
    other_int_domain = other_int_domain or int_domain

    def other(rng, shape, dtype, transpose=False):
        b = make_array(rng, shape, dtype, other_domain, other_int_domain, transpose)
        if nonzero_other and b.size:
            b = np.where(b == 0, np.ones_like(b), b).astype(b.dtype)
            if transpose:
                b = np.ascontiguousarray(b.T).T
        return b

    def samples(rng, dtype):
        out = []
        for sa, sb in BINARY_SHAPES:
            a = make_array(rng, sa, dtype, domain, int_domain)
            out.append(Sample((a, other(rng, sb, dtype)), dict(kwargs)))
        a = make_array(rng, (3, 4), dtype, domain, int_domain, transpose=True)
        out.append(Sample((a, other(rng, (3, 4), dtype, transpose=True)), dict(kwargs)))
        if scalars:
            value = 2 if nonzero_other or other_int_domain[0] >= 0 else -2.5
            if dtype not in INT_DTYPES + ("bool",):
                value = float(np.clip(2.5, *other_domain))
            s = scalar_for(dtype, value)
            out.append(
                Sample((make_array(rng, (2, 3), dtype, domain, int_domain), s), dict(kwargs))
            )
        if special and dtype in FLOAT_DTYPES:
            a = np.array([NAN, 1.0, np.inf, -np.inf, 0.0, NAN], dtype=storage(dtype))
            b = np.array([1.0, NAN, 2.0, np.inf, -0.0, NAN], dtype=storage(dtype))
            out.append(Sample((a, b), dict(kwargs)))
        return out

    return samples


def scalar_left_samples(other_int_domain=(-9, 9), nonzero=False, domain=(-4.0, 4.0)):
    """Samples of a reflected operator: a Python scalar on the left of a tensor."""

    def samples(rng, dtype):
        out = []
        for shape in ((), (5,), (3, 4)):
            b = make_array(rng, shape, dtype, domain, other_int_domain)
            if nonzero and b.size:
                b = np.where(b == 0, np.ones_like(b), b).astype(b.dtype)
            out.append(Sample((scalar_for(dtype, 3.0), b)))
        return out

    return samples


def ternary_samples(third_scalar=True, **kwargs):
    """Samples of ``f(input, end, weight)``-like ops: three broadcastable tensors, or a
    Python-float third argument."""

    def samples(rng, dtype):
        out = []
        for sa, sb, sc in (
            ((5,), (5,), (5,)),
            ((3, 4), (4,), (3, 1)),
            ((), (), ()),
            ((0,), (0,), ()),
        ):
            out.append(Sample(tuple(make_array(rng, s, dtype) for s in (sa, sb, sc)), dict(kwargs)))
        if third_scalar:
            out.append(
                Sample(
                    (make_array(rng, (2, 3), dtype), make_array(rng, (2, 3), dtype), 0.25),
                    dict(kwargs),
                )
            )
        return out

    return samples


def clamp_samples(tensor_bounds: bool):
    """Samples of clamp: scalar bounds (min only, max only, both, min > max) or tensor
    bounds (broadcast)."""

    def samples(rng, dtype):
        low, high = scalar_for(dtype, -1.5), scalar_for(dtype, 2.0)
        x = make_array(rng, (3, 4), dtype)
        xt = make_array(rng, (3, 4), dtype, transpose=True)
        if not tensor_bounds:
            return [
                Sample((x,), {"min": low, "max": high}),
                Sample((xt,), {"min": low}),
                Sample((x,), {"max": high}),
                Sample((x,), {"min": high, "max": low}),
                Sample((make_array(rng, (), dtype),), {"min": low, "max": high}),
            ]
        lo = make_array(rng, (4,), dtype, (-3.0, 0.0), (-3, 0))
        hi = make_array(rng, (3, 1), dtype, (0.0, 3.0), (0, 3))
        return [
            Sample((x,), {"min": lo, "max": hi}),
            Sample((xt,), {"min": lo}),
            Sample((x,), {"max": hi}),
        ]

    return samples


# -- rows -----------------------------------------------------------------------------------
def _unary(
    name,
    ref=None,
    domain=(-4.0, 4.0),
    int_domain=(-9, 9),
    inplace=True,
    differentiable=True,
    special=False,
    tol=None,
):
    return OpInfo(
        name,
        unary_samples(domain, int_domain, special),
        inplace=name + "_" if inplace else None,
        ref=ref,
        differentiable=differentiable,
        tol=tol or {},
    )


UNIT = (-0.95, 0.95)
POSITIVE = (0.05, 5.0)
LOOSE16 = {"float16": (5e-3, 5e-3), "bfloat16": (2e-2, 2e-2)}
# round(decimals) scales, rounds and unscales: in 16 bits a value may land one step away.
ROUNDED16 = {"float16": (5e-3, 0.1), "bfloat16": (3e-2, 0.2)}

UNARY_ROWS = [
    _unary("abs", np.abs),
    _unary("absolute", np.abs),
    _unary("neg", np.negative),
    _unary("negative", np.negative),
    _unary("exp", np.exp, tol=LOOSE16),
    _unary("exp2", np.exp2, tol=LOOSE16),
    _unary("expm1", np.expm1, tol=LOOSE16),
    _unary("log", np.log, POSITIVE, (1, 9), special=True),
    _unary("log2", np.log2, POSITIVE, (1, 9)),
    _unary("log10", np.log10, POSITIVE, (1, 9)),
    _unary("log1p", np.log1p, UNIT, (0, 9)),
    _unary("sqrt", np.sqrt, POSITIVE, (0, 9), special=True),
    _unary("rsqrt", lambda x: 1 / np.sqrt(x), POSITIVE, (1, 9)),
    _unary("square", np.square),
    _unary("sin", np.sin),
    _unary("cos", np.cos),
    _unary("tan", np.tan, UNIT),
    _unary("asin", np.arcsin, UNIT, (0, 1)),
    _unary("arcsin", np.arcsin, UNIT, (0, 1)),
    _unary("acos", np.arccos, UNIT, (0, 1)),
    _unary("arccos", np.arccos, UNIT, (0, 1)),
    _unary("atan", np.arctan),
    _unary("arctan", np.arctan),
    _unary("sinh", np.sinh),
    _unary("cosh", np.cosh),
    _unary("tanh", np.tanh, special=True),
    _unary("asinh", np.arcsinh),
    _unary("arcsinh", np.arcsinh),
    _unary("acosh", np.arccosh, (1.05, 5.0), (1, 9)),
    _unary("arccosh", np.arccosh, (1.05, 5.0), (1, 9)),
    _unary("atanh", np.arctanh, UNIT, (0, 0)),
    _unary("arctanh", np.arctanh, UNIT, (0, 0)),
    _unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)), special=True),
    _unary("relu", lambda x: np.maximum(x, 0)),
    _unary("erf", None, tol=LOOSE16),
    _unary("erfc", None, tol=LOOSE16),
    _unary("erfinv", None, UNIT, (0, 0), tol=LOOSE16),
    _unary("floor", np.floor, special=True),
    _unary("ceil", np.ceil),
    _unary("trunc", np.trunc),
    _unary("fix", np.trunc),
    _unary("frac", lambda x: x - np.trunc(x)),
    _unary("sign", np.sign),
    _unary("sgn", np.sign),
    _unary("reciprocal", np.reciprocal, POSITIVE, (1, 9)),
    _unary("bitwise_not", None, differentiable=False),
    _unary("logical_not", np.logical_not, differentiable=False),
    _unary("isnan", np.isnan, inplace=False, differentiable=False, special=True),
    _unary("isinf", np.isinf, inplace=False, differentiable=False, special=True),
    _unary("isfinite", np.isfinite, inplace=False, differentiable=False, special=True),
    _unary("isposinf", np.isposinf, inplace=False, differentiable=False, special=True),
    _unary("isneginf", np.isneginf, inplace=False, differentiable=False, special=True),
    _unary("signbit", np.signbit, inplace=False, differentiable=False, special=True),
    _unary("positive", lambda x: x, inplace=False),
    OpInfo("round", unary_samples((-40.0, 40.0)), inplace="round_", ref=np.round),
    OpInfo(
        "round",
        unary_samples((-40.0, 40.0), (-999, 999), decimals=1),
        variant="decimals",
        inplace="round_",
        ref=lambda x: np.round(x, 1),
        tol=ROUNDED16,
    ),
    OpInfo(
        "round",
        unary_samples((-400.0, 400.0), (-999, 999), decimals=-1),
        variant="negative_decimals",
        inplace="round_",
        ref=lambda x: np.round(x, -1),
        tol=ROUNDED16,
    ),
    OpInfo("nan_to_num", unary_samples(special=True), inplace="nan_to_num_", ref=np.nan_to_num),
    OpInfo(
        "nan_to_num",
        unary_samples(special=True, nan=1.5, posinf=9.0, neginf=-9.0),
        variant="values",
        inplace="nan_to_num_",
        ref=lambda x: np.nan_to_num(x, nan=1.5, posinf=9.0, neginf=-9.0),
    ),
]

INT_DIVISOR = {"other_int_domain": (-5, 5), "nonzero_other": True}
BINARY_ROWS = [
    OpInfo("add", binary_samples(), inplace="add_", ref=np.add),
    OpInfo(
        "add", binary_samples(alpha=2), variant="alpha", inplace="add_", ref=lambda a, b: a + 2 * b
    ),
    OpInfo("sub", binary_samples(), inplace="sub_", ref=np.subtract),
    OpInfo(
        "sub", binary_samples(alpha=3), variant="alpha", inplace="sub_", ref=lambda a, b: a - 3 * b
    ),
    OpInfo("subtract", binary_samples(), inplace="subtract_", ref=np.subtract),
    OpInfo("rsub", binary_samples(), out=False, ref=lambda a, b: b - a),
    OpInfo("mul", binary_samples(), inplace="mul_", ref=np.multiply),
    OpInfo("multiply", binary_samples(), inplace="multiply_", ref=np.multiply),
    OpInfo(
        "div",
        binary_samples(other_domain=POSITIVE, **INT_DIVISOR),
        inplace="div_",
        ref=np.true_divide,
    ),
    OpInfo(
        "div",
        binary_samples(other_domain=POSITIVE, rounding_mode="trunc", **INT_DIVISOR),
        variant="trunc",
        inplace="div_",
        ref=lambda a, b: np.trunc(a / b),
        differentiable=False,
    ),
    OpInfo(
        "div",
        binary_samples(other_domain=POSITIVE, rounding_mode="floor", **INT_DIVISOR),
        variant="floor",
        inplace="div_",
        ref=lambda a, b: np.floor(a / b),
        differentiable=False,
    ),
    OpInfo(
        "divide",
        binary_samples(other_domain=POSITIVE, **INT_DIVISOR),
        inplace="divide_",
        ref=np.true_divide,
    ),
    OpInfo(
        "true_divide",
        binary_samples(other_domain=POSITIVE, **INT_DIVISOR),
        inplace="true_divide_",
        ref=np.true_divide,
    ),
    OpInfo(
        "floor_divide",
        binary_samples(other_domain=POSITIVE, **INT_DIVISOR),
        inplace="floor_divide_",
        ref=np.floor_divide,
        differentiable=False,
    ),
    OpInfo(
        "remainder",
        binary_samples(other_domain=POSITIVE, **INT_DIVISOR),
        inplace="remainder_",
        ref=np.remainder,
    ),
    OpInfo(
        "fmod", binary_samples(other_domain=POSITIVE, **INT_DIVISOR), inplace="fmod_", ref=np.fmod
    ),
    OpInfo(
        "pow",
        binary_samples(
            domain=POSITIVE, other_domain=(-2.0, 2.0), int_domain=(-3, 3), other_int_domain=(0, 3)
        ),
        inplace="pow_",
        ref=np.power,
        tol=LOOSE16,
    ),
    OpInfo("maximum", binary_samples(special=True), inplace=None, ref=np.maximum),
    OpInfo("minimum", binary_samples(special=True), inplace=None, ref=np.minimum),
    OpInfo("fmax", binary_samples(special=True), inplace=None, ref=np.fmax),
    OpInfo("fmin", binary_samples(special=True), inplace=None, ref=np.fmin),
    OpInfo("atan2", binary_samples(), inplace="atan2_", ref=np.arctan2),
    OpInfo("arctan2", binary_samples(), inplace="arctan2_", ref=np.arctan2),
    OpInfo("hypot", binary_samples(), inplace="hypot_", ref=np.hypot),
    OpInfo("copysign", binary_samples(special=True), inplace="copysign_", ref=np.copysign),
]
for _name, _ref in (
    ("eq", np.equal),
    ("ne", np.not_equal),
    ("lt", np.less),
    ("le", np.less_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
    ("greater", np.greater),
    ("greater_equal", np.greater_equal),
    ("less", np.less),
    ("less_equal", np.less_equal),
    ("not_equal", np.not_equal),
):
    BINARY_ROWS.append(
        OpInfo(
            _name, binary_samples(special=True), inplace=_name + "_", ref=_ref, differentiable=False
        )
    )
for _name in ("logical_and", "logical_or", "logical_xor"):
    BINARY_ROWS.append(
        OpInfo(
            _name,
            binary_samples(),
            inplace=_name + "_",
            ref=getattr(np, _name),
            differentiable=False,
        )
    )
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    BINARY_ROWS.append(OpInfo(_name, binary_samples(), inplace=_name + "_", differentiable=False))
for _name in ("bitwise_left_shift", "bitwise_right_shift"):
    BINARY_ROWS.append(
        OpInfo(
            _name,
            binary_samples(int_domain=(0, 9), other_int_domain=(0, 3)),
            inplace=_name + "_",
            differentiable=False,
        )
    )

OTHER_ROWS = [
    OpInfo(
        "lerp", ternary_samples(), inplace="lerp_", ref=lambda a, b, w: a + w * (b - a), tol=LOOSE16
    ),
    OpInfo("clamp", clamp_samples(False), inplace="clamp_", ref=None),
    OpInfo("clamp", clamp_samples(True), variant="tensor_bounds", inplace="clamp_"),
    OpInfo("clip", clamp_samples(False), inplace="clip_"),
    OpInfo("clamp_min", binary_samples(), inplace="clamp_min_"),
    OpInfo("clamp_max", binary_samples(), inplace="clamp_max_"),
]


def _op_row(symbol, fn, inplace=None, reflected=False, differentiable=True, **sample_kwargs):
    """A row for a Python operator (``a + b``); `reflected` puts a scalar on the left;
    `differentiable` False where PyTorch's derivative is not implemented."""
    if reflected:
        samples = scalar_left_samples(**sample_kwargs)
    else:
        samples = binary_samples(**sample_kwargs)
    return OpInfo(
        f"operator{symbol}",
        samples,
        call=lambda lib, *a: fn(*a),
        variant="reflected" if reflected else "",
        inplace=inplace,
        out=False,
        ref=None if fn in BITWISE else fn,
        tol=LOOSE16,
        differentiable=differentiable,
    )


_DIVISOR = {"other_domain": POSITIVE, **INT_DIVISOR}
BITWISE = (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift)
OPERATOR_ROWS = [
    _op_row("+", operator.add, "__iadd__"),
    _op_row("-", operator.sub, "__isub__"),
    _op_row("*", operator.mul, "__imul__"),
    _op_row("/", operator.truediv, "__itruediv__", **_DIVISOR),
    _op_row("//", operator.floordiv, "__ifloordiv__", differentiable=False, **_DIVISOR),
    _op_row("%", operator.mod, "__imod__", **_DIVISOR),
    _op_row(
        "**",
        operator.pow,
        "__ipow__",
        domain=POSITIVE,
        other_domain=(-2.0, 2.0),
        int_domain=(0, 3),
        other_int_domain=(0, 3),
    ),
    _op_row("&", operator.and_, "__iand__"),
    _op_row("|", operator.or_, "__ior__"),
    _op_row("^", operator.xor, "__ixor__"),
    _op_row("<<", operator.lshift, "__ilshift__", int_domain=(0, 9), other_int_domain=(0, 3)),
    _op_row(">>", operator.rshift, "__irshift__", int_domain=(0, 9), other_int_domain=(0, 3)),
    _op_row("==", operator.eq),
    _op_row("!=", operator.ne),
    _op_row("<", operator.lt),
    _op_row("<=", operator.le),
    _op_row(">", operator.gt),
    _op_row(">=", operator.ge),
    _op_row("+", operator.add, reflected=True),
    _op_row("-", operator.sub, reflected=True),
    _op_row("*", operator.mul, reflected=True),
    _op_row("/", operator.truediv, reflected=True, nonzero=True),
    _op_row("//", operator.floordiv, reflected=True, differentiable=False, nonzero=True),
    _op_row("%", operator.mod, reflected=True, differentiable=False, nonzero=True),
    _op_row("**", operator.pow, reflected=True, other_int_domain=(0, 3)),
    _op_row("&", operator.and_, reflected=True),
    _op_row("|", operator.or_, reflected=True),
    _op_row("^", operator.xor, reflected=True),
    _op_row("<<", operator.lshift, reflected=True, other_int_domain=(0, 3)),
    _op_row(">>", operator.rshift, reflected=True, other_int_domain=(0, 3)),
    OpInfo("operator~", unary_samples(), call=lambda lib, x: ~x, out=False, differentiable=False),
    OpInfo(
        "operator-",
        unary_samples(),
        call=lambda lib, x: -x,
        variant="unary",
        out=False,
        ref=np.negative,
    ),
    OpInfo("operator+", unary_samples(), call=lambda lib, x: +x, variant="unary", out=False),
    OpInfo("operator.abs", unary_samples(), call=lambda lib, x: abs(x), out=False, ref=np.abs),
]

OPS = UNARY_ROWS + BINARY_ROWS + OTHER_ROWS + OPERATOR_ROWS
