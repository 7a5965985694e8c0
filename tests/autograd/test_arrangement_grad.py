"""Gradients of the shape extras (tocha/_ops/arrangement.py): gradcheck (reverse and forward
mode) and gradgradcheck in float64, and PyTorch's gradients and forward-mode tangents. Their
values, errors and views are in tests/core/test_arrangement.py, which needs no
tocha-autograd."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha
from tests.autograd.forward import assert_tangents_match
from tests.core.helpers import assert_tensor
from tocha import autograd

# -- gradients --------------------------------------------------------------------------------
# (id, f(lib, *inputs), input shapes or arrays): float64 leaves.
GRADS = [
    ("flip", lambda m, x: m.flip(x, (0, 1)), [(2, 3)]),
    ("roll", lambda m, x: m.roll(x, (1, -1), (0, 1)), [(3, 4)]),
    ("roll_flat", lambda m, x: m.roll(x, 2), [(2, 3)]),
    ("rot90", lambda m, x: m.rot90(x, 1, (1, 0)), [(2, 3)]),
    ("tril", lambda m, x: m.tril(x, -1), [(3, 3)]),
    ("triu", lambda m, x: m.triu(x, 1), [(2, 3, 4)]),
    ("diagonal", lambda m, x: m.diagonal(x, 1, 0, 2), [(3, 2, 4)]),
    ("diag_embed", lambda m, x: m.diag_embed(x, -1), [(2, 3)]),
    ("diag", lambda m, x: m.diag(x, 1), [(3, 3)]),
    ("trace", lambda m, x: m.trace(x), [(3, 4)]),
    ("block_diag", lambda m, x, y: m.block_diag(x, y), [(2, 2), (3,)]),
    ("repeat_interleave", lambda m, x: m.repeat_interleave(x, m.tensor([2, 0, 1]), 0), [(3, 2)]),
    ("combinations", lambda m, x: m.combinations(x, 2, True), [(3,)]),
    ("cartesian_prod", lambda m, x, y: m.cartesian_prod(x, y), [(2,), (3,)]),
    ("meshgrid", lambda m, x, y: m.meshgrid(x, y, indexing="xy")[0] * 2, [(2,), (3,)]),
    ("cdist", lambda m, x, y: m.cdist(x, y), [(3, 2), (4, 2)]),
    ("cdist_p1", lambda m, x, y: m.cdist(x, y, 1), [(2, 3), (2, 3)]),
    ("cdist_p3", lambda m, x, y: m.cdist(x, y, 3), [(2, 3), (2, 3)]),
    ("pdist", lambda m, x: m.pdist(x), [(4, 3)]),
    ("diff", lambda m, x, p: m.diff(x, 2, 0, prepend=p), [(3, 2), (1, 2)]),
    ("trapezoid", lambda m, y: m.trapezoid(y, dx=0.5), [(3, 4)]),
    ("trapezoid_x", lambda m, y, x: m.trapezoid(y, x), [(2, 4), (4,)]),
    ("cumulative_trapezoid", lambda m, y: m.cumulative_trapezoid(y, dim=0), [(3, 4)]),
    ("gradient", lambda m, x: m.gradient(x, spacing=2.0, edge_order=2)[0], [(4, 3)]),
    ("cross", lambda m, x, y: m.cross(x, y, dim=0), [(3, 2), (3, 2)]),
    ("renorm", lambda m, x: m.renorm(x, 2, 0, 1.0), [(3, 4)]),
    ("cov", lambda m, x, a: m.cov(x, aweights=a.abs()), [(2, 4), (4,)]),
    ("corrcoef", lambda m, x: m.corrcoef(x), [(3, 5)]),
    ("vander", lambda m, x: m.vander(x, 4), [(3,)]),
    ("logcumsumexp", lambda m, x: m.logcumsumexp(x, 1), [(3, 4)]),
    (
        "logcumsumexp_complex",
        lambda m, x, y: m.view_as_real(m.logcumsumexp(m.complex(x, y * 3), 0)),
        [(4, 3), (4, 3)],
    ),
    ("atleast_3d", lambda m, x: m.atleast_3d(x) * 3, [(3,)]),
    ("tensor_split", lambda m, x: m.tensor_split(x, 2, 1)[1] * 2, [(2, 3)]),
    ("broadcast_tensors", lambda m, x, y: m.broadcast_tensors(x, y)[0] * 2, [(3, 1), (4,)]),
    ("column_stack", lambda m, x, y: m.column_stack((x, y)), [(3,), (3, 2)]),
]


def _arrays(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape) for shape in shapes]


def _leaves(lib, shapes, seed):
    return [lib.from_numpy(a).requires_grad_() for a in _arrays(shapes, seed)]


def _sum_outputs(result):
    if isinstance(result, (tuple, list)):
        return sum(r.sum() for r in result)
    return result.sum() if result.ndim else result


@pytest.mark.parametrize("fn, shapes", [g[1:] for g in GRADS], ids=[g[0] for g in GRADS])
def test_gradcheck(fn, shapes):
    inputs = _leaves(tocha, shapes, 1)
    assert autograd.gradcheck(lambda *xs: fn(tocha, *xs), inputs, check_forward_ad=True)
    assert autograd.gradgradcheck(lambda *xs: fn(tocha, *xs), inputs)


# PyTorch's own backward of vander fails (it writes its cumprod in place into a view).
TORCH_GRADS = [g for g in GRADS if g[0] != "vander"]


@pytest.mark.parametrize(
    "fn, shapes", [g[1:] for g in TORCH_GRADS], ids=[g[0] for g in TORCH_GRADS]
)
def test_gradients_match_torch(fn, shapes, torch):
    results = []
    for lib in (tocha, torch):
        xs = _leaves(lib, shapes, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = fn(lib, *xs)
        weights = np.random.default_rng(3).uniform(-1, 1, tuple(out.shape))
        (out * lib.from_numpy(weights)).sum().backward()
        results.append([x.grad for x in xs])
    for got, want in zip(*results):
        if want is None:
            assert got is None
        else:
            assert_tensor(got, want, rtol=1e-6, atol=1e-8)


# PyTorch has no forward-mode derivative of cdist and pdist.
TORCH_TANGENTS = [g for g in GRADS if g[0] not in ("cdist", "cdist_p1", "cdist_p3", "pdist")]


@pytest.mark.parametrize(
    "fn, shapes", [g[1:] for g in TORCH_TANGENTS], ids=[g[0] for g in TORCH_TANGENTS]
)
def test_tangents_match_torch(fn, shapes, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert_tangents_match(torch, fn, _arrays(shapes, 2), rtol=1e-6, atol=1e-8)


def test_inplace_triangle_is_differentiable(torch):
    grads = []
    for lib in (tocha, torch):
        x = lib.from_numpy(np.arange(9.0).reshape(3, 3)).requires_grad_()
        y = x * 2
        y.triu_(1)
        (y * 3).sum().backward()
        grads.append(x.grad)
    assert_tensor(grads[0], grads[1])
