"""Gradients of tocha.linalg: gradcheck / gradgradcheck in float64, and torch's own
gradients. Its values and errors are in tests/core/test_linalg.py, which needs no
tocha-autograd (its input makers `_rand` and `_spd` are used here too)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.test_linalg import _rand, _spd, _sym
from tocha.autograd import gradcheck, gradgradcheck

LA = tocha.linalg


# -- gradients --------------------------------------------------------------------------------
def _eye(n):
    return tocha.eye(n, dtype=tocha.float64)


GRAD_CASES = [
    ("det", [_rand(2, 3, 3)], lambda L, a: L.linalg.det(a)),
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
NO_GRADGRAD = {"svd_tall", "svd_wide", "svd_square", "eigh", "qr_wide"}


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


def test_det_gradient_at_a_singular_matrix_under_create_graph():
    """The adjugate (PyTorch's, through the SVD), where the plain backward gives zeros (see
    tests/autograd/test_complex_gradients.py)."""
    a = tocha.tensor([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]], dtype=tocha.float64, requires_grad=True)
    (grad,) = tocha.autograd.grad(LA.det(a), a, create_graph=True)
    expected = [[4.0, 4, -4], [-2, -2, 2], [0, 0, 0]]
    np.testing.assert_allclose(grad.detach().numpy(), expected, atol=1e-12)


def test_lstsq_residuals_gradients_match_torch(torch):
    arrays = [_rand(5, 3), _rand(5, 2, seed=1)]
    mine = [tocha.from_numpy(a.copy()).requires_grad_() for a in arrays]
    theirs = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    weights = np.linspace(0.5, 1.5, 2)
    (LA.lstsq(*mine, driver="gelsd").residuals * tocha.from_numpy(weights)).sum().backward()
    (
        torch.linalg.lstsq(*theirs, driver="gelsd").residuals * torch.from_numpy(weights)
    ).sum().backward()
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


# -- forward mode -----------------------------------------------------------------------------
def _dual_outputs(lib, fn, arrays, tangents):
    """fn's outputs at `arrays`, each input a dual tensor with its tangent: (primals,
    tangents) as NumPy arrays (a tangent None where the output has none)."""
    forward_ad = lib.autograd.forward_ad
    with forward_ad.dual_level():
        duals = [
            forward_ad.make_dual(lib.from_numpy(a.copy()), lib.from_numpy(t.copy()))
            for a, t in zip(arrays, tangents)
        ]
        out = fn(lib, *duals)
        unpacked = [forward_ad.unpack_dual(o) for o in (out if isinstance(out, tuple) else (out,))]
        return (
            [u.primal.numpy(force=True) for u in unpacked],
            [None if u.tangent is None else u.tangent.numpy(force=True) for u in unpacked],
        )


def _tangents_for(arrays, seed=7, hermitian=False):
    """Random tangents of the inputs' shapes and dtypes (Hermitian ones for `hermitian`)."""
    rng = np.random.default_rng(seed)
    tangents = []
    for a in arrays:
        t = rng.standard_normal(a.shape)
        if np.iscomplexobj(a):
            t = t + 1j * rng.standard_normal(a.shape)
        if hermitian:
            t = t + np.conj(np.swapaxes(t, -1, -2))
        tangents.append(t.astype(a.dtype))
    return tangents


def _finite_differences(fn, arrays, tangents, eps=1e-6):
    """The directional derivatives of fn's outputs along `tangents`, by central differences."""

    def at(step):
        out = fn(tocha, *[tocha.from_numpy(a + step * t) for a, t in zip(arrays, tangents)])
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]

    return [(p - m) / (2 * eps) for p, m in zip(at(eps), at(-eps))]


# The outputs defined up to a phase per column: (output index, dim summed for the phases,
# the outputs that turn with it conjugated: rows).
GAUGES = {
    "eigh": ((1, -2, ()),),
    "svd": ((0, -2, (2,)),),
    "eig": ((1, -2, ()),),
}


def _gauge(name):
    return GAUGES.get(name.split("_")[0], ())


def _phases(mine, theirs, dim):
    """Unit numbers d per column (dim=-2) with ``theirs ~ mine * d``."""
    inner = (np.conj(mine) * theirs).sum(dim)
    return inner / np.abs(inner)


def _aligned(name, primals, tangents, reference):
    """`primals` and `tangents` with their gauge turned to the reference primals' (the sign
    or phase of each singular vector or eigenvector column, which LAPACK picks)."""
    primals, tangents = list(primals), list(tangents)
    for index, dim, rows in _gauge(name):
        k = min(primals[index].shape[-1], reference[index].shape[-1])
        d = _phases(primals[index][..., :k], reference[index][..., :k], dim)
        pad = np.ones(d.shape[:-1] + (primals[index].shape[-1] - k,))
        column = np.concatenate([d, pad], -1)[..., None, :]
        primals[index], tangents[index] = primals[index] * column, tangents[index] * column
        for r in rows:
            row = np.concatenate([d, np.ones(d.shape[:-1] + (primals[r].shape[-2] - k,))], -1)
            row = np.conj(row)[..., :, None]
            primals[r], tangents[r] = primals[r] * row, tangents[r] * row
    return primals, tangents


