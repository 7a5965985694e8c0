"""The derivative table: one entry per differentiable primitive of tocha-core.

``d(name, saves, formula)``: `formula(grad, out, *args)` returns one gradient per argument of
the op (None where an argument gets none), written in tocha ops so that ``create_graph=True``
differentiates them again. `args` are the op's arguments as the dispatcher received them;
`saves` names what the formula reads: argument positions ("01") and "o" for the output.
An argument tensor not saved reaches the formula as a `TensorMeta` (shape, dtype, device).
Gradients may keep a broadcast shape: the engine sums them back to each input's shape.
Complex gradients are PyTorch's: for a real loss L of z = x + iy the gradient is
``dL/dx + i dL/dy``, so a holomorphic f passes back ``grad * conj(f'(z))`` (and a product
conjugates the other factors), while its forward rule multiplies the tangent by f' itself.

Beside each derivative, the op's forward-mode rule (`_forward`): ``fwd_linear`` for ops
linear in their tensor arguments, ``fwd_multilinear`` for products, ``fwd(name, rule)`` with
``rule(tangents, out, *args)`` otherwise. The rules of amax/amin, median, prod, norm and
scatter_reduce take their weights from the same slopes as the derivative (for complex
inputs, the conjugates of its gradient for a gradient of ones), so that both modes agree
at ties and zeros.
"""

from __future__ import annotations

import cmath
import math
import operator
import re
import sys

import numpy as np

import tocha
from tocha.library import REGISTRY, call, computed_in_float32

from . import _node_names  # noqa: F401 (before the nodes are declared: their names)
from ._forward import _tensor_positions, fwd, fwd_linear, fwd_multilinear
from ._graph import TensorMeta, node_type


class Derivative:
    """One entry of the table; `special` says the formula accepts None gradients or takes
    ``needs=`` (the recorder then marks its nodes so); `node_type` is the class of the op's
    nodes."""

    __slots__ = (
        "formula",
        "saves",
        "needed_by",
        "materialize",
        "takes_needs",
        "special",
        "node_type",
    )

    def __init__(self, name: str, formula, saves, needed_by=None):
        self.node_type = node_type(name)
        self.formula = formula
        self.saves = saves
        self.needed_by = needed_by
        self.materialize = not getattr(formula, "accepts_none", False)
        self.takes_needs = getattr(formula, "takes_needs", False)
        self.special = not self.materialize or self.takes_needs or needed_by is not None


FORMULAS: dict[str, Derivative] = {}


def d(name: str, saves: str, formula, needed_by: dict[str, str] | None = None) -> None:
    """Declare the derivative of primitive `name`. `saves`: argument positions ("01"), "2+"
    for position 2 and every later one, then "o" for the outputs: all of them, or those
    whose numbers follow ("o12": outputs 1 and 2, "o-1": the last; the others stay free to
    change in place).
    A formula with the attribute ``takes_needs`` also receives ``needs=``: per argument,
    whether its gradient is wanted; one with ``accepts_none`` receives None (not zeros) for
    outputs that got no gradient. An output not saved reaches the formula as None.
    `needed_by` maps a saved item ("0", "o") to the arguments whose gradients alone need it
    ({"0": "1"}): when none of them is wanted, it is not saved (an argument then reaches
    the formula as its metadata), so later in-place changes to it are allowed."""
    if name in FORMULAS:
        raise ValueError(f"derivative of {name!r} is declared twice")
    arguments, o, outputs = saves.partition("o")
    if "+" in arguments:
        head = arguments[: arguments.index("+")]
        digits = len(head) - len(head.rstrip("0123456789"))
        # position `start` and after (a range's `in` is a C-level comparison)
        positions = range(int(head[len(head) - digits :]), sys.maxsize)
    else:
        positions = frozenset(int(c) for c in arguments)
    save_out = frozenset(map(int, re.findall("-?[0-9]", outputs))) if outputs else bool(o)
    if needed_by is not None:
        needed_by = {
            item if item == "o" else int(item): tuple(int(c) for c in users)
            for item, users in needed_by.items()
        }
    FORMULAS[name] = Derivative(name, formula, (positions, save_out), needed_by)


def zero(g):
    return tocha.zeros_like(g)


