"""erf, erfc and erfinv: float64 accuracy over dense grids and tails, special values, lower
precision dtypes, and agreement with PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor
from tocha._ops import _special_math as special

EPS = np.finfo(np.float64).eps
TINY = np.finfo(np.float64).tiny


def _grid():
    rng = np.random.default_rng(1234)
    return np.concatenate(
        [
            np.linspace(-30.0, 30.0, 60001),
            np.linspace(-0.5, 0.5, 2001),  # around Cody's first break point, 0.46875
            np.linspace(3.9, 4.1, 2001),  # around the second, 4.0
            rng.standard_normal(5000) * 4,
            np.copysign(10.0 ** rng.uniform(-320, 1.5, 5000), rng.standard_normal(5000)),
            [0.0, -0.0, 0.46875, -0.46875, 4.0, -4.0, 26.5, 27.0, 27.2, 5e-324],
        ]
    )


GRID = _grid()


def _check_close(got, want, rtol):
    """Relative error below `rtol` where the reference is normal, a few subnormal ulps below."""
    want = np.asarray(want, dtype=np.float64)
    normal = np.abs(want) >= TINY
    rel = np.abs(got[normal] - want[normal]) / np.abs(want[normal])
    assert rel.max(initial=0.0) <= rtol, f"max relative error {rel.max()}"
    np.testing.assert_allclose(got[~normal], want[~normal], rtol=0, atol=4 * 5e-324)


@pytest.mark.parametrize("name, reference", [("erf", math.erf), ("erfc", math.erfc)])
def test_float64_against_math(name, reference):
    got = getattr(tocha, name)(tocha.tensor(GRID, dtype=tocha.float64))
    want = np.array([reference(v) for v in GRID])
    assert got.dtype is tocha.float64 and tuple(got.shape) == GRID.shape
    _check_close(got.numpy(), want, 4 * EPS)


def _erfinv_inputs():
    rng = np.random.default_rng(99)
    near_one = 1.0 - 10.0 ** -rng.uniform(0, 16, 4000)
    y = np.concatenate(
        [
            np.linspace(-1.0, 1.0, 40001)[1:-1],
            near_one,
            -near_one,
            10.0 ** rng.uniform(-300, 0, 2000),
            [np.nextafter(1.0, 0.0), -np.nextafter(1.0, 0.0), 0.5, 1e-300, 2.0**-1022],
        ]
    )
    return y[np.abs(y) < 1.0]


def test_erfinv_float64_round_trip():
    """erf(erfinv(y)) gives back y (through erfc near +-1, where 1 - |y| is the information)."""
    y = _erfinv_inputs()
    x = tocha.erfinv(tocha.tensor(y, dtype=tocha.float64)).numpy()
    central = np.abs(y) < 0.5
    back = np.array([math.erf(v) for v in x[central]])
    _check_close(back, y[central], 3 * EPS)
    tails = ~central
    back_c = np.array([math.erfc(v) for v in np.abs(x[tails])])
    _check_close(back_c, 1.0 - np.abs(y[tails]), 2e-14)
    assert np.array_equal(np.sign(x), np.sign(y))


# erf's bound is its bound against math.erf: NumPy's float64 exp, inside erf's tail, rounds
# by the CPU's SIMD path (2.25 ulp from torch's erf on an AVX-512 AMD EPYC).
@pytest.mark.parametrize("name, rtol", [("erf", 4 * EPS), ("erfc", 4 * EPS), ("erfinv", 1e-14)])
def test_float64_against_torch(torch, name, rtol):
    values = _erfinv_inputs() if name == "erfinv" else GRID
    got = getattr(tocha, name)(tocha.tensor(values, dtype=tocha.float64)).numpy()
    want = getattr(torch.special, name)(torch.tensor(values, dtype=torch.float64)).numpy()
    _check_close(got, want, rtol)


SPECIAL_VALUES = [
    # (op, input, expected)
    ("erf", np.inf, 1.0),
    ("erf", -np.inf, -1.0),
    ("erf", np.nan, np.nan),
    ("erf", 0.0, 0.0),
    ("erf", -0.0, -0.0),
    ("erf", 6.0, 1.0),
    ("erf", 1e-310, 1e-310 * 2 / math.sqrt(math.pi)),
    ("erfc", np.inf, 0.0),
    ("erfc", -np.inf, 2.0),
    ("erfc", np.nan, np.nan),
    ("erfc", 0.0, 1.0),
    ("erfc", 27.3, 0.0),
    ("erfc", 1e300, 0.0),
    ("erfc", -1e300, 2.0),
    ("erfc", 26.0, math.erfc(26.0)),
    ("erfc", 27.0, math.erfc(27.0)),
    ("erfinv", 1.0, np.inf),
    ("erfinv", -1.0, -np.inf),
    ("erfinv", 1.5, np.nan),
    ("erfinv", -1.0000001, np.nan),
    ("erfinv", np.inf, np.nan),
    ("erfinv", np.nan, np.nan),
    ("erfinv", 0.0, 0.0),
    ("erfinv", -0.0, -0.0),
    ("erfinv", 0.5, 0.4769362762044699),
]


@pytest.mark.parametrize("name, x, want", SPECIAL_VALUES)
def test_special_values(name, x, want):
    got = getattr(tocha, name)(tocha.from_numpy(np.array([x]))).numpy()[0]
    if np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(want, rel=4 * EPS, abs=0)
        assert np.signbit(got) == np.signbit(want)


LOW_PRECISION = [
    ("float32", np.linspace(-5, 5, 1001)),
    ("float16", np.linspace(-4, 4, 321)),
    ("bfloat16", np.linspace(-4, 4, 161)),
    ("int64", np.arange(-4, 5)),
    ("bool", np.array([True, False])),
]


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
@pytest.mark.parametrize("dtype, values", LOW_PRECISION)
def test_dtypes_against_torch(torch, name, dtype, values):
    if name == "erfinv" and dtype not in ("int64", "bool"):
        values = values / (np.abs(values).max() * 1.0001)
    x = tocha.tensor(values).to(getattr(tocha, dtype))
    got = getattr(tocha, name)(x)
    want = getattr(torch, name)(torch.tensor(values).to(getattr(torch, dtype)))
    # Results rounded once from float64: within one unit of the result dtype of torch's.
    tol = {"float16": 2e-3, "bfloat16": 1.6e-2}.get(str(want.dtype)[6:], 2e-6)
    assert_tensor(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_lower_precision_is_float64_rounded(dtype):
    """float32 and float16 results are the float64 result rounded to the input's dtype (but
    erf, computed in float32)."""
    values = np.linspace(-0.999, 0.999, 999).astype(dtype)
    for name in ("erfc", "erfinv"):
        got = getattr(tocha, name)(tocha.from_numpy(values))
        want = getattr(special, name + "64")(np, values.astype(np.float64)).astype(dtype)
        assert_tensor(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_half_erf_within_an_ulp_of_float64(dtype):
    """erf of float16 and bfloat16, computed in float32 and rounded once: within one unit of
    the float64 erf rounded to the dtype, and of the input's dtype."""
    x = tocha.from_numpy(_float32_grid()[::7])
    half = x.to(getattr(tocha, str(np.dtype(dtype)) if dtype != "bfloat16" else dtype))
    got = tocha.erf(half)
    assert got.dtype == half.dtype
    exact = special.erf64(np, half.double().numpy())
    want = tocha.from_numpy(exact).to(half.dtype).double().numpy()
    ulp = np.spacing(np.abs(want).astype(np.float32)) * (
        2.0**13 if dtype == np.float16 else 2.0**16
    )
    assert (np.abs(got.double().numpy() - want) <= ulp).all()


