"""The derivative table: one entry per differentiable primitive of tocha-core.

``d(name, saves, formula)``: `formula(grad, out, *args)` returns one gradient per argument of
the op (None where an argument gets none), written in tocha ops so that ``create_graph=True``
differentiates them again. `args` are the op's arguments as the dispatcher received them;
`saves` names what the formula reads: argument positions ("01") and "o" for the output.
An argument tensor not saved reaches the formula as a `TensorMeta` (shape, dtype, device).
Gradients may keep a broadcast shape: the engine sums them back to each input's shape.
"""

from __future__ import annotations

import math

import numpy as np

import tocha
from tocha._dispatch import REGISTRY, call


class Derivative:
    __slots__ = ("formula", "saves")

    def __init__(self, formula, saves):
        self.formula = formula
        self.saves = saves


FORMULAS: dict[str, Derivative] = {}


class _From:
    """Argument positions `start` and after (a saves spec like "2+")."""

    __slots__ = ("start",)

    def __init__(self, start: int):
        self.start = start

    def __contains__(self, i: int) -> bool:
        return i >= self.start


def d(name: str, saves: str, formula) -> None:
    """Declare the derivative of primitive `name`. `saves`: argument positions ("01"), "o"
    for the output, "2+" for position 2 and every later one."""
    if name in FORMULAS:
        raise ValueError(f"derivative of {name!r} is declared twice")
    if "+" in saves:
        positions = _From(int(saves[saves.index("+") - 1]))
    else:
        positions = frozenset(int(c) for c in saves if c.isdigit())
    FORMULAS[name] = Derivative(formula, (positions, "o" in saves))


def zero(g):
    return tocha.zeros_like(g)


LN2, LN10 = math.log(2.0), math.log(10.0)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

# -- unary ----------------------------------------------------------------------------------
d("abs", "0", lambda g, out, x: g * x.sgn())
d("neg", "", lambda g, out, x: -g)
d("exp", "o", lambda g, out, x: g * out)
d("exp2", "o", lambda g, out, x: g * out * LN2)
d("expm1", "o", lambda g, out, x: g * (out + 1))
d("log", "0", lambda g, out, x: g / x)
d("log2", "0", lambda g, out, x: g / (x * LN2))
d("log10", "0", lambda g, out, x: g / (x * LN10))
d("log1p", "0", lambda g, out, x: g / (x + 1))
d("sqrt", "o", lambda g, out, x: g / (2 * out))
d("rsqrt", "o", lambda g, out, x: -0.5 * g * out * out * out)
d("square", "0", lambda g, out, x: 2 * g * x)
d("sin", "0", lambda g, out, x: g * x.cos())
d("cos", "0", lambda g, out, x: -g * x.sin())
d("tan", "o", lambda g, out, x: g * (1 + out * out))
d("asin", "0", lambda g, out, x: g * (1 - x * x).rsqrt())
d("acos", "0", lambda g, out, x: -g * (1 - x * x).rsqrt())
d("atan", "0", lambda g, out, x: g / (1 + x * x))
d("sinh", "0", lambda g, out, x: g * x.cosh())
d("cosh", "0", lambda g, out, x: g * x.sinh())
d("tanh", "o", lambda g, out, x: g * (1 - out * out))
d("asinh", "0", lambda g, out, x: g * (x * x + 1).rsqrt())
d("acosh", "0", lambda g, out, x: g * (x * x - 1).rsqrt())
d("atanh", "0", lambda g, out, x: g / (1 - x * x))
d("sigmoid", "o", lambda g, out, x: g * out * (1 - out))
d("relu", "o", lambda g, out, x: g * (out > 0))
d("erf", "0", lambda g, out, x: g * TWO_OVER_SQRT_PI * (-x * x).exp())
d("erfc", "0", lambda g, out, x: -g * TWO_OVER_SQRT_PI * (-x * x).exp())
d("erfinv", "o", lambda g, out, x: g * SQRT_PI_OVER_TWO * (out * out).exp())
d("reciprocal", "o", lambda g, out, x: -g * out * out)
d("frac", "", lambda g, out, x: g)
for _name in ("floor", "ceil", "trunc", "sign", "sgn"):
    d(_name, "", lambda g, out, x: zero(g))