def _plus(a, b):
    """The sum of two tangent terms, either of which may be None (no term)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _times(t, factor):
    """A tangent term `t * factor`, None when `t` is."""
    return None if t is None else t * factor


def _over(t, divisor, sign=1):
    """A tangent term `sign * t / divisor`, None when `t` is."""
    if t is None:
        return None
    return t / divisor if sign == 1 else -t / divisor


def _or_zeros(t, like):
    """A tangent, or zeros like `like` in place of a missing one."""
    return tocha.zeros_like(like) if t is None else t


def _constant(t, out, *args):
    """The forward rule of a piecewise-constant op: a zero tangent."""
    return tocha.zeros_like(out)


def _real_part(t, a):
    """``Re(conj(a) * t)``: the tangent of a real function of a complex tensor whose gradient
    (PyTorch's convention) is `a`; ``a * t`` for real tensors."""
    if t.is_complex():
        return (conj(a) * t).real
    return t * a


def _sum(t, dims, keepdim, dtype=None):
    """`t` summed over `dims` (every dim for None), as a reduction over them sums."""
    return call(REGISTRY["sum"], (t,), dims, keepdim, dtype)


def _linear_in(name: str, *positions: int):
    """The forward rule of an op linear in its arguments at `positions`, the others (indices,
    masks) held constant: the op applied to their tangents, zeros for those without."""
    op = REGISTRY[name]

    def rule(t, out, *args):
        args = list(args)
        for i in positions:
            args[i] = _or_zeros(t[i], args[i])
        k = _tensor_positions(args)
        return call(op, args[:k], *args[k:])

    return rule


LN2, LN10 = math.log(2.0), math.log(10.0)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

# -- unary ----------------------------------------------------------------------------------
d("abs", "0", lambda g, out, x: g * x.sgn())
fwd("abs", lambda t, out, x: _real_part(t[0], x.sgn()))
d("neg", "", lambda g, out, x: -g)
fwd_linear("neg")


def _acosh_derivative(x):
    """1 / sqrt(x^2 - 1); for complex x ``1 / (sqrt(x - 1) sqrt(x + 1))``, the derivative of
    the principal branch (sqrt(x^2 - 1) takes the other sign where Re x < 0)."""
    if x.is_complex():
        return ((x - 1).sqrt() * (x + 1).sqrt()).reciprocal()
    return (x * x - 1).rsqrt()


# Holomorphic functions: name: (saves, f'(out, x)); the gradient is ``g * conj(f')``, which
# for real inputs is just ``g * f'``.
HOLOMORPHIC = {
    "exp": ("o", lambda out, x: out),
    "exp2": ("o", lambda out, x: out * LN2),
    "expm1": ("o", lambda out, x: out + 1),
    "log": ("0", lambda out, x: x.reciprocal()),
    "log2": ("0", lambda out, x: (x * LN2).reciprocal()),
    "log10": ("0", lambda out, x: (x * LN10).reciprocal()),
    "log1p": ("0", lambda out, x: (x + 1).reciprocal()),
    "sqrt": ("o", lambda out, x: (2 * out).reciprocal()),
    "rsqrt": ("o", lambda out, x: -0.5 * out * out * out),
    "square": ("0", lambda out, x: 2 * x),
    "sin": ("0", lambda out, x: x.cos()),
    "cos": ("0", lambda out, x: -x.sin()),
    "tan": ("o", lambda out, x: 1 + out * out),
    "asin": ("0", lambda out, x: (1 - x * x).rsqrt()),
    "acos": ("0", lambda out, x: -(1 - x * x).rsqrt()),
    "atan": ("0", lambda out, x: (1 + x * x).reciprocal()),
    "sinh": ("0", lambda out, x: x.cosh()),
    "cosh": ("0", lambda out, x: x.sinh()),
    "asinh": ("0", lambda out, x: (x * x + 1).rsqrt()),
    "acosh": ("0", lambda out, x: _acosh_derivative(x)),
    "atanh": ("0", lambda out, x: (1 - x * x).reciprocal()),
    "reciprocal": ("o", lambda out, x: -out * out),
}


def conj(t):
    """The complex conjugate of a complex tensor; real tensors and numbers unchanged."""
    if isinstance(t, tocha.Tensor) and t.is_complex():
        return t.conj()
    if isinstance(t, complex):
        return t.conjugate()
    return t


for _name, (_saves, _derivative) in HOLOMORPHIC.items():
    d(_name, _saves, lambda g, out, x, f=_derivative: g * conj(f(out, x)))
    fwd(_name, lambda t, out, x, f=_derivative: t[0] * f(out, x))


# tanh's backward is one PyTorch kernel: float16/bfloat16 in float32, rounded once
d("tanh", "o", computed_in_float32(lambda g, out, x: g * conj(1 - out * out)))
fwd("tanh", lambda t, out, x: t[0] * (1 - out * out))


def _sigmoid_grad(g, out, x):
    """``g * (1 - y) * y`` in PyTorch's order: float16 in itself, bfloat16 in float32 rounded
    once, as PyTorch's kernel; complex ``g * conj((1 - y) * y)``."""
    if out.is_complex():
        return g * conj((1 - out) * out)
    if out.dtype is tocha.bfloat16:
        return (g.float() * (1 - out.float()) * out.float()).to(out.dtype)
    return g * (1 - out) * out


d("sigmoid", "o", _sigmoid_grad)
fwd("sigmoid", lambda t, out, x: t[0] * (out * (1 - out)))


def _sgn_fwd(t, out, x):
    """sgn(z) = z / |z|: constant for real z; for complex z, the part of the tangent
    orthogonal to z, over |z| (0 at 0)."""
    if not x.is_complex():
        return tocha.zeros_like(out)
    size = x.abs()
    along = out * (conj(out) * t[0]).real
    return tocha.where(size == 0, 0.0, (t[0] - along) / tocha.where(size == 0, 1.0, size))


d("relu", "o", lambda g, out, x: g * (out > 0))
fwd("relu", lambda t, out, x: t[0] * (out > 0))
d("erf", "0", lambda g, out, x: g * TWO_OVER_SQRT_PI * (-x * x).exp())
fwd("erf", lambda t, out, x: t[0] * TWO_OVER_SQRT_PI * (-x * x).exp())
d("erfc", "0", lambda g, out, x: -g * TWO_OVER_SQRT_PI * (-x * x).exp())
fwd("erfc", lambda t, out, x: -t[0] * TWO_OVER_SQRT_PI * (-x * x).exp())
d("erfinv", "0", lambda g, out, x: g * SQRT_PI_OVER_TWO * x.erfinv().square().exp())
fwd("erfinv", lambda t, out, x: t[0] * SQRT_PI_OVER_TWO * (out * out).exp())
d("frac", "", lambda g, out, x: g)
fwd("frac", lambda t, out, x: t[0])
for _name in ("floor", "ceil", "trunc", "sign"):
    d(_name, "", lambda g, out, x: zero(g))


def _sgn(g, out, x):
    """Real inputs: zero. Complex: the part of g orthogonal to sgn(x), over |x| (0 at 0)."""
    if not x.is_complex():
        return zero(g)
    size = x.abs()
    along = (g * out.conj()).real * out
    return tocha.where(size == 0, 0, (g - along) / tocha.where(size == 0, 1, size))


d("sgn", "0o", _sgn)
for _name in ("floor", "ceil", "trunc", "sign"):
    fwd(_name, _constant)
fwd("sgn", _sgn_fwd)
d("round", "", lambda g, out, x, decimals: zero(g))
fwd("round", _constant)
d("nan_to_num", "0", lambda g, out, x, nan, posinf, neginf: g * x.isfinite())
fwd("nan_to_num", lambda t, out, x, nan, posinf, neginf: t[0] * x.isfinite())


# -- binary ---------------------------------------------------------------------------------
def _pow_x(x, y):
    """d(x ** y) / dx, 0 where y is 0 (x a tensor)."""
    if isinstance(y, tocha.Tensor):
        return tocha.where(y == 0, 0.0, y * x ** (y - 1))
    return y * x ** (y - 1) if y != 0 else tocha.zeros_like(x)


def _real_nonnegative(y):
    """Where the exponent `y` is a real number >= 0 (a complex one: with no imaginary part)."""
    if isinstance(y, tocha.Tensor):
        return (y.imag == 0) & (y.real >= 0) if y.is_complex() else y >= 0
    return y.imag == 0 and y.real >= 0 if isinstance(y, complex) else y >= 0


def _number_log(x, complex_result: bool):
    """The log of a number base: the principal complex log for a complex power (log(-2) =
    log 2 + i pi), NaN for a negative base of a real one; -inf at 0."""
    if x == 0:
        return -math.inf
    if complex_result:
        return cmath.log(x)
    return math.log(x) if x > 0 else math.nan


def _pow_y(out, x, y):
    """d(x ** y) / dy = x ** y log(x), 0 where x is 0 and y a real number >= 0 (y a tensor;
    a real base of a complex power taken as complex)."""
    if not isinstance(x, tocha.Tensor):
        slope = out * _number_log(x, out.is_complex())
        return tocha.where(_real_nonnegative(y), 0.0, slope) if x == 0 else slope
    base = x.to(out.dtype) if out.is_complex() and not x.is_complex() else x
    return tocha.where((x == 0) & _real_nonnegative(y), 0.0, out * base.log())


def _pow(g, out, x, y):
    """The output is saved only for a tensor exponent's gradient (None otherwise)."""
    dx = g * conj(_pow_x(x, y)) if isinstance(x, tocha.Tensor) else None
    return dx, None if out is None else g * conj(_pow_y(out, x, y))


def _pow_fwd(t, out, x, y):
    dx = None if t[0] is None else t[0] * _pow_x(x, y)
    return _plus(dx, None if t[1] is None else t[1] * _pow_y(out, x, y))


def _maximum(g, out, x, y):
    tie = (x == y) * 0.5
    return g * ((x > y) + tie), g * ((x < y) + tie)


def _minimum(g, out, x, y):
    tie = (x == y) * 0.5
    return g * ((x < y) + tie), g * ((x > y) + tie)


def _extremum_fwd(wins):
    """The forward rule of maximum (`wins` is >) or minimum (<): the tangent of the argument
    that is the result, the mean of both at ties (as PyTorch)."""

    def rule(t, out, x, y):
        tie = (x == y).to(out.dtype) * 0.5
        dx = None if t[0] is None else t[0] * (wins(x, y) + tie)
        return _plus(dx, None if t[1] is None else t[1] * (wins(y, x) + tie))

    return rule


def _copysign_ratio(out, x):
    """d copysign(x, y) / dx: out / x, 0 where x is 0."""
    return tocha.where(x == 0, 0.0, out / tocha.where(x == 0, 1.0, x))


def _copysign(g, out, x, y):
    return g * _copysign_ratio(out, x), zero(g)


def _clamp_mask(x, low, high):
    """Where clamp passes x through (bounds included)."""
    mask = tocha.ones_like(x, dtype=tocha.bool)
    if low is not None:
        mask = mask & (x >= low)
    if high is not None:
        mask = mask & (x <= high)
    return mask


def _clamp(g, out, x, low, high):
    return g * _clamp_mask(x, low, high), None, None


def _rounded_quotient(t, x, y, mode):
    """The tangent term of y in ``x - y * div(x, y, rounding_mode=mode)`` (remainder, fmod)."""
    return None if t is None else -t * tocha.div(x, y, rounding_mode=mode)


d("add", "", lambda g, out, x, y: (g, g))
fwd("add", lambda t, out, x, y: _plus(t[0], t[1]))
d("sub", "", lambda g, out, x, y: (g, -g))
fwd("sub", lambda t, out, x, y: _plus(t[0], None if t[1] is None else -t[1]))


def _mul(g, out, x, y):
    """A real gradient means a real product, so real factors: no conjugates to take. A
    Python number factor takes no gradient (none is computed for it); a factor kept as its
    metadata (its partner takes no gradient: PyTorch saves it only for that) neither."""
    if type(y) in _PYTHON_NUMBERS:
        return (g * y if not g.is_complex() else g * y.conjugate()), None
    if type(x) in _PYTHON_NUMBERS:
        return None, (g * x if not g.is_complex() else g * x.conjugate())
    if type(x) is TensorMeta:
        return (g * y if not g.is_complex() else g * conj(y)), None
    if type(y) is TensorMeta:
        return None, (g * x if not g.is_complex() else g * conj(x))
    if not g.is_complex():
        return g * y, g * x
    return g * conj(y), g * conj(x)


_PYTHON_NUMBERS = frozenset((bool, int, float, complex))


d("mul", "01", _mul, needed_by={"0": "1", "1": "0"})
fwd("mul", lambda t, out, x, y: _plus(_times(t[0], y), _times(t[1], x)))


def _div(g, out, x, y):
    """PyTorch's: by x, ``g / conj(y)``; by y, ``-g * conj((x / y) / y)`` (x is saved only
    for y's gradient: metadata otherwise)."""
    return g / conj(y), None if type(x) is TensorMeta else -g * conj((x / y) / y)


d("div", "01", _div, needed_by={"0": "1"})
fwd("div", lambda t, out, x, y: _plus(_over(t[0], y), _over(_times(t[1], out), y, -1)))
d("pow", "01o", _pow, needed_by={"o": "1"})
fwd("pow", _pow_fwd)
d("maximum", "01", _maximum)
fwd("maximum", _extremum_fwd(operator.gt))
d("minimum", "01", _minimum)
fwd("minimum", _extremum_fwd(operator.lt))
d("fmax", "01", lambda g, out, x, y: (g * ((x >= y) | y.isnan()), g * ((x < y) | x.isnan())))
fwd(
    "fmax",
    lambda t, out, x, y: _plus(
        _times(t[0], (x >= y) | y.isnan()), _times(t[1], (x < y) | x.isnan())
    ),
)
d("fmin", "01", lambda g, out, x, y: (g * ((x <= y) | y.isnan()), g * ((x > y) | x.isnan())))
fwd(
    "fmin",
    lambda t, out, x, y: _plus(
        _times(t[0], (x <= y) | y.isnan()), _times(t[1], (x > y) | x.isnan())
    ),
)


def _atan2(g, out, y, x):
    """By y, ``x / (x^2 + y^2)``; by x, ``-y / (x^2 + y^2)``: times the reciprocal of the
    squared radius, taken as 0 where the radius squares to 0 (the origin: zeros, signed as
    PyTorch's; an infinity where it only overflows)."""
    squared = x * x + y * y
    recip = tocha.where(squared == 0, 0.0, squared.reciprocal())
    return g * x * recip, g * -y * recip


d("atan2", "01", _atan2)
fwd(
    "atan2",
    lambda t, out, y, x: _over(_plus(_times(t[0], x), _times(t[1], -y)), x * x + y * y),
)
d("hypot", "01o", lambda g, out, x, y: (g * x / out, g * y / out))
fwd("hypot", lambda t, out, x, y: _over(_plus(_times(t[0], x), _times(t[1], y)), out))
d("copysign", "0o", _copysign)
fwd("copysign", lambda t, out, x, y: None if t[0] is None else t[0] * _copysign_ratio(out, x))


def _remainder(g, out, x, y):
    if not isinstance(x, tocha.Tensor):  # PyTorch's remainder of a number by a tensor
        raise RuntimeError("derivative for aten::remainder is not implemented")
    return g, _rounded_quotient(g, x, y, "floor")


def _remainder_fwd(t, out, x, y):
    if not isinstance(x, tocha.Tensor):
        raise NotImplementedError(
            "Trying to use forward AD with aten::remainder that does not support it."
        )
    return _plus(t[0], _rounded_quotient(t[1], x, y, "floor"))


d("remainder", "01", _remainder)
fwd("remainder", _remainder_fwd)
d("fmod", "01", lambda g, out, x, y: (g, _rounded_quotient(g, x, y, "trunc")))
fwd("fmod", lambda t, out, x, y: _plus(t[0], _rounded_quotient(t[1], x, y, "trunc")))
d("clamp", "0", _clamp)
fwd("clamp", lambda t, out, x, low, high: t[0] * _clamp_mask(x, low, high))

# -- copies and conversions -----------------------------------------------------------------
d("clone", "", lambda g, out, x, order: (g, None))
d("to_dtype", "", lambda g, out, x, dtype: (g, None))
d("to_device", "", lambda g, out, x, dev: (g.to(x.device), None))
fwd_linear("clone", "to_dtype", "to_device")


# -- reductions -----------------------------------------------------------------------------
def _unreduce(g, shape, dims, keepdim):
    """`g`, the gradient of a reduction over `dims`, broadcast back to the input `shape`."""
    if dims is None and not keepdim:
        return g.expand(shape)
    if not keepdim and len(shape) and g.dim() != len(shape):
        reduced = range(len(shape)) if dims is None else sorted(d % len(shape) for d in dims)
        for d in reduced:
            g = g.unsqueeze(d)
    return g.expand(shape)


def _count(shape, dims) -> int:
    n = 1
    for d in range(len(shape)) if dims is None else dims:
        n *= shape[d]
    return n


d("sum", "", lambda g, out, x, dims, keepdim, dtype: _unreduce(g, x.shape, dims, keepdim))
fwd_linear("sum")
d(
    "mean",
    "",
    lambda g, out, x, dims, keepdim, dtype: (
        _unreduce(g, x.shape, dims, keepdim) / _count(x.shape, dims)
    ),
)
fwd_linear("mean")


# -- views ----------------------------------------------------------------------------------
def _positions(shape, key):
    import numpy as np

    return tocha.from_numpy(np.arange(shape.numel(), dtype=np.int64).reshape(shape)[key])


def _scatter(g, shape, positions):
    """A zero tensor of `shape` with `g` added at the flat `positions` (same shape as g)."""
    flat = tocha.zeros(shape.numel(), dtype=g.dtype, device=g.device)
    flat = flat.index_put((positions.reshape(-1).to(g.device),), g.reshape(-1), accumulate=True)
    return flat.reshape(shape)


def _inverse(perm):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


d("view", "", lambda g, out, x, shape: g.reshape(x.shape))
d("permute", "", lambda g, out, x, dims: g.permute(_inverse(dims)))
d("expand", "", lambda g, out, x, shape: g)
d("squeeze", "", lambda g, out, x, dims: g.reshape(x.shape))
d("unsqueeze", "", lambda g, out, x, dim: g.squeeze(dim))
fwd_linear("view", "permute", "expand", "squeeze", "unsqueeze")


d("getitem", "", lambda g, out, x, key: _scatter(g, x.shape, _positions(x.shape, key)))
fwd_linear("getitem")


# -- selection ------------------------------------------------------------------------------
d(
    "where",
    "0",
    lambda g, out, cond, a, b: (None, tocha.where(cond, g, 0.0), tocha.where(cond, 0.0, g)),
)
fwd(
    "where",
    lambda t, out, cond, a, b: tocha.where(
        cond, 0.0 if t[1] is None else t[1], 0.0 if t[2] is None else t[2]
    ),
)


def _index_put(g, out, x, values, *rest):
    tensors, (pattern, accumulate) = rest[:-2], rest[-2:]
    index_op, put_op = REGISTRY["index"], REGISTRY["index_put"]
    grad_values = call(index_op, (g, *tensors), pattern)
    if accumulate:
        grad_x = g
    else:
        grad_x = call(
            put_op, (g, tocha.zeros((), dtype=g.dtype, device=g.device), *tensors), pattern, False
        )
    return (grad_x, grad_values) + (None,) * len(rest)


d("index_put", "2+", _index_put)
fwd("index_put", _linear_in("index_put", 0, 1))


def _index(g, out, x, *rest):
    tensors, pattern = rest[:-1], rest[-1]
    zeros = tocha.zeros(x.shape, dtype=g.dtype, device=g.device)
    grad = call(REGISTRY["index_put"], (zeros, g, *tensors), pattern, True)
    return (grad,) + (None,) * len(rest)


def _masked_select(g, out, x, mask):
    shape = np.broadcast_shapes(tuple(x.shape), tuple(mask.shape))
    zeros = tocha.zeros(shape, dtype=g.dtype, device=g.device)
    return zeros.index_put((mask.expand(shape),), g), None


d("index", "1+", _index)
fwd("index", _linear_in("index", 0))
d("masked_fill", "1", lambda g, out, x, mask, value: (tocha.where(mask, 0.0, g), None, None))
fwd("masked_fill", lambda t, out, x, mask, value: tocha.where(mask, 0.0, t[0]))
d("masked_select", "1", _masked_select)
fwd("masked_select", _linear_in("masked_select", 0))


# -- reductions: extrema, statistics, norms -------------------------------------------------
def _shares(out, x, dims, keepdim):
    """amax, amin, median: each element's share of the result, split evenly among the
    elements equal to it (NaN results: among the NaNs), as PyTorch's
    ``evenly_distribute_backward``; in x's shape."""
    out = _unreduce(out, x.shape, dims, keepdim)
    mask = ((x == out) | (x.isnan() & out.isnan())).to(x.dtype)
    return mask / mask.sum(dims, keepdim=True)


def _evenly(g, out, x, dims, keepdim):
    return _unreduce(g, x.shape, dims, keepdim) * _shares(out, x, dims, keepdim)


def _evenly_fwd(t, out, x, dims, keepdim):
    """The mean of the tangents of the elements equal to the result."""
    return _sum(t[0] * _shares(out, x, dims, keepdim), dims, keepdim)


def _along(g, shape, dim, index, keepdim=True):
    """A zero tensor of `shape` with `g` added at positions `index` along `dim` (`g` and
    `index` of one shape, without `dim` unless `keepdim`): PyTorch's ``scatter_add``."""
    if not len(shape):
        return g
    if not keepdim:
        g, index = g.unsqueeze(dim), index.unsqueeze(dim)
    indices = []
    for k, n in enumerate(g.shape):
        view = [1] * g.dim()
        view[k] = n
        indices.append(index if k == dim else tocha.arange(n, device=g.device).reshape(view))
    zeros = tocha.zeros(shape, dtype=g.dtype, device=g.device)
    return zeros.index_put(tuple(indices), g, accumulate=True)


def _gathered(t, dim, index, keepdim=True):
    """The elements of `t` at positions `index` along `dim` (`index` without `dim` unless
    `keepdim`): the tangent of values selected by their indices."""
    if not t.dim():
        return t
    if keepdim:
        return t.gather(dim, index)
    return t.gather(dim, index.unsqueeze(dim)).squeeze(dim)


def _selected(g, out, x, dim, keepdim):
    """max_dim, median_dim, mode...: the gradient of the values goes to their indices."""
    return _along(g[0], x.shape, dim, out[1].detach(), keepdim), None, None


def _selected_fwd(t, out, x, dim, keepdim):
    return _gathered(t[0], dim, out[1], keepdim), None


def _aminmax_dims(x, dim):
    return None if dim is None or x.dim() == 0 else (dim,)


def _aminmax(g, out, x, dim, keepdim):
    dims = _aminmax_dims(x, dim)
    return (
        _evenly(g[0], out[0], x, dims, keepdim) + _evenly(g[1], out[1], x, dims, keepdim),
        None,
        None,
    )


def _aminmax_fwd(t, out, x, dim, keepdim):
    dims = _aminmax_dims(x, dim)
    return tuple(_evenly_fwd(t, o, x, dims, keepdim) for o in out)


def _var_weights(x, dims, correction):
    """The derivative of the variance by each element: ``2 (x - mean) / dof``."""
    dof = _count(x.shape, dims) - correction
    return (x - x.mean(dims, keepdim=True)) * (2.0 / dof if dof else math.inf)


def _var_back(g, x, dims, correction, keepdim):
    return _unreduce(g, x.shape, dims, keepdim) * _var_weights(x, dims, correction)


def _var_fwd(t, x, dims, correction, keepdim):
    return _sum(_real_part(t, _var_weights(x, dims, correction)), dims, keepdim)


def _std_grad(g, std):
    """The gradient of the variance, from the gradient `g` of its square root (0 where
    the deviation is 0, as PyTorch); also the tangent of the square root, from the
    variance's tangent `g`."""
    return tocha.where(std == 0, 0.0, g / (2 * std))


def _norm(g, out, x, p, dims, keepdim, dtype):
    if p == "nuc":
        raise NotImplementedError("the derivative of the nuclear norm is not implemented")
    if p == 0:  # PyTorch gives no gradient; zeros, as the engine waits for every edge
        return zero(x), None, None, None, None
    g, out = _unreduce(g, x.shape, dims, keepdim), _unreduce(out, x.shape, dims, keepdim)
    if p == 1:
        grad = x.sgn() * g
    elif p == 2:
        grad = g * tocha.where(out == 0, 0.0, x / out)
    elif math.isinf(p):
        size = x.abs()
        mask = (size == out) | size.isnan()
        grad = x.sgn() * (g / mask.sum(dims, keepdim=True)) * mask
    elif p < 1:
        grad = x.sgn() * tocha.where(x == 0, 0.0, x.abs() ** (p - 1)) * g * out ** (1 - p)
    else:
        scale = tocha.where(out == 0, 0.0, g / out ** (p - 1))
        grad = (x.sgn() * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)) * scale
    return grad, None, None, None, None


