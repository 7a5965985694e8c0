"""pow's fast paths (issue 27): whole and half-integer exponents, given as Python numbers or as
0-d tensors, computed by products, a square root and a reciprocal, agree with the float64
``pow`` rounded to the input's dtype, edge values (+-0, +-inf, nan, negative bases) included."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

EDGES = [-np.inf, -2.5, -1.0, -0.0, 0.0, 1e-3, 0.3, 1.0, 2.5, 7.0, np.inf, np.nan]
EXPONENTS = [0, 1, 2, 3, 4, -1, -2, -3, -4, 0.5, 1.5, 2.5, 3.5, -1.5, -2.5, -3.5, 1.0, 3.0]


def _reference(x: np.ndarray, e: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.power(x.astype(np.float64), e).astype(x.dtype)


def _check(got: np.ndarray, want: np.ndarray, ulps: float) -> None:
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    spacing = np.spacing(np.abs(want[finite])).astype(np.float64)
    error = np.abs(got[finite].astype(np.float64) - want[finite].astype(np.float64))
    assert (error <= ulps * spacing).all()
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


@pytest.mark.parametrize("exponent", EXPONENTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scalar_exponent_matches_pow(exponent, dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([np.array(EDGES), rng.uniform(-3, 3, 200)]).astype(dtype)
    if exponent == -0.5:  # PyTorch's rsqrt: -0 gives -inf
        x = x[x != 0]
    got = tocha.pow(tocha.from_numpy(x), exponent).numpy()
    _check(got, _reference(x, exponent), ulps=3)


@pytest.mark.parametrize("exponent", [2.0, 3.0, -1.0, 0.5, 1.5, 2.5])
def test_zero_dim_tensor_exponent_as_number(exponent):
    """A 0-d exponent of the base's dtype (or an integer one) gives the Python number's
    result, in the base's dtype."""
    x = tocha.from_numpy(np.random.default_rng(1).uniform(0.1, 3, (4, 5)).astype(np.float32))
    got = tocha.pow(x, tocha.tensor(exponent))
    want = tocha.pow(x, exponent)
    assert got.dtype == tocha.float32
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if float(exponent).is_integer():
        as_int = tocha.pow(x, tocha.tensor(int(exponent)))
        assert as_int.dtype == tocha.float32
        np.testing.assert_array_equal(as_int.numpy(), want.numpy())


def test_zero_dim_operands_promote():
    """Two 0-d operands of different float dtypes promote as PyTorch does."""
    got = tocha.pow(tocha.tensor(2.0), tocha.tensor(3.0, dtype=tocha.float64))
    assert got.dtype == tocha.float64
    assert got.item() == 8.0


def test_zero_dim_exponent_gradients():
    x = tocha.tensor([0.5, 1.5, 2.0], dtype=tocha.float64, requires_grad=True)
    e = tocha.tensor(2.5, dtype=tocha.float64, requires_grad=True)
    assert tocha.autograd.gradcheck(lambda a, b: tocha.pow(a, b), (x, e))


def test_minus_inf_hidden_behind_nan():
    """A half-integer power of -inf is inf even when a nan precedes it in the array."""
    x = tocha.tensor([np.nan, -np.inf, 4.0])
    got = tocha.pow(x, 1.5).numpy()
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == 8.0