def _float32_grid():
    rng = np.random.default_rng(32)
    return np.concatenate(
        [
            np.linspace(-10.0, 10.0, 400001),
            np.linspace(3.9, 4.1, 2001),  # around erf32's clamp, 4
            rng.standard_normal(20000) * 2,
            np.copysign(np.geomspace(1e-45, 10.0, 20000), rng.standard_normal(20000)),
        ]
    ).astype(np.float32)


def _ulps_from_erf64(x):
    """|erf32(x) - erf(x)| in float32 ulps of erf(x) (the spacing below it: below 1, near 1)."""
    got = tocha.erf(tocha.from_numpy(x)).numpy()
    assert got.dtype == np.float32
    want = special.erf64(np, x.astype(np.float64))
    below = np.nextafter(np.abs(want).astype(np.float32), np.float32(0))
    return np.abs(got - want) / np.spacing(below).astype(np.float64)


def test_erf_float32_within_ulps_of_math():
    """float32's erf, computed in float32, is within 7 float32 ulp of the true erf, about one
    on average."""
    x = _float32_grid()
    want = np.array([math.erf(v) for v in x[::50].astype(np.float64)])
    np.testing.assert_allclose(special.erf64(np, x[::50].astype(np.float64)), want, rtol=1e-15)
    ulps = _ulps_from_erf64(x)
    assert ulps.max() <= 7
    assert ulps.mean() <= 1.5