def _norm_fwd(t, out, x, p, dims, keepdim, dtype):
    """Each element's tangent times the norm's derivative by it (the gradient `_norm` gives
    for a gradient of ones), summed over the reduced dims."""
    weights = _norm(tocha.ones_like(out), out, x, p, dims, keepdim, dtype)[0]
    return _sum(_real_part(t[0], weights), dims, keepdim, dtype)


def _flip(t, dim):
    n = t.shape[dim]
    return t.index_select(dim, tocha.arange(n - 1, -1, -1, device=t.device))


def _reverse_cumsum(t, dim):
    return _flip(_flip(t, dim).cumsum(dim), dim)


def _others_product(x, dim):
    """Along `dim`, the product of all the other elements (exact where `x` holds zeros)."""
    n = x.shape[dim]
    ones = tocha.ones_like(x.narrow(dim, 0, 1))
    before = tocha.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    after = tocha.cat([ones, _flip(x, dim).narrow(dim, 0, n - 1)], dim).cumprod(dim)
    return before * _flip(after, dim)


def _prod_slopes(out, x, dims, keepdim):
    """d prod / d x of each element: the product of the others of its slice (``out / x``
    where x holds no zero), in x's shape."""
    out = _unreduce(out, x.shape, dims, keepdim)
    if not (x == 0).any().item():
        return out / x
    if dims is None:
        return _others_product(x.reshape(-1), 0).reshape(x.shape)
    return _others_product(x, dims[0])


