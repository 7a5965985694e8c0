"""Derivatives of the gather, scatter, index and sorting primitives (see `_formulas`).

The formulas follow PyTorch's (``derivatives.yaml``, ``scatter_reduce_backward``): a gather's
gradient scatters back, a scatter's gathers; amax/amin split the gradient evenly among the
values equal to the result; sort, topk and kthvalue send the gradient of their values back
to the positions their indices name.
"""

from __future__ import annotations

import tocha

from ._formulas import _gathered, _linear_in, _plus, conj, d
from ._forward import fwd


def _zeros(shape, g):
    return tocha.zeros(shape, dtype=g.dtype, device=g.device)


def _gather(g, out, x, index, dim):
    return _zeros(x.shape, g).scatter_add(dim, index, g), None, None


def _scatter(g, out, x, index, src, dim):
    return g.scatter(dim, index, 0.0), None, g.gather(dim, index), None


def _scatter_add(g, out, x, index, src, dim):
    return g, None, g.gather(dim, index), None


def _scatter_reduce(g, out, x, index, src, dim, reduce, include_self):
    if reduce == "sum":
        grad_x, grad_src = g, g.gather(dim, index)
    elif reduce == "mean":
        n = (tocha.ones_like(g) if include_self else tocha.zeros_like(g)).scatter_add(
            dim, index, tocha.ones_like(src, dtype=g.dtype)
        )
        n = n.masked_fill(n == 0, 1)
        grad_x, grad_src = g / n, g.gather(dim, index) / n.gather(dim, index)
    elif reduce == "prod":
        grad_x, grad_src = _prod(g, out, x, index, src, dim, include_self)
    else:  # amax, amin: split evenly among the values equal to the result
        value = out.gather(dim, index)
        x_hit = (x == out).to(g.dtype)
        src_hit = (src == value).to(g.dtype)
        share = g / x_hit.scatter_add(dim, index, src_hit)
        grad_x, grad_src = x_hit * share, src_hit * share.gather(dim, index)
    if not include_self:
        grad_x = grad_x.scatter(dim, index, 0.0)
    return grad_x, None, grad_src, None, None, None


def _scatter_reduce_fwd(t, out, x, index, src, dim, reduce, include_self):
    """x's tangent times d out / d x, plus each src tangent times d out / d src added at its
    place (the derivatives: the gradients `_scatter_reduce` gives for a gradient of ones)."""
    grad_x, _, grad_src, *_ = _scatter_reduce(
        tocha.ones_like(out), out, x, index, src, dim, reduce, include_self
    )
    grad_x, grad_src = conj(grad_x), conj(grad_src)  # the slopes, not their conjugates
    tangent = None if t[0] is None else t[0] * grad_x
    if t[2] is None:
        return tangent
    used = t[2][tuple(slice(0, n) for n in index.shape)]
    return _plus(tangent, tocha.zeros_like(out).scatter_add(dim, index, used * grad_src))


def _prod(g, out, x, index, src, dim, include_self):
    """The product's gradient, exact where inputs hold zeros (as PyTorch); conjugated
    slopes for complex inputs."""
    masked_x = x.masked_fill(x == 0, 1)
    masked_out = masked_x.scatter_reduce(dim, index, src, "prod", include_self=include_self)
    grad_x = g * conj(masked_out / masked_x)
    src_zero = src == 0
    zeros = tocha.zeros_like(x).scatter_add(dim, index, src_zero.to(x.dtype)).gather(dim, index)
    single = src_zero & (zeros == 1)
    masked_src = src.masked_fill(single, 1)
    masked_src_out = x.scatter_reduce(dim, index, masked_src, "prod", include_self=include_self)
    slope_src = tocha.where(
        single,
        masked_src_out.gather(dim, index),
        out.gather(dim, index) / src.masked_fill(src_zero, 1),
    )
    return grad_x, g.gather(dim, index) * conj(slope_src)


def _index_add(g, out, x, index, source, dim, alpha):
    grad = g.index_select(dim, index).reshape(source.shape)
    return g, None, grad if alpha == 1 else grad * alpha, None, None


def _index_copy(g, out, x, index, source, dim):
    grad = g.index_select(dim, index).reshape(source.shape)
    return g.index_fill(dim, index, 0), None, grad, None


def _back_to(g, shape, dim, indices):
    """A zero tensor of `shape` with `g` added at `indices` along `dim`."""
    if not len(shape):
        return g
    return _zeros(shape, g).scatter_add(dim, indices, g)


def _kthvalue(g, out, x, k, dim, keepdim):
    values, indices = g[0], out[1]
    if not keepdim and x.dim():
        values, indices = values.unsqueeze(dim), indices.unsqueeze(dim)
    return _back_to(values, x.shape, dim, indices), None, None, None


d("gather", "1", _gather)
fwd("gather", _linear_in("gather", 0))
d("scatter", "1", _scatter)
fwd("scatter", _linear_in("scatter", 0, 2))
d("scatter_add", "1", _scatter_add)
fwd("scatter_add", _linear_in("scatter_add", 0, 2))
d("scatter_reduce", "012o", _scatter_reduce)
fwd("scatter_reduce", _scatter_reduce_fwd)
d("index_add", "1", _index_add)
fwd("index_add", _linear_in("index_add", 0, 2))
d("index_copy", "1", _index_copy)
fwd("index_copy", _linear_in("index_copy", 0, 2))
d(
    "index_fill",
    "1",
    lambda g, out, x, index, dim, value: (g.index_fill(dim, index, 0), None, None, None),
)
fwd("index_fill", lambda t, out, x, index, dim, value: t[0].index_fill(dim, index, 0))
d(
    "sort",
    "o1",
    lambda g, out, x, dim, descending: (_back_to(g[0], x.shape, dim, out[1]), None, None),
)
fwd("sort", lambda t, out, x, dim, descending: (_gathered(t[0], dim, out[1]), None))
d(
    "topk",
    "o1",
    lambda g, out, x, k, dim, largest, sorted: (
        _back_to(g[0], x.shape, dim, out[1]),
        None,
        None,
        None,
        None,
    ),
)
fwd("topk", lambda t, out, x, k, dim, largest, sorted: (_gathered(t[0], dim, out[1]), None))
d("kthvalue", "o1", _kthvalue)
fwd("kthvalue", lambda t, out, x, k, dim, keepdim: (_gathered(t[0], dim, out[1], keepdim), None))
