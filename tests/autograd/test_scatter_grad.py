"""Gradients of gather, the scatter family, index_*, take, put, masked_scatter and the
*_scatter embeddings: gradcheck (reverse and forward mode) and gradgradcheck in float64, and
PyTorch's gradients and forward-mode tangents. Their values and errors are in
tests/core/test_scatter.py, which needs no tocha-autograd (its samples are used here)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.autograd.forward import assert_tangents_match
from tests.core.helpers import assert_tensor
from tests.core.test_scatter import IDX0, SRC, B, F
from tocha.autograd import gradcheck, gradgradcheck


# -- gradients -----------------------------------------------------------------------------
def _g(a):
    return tocha.from_numpy(np.array(a, dtype=np.float64)).requires_grad_()


GRADS = {
    "gather": (lambda L, x: x.gather(0, L.tensor(IDX0)), [F]),
    "gather_small": (lambda L, x: x.gather(1, L.tensor([[1], [0]])), [F]),
    "scatter_src": (
        lambda L, x, s: x.scatter(1, L.tensor([[3, 0], [1, 2], [0, 2]]), s),
        [F, SRC[:, :2]],
    ),
    "scatter_value": (lambda L, x: x.scatter(0, L.tensor(IDX0), 2.0), [F]),
    "scatter_add": (lambda L, x, s: x.scatter_add(0, L.tensor(IDX0), s), [F, SRC[:2]]),
    "scatter_add_small_src": (lambda L, x, s: x.scatter_add(1, L.tensor([[0, 0]]), s), [F, SRC]),
    "index_add": (
        lambda L, x, s: x.index_add(1, L.tensor([0, 3, 0]), s, alpha=2.0),
        [F, SRC[:, :3]],
    ),
    "index_copy": (lambda L, x, s: x.index_copy(1, L.tensor([3, 0]), s), [F, SRC[:, :2]]),
    "index_fill": (lambda L, x: x.index_fill(0, L.tensor([1]), 3.0), [F]),
    "take": (lambda L, x: x.take(L.tensor([[0, -1], [5, 5]])), [F]),
    "take_along_dim": (lambda L, x: L.take_along_dim(x, L.tensor([[0], [2], [1]]), 1), [F]),
    "put": (lambda L, x, s: x.put(L.tensor([1, 1, 4]), s, accumulate=True), [F, SRC[0, :3]]),
    "put_assign": (lambda L, x, s: x.put(L.tensor([1, 7, 4]), s), [F, SRC[0, :3]]),
    "masked_scatter": (lambda L, x, s: x.masked_scatter(L.tensor(B), s), [F, SRC]),
    "select_scatter": (lambda L, x, s: x.select_scatter(s, 1, 1), [F, SRC[:, 0]]),
    "slice_scatter": (lambda L, x, s: x.slice_scatter(s, 1, 0, 4, 2), [F, SRC[:, :2]]),
    "diagonal_scatter": (lambda L, x, s: x.diagonal_scatter(s, 1), [F, SRC[0, :3]]),
    "inplace_scatter_add_": (
        lambda L, x, s: (x * 1).scatter_add_(0, L.tensor(IDX0), s),
        [F, SRC[:2]],
    ),
}
for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    for _include in (True, False):
        GRADS[f"scatter_reduce_{_reduce}_{_include}"] = (
            lambda L, x, s, r=_reduce, i=_include: x.scatter_reduce(
                0, L.tensor(IDX0), s, r, include_self=i
            ),
            [F, SRC[:2]],
        )


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    fn, arrays = GRADS[name]
    inputs = [_g(a) for a in arrays]
    assert gradcheck(lambda *xs: fn(tocha, *xs), inputs, check_forward_ad=True)
    assert gradgradcheck(lambda *xs: fn(tocha, *xs), inputs)


# PyTorch refuses a src larger than the index in backward; tocha gives zeros there.
@pytest.mark.parametrize("name", sorted(set(GRADS) - {"scatter_add_small_src"}))
def test_gradients_against_torch(name, torch):
    fn, arrays = GRADS[name]
    grads = []
    for lib in (tocha, torch):
        inputs = [lib.from_numpy(np.array(a, dtype=np.float64)).requires_grad_() for a in arrays]
        out = fn(lib, *inputs)
        weights = lib.from_numpy(np.arange(out.numel(), dtype=np.float64).reshape(out.shape))
        (out * weights).sum().backward()
        grads.append([x.grad for x in inputs])
    for got, want in zip(*grads):
        assert_tensor(got, want)


# PyTorch gives scatter_reduce "prod" no tangent (its forward-mode derivative is missing).
@pytest.mark.parametrize("name", sorted(n for n in GRADS if "_prod_" not in n))
def test_tangents_against_torch(name, torch):
    fn, arrays = GRADS[name]
    assert_tangents_match(torch, fn, [np.array(a, dtype=np.float64) for a in arrays])


def test_amax_ties_split_evenly(torch):
    grads = []
    for lib in (tocha, torch):
        x = lib.tensor([1.0, 5.0], dtype=lib.float64, requires_grad=True)
        src = lib.tensor([5.0, 5.0, 0.0], dtype=lib.float64, requires_grad=True)
        x.scatter_reduce(0, lib.tensor([1, 1, 0]), src, "amax").sum().backward()
        grads.append((x.grad, src.grad))
    for got, want in zip(*grads):
        assert_tensor(got, want)