def _prod(g, out, x, dims, keepdim, dtype):
    if x.dim() == 0:
        return g, None, None, None
    g = _unreduce(g, x.shape, dims, keepdim)
    return g * conj(_prod_slopes(out, x, dims, keepdim)), None, None, None


def _prod_fwd(t, out, x, dims, keepdim, dtype):
    """Each element's tangent times the product of the others of its slice, summed over the
    reduced dims."""
    if x.dim() == 0:
        return _sum(t[0], dims, keepdim, dtype)
    return _sum(t[0] * _prod_slopes(out, x, dims, keepdim), dims, keepdim, dtype)


def _cumprod_jacobian(x, dim):
    """With zeros in x: the derivatives of out[k] by x[j] of ``out = x.cumprod(dim)``, j along
    the last but one dim and k along the last, the others those of x with dim moved out.
    Row j holds the running products of x with x[j] set to 1, kept where k >= j (quadratic,
    as PyTorch's differentiable form)."""
    xt = x.movedim(dim, -1)
    n = xt.shape[-1]
    eye = tocha.eye(n, dtype=tocha.bool, device=x.device)
    rows = tocha.where(eye, 1.0, xt.unsqueeze(-2)).cumprod(-1)
    k = tocha.arange(n, device=x.device)
    return rows * (k >= k.unsqueeze(1))