def _assert_tangents_match_torch(torch, name, fn, arrays, tangents):
    primals, mine = _dual_outputs(tocha, fn, arrays, tangents)
    reference, theirs = _dual_outputs(torch, fn, arrays, tangents)
    primals, mine = _aligned(name, primals, mine, reference)
    for i, (p, r, m, t) in enumerate(zip(primals, reference, mine, theirs)):
        np.testing.assert_allclose(p, r, rtol=1e-9, atol=1e-12, err_msg=f"primal {i}")
        if t is None or not np.any(t):
            assert m is None or not np.any(m), f"tangent {i}: torch has none"
            continue
        np.testing.assert_allclose(m, t, rtol=1e-8, atol=1e-10, err_msg=f"tangent {i}")


@pytest.mark.parametrize("name, arrays, fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_forward_ad_gradcheck(name, arrays, fn):
    inputs = [tocha.from_numpy(a.copy()).requires_grad_() for a in arrays]
    assert gradcheck(
        lambda *t: fn(tocha, *t), inputs, check_forward_ad=True, check_backward_ad=False
    )


@pytest.mark.parametrize("name, arrays, fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_forward_ad_matches_torch(torch, name, arrays, fn):
    _assert_tangents_match_torch(torch, name, fn, arrays, _tangents_for(arrays))


def _c(*shape, seed=0, shift=0.0):
    return _rand(*shape, dtype="complex128", seed=seed, shift=shift)


# Complex inputs: (name, arrays, fn, whether the tangents are Hermitian: the function reads
# one triangle of a Hermitian matrix).
COMPLEX_CASES = [
    ("det", [_c(2, 3, 3)], lambda L, a: L.linalg.det(a), False),
    ("slogdet", [_c(3, 3)], lambda L, a: tuple(L.linalg.slogdet(a)), False),
    ("inv", [_c(2, 3, 3, shift=3)], lambda L, a: L.linalg.inv(a), False),
    (
        "solve",
        [_c(3, 3, shift=3), _c(2, 3, 2, seed=1)],
        lambda L, a, b: L.linalg.solve(a, b),
        False,
    ),
    ("cholesky", [_spd(2, 3, 3, dtype="complex128")], lambda L, a: L.linalg.cholesky(a), True),
    ("qr", [_c(4, 3)], lambda L, a: tuple(L.linalg.qr(a)), False),
    ("qr_wide", [_c(3, 5)], lambda L, a: tuple(L.linalg.qr(a)), False),
    ("eigh", [_sym(3, 3, dtype="complex128")], lambda L, a: tuple(L.linalg.eigh(a)), True),
    ("eigvalsh", [_sym(2, 3, 3, dtype="complex128")], lambda L, a: L.linalg.eigvalsh(a), True),
    ("svd_tall", [_c(4, 3)], lambda L, a: tuple(L.linalg.svd(a, full_matrices=False)), False),
    ("svd_wide_full", [_c(2, 3, 4)], lambda L, a: tuple(L.linalg.svd(a)), False),
    ("svdvals", [_c(4, 3)], lambda L, a: L.linalg.svdvals(a), False),
    ("pinv", [_c(3, 4)], lambda L, a: L.linalg.pinv(a), False),
    (
        "lstsq",
        [_c(5, 3), _c(5, 2, seed=1)],
        lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gelsd"))[:2],
        False,
    ),
    ("matrix_exp", [_c(2, 3, 3)], lambda L, a: L.linalg.matrix_exp(a), False),
    (
        "solve_triangular",
        [_c(3, 3, shift=3), _c(3, 2, seed=1)],
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
        False,
    ),
    ("lu_factor", [_c(3, 4)], lambda L, a: L.linalg.lu_factor(a).LU, False),
    (
        "lu_solve",
        [_c(3, 3), _c(3, 2, seed=1)],
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True),
        False,
    ),
    ("vecdot", [_c(2, 3), _c(3, seed=1)], lambda L, a, b: L.linalg.vecdot(a, b), False),
    ("eig", [_c(3, 3)], lambda L, a: tuple(L.linalg.eig(a)), False),
    ("eigvals", [_rand(3, 3)], lambda L, a: L.linalg.eigvals(a), False),
]
# tocha pivots a complex LU on the largest |z|, LAPACK on the largest |Re z| + |Im z|.
PIVOTS_DIFFER = {"lu_factor"}


@pytest.mark.parametrize(
    "name, arrays, fn, hermitian", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES]
)
def test_complex_forward_ad_matches_finite_differences(name, arrays, fn, hermitian):
    """Every output but those defined up to a phase (checked by the next tests)."""
    tangents = _tangents_for(arrays, hermitian=hermitian)
    _, mine = _dual_outputs(tocha, fn, arrays, tangents)
    numerical = _finite_differences(fn, arrays, tangents)
    gauged = {index for index, _, rows in _gauge(name) for index in (index, *rows)}
    for i, (m, n) in enumerate(zip(mine, numerical)):
        if i not in gauged:
            np.testing.assert_allclose(m, n, rtol=1e-6, atol=1e-7, err_msg=f"output {i}")


