"""pow with a whole or half-integer scalar exponent (multiplications, a square root and a
reciprocal instead of ``pow`` per element): values, special values, dtypes and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

FAST = [0.0, 1.0, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0, -4.0, 0.5, -0.5, 1.5, -1.5, 2.5, -3.5]
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, -2.0, 1e-20, -1.3, 3.7, 1e10, 2.0**-130]


def _values(dtype):
    rng = np.random.default_rng(5)
    finite = np.concatenate([rng.standard_normal(2000) * 3, 10.0 ** rng.uniform(-8, 8, 2000)])
    return np.concatenate([finite, SPECIAL]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("exponent", FAST)
def test_values_near_float64_pow(dtype, exponent):
    """Within 3 ulp of pow in float64 rounded to the dtype, with pow's special values (but at
    -0 and -inf to the powers +-1/2: those are the square root's, as in PyTorch)."""
    x = _values(dtype)
    if abs(exponent) == 0.5:
        x = x[~(np.signbit(x) & ((x == 0) | np.isinf(x)))]
    got = tocha.pow(tocha.from_numpy(x), exponent).numpy()
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), exponent).astype(dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want) & (np.abs(want) >= np.finfo(dtype).tiny)
    ulp = np.spacing(np.abs(want[finite]))
    assert (np.abs(got[finite] - want[finite]) / ulp).max(initial=0) <= 3
    edge = ~finite & ~np.isnan(want)
    np.testing.assert_allclose(got[edge], want[edge], rtol=0, atol=2 * np.finfo(dtype).tiny)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pytorch_exponents_are_products(dtype):
    """2, 3, -1, -2 and -0.5 give exactly the products PyTorch computes."""
    x = _values(dtype)
    with np.errstate(all="ignore"):
        expected = {
            2.0: x * x,
            3.0: x * x * x,
            -1.0: 1 / x,
            -2.0: 1 / (x * x),
            -0.5: 1 / np.sqrt(x),
            0.5: np.sqrt(x),
        }
    for exponent, want in expected.items():
        got = tocha.pow(tocha.from_numpy(x), exponent).numpy()
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_special_values_against_torch(torch, dtype):
    for exponent in FAST + [3, -2, 4.5]:
        if dtype == "float16" and not float(exponent).is_integer():
            continue
        got = tocha.pow(tocha.tensor(SPECIAL, dtype=getattr(tocha, dtype)), exponent)
        want = torch.pow(torch.tensor(SPECIAL, dtype=getattr(torch, dtype)), exponent)
        assert_tensor(got, want, rtol=3e-7 if dtype == "float32" else None)
        got, want = got.numpy(), want.numpy()
        number = ~np.isnan(want)
        assert np.array_equal(np.signbit(got[number]), np.signbit(want[number]))


def test_random_values_against_torch(torch):
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32) * 4
    for exponent in FAST:
        got = tocha.pow(tocha.from_numpy(x), exponent)
        want = torch.pow(torch.from_numpy(x), exponent)
        assert_tensor(got, want, rtol=3e-7, atol=1e-37)


def test_dtypes_and_integer_semantics():
    i = tocha.tensor([-3, -1, 0, 2, 5])
    assert_tensor(i**2, np.array([9, 1, 0, 4, 25]))
    assert_tensor(tocha.pow(i, 3), np.array([-27, -1, 0, 8, 125]))
    assert_tensor(i**2.0, np.array([9.0, 1, 0, 4, 25], dtype=np.float32))
    with np.errstate(invalid="ignore"):
        root = np.sqrt(np.array([-3, -1, 0, 2, 5], dtype=np.float32))
    assert_tensor(i**0.5, root)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        i**-1
    h = tocha.tensor([1.5, -2.0, 3.0], dtype=tocha.float16)
    assert_tensor(h**3, np.array([3.375, -8.0, 27.0], dtype=np.float16))
    b = tocha.tensor([0.5, 2.0], dtype=tocha.bfloat16)
    assert (b**2).dtype is tocha.bfloat16
    assert (tocha.tensor([2.0], dtype=tocha.float64) ** 3).dtype is tocha.float64


@pytest.mark.parametrize("dtype", [tocha.float32, tocha.float64, tocha.float16])
def test_zero_dim(dtype):
    """0-d tensors (whose NumPy ufunc results are scalars, not arrays)."""
    for exponent in FAST:
        got = tocha.tensor(2.25, dtype=dtype) ** exponent
        assert got.shape == () and got.dtype is dtype
        want = np.float64(2.25) ** exponent
        assert float(got) == pytest.approx(want, rel=1e-3 if dtype is tocha.float16 else 1e-6)


def test_inplace_and_out():
    x = tocha.tensor([1.5, -2.0, 4.0])
    want = np.array([1.5, -2.0, 4.0], dtype=np.float32) ** 3
    out = tocha.empty(3)
    assert tocha.pow(x, 3.0, out=out) is out
    assert_tensor(out, want)
    assert x.pow_(3.0) is x
    assert_tensor(x, want)
    y = tocha.tensor([4.0, 9.0])
    y **= 0.5
    assert_tensor(y, np.array([2.0, 3.0], dtype=np.float32))


@pytest.mark.parametrize("exponent", [3.0, 2, 0.5, -0.5, 1.5, -2.0, 4.0, 0.0])
def test_gradients(exponent):
    x = tocha.tensor([0.3, 1.7, 2.5, 0.9], dtype=tocha.float64, requires_grad=True)
    assert tocha.autograd.gradcheck(lambda t: tocha.pow(t, exponent), (x,))
    assert tocha.autograd.gradgradcheck(lambda t: tocha.pow(t, exponent), (x,))
    tocha.pow(x, exponent).sum().backward()
    want = exponent * x.detach().numpy() ** (exponent - 1) if exponent else np.zeros(4)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-14)