def _cumprod(g, out, x, dim, dtype):
    """The transposed Jacobian applied to g, conjugated for complex x (PyTorch's
    convention)."""
    if x.dim() == 0:
        return g, None, None
    if not (x == 0).any().item():
        return _reverse_cumsum(g * conj(out), dim) / conj(x), None, None
    grad = (conj(_cumprod_jacobian(x, dim)) * g.movedim(dim, -1).unsqueeze(-2)).sum(-1)
    return grad.movedim(-1, dim), None, None


def _cumprod_fwd(t, out, x, dim, dtype):
    if x.dim() == 0:
        return t[0]
    if not (x == 0).any().item():
        return out * (t[0] / x).cumsum(dim)
    tangent = (_cumprod_jacobian(x, dim) * t[0].movedim(dim, -1).unsqueeze(-1)).sum(-2)
    return tangent.movedim(-1, dim)


def _nansum_fwd(t, out, x, dims, keepdim, dtype):
    return _sum(tocha.where(x.isnan(), 0.0, t[0]), dims, keepdim, dtype)


def _nanmean_fwd(t, out, x, dims, keepdim, dtype):
    return _nansum_fwd(t, out, x, dims, keepdim, dtype) / _sum(
        x.isnan().logical_not(), dims, keepdim
    )


