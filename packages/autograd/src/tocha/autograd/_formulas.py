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
from tocha.library import REGISTRY, call

from ._forward import fwd, fwd_linear, fwd_multilinear


class Derivative:
    __slots__ = ("formula", "saves", "materialize")

    def __init__(self, formula, saves):
        self.formula = formula
        self.saves = saves
        self.materialize = not getattr(formula, "accepts_none", False)


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
    for the output, "2+" for position 2 and every later one. A formula with the attribute
    ``takes_needs`` also receives ``needs=``: per argument, whether its gradient is wanted;
    one with ``accepts_none`` receives None (not zeros) for outputs that got no gradient."""
    if name in FORMULAS:
        raise ValueError(f"derivative of {name!r} is declared twice")
    if "+" in saves:
        positions = _From(int(saves[saves.index("+") - 1]))
    else:
        positions = frozenset(int(c) for c in saves if c.isdigit())
    FORMULAS[name] = Derivative(formula, (positions, "o" in saves))


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


LN2, LN10 = math.log(2.0), math.log(10.0)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

# -- unary ----------------------------------------------------------------------------------
d("abs", "0", lambda g, out, x: g * x.sgn())
d("neg", "", lambda g, out, x: -g)
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
    "tanh": ("o", lambda out, x: 1 - out * out),
    "asinh": ("0", lambda out, x: (x * x + 1).rsqrt()),
    "acosh": ("0", lambda out, x: (x * x - 1).rsqrt()),
    "atanh": ("0", lambda out, x: (1 - x * x).reciprocal()),
    "sigmoid": ("o", lambda out, x: out * (1 - out)),
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
d("relu", "o", lambda g, out, x: g * (out > 0))
d("erf", "0", lambda g, out, x: g * TWO_OVER_SQRT_PI * (-x * x).exp())
d("erfc", "0", lambda g, out, x: -g * TWO_OVER_SQRT_PI * (-x * x).exp())
d("erfinv", "o", lambda g, out, x: g * SQRT_PI_OVER_TWO * (out * out).exp())
d("reciprocal", "o", lambda g, out, x: -g * conj(out * out))
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
    return g * ratio, zero(g)


def _clamp(g, out, x, low, high):
    mask = tocha.ones_like(g, dtype=tocha.bool)
    if low is not None:
        mask = mask & (x >= low)
    if high is not None:
        mask = mask & (x <= high)
    return g * mask, None, None


d("add", "", lambda g, out, x, y: (g, g))
fwd("add", lambda t, out, x, y: _plus(t[0], t[1]))
d("sub", "", lambda g, out, x, y: (g, -g))
fwd("sub", lambda t, out, x, y: _plus(t[0], None if t[1] is None else -t[1]))
d("mul", "01", lambda g, out, x, y: (g * conj(y), g * conj(x)))
fwd("mul", lambda t, out, x, y: _plus(_times(t[0], y), _times(t[1], x)))
d("div", "1o", lambda g, out, x, y: (g / conj(y), -g * conj(out / y)))
fwd("div", lambda t, out, x, y: _plus(_over(t[0], y), _over(_times(t[1], out), y, -1)))
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
fwd_linear("sum")
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
fwd_linear("view", "permute", "expand", "squeeze", "unsqueeze")
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


# -- reductions: extrema, statistics, norms -------------------------------------------------
def _evenly(g, out, x, dims, keepdim):
    """amax, amin, median: the gradient split evenly among the elements equal to the result
    (NaN results: among the NaNs), as PyTorch's ``evenly_distribute_backward``."""
    g, out = _unreduce(g, x.shape, dims, keepdim), _unreduce(out, x.shape, dims, keepdim)
    mask = (x == out) | (x.isnan() & out.isnan())
    return g * mask / mask.sum(dims, keepdim=True)


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


def _selected(g, out, x, dim, keepdim):
    """max_dim, median_dim, mode...: the gradient of the values goes to their indices."""
    return _along(g[0], x.shape, dim, out[1].detach(), keepdim), None, None


def _aminmax(g, out, x, dim, keepdim):
    dims = None if dim is None or x.dim() == 0 else (dim,)
    return (
        _evenly(g[0], out[0], x, dims, keepdim) + _evenly(g[1], out[1], x, dims, keepdim),
        None,
        None,
    )


def _var_back(g, x, dims, correction, keepdim):
    dof = _count(x.shape, dims) - correction
    centered = x - x.mean(dims, keepdim=True)
    return _unreduce(g, x.shape, dims, keepdim) * centered * (2.0 / dof if dof else math.inf)


def _std_grad(g, std):
    """The gradient of the variance, from the gradient `g` of its square root (0 where
    the deviation is 0, as PyTorch)."""
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


def _prod(g, out, x, dims, keepdim, dtype):
    if x.dim() == 0:
        return g, None, None, None
    g, out = _unreduce(g, x.shape, dims, keepdim), _unreduce(out, x.shape, dims, keepdim)
    if not (x == 0).any().item():
        return g * out / x, None, None, None
    if dims is None:
        return g * _others_product(x.reshape(-1), 0).reshape(x.shape), None, None, None
    return g * _others_product(x, dims[0]), None, None, None