def test_erf_float32_dense_grid():
    """Every 997th float32 from the smallest subnormal to past erf32's clamp, both signs, and
    the subnormals themselves: within 7 ulp."""
    bits = np.arange(1, np.float32(4.5).view(np.int32), 997, dtype=np.int32)
    x = bits.view(np.float32)
    x = np.concatenate([x, -x, np.arange(1, 2**23, 4099, dtype=np.int32).view(np.float32)])
    assert _ulps_from_erf64(x).max() <= 7


@pytest.mark.parametrize(
    "x, want",
    [(np.inf, 1.0), (-np.inf, -1.0), (np.nan, np.nan), (0.0, 0.0), (-0.0, -0.0), (4.0, 1.0)],
)
def test_erf_float32_special_values(x, want):
    got = tocha.erf(tocha.tensor([x], dtype=tocha.float32)).numpy()[0]
    np.testing.assert_array_equal(got, np.float32(want))
    assert np.signbit(got) == np.signbit(want)


def test_erf_float32_shapes_and_strides():
    """Blocks of erf32 cover any size and layout: values as those of the contiguous copy."""
    x = np.random.default_rng(0).standard_normal((3, 50001)).astype(np.float32) * 3
    flat = special.erf32(np, x.reshape(-1))
    got = tocha.erf(tocha.from_numpy(x).t()).numpy()
    np.testing.assert_array_equal(got, flat.reshape(x.shape).T)
    assert tocha.erf(tocha.zeros(0, 4)).shape == (0, 4)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_complex_refused(name):
    with pytest.raises(NotImplementedError, match=name):
        getattr(tocha, name)(tocha.tensor([1j]))


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_out_inplace_and_shapes(name):
    values = np.array([[-0.9, -0.2], [0.0, 0.7]])
    want = getattr(special, name + "64")(np, values)
    for shape in [(2, 2), (4,), (1, 2, 2), ()]:
        v, w = (
            (values[1, 1:].reshape(()), want[1, 1])
            if shape == ()
            else (values.reshape(shape), want.reshape(shape))
        )
        assert_tensor(getattr(tocha, name)(tocha.tensor(v)), np.asarray(w))
    out = tocha.empty(2, 2, dtype=tocha.float64)
    assert getattr(tocha, name)(tocha.tensor(values), out=out) is out
    assert_tensor(out, want)
    t = tocha.tensor(values.astype(np.float32))
    assert getattr(t, name + "_")() is t
    assert_tensor(t, want.astype(np.float32))


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_kernel_out_argument(name):
    kernel = getattr(special, name)(np)
    x = np.array([0.1, -0.3, 0.9], dtype=np.float32)
    out = np.empty_like(x)
    assert kernel(x, out=out) is out
    np.testing.assert_array_equal(out, kernel(x))
    assert kernel(x).dtype == np.float32