def _mean_tangent(t, dims, keepdim):
    return call(REGISTRY["mean"], (t,), dims, keepdim, None)


for _name in ("amax", "amin"):
    d(_name, "0o", _evenly)
    fwd(_name, _evenly_fwd)
d("aminmax", "0o", _aminmax)
fwd("aminmax", _aminmax_fwd)
for _name in ("median", "nanmedian"):
    d(_name, "0o", lambda g, out, x: _evenly(g, out, x, None, False))
    fwd(_name, lambda t, out, x: _evenly_fwd(t, out, x, None, False))
for _name in ("max_dim", "min_dim", "median_dim", "nanmedian_dim", "mode"):
    d(_name, "o1", _selected)
    fwd(_name, _selected_fwd)
d(
    "nansum",
    "0",
    lambda g, out, x, dims, keepdim, dtype: (
        _unreduce(g, x.shape, dims, keepdim) * x.isnan().logical_not()
    ),
)
fwd("nansum", _nansum_fwd)
d(
    "nanmean",
    "0",
    lambda g, out, x, dims, keepdim, dtype: (
        _unreduce(g, x.shape, dims, keepdim)
        * x.isnan().logical_not()
        / x.isnan().logical_not().sum(dims, keepdim=True)
    ),
)
fwd("nanmean", _nanmean_fwd)
d("prod", "0o", _prod)
fwd("prod", _prod_fwd)
d(
    "var",
    "0",
    lambda g, out, x, dims, correction, keepdim: _var_back(g, x, dims, correction, keepdim),
)
fwd(
    "var", lambda t, out, x, dims, correction, keepdim: _var_fwd(t[0], x, dims, correction, keepdim)
)
d(
    "std",
    "0o",
    lambda g, out, x, dims, correction, keepdim: _var_back(
        _std_grad(g, out), x, dims, correction, keepdim
    ),
)
fwd(
    "std",
    lambda t, out, x, dims, correction, keepdim: _std_grad(
        _var_fwd(t[0], x, dims, correction, keepdim), out
    ),
)
d(
    "var_mean",
    "0",
    lambda g, out, x, dims, correction, keepdim: (
        _var_back(g[0], x, dims, correction, keepdim)
        + _unreduce(g[1], x.shape, dims, keepdim) / _count(x.shape, dims)
    ),
)
fwd(
    "var_mean",
    lambda t, out, x, dims, correction, keepdim: (
        _var_fwd(t[0], x, dims, correction, keepdim),
        _mean_tangent(t[0], dims, keepdim),
    ),
)
d(
    "std_mean",
    "0o",
    lambda g, out, x, dims, correction, keepdim: (
        _var_back(_std_grad(g[0], out[0]), x, dims, correction, keepdim)
        + _unreduce(g[1], x.shape, dims, keepdim) / _count(x.shape, dims)
    ),
)
fwd(
    "std_mean",
    lambda t, out, x, dims, correction, keepdim: (
        _std_grad(_var_fwd(t[0], x, dims, correction, keepdim), out[0]),
        _mean_tangent(t[0], dims, keepdim),
    ),
)
d("norm", "0o", _norm)
fwd("norm", _norm_fwd)
d(
    "logsumexp",
    "0o",
    lambda g, out, x, dims, keepdim: (
        _unreduce(g, x.shape, dims, keepdim)
        * conj((x - _unreduce(out, x.shape, dims, keepdim)).exp())
    ),
)
fwd(
    "logsumexp",
    lambda t, out, x, dims, keepdim: _sum(
        t[0] * (x - _unreduce(out, x.shape, dims, keepdim)).exp(), dims, keepdim
    ),
)
d("cumsum", "", lambda g, out, x, dim, dtype: g if x.dim() == 0 else _reverse_cumsum(g, dim))
fwd_linear("cumsum")
d("cumprod", "0o", _cumprod)
fwd("cumprod", _cumprod_fwd)
for _name in ("cummax", "cummin"):
    d(_name, "o1", lambda g, out, x, dim: _along(g[0], x.shape, dim, out[1].detach()))
    fwd(_name, lambda t, out, x, dim: (_gathered(t[0], dim, out[1]), None))


