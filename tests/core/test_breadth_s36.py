"""PyTorch functions added for breadth: tocha.linalg.vander, tensorinv, tensorsolve,
ldl_factor(_ex), ldl_solve; tocha.svd_lowrank, pca_lowrank, histogramdd and binomial.
Values, dtypes, shapes and errors against PyTorch (recorded); float64 gradients by gradcheck
where tocha-autograd is installed."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

_RNG = np.random.default_rng(36)


def _rand(*shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _low_rank(m, n, rank, seed=0, batch=()):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(batch + (m, rank)) @ rng.standard_normal(batch + (rank, n))


def _lib_tensor(lib, value):
    return lib.from_numpy(np.array(value)) if isinstance(value, np.ndarray) else value


_BASES = (IndexError, TypeError, ValueError, NotImplementedError, RuntimeError)


def _outcome(lib, fn):
    """What `fn(lib)` does: its result as plain data, or its exception's builtin base and
    message (PyTorch's names read as tocha's)."""
    try:
        result = fn(lib)
    except Exception as exc:  # noqa: BLE001 - compared below
        base = next((b.__name__ for b in _BASES if isinstance(exc, b)), type(exc).__name__)
        return base, str(exc).replace("torch.", "tocha.").split("\n")[0]
    return "ok", _plain(result)


def _plain(result):
    if isinstance(result, (tuple, list)):
        return tuple(_plain(r) for r in result)
    if hasattr(result, "shape") and hasattr(result, "dtype"):
        return (str(result.dtype).split(".")[-1], tuple(result.shape))
    return result


def _same_outcome(torch, fn):
    mine, theirs = _outcome(tocha, fn), _outcome(torch, fn)
    assert mine == theirs


def _gradcheck(fn, *arrays):
    autograd = pytest.importorskip("tocha.autograd")
    inputs = [tocha.from_numpy(a.copy()).requires_grad_() for a in arrays]
    assert autograd.gradcheck(fn, inputs)


# -- vander, tensorinv, tensorsolve ------------------------------------------------------------
VALUES = [
    ("vander", [_rand(4)], lambda L, x: L.linalg.vander(x)),
    ("vander_N", [_rand(2, 3)], lambda L, x: L.linalg.vander(x, N=5)),
    ("vander_int", [np.array([2, -3, 0])], lambda L, x: L.linalg.vander(x, N=4)),
    ("vander_int8", [np.array([2, 3], dtype="int8")], lambda L, x: L.linalg.vander(x)),
    ("vander_c", [_rand(3, dtype="complex64")], lambda L, x: L.linalg.vander(x, N=3)),
    ("vander_0dim", [np.array(2.0)], lambda L, x: L.linalg.vander(x, N=3)),
    ("vander_empty", [np.zeros((2, 0))], lambda L, x: L.linalg.vander(x, N=2)),
    ("tensorinv", [_rand(4, 6, 8, 3)], lambda L, a: L.linalg.tensorinv(a, ind=2)),
    ("tensorinv_1", [_rand(6, 2, 3)], lambda L, a: L.linalg.tensorinv(a, ind=1)),
    ("tensorinv_c", [_rand(2, 3, 6, dtype="complex128")], lambda L, a: L.linalg.tensorinv(a)),
    ("tensorinv_empty", [np.zeros((0, 0))], lambda L, a: L.linalg.tensorinv(a, 1)),
    ("tensorsolve", [_rand(2, 3, 6), _rand(2, 3)], lambda L, a, b: L.linalg.tensorsolve(a, b)),
    (
        "tensorsolve_dims",
        [_rand(6, 4, 2, 3), _rand(4, 3)],
        lambda L, a, b: L.linalg.tensorsolve(a, b, dims=(0, 2)),
    ),
    (
        "tensorsolve_neg_dims",
        [_rand(6, 4, 2, 3), _rand(4, 3)],
        lambda L, a, b: L.linalg.tensorsolve(a, b, dims=[0, -2]),
    ),
    (
        "tensorsolve_4d",
        [_rand(3, 2, 2, 3), _rand(3, 2)],
        lambda L, a, b: L.linalg.tensorsolve(a, b),
    ),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, arrays, fn", VALUES, ids=[c[0] for c in VALUES])
def test_values_match_torch(torch, name, arrays, fn, dtype):
    if arrays[0].dtype.kind == "f":
        arrays = [a.astype(dtype) for a in arrays]
    mine = fn(tocha, *[tocha.from_numpy(a.copy()) for a in arrays])
    theirs = fn(torch, *[torch.from_numpy(a.copy()) for a in arrays])
    single = arrays[0].dtype in (np.float32, np.complex64)
    assert_tensor(mine, theirs, rtol=1e-4 if single else 1e-9, atol=1e-4 if single else 1e-9)


def _t(data, dtype="float32"):
    return np.asarray(data, dtype=dtype)


ERRORS = [
    ("vander_bool", lambda L: L.linalg.vander(L.tensor([True, False]))),
    ("vander_half", lambda L: L.linalg.vander(L.ones(2, dtype=L.float16))),
    ("vander_bf16", lambda L: L.linalg.vander(L.ones(2, dtype=L.bfloat16))),
    ("vander_N1", lambda L: L.linalg.vander(L.ones(3), N=1)),
    ("vander_N0", lambda L: L.linalg.vander(L.ones(3), N=0)),
    ("vander_len1", lambda L: L.linalg.vander(L.ones(2, 1))),
    ("vander_0dim", lambda L: L.linalg.vander(L.tensor(2.0))),
    ("vander_N_float", lambda L: L.linalg.vander(L.ones(3), N=2.0)),
    ("vander_N_bool", lambda L: L.linalg.vander(L.ones(3), N=True)),
    ("vander_list", lambda L: L.linalg.vander([1.0, 2.0])),
    ("tensorinv_ind0", lambda L: L.linalg.tensorinv(L.ones(2, 2), ind=0)),
    ("tensorinv_ind_neg", lambda L: L.linalg.tensorinv(L.ones(2, 2), ind=-1)),
    ("tensorinv_ind_float", lambda L: L.linalg.tensorinv(L.ones(2, 2), ind=1.0)),
    ("tensorinv_shape", lambda L: L.linalg.tensorinv(L.ones(4, 6, 8, 3), ind=1)),
    ("tensorinv_ind_big", lambda L: L.linalg.tensorinv(L.ones(4, 6, 8, 3), ind=4)),
    ("tensorinv_singular", lambda L: L.linalg.tensorinv(L.zeros(2, 2), ind=1)),
    ("tensorinv_long", lambda L: L.linalg.tensorinv(L.zeros(2, 2, dtype=L.int64), ind=1)),
    ("tensorinv_half", lambda L: L.linalg.tensorinv(L.zeros(2, 2, dtype=L.float16), ind=1)),
    ("tensorsolve_shape", lambda L: L.linalg.tensorsolve(L.ones(6, 4), L.ones(6))),
    ("tensorsolve_b_shape", lambda L: L.linalg.tensorsolve(L.ones(6, 4), L.ones(2, 3))),
    ("tensorsolve_reshape", lambda L: L.linalg.tensorsolve(L.ones(6, 4), L.ones(4))),
    (
        "tensorsolve_dtypes",
        lambda L: L.linalg.tensorsolve(L.eye(6), L.ones(6, dtype=L.float64)),
    ),
    (
        "tensorsolve_long",
        lambda L: L.linalg.tensorsolve(L.ones(2, 2, dtype=L.int64), L.ones(2, dtype=L.int64)),
    ),
    (
        "tensorsolve_dims_range",
        lambda L: L.linalg.tensorsolve(L.ones(6, 4, 2, 3), L.ones(4, 3), dims=(0, 5)),
    ),
    (
        "tensorsolve_dims_int",
        lambda L: L.linalg.tensorsolve(L.ones(6, 4, 2, 3), L.ones(4, 3), dims=2),
    ),
    (
        "tensorsolve_dims_repeat",
        lambda L: L.linalg.tensorsolve(L.ones(6, 4, 2, 3), L.ones(4, 3), dims=(0, 0)),
    ),
    ("tensorsolve_singular", lambda L: L.linalg.tensorsolve(L.zeros(2, 2), L.ones(2))),
    ("tensorsolve_scalar", lambda L: L.linalg.tensorsolve(L.ones(2, 2), 1.0)),
]


@pytest.mark.parametrize("name, fn", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_match_torch(torch, name, fn):
    _same_outcome(torch, fn)


GRADS = [
    ("vander", [_rand(4)], lambda x: tocha.linalg.vander(x)),
    ("vander_zero", [np.array([0.0, 1.5, -2.0])], lambda x: tocha.linalg.vander(x, N=4)),
    ("tensorinv", [_rand(2, 3, 6)], lambda a: tocha.linalg.tensorinv(a, ind=2)),
    (
        "tensorsolve",
        [_rand(2, 3, 6), _rand(2, 3, seed=1)],
        lambda a, b: tocha.linalg.tensorsolve(a, b),
    ),
    (
        "tensorsolve_dims",
        [_rand(6, 2, 3), _rand(2, 3, seed=1)],
        lambda a, b: tocha.linalg.tensorsolve(a, b, dims=(0,)),
    ),
]


@pytest.mark.parametrize("name, arrays, fn", GRADS, ids=[c[0] for c in GRADS])
def test_gradcheck(name, arrays, fn):
    _gradcheck(fn, *arrays)


# -- histogramdd --------------------------------------------------------------------------------
_POINTS = _RNG.standard_normal((50, 3))
_POINTS2 = np.round(_RNG.uniform(-1, 3, (4, 5, 2)), 1)
_EDGES = [np.array([-2.0, -0.5, 0.0, 1.0, 2.5]), np.array([-1.0, 1.0]), np.array([-3.0, 0, 3])]
HISTOGRAMS = [
    ("int", lambda L, x: L.histogramdd(x, bins=4)),
    ("ints", lambda L, x: L.histogramdd(x, bins=[2, 3, 4])),
    ("tuple", lambda L, x: L.histogramdd(x, bins=(3, 1, 2))),
    ("range", lambda L, x: L.histogramdd(x, bins=3, range=[-1.0, 1.0, 0.0, 2.0, -2.0, 0.0])),
    ("density", lambda L, x: L.histogramdd(x, bins=[2, 3, 4], density=True)),
    (
        "weight",
        lambda L, x: L.histogramdd(
            x, bins=3, weight=L.from_numpy(np.linspace(0, 2, 50).astype(_np_dtype(x)))
        ),
    ),
    (
        "weight_density",
        lambda L, x: L.histogramdd(
            x,
            bins=[3, 2, 2],
            weight=L.from_numpy(np.linspace(0, 2, 50).astype(_np_dtype(x))),
            density=True,
        ),
    ),
    (
        "edges",
        lambda L, x: L.histogramdd(x, bins=[L.from_numpy(e.astype(_np_dtype(x))) for e in _EDGES]),
    ),
    (
        "edges_density",
        lambda L, x: L.histogramdd(
            x, bins=[L.from_numpy(e.astype(_np_dtype(x))) for e in _EDGES], density=True
        ),
    ),
    (
        "edges_decreasing",
        lambda L, x: L.histogramdd(
            x, bins=[L.from_numpy(e[::-1].astype(_np_dtype(x))) for e in _EDGES]
        ),
    ),
    ("batched", lambda L, x: L.histogramdd(x.reshape(5, 10, 3), bins=2)),
    ("equal_range", lambda L, x: L.histogramdd(x, bins=2, range=[0.0, 0.0] * 3)),
    ("empty", lambda L, x: L.histogramdd(x[:0], bins=[2, 1, 3])),
]


def _np_dtype(x):
    return str(x.dtype).split(".")[-1]


def _compare_histograms(mine, theirs, single):
    tol = 1e-5 if single else 1e-12
    assert type(mine).__name__ == "histogramdd"
    assert_tensor(mine.hist, theirs.hist, rtol=tol, atol=tol)
    assert isinstance(mine.bin_edges, tuple) and len(mine.bin_edges) == len(theirs.bin_edges)
    for m, t in zip(mine.bin_edges, theirs.bin_edges):
        assert_tensor(m, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, fn", HISTOGRAMS, ids=[c[0] for c in HISTOGRAMS])
def test_histogramdd_matches_torch(torch, name, fn, dtype):
    x = _POINTS.astype(dtype)
    mine = fn(tocha, tocha.from_numpy(x.copy()))
    theirs = fn(torch, torch.from_numpy(x.copy()))
    _compare_histograms(mine, theirs, dtype == "float32")


def test_histogramdd_points_on_edges_match_torch(torch):
    # values on bin edges (rounded to tenths), the last edge inclusive
    for bins in (2, [4, 5], 20):
        mine = tocha.histogramdd(tocha.from_numpy(_POINTS2.astype("float32")), bins=bins)
        theirs = torch.histogramdd(torch.from_numpy(_POINTS2.astype("float32")), bins=bins)
        _compare_histograms(mine, theirs, True)


def test_histogramdd_takes_its_arguments_by_position(torch):
    points = _POINTS.astype("float32")
    for lib in (tocha, torch):
        x = lib.from_numpy(points.copy())
        weight = lib.from_numpy(np.linspace(0, 1, 50).astype("float32"))
        args = (x, [2, 3, 1], [-1.0, 1.0, -1.0, 1.0, 0.0, 1.0], weight, True)
        result = lib.histogramdd(*args)
        if lib is tocha:
            mine = result
    _compare_histograms(mine, result, True)
    no_bins = [_outcome(L, lambda L: L.histogramdd(L.ones(3, 2)))[0] for L in (tocha, torch)]
    assert no_bins == ["TypeError", "TypeError"]


def test_histogramdd_has_no_method():
    assert not hasattr(tocha.Tensor, "histogramdd")


HISTOGRAM_ERRORS = [
    ("1d", lambda L: L.histogramdd(L.ones(3), bins=2)),
    ("0d", lambda L: L.histogramdd(L.tensor(1.0), bins=2)),
    ("long", lambda L: L.histogramdd(L.ones(4, 2, dtype=L.int64), bins=2)),
    ("long_bad_bins", lambda L: L.histogramdd(L.ones(4, 2, dtype=L.int64), bins=[2])),
    ("half", lambda L: L.histogramdd(L.ones(4, 2, dtype=L.float16), bins=2)),
    ("bins_len", lambda L: L.histogramdd(L.ones(4, 2), bins=[2])),
    ("bins_len3", lambda L: L.histogramdd(L.ones(4, 2), bins=[2, 2, 2])),
    ("bins_zero", lambda L: L.histogramdd(L.ones(4, 2), bins=0)),
    ("bins_zero_dim1", lambda L: L.histogramdd(L.ones(4, 2), bins=[2, 0])),
    ("bins_float", lambda L: L.histogramdd(L.ones(4, 2), bins=2.5)),
    ("range_len", lambda L: L.histogramdd(L.ones(4, 2), bins=2, range=[0.0, 1.0])),
    ("range_order", lambda L: L.histogramdd(L.ones(4, 2), bins=2, range=[1.0, 0.0, 0.0, 1.0])),
    (
        "range_inf",
        lambda L: L.histogramdd(L.ones(4, 2), bins=2, range=[0.0, 1.0, 0.0, float("inf")]),
    ),
    ("data_inf", lambda L: L.histogramdd(L.tensor([[0.0, 1.0], [float("inf"), 0.0]]), bins=2)),
    (
        "weight_dtype",
        lambda L: L.histogramdd(L.ones(4, 2, dtype=L.float64), bins=2, weight=L.ones(4)),
    ),
    ("weight_shape", lambda L: L.histogramdd(L.ones(4, 2), bins=2, weight=L.ones(3))),
    ("weight_shape2", lambda L: L.histogramdd(L.ones(4, 2), bins=2, weight=L.ones(4, 1))),
    ("edges_mixed", lambda L: L.histogramdd(L.ones(4, 2), bins=[L.tensor([0.0, 1.0]), 3])),
    ("edges_len", lambda L: L.histogramdd(L.ones(4, 2), bins=[L.tensor([0.0, 1.0])])),
    ("edges_2d", lambda L: L.histogramdd(L.ones(4, 2), bins=[L.ones(1, 3), L.ones(3)])),
    (
        "edges_dtype",
        lambda L: L.histogramdd(L.ones(4, 2), bins=[L.ones(3, dtype=L.float64), L.ones(3)]),
    ),
    ("no_dims", lambda L: L.histogramdd(L.ones(3, 0), bins=[])),
]


@pytest.mark.parametrize("name, fn", HISTOGRAM_ERRORS, ids=[c[0] for c in HISTOGRAM_ERRORS])
def test_histogramdd_errors_match_torch(torch, name, fn):
    _same_outcome(torch, fn)


# -- binomial ---------------------------------------------------------------------------------
def test_binomial_certain_cases_match_torch(torch):
    count = np.array([10.0, 5.0, 0.0, 7.0, 2.5, -1.0, 4.0, 3.0], dtype="float32")
    prob = np.array([0.0, 1.0, 0.5, 2.0, 1.0, 0.5, -0.5, np.nan], dtype="float32")
    mine = tocha.binomial(tocha.from_numpy(count), tocha.from_numpy(prob))
    theirs = torch.binomial(torch.from_numpy(count), torch.from_numpy(prob))
    assert_tensor(mine, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_shapes_dtypes_and_ranges(torch, dtype):
    count = np.array([[10.0], [5.0], [0.0], [100.0]], dtype=dtype)
    prob = np.array([0.5, 0.1, 0.9], dtype=dtype)
    mine = tocha.binomial(tocha.from_numpy(count), tocha.from_numpy(prob))
    theirs = torch.binomial(torch.from_numpy(count), torch.from_numpy(prob))
    assert (str(mine.dtype), tuple(mine.shape)) == (
        str(theirs.dtype).replace("torch", "tocha"),
        tuple(theirs.shape),
    )
    got = mine.numpy()
    assert np.all(got == np.floor(got)) and np.all(got >= 0) and np.all(got <= count)
    scalar = tocha.binomial(tocha.tensor(3.0), tocha.tensor(0.5))
    assert scalar.shape == () and scalar.dtype == tocha.float32


def test_binomial_moments_and_generator():
    n, p = tocha.full((200_000,), 20.0), tocha.full((200_000,), 0.3)
    draws = tocha.binomial(n, p).numpy()
    assert abs(draws.mean() - 6.0) < 0.05 and abs(draws.var() - 4.2) < 0.1
    big = tocha.binomial(tocha.full((100_000,), 2000.0), tocha.full((100_000,), 0.3)).numpy()
    assert abs(big.mean() - 600.0) < 0.5 and abs(big.var() - 420.0) < 10
    runs = [
        tocha.binomial(n[:50], p[:50], generator=tocha.Generator().manual_seed(7)) for _ in range(2)
    ]
    assert tocha.equal(*runs)
    tocha.manual_seed(3)
    first = tocha.binomial(n[:50], p[:50])
    tocha.manual_seed(3)
    assert tocha.equal(first, tocha.binomial(n[:50], p[:50]))


BINOMIAL_ERRORS = [
    ("long_count", lambda L: L.binomial(L.ones(2, dtype=L.int64), L.ones(2))),
    ("complex", lambda L: L.binomial(L.ones(2, dtype=L.complex64), L.ones(2, dtype=L.complex64))),
    ("dtypes", lambda L: L.binomial(L.ones(2), L.ones(2, dtype=L.float64))),
    ("half", lambda L: L.binomial(L.ones(2, dtype=L.float16), L.ones(2, dtype=L.float16))),
    ("bf16", lambda L: L.binomial(L.ones(2, dtype=L.bfloat16), L.ones(2, dtype=L.bfloat16))),
    ("shapes", lambda L: L.binomial(L.ones(4), L.ones(2))),
    ("prob_float", lambda L: L.binomial(L.ones(2), 0.5)),
    ("count_list", lambda L: L.binomial([1.0], L.ones(1))),
    ("generator", lambda L: L.binomial(L.ones(2), L.ones(2), generator=1)),
    ("out", lambda L: L.binomial(L.ones(2), L.ones(2), out=L.ones(2))),
    ("empty", lambda L: L.binomial(L.ones(0), L.ones(0))),
]


@pytest.mark.parametrize("name, fn", BINOMIAL_ERRORS, ids=[c[0] for c in BINOMIAL_ERRORS])
def test_binomial_errors_match_torch(torch, name, fn):
    _same_outcome(torch, fn)


def test_binomial_derivative_is_refused(torch):
    pytest.importorskip("tocha.autograd")

    def backward(L):
        prob = L.full((3,), 0.5, requires_grad=True)
        L.binomial(L.ones(3), prob).sum().backward()

    _same_outcome(torch, backward)


# -- svd_lowrank, pca_lowrank -------------------------------------------------------------------
LOWRANK_SHAPES = [
    ("tall", lambda L, a: L.svd_lowrank(a)),
    ("q3", lambda L, a: L.svd_lowrank(a, q=3)),
    ("q_none", lambda L, a: L.svd_lowrank(a, q=None, niter=None)),
    ("q_big", lambda L, a: L.svd_lowrank(a, q=9)),
    ("wide", lambda L, a: L.svd_lowrank(a.mT, q=3)),
    ("niter0", lambda L, a: L.svd_lowrank(a, q=3, niter=0)),
    ("batched", lambda L, a: L.svd_lowrank(a.reshape(2, 4, 5), q=2)),
    ("M", lambda L, a: L.svd_lowrank(a, q=2, M=a[0])),
    ("pca", lambda L, a: L.pca_lowrank(a)),
    ("pca_q", lambda L, a: L.pca_lowrank(a, q=3, center=False)),
    ("pca_batched", lambda L, a: L.pca_lowrank(a.reshape(2, 4, 5), niter=1)),
    ("q_neg", lambda L, a: L.svd_lowrank(a, q=-1)),
    ("q_float", lambda L, a: L.svd_lowrank(a, q=2.0)),
    ("vector", lambda L, a: L.svd_lowrank(a[0])),
    ("long", lambda L, a: L.svd_lowrank(a.long(), q=2)),
    ("half", lambda L, a: L.svd_lowrank(a.half(), q=2)),
    ("M_dtype", lambda L, a: L.svd_lowrank(a.double(), q=2, M=a)),
    ("pca_q_big", lambda L, a: L.pca_lowrank(a, q=6)),
    ("pca_q_neg", lambda L, a: L.pca_lowrank(a, q=-1)),
    ("pca_niter", lambda L, a: L.pca_lowrank(a, q=2, niter=-1)),
    ("pca_long", lambda L, a: L.pca_lowrank(a.long())),
]


@pytest.mark.parametrize("name, fn", LOWRANK_SHAPES, ids=[c[0] for c in LOWRANK_SHAPES])
def test_lowrank_shapes_dtypes_and_errors_match_torch(torch, name, fn):
    data = _rand(8, 5, dtype="float32")
    _same_outcome(torch, lambda L: fn(L, L.from_numpy(data.copy())))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("shape", [(20, 12), (12, 20), (3, 15, 10)], ids=str)
def test_svd_lowrank_finds_the_singular_values_of_a_low_rank_matrix(torch, dtype, shape):
    a = _low_rank(*shape[-2:], 3, batch=shape[:-2]).astype(dtype)
    if dtype == "complex128":  # rank 3 still: the same columns, complex coefficients
        a = a * (1 + 2j) + 1j * a[..., ::-1, :]
    U, S, V = tocha.svd_lowrank(tocha.from_numpy(a.copy()), q=5)
    _, S_torch, _ = torch.svd_lowrank(torch.from_numpy(a.copy()), q=5)
    tol = 1e-3 if dtype == "float32" else 1e-8
    assert_tensor(S[..., :3], S_torch[..., :3], rtol=tol, atol=tol)
    rebuilt = (U.numpy() * S.numpy()[..., None, :]) @ np.conj(np.swapaxes(V.numpy(), -1, -2))
    np.testing.assert_allclose(rebuilt, a, atol=tol * 10)
    k = min(5, *shape[-2:])
    eye = np.eye(k)
    np.testing.assert_allclose(
        np.conj(np.swapaxes(U.numpy(), -1, -2)) @ U.numpy(),
        np.broadcast_to(eye, S.shape + (k,)),
        atol=tol,
    )


@pytest.mark.parametrize("center", [True, False])
def test_pca_lowrank_matches_torch(torch, center):
    a = _low_rank(30, 8, 2) + (np.arange(8.0) if center else 0.0)
    U, S, V = tocha.pca_lowrank(tocha.from_numpy(a.copy()), q=4, center=center)
    _, S_torch, V_torch = torch.pca_lowrank(torch.from_numpy(a.copy()), q=4, center=center)
    rank = 2 if center else 3
    assert_tensor(S[:rank], S_torch[:rank], rtol=1e-8, atol=1e-8)
    # principal directions agree up to sign
    np.testing.assert_allclose(np.abs(V.numpy()[:, :2]), np.abs(V_torch.numpy()[:, :2]), atol=1e-8)
    centered = a - a.mean(0) if center else a
    rebuilt = (U.numpy() * S.numpy()) @ V.numpy().T
    np.testing.assert_allclose(rebuilt, centered, atol=1e-8)


def _seeded(fn):
    def run(*args):
        tocha.manual_seed(0)
        return fn(*args)

    return run


LOWRANK_GRADS = [
    ("svd_lowrank_S", [_rand(6, 4)], lambda a: tocha.svd_lowrank(a, q=2)[1]),
    (
        "svd_lowrank_rebuilt",
        [_rand(4, 6)],
        lambda a: (lambda U, S, V: (U * S) @ V.mT)(*tocha.svd_lowrank(a, q=2, niter=1)),
    ),
    (
        "svd_lowrank_M",
        [_rand(5, 4), _rand(4, seed=1)],
        lambda a, m: tocha.svd_lowrank(a, q=3, M=m)[1],
    ),
    ("pca_lowrank_S", [_rand(7, 4)], lambda a: tocha.pca_lowrank(a, q=2)[1]),
]


@pytest.mark.parametrize("name, arrays, fn", LOWRANK_GRADS, ids=[c[0] for c in LOWRANK_GRADS])
def test_lowrank_gradcheck(name, arrays, fn):
    _gradcheck(_seeded(fn), *arrays)


# -- ldl_factor, ldl_solve ----------------------------------------------------------------------
def _ldl_inputs(count=40, seed=5):
    """Random square matrices of sizes 1 to 8, a third with a small diagonal (2x2 pivots) and
    a third rounded to integers (ties and zeros), real and complex."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        n = int(rng.integers(1, 9))
        a = rng.standard_normal((n, n))
        if i % 2:
            a = a + 1j * rng.standard_normal((n, n))
        if i % 3 == 1:
            a[np.arange(n), np.arange(n)] *= 0.01
        if i % 3 == 2:
            a = np.round(a)
        cases.append(a)
    return cases


