"""Gradients of tocha.linalg: gradcheck / gradgradcheck in float64, and torch's own
gradients. Its values and errors are in tests/core/test_linalg.py, which needs no
tocha-autograd (its input makers `_rand` and `_spd` are used here too)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.test_linalg import _rand, _spd
from tocha.autograd import gradcheck, gradgradcheck

LA = tocha.linalg


# -- gradients --------------------------------------------------------------------------------
def _eye(n):
    return tocha.eye(n, dtype=tocha.float64)


GRAD_CASES = [
    ("det", [_rand(2, 3, 3)], lambda L, a: L.linalg.det(a)),
    ("det_singular", [np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])], lambda L, a: L.linalg.det(a)),
    ("slogdet", [_rand(3, 3)], lambda L, a: L.linalg.slogdet(a).logabsdet),
    ("logdet", [_spd(3, 3)], lambda L, a: L.logdet(a)),
    ("inv", [_rand(2, 3, 3, shift=3)], lambda L, a: L.linalg.inv(a)),
    ("solve", [_rand(3, 3, shift=3), _rand(2, 3, 2)], lambda L, a, b: L.linalg.solve(a, b)),
    ("solve_vec", [_rand(3, 3, shift=3), _rand(3)], lambda L, a, b: L.linalg.solve(a, b)),
    (
        "cholesky",
        [_rand(2, 3, 3)],
        lambda L, a: L.linalg.cholesky(a @ a.mT + 3 * L.eye(3, dtype=a.dtype)),
    ),
    (
        "cholesky_upper",
        [_rand(3, 3)],
        lambda L, a: L.linalg.cholesky(a @ a.mT + 3 * L.eye(3, dtype=a.dtype), upper=True),
    ),
    ("qr", [_rand(2, 4, 3)], lambda L, a: tuple(L.linalg.qr(a))),
    ("qr_wide", [_rand(3, 5)], lambda L, a: tuple(L.linalg.qr(a))),
    ("eigh", [_rand(3, 3)], lambda L, a: tuple(L.linalg.eigh(a + a.mT))),
    ("eigvalsh", [_rand(2, 3, 3)], lambda L, a: L.linalg.eigvalsh(a + a.mT)),
    ("svd_tall", [_rand(4, 3)], lambda L, a: tuple(L.linalg.svd(a, full_matrices=False))),
    ("svd_wide", [_rand(2, 3, 4)], lambda L, a: tuple(L.linalg.svd(a, full_matrices=False))),
    ("svd_square", [_rand(3, 3)], lambda L, a: tuple(L.linalg.svd(a))),
    ("svdvals", [_rand(4, 3)], lambda L, a: L.linalg.svdvals(a)),
    ("pinv", [_rand(4, 3)], lambda L, a: L.linalg.pinv(a)),
    ("pinv_wide", [_rand(2, 3, 4)], lambda L, a: L.linalg.pinv(a)),
    ("lstsq", [_rand(5, 3), _rand(5, 2)], lambda L, a, b: L.linalg.lstsq(a, b).solution),
    ("matrix_exp", [_rand(2, 3, 3)], lambda L, a: L.linalg.matrix_exp(a)),
    (
        "solve_triangular",
        [_rand(3, 3, shift=3), _rand(3, 2)],
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
    ),
    (
        "solve_triangular_r",
        [_rand(3, 3, shift=3), _rand(2, 3)],
        lambda L, a, b: L.linalg.solve_triangular(
            a, b, upper=False, left=False, unitriangular=True
        ),
    ),
    ("lu_factor", [_rand(3, 3)], lambda L, a: L.linalg.lu_factor(a).LU),
    ("lu", [_rand(3, 3)], lambda L, a: tuple(L.linalg.lu(a))[1:]),
    (
        "lu_solve",
        [_rand(3, 3), _rand(3, 2)],
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b),
    ),
    (
        "lu_solve_adjoint",
        [_rand(3, 3), _rand(3, 2)],
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True),
    ),
    (
        "lu_solve_right",
        [_rand(3, 3), _rand(2, 3)],
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, left=False),
    ),
    ("vector_norm", [_rand(2, 3)], lambda L, a: L.linalg.vector_norm(a, 3, dim=1)),
    ("norm", [_rand(2, 3)], lambda L, a: L.linalg.norm(a)),
    ("matrix_norm_nuc", [_rand(3, 3)], lambda L, a: L.linalg.matrix_norm(a, "nuc")),
    ("matrix_norm_2", [_rand(3, 3)], lambda L, a: L.linalg.matrix_norm(a, 2)),
    ("matrix_norm_inf", [_rand(3, 3)], lambda L, a: L.linalg.matrix_norm(a, float("inf"))),
    ("cond", [_rand(3, 3)], lambda L, a: L.linalg.cond(a)),
    ("cross", [_rand(2, 3), _rand(2, 3)], lambda L, a, b: L.linalg.cross(a, b)),
    ("vecdot", [_rand(2, 3), _rand(3)], lambda L, a, b: L.linalg.vecdot(a, b)),
    ("multi_dot", [_rand(2, 3), _rand(3, 4), _rand(4)], lambda L, *t: L.linalg.multi_dot(t)),
    ("matrix_power", [_rand(3, 3, shift=2)], lambda L, a: L.linalg.matrix_power(a, -3)),
    ("householder", [_rand(4, 3), _rand(3)], lambda L, a, t: L.linalg.householder_product(a, t)),
]
NO_GRADGRAD = {"svd_tall", "svd_wide", "svd_square", "eigh", "det_singular", "qr_wide"}


def _sum_outputs(out):
    outs = out if isinstance(out, tuple) else (out,)
    weights = [np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape)) for o in outs]
    return outs, weights


@pytest.mark.parametrize("name, arrays, fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck(name, arrays, fn):
    inputs = [tocha.from_numpy(a.copy()).requires_grad_() for a in arrays]
    assert gradcheck(lambda *t: fn(tocha, *t), inputs)
    if name not in NO_GRADGRAD:
        assert gradgradcheck(lambda *t: fn(tocha, *t), inputs)


@pytest.mark.parametrize("name, arrays, fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_torch(torch, name, arrays, fn):
    if name == "det_singular":
        pytest.skip("torch gives 0 here; the adjugate (checked by gradcheck) is nonzero")
    mine = [tocha.from_numpy(a.copy()).requires_grad_() for a in arrays]
    theirs = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    outs_m, weights = _sum_outputs(fn(tocha, *mine))
    outs_t, _ = _sum_outputs(fn(torch, *theirs))
    if name.startswith("svd") or name.startswith("eigh") or name.startswith("qr"):
        # singular vectors are defined up to sign: use gauge-invariant losses of them
        outs_m = [o.abs() for o in outs_m]
        outs_t = [o.abs() for o in outs_t]
    loss_m = sum((o * tocha.from_numpy(w)).sum() for o, w in zip(outs_m, weights))
    loss_t = sum((o * torch.from_numpy(w)).sum() for o, w in zip(outs_t, weights))
    loss_m.backward()
    loss_t.backward()
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-8)


def test_complex_derivative_is_refused():
    a = tocha.from_numpy(_rand(3, 3, dtype="complex128", shift=3)).requires_grad_()
    with pytest.raises(NotImplementedError):
        LA.inv(a).abs().sum().backward()
