"""tocha.linalg against PyTorch: values, dtypes, shapes, batching and errors. Its gradients
need tocha-autograd: tests/autograd/test_linalg_grad.py."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

LA = tocha.linalg


def _rand(*shape, dtype="float64", seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    if shift and len(shape) >= 2:
        a = a + shift * np.eye(shape[-1])
    return a.astype(dtype)


def _spd(*shape, dtype="float64"):
    a = _rand(*shape, dtype=dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _sym(*shape, dtype="float64"):
    a = _rand(*shape, dtype=dtype)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def _both(torch, arrays):
    return [tocha.from_numpy(a.copy()) for a in arrays], [
        torch.from_numpy(a.copy()) for a in arrays
    ]


def _compare(mine, theirs, rtol):
    if isinstance(theirs, tuple):
        assert len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            _compare(m, t, rtol)
        return
    assert_tensor(mine, theirs, rtol=rtol, atol=rtol)


# name, inputs, call (library module first), which outputs to compare (None: all)
VALUE_CASES = [
    ("det", [_rand(2, 4, 4)], lambda L, a: L.linalg.det(a)),
    ("det_top", [_rand(3, 3)], lambda L, a: L.det(a)),
    ("slogdet", [_rand(2, 3, 3)], lambda L, a: tuple(L.linalg.slogdet(a))),
    ("logdet", [_spd(2, 3, 3)], lambda L, a: L.logdet(a)),
    ("inv", [_rand(3, 4, 4, shift=3)], lambda L, a: L.linalg.inv(a)),
    ("inverse", [_rand(4, 4, shift=3)], lambda L, a: L.inverse(a)),
    ("inv_ex", [_rand(4, 4, shift=3)], lambda L, a: tuple(L.linalg.inv_ex(a))),
    ("solve", [_rand(2, 3, 3, shift=3), _rand(2, 3, 2)], lambda L, a, b: L.linalg.solve(a, b)),
    ("solve_vec", [_rand(2, 3, 3, shift=3), _rand(2, 3)], lambda L, a, b: L.linalg.solve(a, b)),
    ("solve_bcast", [_rand(3, 3, shift=3), _rand(4, 3, 2)], lambda L, a, b: L.linalg.solve(a, b)),
    (
        "solve_right",
        [_rand(3, 3, shift=3), _rand(2, 3)],
        lambda L, a, b: L.linalg.solve(a, b, left=False),
    ),
    ("cholesky", [_spd(2, 4, 4)], lambda L, a: L.linalg.cholesky(a)),
    ("cholesky_upper", [_spd(4, 4)], lambda L, a: L.linalg.cholesky(a, upper=True)),
    ("cholesky_ex", [_spd(4, 4)], lambda L, a: tuple(L.linalg.cholesky_ex(a))),
    ("cholesky_top", [_spd(4, 4)], lambda L, a: L.cholesky(a)),
    ("eigh", [_sym(2, 4, 4)], lambda L, a: L.linalg.eigh(a).eigenvalues),
    ("eigh_U", [_sym(4, 4)], lambda L, a: L.linalg.eigvalsh(a, "U")),
    ("eigvalsh", [_sym(2, 4, 4)], lambda L, a: L.linalg.eigvalsh(a)),
    (
        "eigvals",
        [_sym(4, 4)],
        lambda L, a: L.linalg.eigvals(a).real.sort().values if L is not tocha else None,
    ),
    ("svdvals", [_rand(2, 5, 3)], lambda L, a: L.linalg.svdvals(a)),
    ("svd_S", [_rand(2, 3, 5)], lambda L, a: L.linalg.svd(a).S),
    ("pinv", [_rand(2, 5, 3)], lambda L, a: L.linalg.pinv(a)),
    ("pinv_herm", [_spd(4, 4)], lambda L, a: L.linalg.pinv(a, hermitian=True)),
    ("pinverse", [_rand(3, 5)], lambda L, a: L.pinverse(a)),
    ("lstsq", [_rand(5, 3), _rand(5, 2)], lambda L, a, b: L.linalg.lstsq(a, b).solution),
    (
        "lstsq_gelsd",
        [_rand(2, 5, 3), _rand(2, 5, 2)],
        lambda L, a, b: tuple(L.linalg.lstsq(a, b, driver="gelsd")),
    ),
    ("matrix_rank", [_rand(2, 4, 3)], lambda L, a: L.linalg.matrix_rank(a)),
    ("matrix_rank_low", [np.ones((3, 3))], lambda L, a: L.linalg.matrix_rank(a)),
    ("matrix_power", [_rand(2, 3, 3)], lambda L, a: L.linalg.matrix_power(a, 5)),
    ("matrix_power_neg", [_rand(3, 3, shift=3)], lambda L, a: L.linalg.matrix_power(a, -2)),
    ("matrix_power_0", [_rand(2, 3, 3)], lambda L, a: L.matrix_power(a, 0)),
    ("matrix_exp", [_rand(2, 4, 4)], lambda L, a: L.linalg.matrix_exp(a)),
    ("matrix_exp_big", [_rand(3, 3) * 20], lambda L, a: L.matrix_exp(a)),
    ("cross", [_rand(1, 2, 3), _rand(4, 1, 3)], lambda L, a, b: L.linalg.cross(a, b)),
    ("vecdot", [_rand(2, 3), _rand(3)], lambda L, a, b: L.linalg.vecdot(a, b)),
    (
        "vecdot_c",
        [_rand(2, 3, dtype="complex128"), _rand(2, 3, dtype="complex128")],
        lambda L, a, b: L.linalg.vecdot(a, b, dim=0),
    ),
    (
        "multi_dot",
        [_rand(3), _rand(3, 5), _rand(5, 2), _rand(2)],
        lambda L, *t: L.linalg.multi_dot(t),
    ),
    ("householder", [_rand(5, 3), _rand(2)], lambda L, a, t: L.linalg.householder_product(a, t)),
    (
        "householder_b",
        [_rand(2, 4, 4), _rand(2, 4)],
        lambda L, a, t: L.linalg.householder_product(a, t),
    ),
    ("lu_factor", [_rand(2, 4, 4)], lambda L, a: tuple(L.linalg.lu_factor(a))),
    ("lu_factor_wide", [_rand(3, 5)], lambda L, a: tuple(L.linalg.lu_factor(a))),
    ("lu", [_rand(2, 5, 3)], lambda L, a: tuple(L.linalg.lu(a))),
    (
        "lu_solve",
        [_rand(2, 4, 4), _rand(2, 4, 3)],
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b),
    ),
    (
        "lu_solve_adj",
        [_rand(4, 4), _rand(4, 3)],
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True),
    ),
    (
        "lu_solve_right",
        [_rand(4, 4), _rand(3, 4)],
        lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, left=False),
    ),
    (
        "solve_triangular",
        [_rand(2, 20, 20, shift=5), _rand(2, 20, 3)],
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
    ),
    (
        "solve_triangular_l",
        [_rand(40, 40, shift=8), _rand(3, 40)],
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False),
    ),
    (
        "solve_triangular_u",
        [_rand(4, 4), _rand(4, 2)],
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
    ),
    ("vector_norm", [_rand(3, 4)], lambda L, a: L.linalg.vector_norm(a, 3, dim=1)),
    ("vector_norm_inf", [_rand(3, 4)], lambda L, a: L.linalg.vector_norm(a, float("-inf"))),
    ("vector_norm_0", [_rand(3, 4)], lambda L, a: L.linalg.vector_norm(a, 0, dim=(0, 1))),
    ("norm", [_rand(3, 4, 2)], lambda L, a: L.linalg.norm(a)),
    ("norm_fro", [_rand(3, 4)], lambda L, a: L.linalg.norm(a, "fro")),
    ("norm_dims", [_rand(3, 4, 2)], lambda L, a: L.linalg.norm(a, 2, dim=(0, 2), keepdim=True)),
    ("norm_vec", [_rand(3, 4)], lambda L, a: L.linalg.norm(a, 1, dim=1)),
    *[
        (f"matrix_norm_{o}", [_rand(2, 3, 4)], lambda L, a, o=o: L.linalg.matrix_norm(a, o))
        for o in ("fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf"))
    ],
    (
        "matrix_norm_dim",
        [_rand(3, 4, 2)],
        lambda L, a: L.linalg.matrix_norm(a, 1, dim=(0, 2), keepdim=True),
    ),
    *[
        (f"cond_{p}", [_rand(2, 3, 3, shift=2)], lambda L, a, p=p: L.linalg.cond(a, p))
        for p in (None, 2, -2, "fro", "nuc", 1, float("inf"))
    ],
    ("qr_R", [_rand(2, 5, 3)], lambda L, a: L.linalg.qr(a).R.abs()),
    ("qr_complete", [_rand(5, 3)], lambda L, a: L.linalg.qr(a, "complete").R.abs()),
    ("qr_r", [_rand(3, 5)], lambda L, a: L.linalg.qr(a, "r").R.abs()),
    ("qr_top", [_rand(5, 3)], lambda L, a: L.qr(a).R.abs()),
    ("svd_top_S", [_rand(5, 3)], lambda L, a: L.svd(a).S),
    ("det_c", [_rand(3, 3, dtype="complex128")], lambda L, a: L.linalg.det(a)),
    ("inv_c", [_rand(3, 3, dtype="complex64", shift=3)], lambda L, a: L.linalg.inv(a)),
    (
        "solve_c",
        [_rand(3, 3, dtype="complex128", shift=3), _rand(3, 2, dtype="complex128")],
        lambda L, a, b: L.linalg.solve(a, b),
    ),
    ("cholesky_c", [_spd(3, 3, dtype="complex128")], lambda L, a: L.linalg.cholesky(a)),
    ("eigvalsh_c", [_sym(3, 3, dtype="complex64")], lambda L, a: L.linalg.eigvalsh(a)),
    ("svdvals_c", [_rand(4, 3, dtype="complex128")], lambda L, a: L.linalg.svdvals(a)),
    ("matrix_exp_c", [_rand(3, 3, dtype="complex128")], lambda L, a: L.linalg.matrix_exp(a)),
    ("lu_factor_c", [_rand(3, 3, dtype="complex128")], lambda L, a: tuple(L.linalg.lu_factor(a))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, arrays, fn", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_match_torch(torch, name, arrays, fn, dtype):
    if name == "eigvals":
        pytest.skip("compared in test_eig")
    if arrays[0].dtype.kind == "c":
        dtype = "complex64" if dtype == "float32" else "complex128"
    arrays = [a.astype(dtype) for a in arrays]
    mine, theirs = _both(torch, arrays)
    _compare(
        fn(tocha, *mine), fn(torch, *theirs), 2e-4 if dtype in ("float32", "complex64") else 1e-7
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_factorisations_reconstruct(dtype):
    a = _rand(2, 5, 3, dtype=dtype)
    t = tocha.from_numpy(a)
    tol = 1e-4 if dtype == "float32" else 1e-10
    q, r = (x.numpy() for x in LA.qr(t))
    np.testing.assert_allclose(q @ r, a, atol=tol)
    u, s, vh = LA.svd(t, full_matrices=False)
    assert s.dtype == (tocha.float32 if dtype == "float32" else tocha.float64)
    np.testing.assert_allclose((u.numpy() * s.numpy()[..., None, :]) @ vh.numpy(), a, atol=tol)
    u, s, vh = LA.svd(t)
    assert tuple(u.shape) == (2, 5, 5) and tuple(vh.shape) == (2, 3, 3)
    p, lo, up = (x.numpy() for x in LA.lu(t))
    np.testing.assert_allclose(p @ lo @ up, a, atol=tol)
    h = _sym(3, 3, dtype=dtype)
    w, v = (x.numpy() for x in LA.eigh(tocha.from_numpy(h)))
    np.testing.assert_allclose((v * w[None, :]) @ np.conj(v.T), h, atol=tol)


def test_eig(torch):
    a = _rand(2, 4, 4)
    w, v = LA.eig(tocha.from_numpy(a))
    assert w.dtype == tocha.complex128 and v.dtype == tocha.complex128
    np.testing.assert_allclose(a @ v.numpy(), v.numpy() * w.numpy()[:, None, :], atol=1e-10)
    got = np.sort_complex(LA.eigvals(tocha.from_numpy(a.astype("float32"))).numpy())
    want = np.sort_complex(torch.linalg.eigvals(torch.from_numpy(a.astype("float32"))).numpy())
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_legacy_svd_returns_v(torch):
    a = _rand(5, 3)
    mine, theirs = tocha.svd(tocha.from_numpy(a)), torch.svd(torch.from_numpy(a))
    assert tuple(mine.V.shape) == tuple(theirs.V.shape) == (3, 3)
    np.testing.assert_allclose(np.abs(mine.V.numpy()), np.abs(theirs.V.numpy()), atol=1e-10)
    assert tuple(tocha.svd(tocha.from_numpy(a), some=False).U.shape) == (5, 5)


def test_return_types_have_fields():
    a = tocha.from_numpy(_spd(3, 3))
    assert LA.slogdet(a).sign.item() == 1.0
    assert LA.eigh(a).eigenvectors.shape == (3, 3)
    lu = LA.lu_factor(a)
    assert lu.pivots.dtype == tocha.int32 and lu.LU.shape == (3, 3)
    assert LA.lstsq(a, a).rank.dtype == tocha.int64
    assert LA.cholesky_ex(a).info.dtype == tocha.int32


ERROR_CASES = [
    (
        lambda: LA.inv(tocha.from_numpy(np.array([[1.0, 2], [2, 4]]))),
        LA.LinAlgError,
        "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed "
        "because the input matrix is singular.",
    ),
    (
        lambda: LA.inv(tocha.from_numpy(np.stack([np.eye(2), [[1.0, 2], [2, 4]]]))),
        LA.LinAlgError,
        "linalg.inv: (Batch element 1): The diagonal element 2 is zero",
    ),
    (
        lambda: LA.solve(
            tocha.from_numpy(np.array([[1.0, 2], [2, 4]])), tocha.ones(2, dtype=tocha.float64)
        ),
        LA.LinAlgError,
        "torch.linalg.solve: The solver failed because the input matrix is singular.",
    ),
    (
        lambda: LA.cholesky(-tocha.eye(3)),
        LA.LinAlgError,
        "linalg.cholesky: The factorization could not be completed because the input is not "
        "positive-definite (the leading minor of order 1 is not positive-definite).",
    ),
    (
        lambda: LA.cholesky(tocha.from_numpy(np.diag([1.0, 1, -1]))),
        LA.LinAlgError,
        "(the leading minor of order 3 is not positive-definite)",
    ),
    (
        lambda: LA.inv(tocha.ones(2, 3)),
        RuntimeError,
        "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices",
    ),
    (
        lambda: LA.inv(tocha.ones(3)),
        RuntimeError,
        "linalg.inv: The input tensor A must have at least 2 dimensions.",
    ),
    (
        lambda: LA.det(tocha.ones(2, 2, dtype=tocha.int64)),
        RuntimeError,
        "linalg.det: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        lambda: LA.solve(tocha.eye(3), tocha.ones(2)),
        RuntimeError,
        "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x1)",
    ),
    (lambda: LA.qr(tocha.eye(3), "x"), RuntimeError, "qr received unrecognized mode 'x'"),
    (
        lambda: LA.eigh(tocha.eye(3), "X"),
        RuntimeError,
        "Expected UPLO argument to be 'L' or 'U', but got X",
    ),
    (
        lambda: LA.cross(tocha.ones(3, 2), tocha.ones(3, 2)),
        RuntimeError,
        "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2",
    ),
    (
        lambda: LA.vector_norm(tocha.ones(3, dtype=tocha.int64)),
        RuntimeError,
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        lambda: LA.matrix_norm(tocha.ones(3)),
        RuntimeError,
        "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.",
    ),
    (
        lambda: LA.norm(tocha.ones(3, 3), 3),
        RuntimeError,
        "linalg.matrix_norm: Order 3 not supported.",
    ),
    (
        lambda: LA.solve_triangular(tocha.eye(3), tocha.ones(3), upper=True),
        RuntimeError,
        "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.",
    ),
    (
        lambda: LA.lu_factor(tocha.from_numpy(np.array([[1.0, 2], [2, 4]]))),
        LA.LinAlgError,
        "torch.linalg.lu_factor: U[2,2] is zero",
    ),
    (
        lambda: LA.lu_factor(tocha.eye(3), pivot=False),
        RuntimeError,
        "LU without pivoting is not implemented on the CPU",
    ),
]


@pytest.mark.parametrize("fn, exc, message", ERROR_CASES)
def test_errors(fn, exc, message):
    with pytest.raises(exc) as info:
        fn()
    assert message in str(info.value)


def test_ex_variants_do_not_raise():
    singular = tocha.from_numpy(np.array([[1.0, 2], [2, 4]]))
    assert LA.inv_ex(singular).info.item() == 2
    assert LA.cholesky_ex(-tocha.eye(3)).info.item() == 1
    assert LA.lu_factor_ex(singular).info.item() == 2
    assert issubclass(LA.LinAlgError, RuntimeError)
    with pytest.raises(LA.LinAlgError):
        LA.inv_ex(singular, check_errors=True)