@pytest.mark.parametrize(
    "name, arrays, fn, hermitian", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES]
)
def test_complex_forward_ad_matches_torch(torch, name, arrays, fn, hermitian):
    if name in PIVOTS_DIFFER:
        pytest.skip("tocha and LAPACK pivot complex LU on different rows")
    tangents = _tangents_for(arrays, hermitian=hermitian)
    _assert_tangents_match_torch(torch, name, fn, arrays, tangents)


def _with_tangent(fn, a, t):
    with tocha.autograd.forward_ad.dual_level():
        dual = tocha.autograd.forward_ad.make_dual(tocha.from_numpy(a), tocha.from_numpy(t))
        out = fn(dual)
        return [tocha.autograd.forward_ad.unpack_dual(o) for o in out]


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eigenvector_tangents_solve_the_differentiated_equation(dtype):
    """A V = V diag(L) differentiated: dA V + A dV = dV diag(L) + V diag(dL); each column of
    V keeps norm 1 (Re v^H dv = 0), and eigh's V^H dV is skew-Hermitian with a zero diagonal."""
    a = _rand(3, 3, dtype=dtype)
    (L, dL), (V, dV) = _with_tangent(LA.eig, a, _tangents_for([a])[0])
    A = tocha.from_numpy(a).to(V.dtype)
    dA = tocha.from_numpy(_tangents_for([a])[0]).to(V.dtype)
    lhs = dA @ V + A @ dV
    rhs = dV * L.unsqueeze(-2) + V * dL.unsqueeze(-2)
    np.testing.assert_allclose(lhs.numpy(), rhs.numpy(), atol=1e-10)
    np.testing.assert_allclose(np.diagonal((V.mH @ dV).numpy()).real, 0, atol=1e-12)
    h = _sym(3, 3, dtype=dtype)
    dh = _tangents_for([h], hermitian=True)[0]
    (L, dL), (V, dV) = _with_tangent(LA.eigh, h, dh)
    lhs = tocha.from_numpy(dh) @ V + tocha.from_numpy(h) @ dV
    rhs = dV * L.unsqueeze(-2) + V * dL.unsqueeze(-2)
    np.testing.assert_allclose(lhs.numpy(), rhs.numpy(), atol=1e-10)
    VhdV = (V.mH @ dV).numpy()
    np.testing.assert_allclose(VhdV, -np.conj(VhdV.T), atol=1e-12)
    np.testing.assert_allclose(np.diagonal(VhdV), 0, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_singular_vector_tangents_differentiate_the_factorisation(shape, dtype):
    """dA = dU S Vh + U dS Vh + U S dVh, with U^H dU and Vh dVh^H skew-Hermitian."""
    a = _rand(*shape, dtype=dtype)
    da = _tangents_for([a])[0]
    (U, dU), (S, dS), (Vh, dVh) = _with_tangent(lambda x: LA.svd(x, full_matrices=False), a, da)
    S, dS = S.to(U.dtype), dS.to(U.dtype)
    total = (dU * S.unsqueeze(-2)) @ Vh + (U * dS.unsqueeze(-2)) @ Vh + (U * S.unsqueeze(-2)) @ dVh
    np.testing.assert_allclose(total.numpy(), da, atol=1e-10)
    for skew in (U.mH @ dU, Vh @ dVh.mH):
        np.testing.assert_allclose(skew.numpy(), -np.conj(skew.numpy().T), atol=1e-12)


@pytest.mark.parametrize(
    "fn",
    [
        lambda a: LA.qr(a, mode="r"),
        lambda a: LA.qr(a, mode="complete"),
    ],
    ids=["mode_r", "complete_tall"],
)
def test_qr_forward_errors(fn):
    a = _rand(4, 3)
    with tocha.autograd.forward_ad.dual_level():
        dual = tocha.autograd.forward_ad.make_dual(tocha.from_numpy(a), tocha.from_numpy(a))
        with pytest.raises((RuntimeError, NotImplementedError), match="linalg.qr|QR"):
            fn(dual)
