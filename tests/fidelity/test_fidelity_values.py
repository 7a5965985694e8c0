"""Wrong answers the differential sweep found (values, gradients, dtypes, shapes), each
checked against PyTorch (recorded)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tocha

NAN = float("nan")


def _same(want, got) -> None:
    """The same dtype, shape and values (NaN and infinities in the same places)."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(got.detach().numpy()), np.asarray(want), rtol=1e-6)


def test_zeta_checks_s_before_q(torch):
    """s < 1 gives NaN even where q is a pole (a non-positive integer); s = 1 gives inf."""
    s = [-1.5, 0.5, 1.0, 1.0, 2.0, 2.5, 3.0, -2.0, 2.0, NAN, 1.0, 0.0]
    q = [0.0, -1.0, -2.0, 0.5, -3.0, -1.5, 2.0, -0.5, -2.5, 1.0, NAN, 1.0]
    want = torch.special.zeta(torch.tensor(s), torch.tensor(q))
    _same(want, tocha.special.zeta(tocha.tensor(s), tocha.tensor(q)))


@pytest.mark.parametrize("eps", [None, 0.1])
def test_logit_gradient_outside_the_unit_interval(torch, eps):
    """NaN outside [0, 1] without eps (inf at 0 and 1), zero outside [eps, 1 - eps] with it."""
    values = [-0.5, 0.0, 0.3, 1.0, 1.5, NAN]

    def run(lib):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        y = lib.special.logit(x, eps)
        y.sum().backward()
        return y, x.grad

    (want_y, want_g), (got_y, got_g) = run(torch), run(tocha)
    _same(want_y.detach(), got_y)
    _same(want_g, got_g)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_histogram_of_no_data_spans_zero_to_one(torch, dtype):
    want = torch.histogram(torch.zeros(0, dtype=getattr(torch, dtype)), bins=4)
    got = tocha.histogram(tocha.zeros(0, dtype=getattr(tocha, dtype)), bins=4)
    for a, b in zip(want, got):
        _same(a, b)


@pytest.mark.parametrize(
    "shape, dtype, dim", [((0,), "int32", 0), ((2, 0), "bool", -1), ((3, 0), "float32", 0)]
)
def test_trapezoid_over_an_empty_dim_keeps_the_dtype(torch, shape, dtype, dim):
    want = torch.trapezoid(torch.zeros(shape, dtype=getattr(torch, dtype)), dim=dim)
    _same(want, tocha.trapezoid(tocha.zeros(shape, dtype=getattr(tocha, dtype)), dim=dim))


@pytest.mark.parametrize("values", [[3.0, -4.0, 0.5], [3.0 + 1j, -4.0, 0.0]])
def test_norm_except_dim_of_a_vector_is_elementwise(torch, values):
    want = torch.norm_except_dim(torch.tensor(values), 2, 0)
    _same(want, tocha.norm_except_dim(tocha.tensor(values), 2, 0))


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 3, 0), (0, 2, 2), (2, 0, 0)])
@pytest.mark.parametrize("name", ["lu_factor_ex", "lu", "lu_legacy"])
def test_lu_of_empty_matrices(torch, shape, name):
    """Empty factorisations (NumPy's reshape(-1, ...) of nothing used to fail). The legacy
    ``lu(A, get_infos=True)`` is documented as ``linalg.lu_factor_ex(A)``, which PyTorch
    answers for it: its own ``torch.lu`` warns once per process that it is deprecated, so a
    recorded answer would depend on the order the tests run in."""

    def call(lib, legacy):
        x = lib.ones(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.lu is deprecated
            parts = lib.lu(x, get_infos=True) if legacy else getattr(lib.linalg, name)(x)
        return [(str(p.dtype).split(".")[-1], tuple(p.shape)) for p in parts]

    if name == "lu_legacy":
        name = "lu_factor_ex"
        assert call(tocha, legacy=True) == call(torch, legacy=False)
    else:
        assert call(tocha, legacy=False) == call(torch, legacy=False)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int64", "bool"])
@pytest.mark.parametrize("shape", [(3, 4), (0, 3)])
def test_legacy_lu_dtypes(torch, dtype, shape):
    """torch.lu has no kernel for these dtypes (NotImplementedError), except on no data. PyTorch
    answers through the documented equivalent ``linalg.lu_factor_ex`` (same kernel, same
    errors): its ``torch.lu`` warns once per process, which would make the recording depend
    on test order."""

    def call(lib):
        x = lib.ones(shape, dtype=getattr(lib, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = lib.lu(x, get_infos=True) if lib is tocha else lib.linalg.lu_factor_ex(x)
        return [(str(p.dtype).split(".")[-1], tuple(p.shape)) for p in parts]

    want, got = _outcome(lambda: call(torch)), _outcome(lambda: call(tocha))
    if isinstance(want, Exception):
        assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))
    else:
        assert got == want


def _outcome(call):
    try:
        return call()
    except Exception as exc:  # the outcome compared is the exception itself
        return exc


@pytest.mark.parametrize("shape", [1, (3,), (2, 2), (2, 3, 4), (0,), (2, 0)])
@pytest.mark.parametrize("indices", [[0, 1, 2, 5, -1, -7, 30], []])
def test_unravel_index_wraps_out_of_range_indices(torch, shape, indices):
    """PyTorch does not check the indices' range (they wrap around); no indices give empty
    coordinates even for a shape with no elements."""

    def call(lib):
        flat = lib.tensor(indices, dtype=lib.long)
        return [c.tolist() for c in lib.unravel_index(flat, shape)]

    want, got = _outcome(lambda: call(torch)), _outcome(lambda: call(tocha))
    if isinstance(want, Exception):
        assert type(got).__name__ == type(want).__name__
    else:
        assert got == want


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((4, 2, 3), (3,)), ((0,), (0,))])
def test_linear_with_a_vector_weight(torch, shapes):
    """A 1-D weight (no bias) gives a dot product per row, as PyTorch's linear."""

    def call(lib):
        x = lib.arange(float(math.prod(shapes[0]))).reshape(shapes[0])
        result = lib.nn.functional.linear(x, lib.ones(shapes[1]))
        return tuple(result.shape), result.tolist()

    assert call(tocha) == call(torch)


@pytest.mark.parametrize("size", [(2, 3), [4], ()])
def test_sparse_coo_tensor_of_a_size_alone(torch, size):
    def call(lib):
        t = lib.sparse_coo_tensor(size)
        return tuple(t.shape), str(t.dtype).split(".")[-1], t.sparse_dim(), t._nnz()

    assert call(tocha) == call(torch)