def _cumprod(g, out, x, dim, dtype):
    if x.dim() == 0:
        return g, None, None
    if not (x == 0).any().item():
        return _reverse_cumsum(g * out, dim) / x, None, None
    # With zeros: row j of `rows` holds the running products of x with x[j] set to 1, of
    # which positions k >= j are the derivatives of out[k] by x[j] (quadratic, as PyTorch's
    # differentiable form).
    xt, gt = x.movedim(dim, -1), g.movedim(dim, -1)
    n = xt.shape[-1]
    eye = tocha.eye(n, dtype=tocha.bool, device=x.device)
    rows = tocha.where(eye, 1.0, xt.unsqueeze(-2)).cumprod(-1)
    k = tocha.arange(n, device=x.device)
    grad = (rows * (k >= k.unsqueeze(1)) * gt.unsqueeze(-2)).sum(-1)
    return grad.movedim(-1, dim), None, None


d("amax", "0o", _evenly)
d("amin", "0o", _evenly)
d("aminmax", "0o", _aminmax)
d("max_dim", "o", _selected)
d("min_dim", "o", _selected)
d("median", "0o", lambda g, out, x: _evenly(g, out, x, None, False))
d("nanmedian", "0o", lambda g, out, x: _evenly(g, out, x, None, False))
d("median_dim", "o", _selected)
d("nanmedian_dim", "o", _selected)
d("mode", "o", _selected)
d(
    "nansum",
    "0",
    lambda g, out, x, dims, keepdim, dtype: (
        _unreduce(g, x.shape, dims, keepdim) * x.isnan().logical_not()
    ),
)
d(
    "nanmean",
    "0",
    lambda g, out, x, dims, keepdim, dtype: (
        _unreduce(g, x.shape, dims, keepdim)
        * x.isnan().logical_not()
        / x.isnan().logical_not().sum(dims, keepdim=True)
    ),
)
d("prod", "0o", _prod)
d(
    "var",
    "0",
    lambda g, out, x, dims, correction, keepdim: _var_back(g, x, dims, correction, keepdim),
)
d(
    "std",
    "0o",
    lambda g, out, x, dims, correction, keepdim: _var_back(
        _std_grad(g, out), x, dims, correction, keepdim
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
d(
    "std_mean",
    "0o",
    lambda g, out, x, dims, correction, keepdim: (
        _var_back(_std_grad(g[0], out[0]), x, dims, correction, keepdim)
        + _unreduce(g[1], x.shape, dims, keepdim) / _count(x.shape, dims)
    ),
)
d("norm", "0o", _norm)
d(
    "logsumexp",
    "0o",
    lambda g, out, x, dims, keepdim: (
        _unreduce(g, x.shape, dims, keepdim) * (x - _unreduce(out, x.shape, dims, keepdim)).exp()
    ),
)
d("cumsum", "", lambda g, out, x, dim, dtype: g if x.dim() == 0 else _reverse_cumsum(g, dim))
d("cumprod", "0o", _cumprod)
d("cummax", "o", lambda g, out, x, dim: _along(g[0], x.shape, dim, out[1].detach()))
d("cummin", "o", lambda g, out, x, dim: _along(g[0], x.shape, dim, out[1].detach()))


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
d("split_with_sizes", "", lambda g, out, x, sizes, dim: (tocha.cat(list(g), dim), None, None))
d("unbind", "", lambda g, out, x, dim: (tocha.stack(list(g), dim), None))
d("repeat", "", _repeat)
d("cat", "", _cat)
d("stack", "", lambda g, out, *args: (*g.unbind(args[-1]), None))
d("setitem", "", _setitem)


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
    grad_a = (g * b_view).sum(tuple(range(1, 2 * n, 2))).reshape(a.shape) if n else g * b
    grad_b = (g * a_view).sum(tuple(range(0, 2 * n, 2))).reshape(b.shape) if n else g * a
    return grad_a, grad_b, None


def _fit(grad, shape):
    """`grad` expanded where it has size 1 and the input a larger size (a size-1 dim that
    contracted against a larger one)."""
    return grad.expand([s if n == 1 else n for n, s in zip(grad.shape, shape)])


def _tensordot(g, out, a, b, dims_a, dims_b):
    free_a = [i for i in range(a.dim()) if i not in dims_a]
    free_b = [i for i in range(b.dim()) if i not in dims_b]
    grad_a = tocha.tensordot(g, b, ([len(free_a) + i for i in range(len(free_b))], free_b))
    order_a = free_a + [dims_a[dims_b.index(i)] for i in sorted(dims_b)]
    grad_b = tocha.tensordot(a, g, (free_a, list(range(len(free_a)))))
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
        *[t.to(g.dtype) for j, t in enumerate(xs) if j != k],
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


d("matmul", "01", _matmul)
d("vdot", "01", lambda g, out, a, b: (g * b, g * a))
d("outer", "01", lambda g, out, a, b, dtype: (g @ b.to(g.dtype), g.mT @ a.to(g.dtype), None))
d("kron", "01", _kron)
d("tensordot", "01", _tensordot)
d("einsum", "0+", _einsum)