d("round", "", lambda g, out, x, decimals: zero(g))
d("nan_to_num", "0", lambda g, out, x, nan, posinf, neginf: g * x.isfinite())


# -- binary ---------------------------------------------------------------------------------
def _pow(g, out, x, y):
    if isinstance(y, tocha.Tensor):
        dx = g * tocha.where(y == 0, 0.0, y * x ** (y - 1)) if isinstance(x, tocha.Tensor) else None
        base_log = (
            x.log() if isinstance(x, tocha.Tensor) else math.log(x) if x > 0 else float("nan")
        )
        dy = g * out * base_log
        if isinstance(x, tocha.Tensor):
            dy = tocha.where((x == 0) & (y >= 0), 0.0, dy)
        return dx, dy
    if y == 0:
        return zero(g), None
    return g * y * x ** (y - 1), None


def _maximum(g, out, x, y):
    tie = (x == y) * 0.5
    return g * ((x > y) + tie), g * ((x < y) + tie)


def _minimum(g, out, x, y):
    tie = (x == y) * 0.5
    return g * ((x < y) + tie), g * ((x > y) + tie)


def _copysign(g, out, x, y):
    ratio = tocha.where(x == 0, 0.0, out / tocha.where(x == 0, 1.0, x))
    return g * ratio, None


def _clamp(g, out, x, low, high):
    mask = tocha.ones_like(g, dtype=tocha.bool)
    if low is not None:
        mask = mask & (x >= low)
    if high is not None:
        mask = mask & (x <= high)
    return g * mask, None, None


d("add", "", lambda g, out, x, y: (g, g))
d("sub", "", lambda g, out, x, y: (g, -g))
d("mul", "01", lambda g, out, x, y: (g * y, g * x))
d("div", "1o", lambda g, out, x, y: (g / y, -g * out / y))
d("pow", "01o", _pow)
d("maximum", "01", _maximum)
d("minimum", "01", _minimum)
d("fmax", "01", lambda g, out, x, y: (g * ((x >= y) | y.isnan()), g * ((x < y) | x.isnan())))
d("fmin", "01", lambda g, out, x, y: (g * ((x <= y) | y.isnan()), g * ((x > y) | x.isnan())))
d("atan2", "01", lambda g, out, y, x: (g * x / (x * x + y * y), -g * y / (x * x + y * y)))
d("hypot", "01o", lambda g, out, x, y: (g * x / out, g * y / out))
d("copysign", "0o", _copysign)
d("remainder", "01", lambda g, out, x, y: (g, -g * tocha.div(x, y, rounding_mode="floor")))
d("fmod", "01", lambda g, out, x, y: (g, -g * tocha.div(x, y, rounding_mode="trunc")))
d("clamp", "0", _clamp)

# -- copies and conversions -----------------------------------------------------------------
d("clone", "", lambda g, out, x: g)
d("to_dtype", "", lambda g, out, x, dtype: (g, None))
d("to_device", "", lambda g, out, x, dev: (g.to(x.device), None))


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
d(
    "mean",
    "",
    lambda g, out, x, dims, keepdim, dtype: (
        _unreduce(g, x.shape, dims, keepdim) / _count(x.shape, dims)
    ),
)


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
d("getitem", "", lambda g, out, x, key: _scatter(g, x.shape, _positions(x.shape, key)))


# -- selection ------------------------------------------------------------------------------
d(
    "where",
    "0",
    lambda g, out, cond, a, b: (None, tocha.where(cond, g, 0.0), tocha.where(cond, 0.0, g)),
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
d("masked_fill", "1", lambda g, out, x, mask, value: (tocha.where(mask, 0.0, g), None, None))
d("masked_select", "1", _masked_select)