LDL_INPUTS = _ldl_inputs()


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("single", [False, True], ids=["double", "single"])
def test_ldl_factor_matches_lapack_as_torch(torch, hermitian, single):
    for a in LDL_INPUTS:
        a = a.astype({"f": "float32", "c": "complex64"}[a.dtype.kind] if single else a.dtype)
        mine = tocha.linalg.ldl_factor_ex(tocha.from_numpy(a.copy()), hermitian=hermitian)
        theirs = torch.linalg.ldl_factor_ex(torch.from_numpy(a.copy()), hermitian=hermitian)
        assert_tensor(mine.pivots, theirs.pivots)
        assert_tensor(mine.info, theirs.info)
        tol = 1e-4 if single else 1e-10
        assert_tensor(mine.LD, theirs.LD, rtol=tol, atol=tol)


def test_ldl_factor_batched_and_large_match_torch(torch):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 12, 12))
    a[..., np.arange(12), np.arange(12)] *= 0.01
    for data in (a, np.zeros((2, 0, 0)), np.zeros((2, 3, 3)), np.array([[np.nan, 1], [1, 2]])):
        mine = tocha.linalg.ldl_factor_ex(tocha.from_numpy(data.copy()))
        theirs = torch.linalg.ldl_factor_ex(torch.from_numpy(data.copy()))
        assert type(mine).__name__ == "linalg_ldl_factor_ex"
        for m, t in zip(mine, theirs):
            assert_tensor(m, t, rtol=1e-10, atol=1e-10)
    mine = tocha.linalg.ldl_factor(tocha.from_numpy(a[0].copy()))
    theirs = torch.linalg.ldl_factor(torch.from_numpy(a[0].copy()))
    assert type(mine).__name__ == "linalg_ldl_factor"
    for m, t in zip(mine, theirs):
        assert_tensor(m, t, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_solve_matches_torch(torch, hermitian):
    rng = np.random.default_rng(9)
    for a in LDL_INPUTS[:20]:
        a = a + (a.conj().T if hermitian else a.T)
        b = rng.standard_normal((a.shape[0], 2)).astype(a.dtype)
        LD, pivots = tocha.linalg.ldl_factor_ex(tocha.from_numpy(a.copy()), hermitian=hermitian)[:2]
        TLD, tpivots = torch.linalg.ldl_factor_ex(torch.from_numpy(a.copy()), hermitian=hermitian)[
            :2
        ]
        mine = tocha.linalg.ldl_solve(LD, pivots, tocha.from_numpy(b.copy()), hermitian=hermitian)
        theirs = torch.linalg.ldl_solve(
            TLD, tpivots, torch.from_numpy(b.copy()), hermitian=hermitian
        )
        scale = max(1.0, float(np.abs(theirs.numpy()).max()))
        assert_tensor(mine, theirs, rtol=1e-7, atol=1e-7 * scale)
        if tocha.linalg.ldl_factor_ex(tocha.from_numpy(a.copy())).info.item() == 0:
            np.testing.assert_allclose(a @ mine.numpy(), b, atol=1e-6 * scale * len(a))


def test_ldl_solve_broadcasts_batches(torch):
    a = _rand(4, 4)
    a = a + a.T
    b = _rand(2, 4, 3, seed=1)
    mine = tocha.linalg.ldl_solve(
        *tocha.linalg.ldl_factor(tocha.from_numpy(a)), tocha.from_numpy(b)
    )
    theirs = torch.linalg.ldl_solve(
        *torch.linalg.ldl_factor(torch.from_numpy(a)), torch.from_numpy(b)
    )
    assert_tensor(mine, theirs, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(a @ mine.numpy(), b, atol=1e-10)


def _ldl(L):
    a = np.array([[1.0, 2, 3], [2, 0.5, 4], [3, 4, 0.1]], dtype="float32")
    return L.linalg.ldl_factor(L.from_numpy(a))


LDL_ERRORS = [
    ("singular", lambda L: L.linalg.ldl_factor(L.zeros(3, 3))),
    ("singular_ex", lambda L: L.linalg.ldl_factor_ex(L.zeros(3, 3), check_errors=True)),
    ("not_square", lambda L: L.linalg.ldl_factor_ex(L.zeros(2, 3))),
    ("vector", lambda L: L.linalg.ldl_factor_ex(L.zeros(3))),
    ("long", lambda L: L.linalg.ldl_factor_ex(L.zeros(3, 3, dtype=L.int64))),
    ("half", lambda L: L.linalg.ldl_factor_ex(L.zeros(3, 3, dtype=L.float16))),
    ("hermitian_int", lambda L: L.linalg.ldl_factor_ex(L.eye(3), hermitian=1)),
    ("check_errors_int", lambda L: L.linalg.ldl_factor_ex(L.eye(3), check_errors=1)),
    ("list", lambda L: L.linalg.ldl_factor([[1.0]])),
    ("solve_vector", lambda L: L.linalg.ldl_solve(*_ldl(L), L.ones(3))),
    ("solve_rows", lambda L: L.linalg.ldl_solve(*_ldl(L), L.ones(4, 2))),
    ("solve_dtype", lambda L: L.linalg.ldl_solve(*_ldl(L), L.ones(3, 2, dtype=L.float64))),
    ("solve_pivots_float", lambda L: L.linalg.ldl_solve(_ldl(L)[0], L.ones(3), L.ones(3, 2))),
    ("solve_pivots_shape", lambda L: L.linalg.ldl_solve(_ldl(L)[0], _ldl(L)[1][:2], L.ones(3, 2))),
    ("solve_not_square", lambda L: L.linalg.ldl_solve(_ldl(L)[0][:, :2], _ldl(L)[1], L.ones(3, 2))),
    (
        "solve_long",
        lambda L: L.linalg.ldl_solve(_ldl(L)[0].long(), _ldl(L)[1], L.ones(3, 2).long()),
    ),
    (
        "solve_half",
        lambda L: L.linalg.ldl_solve(_ldl(L)[0].half(), _ldl(L)[1], L.ones(3, 2).half()),
    ),
    ("solve_hermitian_int", lambda L: L.linalg.ldl_solve(*_ldl(L), L.ones(3, 2), hermitian=1)),
    ("solve_list", lambda L: L.linalg.ldl_solve(_ldl(L)[0], [1, 2, 3], L.ones(3, 2))),
    (
        "solve_long_pivots",
        lambda L: L.linalg.ldl_solve(_ldl(L)[0], _ldl(L)[1].long(), L.ones(3, 2)),
    ),
    (
        "solve_empty",
        lambda L: L.linalg.ldl_solve(L.zeros(0, 0), L.zeros(0, dtype=L.int32), L.zeros(0, 2)),
    ),
    ("solve_no_columns", lambda L: L.linalg.ldl_solve(*_ldl(L), L.ones(3, 0))),
]


@pytest.mark.parametrize("name, fn", LDL_ERRORS, ids=[c[0] for c in LDL_ERRORS])
def test_ldl_errors_match_torch(torch, name, fn):
    mine, theirs = _outcome(tocha, fn), _outcome(torch, fn)
    if name.startswith("singular"):  # PyTorch's message is an internal assert's
        assert mine[0] == theirs[0] and theirs[1].endswith(mine[1])
    else:
        assert mine == theirs


def test_ldl_derivatives_are_refused(torch):
    pytest.importorskip("tocha.autograd")

    def factor(L):
        a = L.eye(3, requires_grad=True)
        L.linalg.ldl_factor(a)[0].sum().backward()

    def solve(L):
        b = L.ones(3, 2, requires_grad=True)
        L.linalg.ldl_solve(*_ldl(L), b).sum().backward()

    _same_outcome(torch, factor)
    _same_outcome(torch, solve)