# -- views and joins ------------------------------------------------------------------------
def _storage_positions(shape, strides, offset):
    """The storage position of every element of a strided view (constant indices)."""
    positions = np.full(tuple(shape), offset, dtype=np.int64)
    for k, (n, stride) in enumerate(zip(shape, strides)):
        view = [1] * len(shape)
        view[k] = n
        positions = positions + np.arange(n, dtype=np.int64).reshape(view) * stride
    return positions


def _as_strided(g, out, x, size, stride, offset):
    """Gradients scattered to storage, then read back at the input's elements (divided by
    how many input elements share a storage place, as PyTorch)."""
    source = _storage_positions(x.shape, x.stride(), x.storage_offset())
    target = _storage_positions(size, stride, offset)
    n = 1 + max(source.max(initial=-1), target.max(initial=-1))
    storage = tocha.zeros(n, dtype=g.dtype, device=g.device).index_put(
        (tocha.from_numpy(target.reshape(-1)).to(g.device),), g.reshape(-1), accumulate=True
    )
    grad = storage[tocha.from_numpy(source).to(g.device)]
    counts = np.bincount(source.reshape(-1), minlength=n)[source]
    if (counts > 1).any():
        grad = grad / tocha.from_numpy(counts).to(g.device)
    return grad, None, None, None


def _as_strided_fwd(t, out, x, size, stride, offset):
    """x's tangent laid out in storage as x's elements lie there, read as the view reads the
    storage (the tangent's own strides may differ from x's)."""
    t = t[0]
    source = _storage_positions(x.shape, x.stride(), x.storage_offset())
    target = _storage_positions(size, stride, offset)
    n = 1 + max(source.max(initial=-1), target.max(initial=-1))
    storage = tocha.zeros(n, dtype=t.dtype, device=t.device).index_put(
        (tocha.from_numpy(source.reshape(-1)).to(t.device),), t.reshape(-1)
    )
    return storage[tocha.from_numpy(target).to(t.device)]


def _repeat(g, out, x, sizes):
    if not sizes:
        return g, None
    shape = (1,) * (len(sizes) - x.dim()) + tuple(x.shape)
    pairs = [n for pair in zip(sizes, shape) for n in pair]
    return g.reshape(pairs).sum(tuple(range(0, len(pairs), 2))).reshape(x.shape), None


def _narrow(g, out, x, dim, start, length):
    key = (slice(None),) * dim + (slice(start, start + length),)
    return _scatter(g, x.shape, _positions(x.shape, key)), None, None, None


def _cat(g, out, *args):
    """Each input's slice of `g`; legacy empty inputs of shape ``(0,)``, which the forward
    skipped, get an empty gradient."""
    *tensors, dim = args
    legacy = [tuple(t.shape) == (0,) for t in tensors]
    if all(legacy):
        return (*(g for _ in tensors), None)
    pieces = iter(g.split_with_sizes([t.shape[dim] for t, s in zip(tensors, legacy) if not s], dim))
    empty = tocha.zeros((0,), dtype=g.dtype, device=g.device)
    return (*(empty if s else next(pieces) for s in legacy), None)


def _setitem(g, out, x, value, key):
    blank = tocha.zeros((), dtype=g.dtype, device=g.device)
    return call(REGISTRY["setitem"], (g, blank), key), g[key], None


d("narrow", "", _narrow)
d("as_strided", "0", _as_strided)
fwd("as_strided", _as_strided_fwd)
d("split_with_sizes", "", lambda g, out, x, sizes, dim: (tocha.cat(list(g), dim), None, None))
d("unbind", "", lambda g, out, x, dim: (tocha.stack(list(g), dim), None))
d("repeat", "", _repeat)
d("cat", "", _cat)
d("stack", "", lambda g, out, *args: (*g.unbind(args[-1]), None))
d("setitem", "", _setitem)
fwd_linear("narrow", "split_with_sizes", "unbind", "repeat", "cat", "stack", "setitem")


# -- products -------------------------------------------------------------------------------
def _matmul(g, out, a, b, needs=(True, True)):
    """1-D operands are a row (left) or a column (right), as in the forward; the engine sums
    the gradients over broadcast batch dims. Only the gradients needed are computed."""
    if b.dim() == 1:
        g = g.unsqueeze(-1)
    if a.dim() == 1:
        g = g.unsqueeze(-2)
    grad_a = grad_b = None
    if needs[0]:
        b2 = b.unsqueeze(-1) if b.dim() == 1 else b
        grad_a = g @ conj(b2.mT)
        grad_a = grad_a.squeeze(-2) if a.dim() == 1 else grad_a
    if needs[1]:
        a2 = a.unsqueeze(0) if a.dim() == 1 else a
        grad_b = conj(a2.mT) @ g
        grad_b = grad_b.squeeze(-1) if b.dim() == 1 else grad_b
    return grad_a, grad_b


_matmul.takes_needs = True


def _kron(g, out, a, b, dtype):
    n = max(a.dim(), b.dim())
    sa = (1,) * (n - a.dim()) + tuple(a.shape)
    sb = (1,) * (n - b.dim()) + tuple(b.shape)
    g = g.reshape([m for pair in zip(sa, sb) for m in pair])
    a_view = a.reshape([m for s in sa for m in (s, 1)])
    b_view = b.reshape([m for s in sb for m in (1, s)])
    a_view, b_view = conj(a_view), conj(b_view)
    grad_a = (g * b_view).sum(tuple(range(1, 2 * n, 2))).reshape(a.shape) if n else g * b_view
    grad_b = (g * a_view).sum(tuple(range(0, 2 * n, 2))).reshape(b.shape) if n else g * a_view
    return grad_a, grad_b, None


def _fit(grad, shape):
    """`grad` expanded where it has size 1 and the input a larger size (a size-1 dim that
    contracted against a larger one)."""
    return grad.expand([s if n == 1 else n for n, s in zip(grad.shape, shape)])


def _tensordot(g, out, a, b, dims_a, dims_b):
    free_a = [i for i in range(a.dim()) if i not in dims_a]
    free_b = [i for i in range(b.dim()) if i not in dims_b]
    grad_a = tocha.tensordot(g, conj(b), ([len(free_a) + i for i in range(len(free_b))], free_b))
    order_a = free_a + [dims_a[dims_b.index(i)] for i in sorted(dims_b)]
    grad_b = tocha.tensordot(conj(a), g, (free_a, list(range(len(free_a)))))
    order_b = [dims_b[dims_a.index(i)] for i in sorted(dims_a)] + free_b
    grad_a = grad_a.permute([order_a.index(i) for i in range(a.dim())])
    grad_b = grad_b.permute([order_b.index(i) for i in range(b.dim())])
    return _fit(grad_a, a.shape), _fit(grad_b, b.shape), None, None


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _explicit(equation, ndims):
    """The terms and output of an einsum equation with each "..." spelled out in letters
    the equation does not use (right-aligned, as the dims it stands for)."""
    lhs, output = equation.split("->")
    terms = lhs.split(",")
    spare = [c for c in _LETTERS if c not in equation]
    extra = [n - len(t) + 3 for t, n in zip(terms, ndims) if "..." in t]
    ellipsis = "".join(spare[: max(extra, default=0)])
    terms = [
        t.replace("...", ellipsis[len(ellipsis) - n + len(t) - 3 :]) for t, n in zip(terms, ndims)
    ]
    return terms, output.replace("...", ellipsis)


def _einsum_grad(g, xs, terms, output, k):
    """The gradient of einsum's operand k: an einsum of the gradient and the other operands,
    broadcast along letters only operand k has, laid on the diagonal of repeated letters."""
    x, term = xs[k], terms[k]
    others = [t for j, t in enumerate(terms) if j != k]
    letters = "".join(dict.fromkeys(term))
    seen = set(output).union(*others)
    kept = "".join(c for c in letters if c in seen)
    grad = tocha.einsum(
        ",".join([output, *others]) + "->" + kept,
        g,
        *[conj(t.to(g.dtype)) for j, t in enumerate(xs) if j != k],
    )
    for i, c in enumerate(letters):
        if c not in seen:
            grad = grad.unsqueeze(i)
    sizes = [x.shape[term.index(c)] for c in letters]
    grad = _fit(grad, sizes)
    summed = tuple(i for i, (n, m) in enumerate(zip(sizes, grad.shape)) if n == 1 and m != 1)
    if summed:
        grad = grad.sum(summed, keepdim=True)
    if len(letters) == len(term):
        return grad
    index = []
    for c in term:
        i = letters.index(c)
        view = [1] * len(letters)
        view[i] = sizes[i]
        index.append(tocha.arange(sizes[i], device=g.device).reshape(view))
    return tocha.zeros(x.shape, dtype=g.dtype, device=g.device).index_put(tuple(index), grad)


def _einsum(g, out, *args):
    *xs, equation, dtype = args
    terms, output = _explicit(equation, [x.dim() for x in xs])
    return tuple(_einsum_grad(g, xs, terms, output, k) for k in range(len(xs))) + (None, None)


d("matmul", "01", _matmul, needed_by={"0": "1", "1": "0"})
# vdot(a, b) = sum(conj(a) b): by a, conj(g) b; by b, g a
d("vdot", "01", lambda g, out, a, b: (conj(g) * b, g * a))
d(
    "outer",
    "01",
    lambda g, out, a, b, dtype: (g @ conj(b.to(g.dtype)), g.mT @ conj(a.to(g.dtype)), None),
)
d("kron", "01", _kron)
d("tensordot", "01", _tensordot)
d("einsum", "0+", _einsum)
fwd_multilinear("matmul", "vdot", "outer", "kron", "tensordot", "einsum")
