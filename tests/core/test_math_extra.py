"""Math extras (tocha/_ops/math_extra.py) and the extra random samplers: values, dtypes,
shapes and view-ness against PyTorch from one table, NumPy references, errors. Their gradients
need tocha-autograd: tests/autograd/test_math_extra_grad.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_tensor
from test_arrangement import arr, compare, run

import tocha

F32, F64, I64, C64, C128 = np.float32, np.float64, np.int64, np.complex64, np.complex128


def carr(shape, dtype=C64, transpose=False):
    """A complex array of random values."""
    real, imag = arr(shape, F64, transpose=transpose), arr(shape, F64, transpose=transpose)
    return np.asarray(real + 1j * imag).astype(dtype)


CASES = [
    ("logaddexp", lambda m, x, y: m.logaddexp(x, y), [arr((3, 4)), arr((4,))]),
    ("logaddexp_mixed", lambda m, x, y: m.logaddexp(x, y), [arr((3,), F64), arr((3,), I64)]),
    ("logaddexp2", lambda m, x, y: x.logaddexp2(y), [arr((2, 3), transpose=True), arr(())]),
    ("deg2rad", lambda m, x: m.deg2rad(x), [arr((3, 4))]),
    ("deg2rad_int", lambda m, x: x.deg2rad(), [arr((3,), I64)]),
    ("deg2rad_bool", lambda m, x: m.deg2rad(x), [arr((3,), bool)]),
    ("rad2deg", lambda m, x: m.rad2deg(x), [arr((2, 3), F64)]),
    ("deg2rad_", lambda m, x: m.deg2rad_(x), [arr((2,))]),
    ("rad2deg_", lambda m, x: x.rad2deg_(), [arr((2,))]),
    (
        "heaviside",
        lambda m, x, v: m.heaviside(x, v),
        [np.array([-1.0, 0.0, 2.0, np.nan], F32), np.array([0.5], F32)],
    ),
    ("heaviside_int", lambda m, x, v: m.heaviside(x, v), [arr((4,), I64, -1, 2), arr((4,), I64)]),
    ("heaviside_", lambda m, x, v: x.heaviside_(v), [arr((4,), F64, -1, 2), arr((), F64)]),
    ("gcd", lambda m, x, y: m.gcd(x, y), [arr((5,), I64, -20, 20), arr((5,), I64, -20, 20)]),
    ("gcd_mixed", lambda m, x, y: m.gcd(x, y), [arr((5,), I64, 0, 20), arr((5,), np.int32, 0, 9)]),
    ("lcm", lambda m, x, y: x.lcm(y), [arr((2, 3), np.int32, -9, 9), arr((3,), np.int32, 1, 9)]),
    ("gcd_", lambda m, x, y: x.gcd_(y), [arr((5,), I64, 0, 20), arr((5,), I64, 0, 20)]),
    ("float_power", lambda m, x: m.float_power(x, 2), [arr((3,), I64)]),
    ("float_power_tensor", lambda m, x, y: x.float_power(y), [arr((3,), F32, 0.5, 2), arr((3,))]),
    ("float_power_complex", lambda m, x: m.float_power(x, 2j), [arr((3,), F32, 0.5, 2)]),
    ("float_power_scalar_base", lambda m, x: m.float_power(2, x), [arr((3,), I64)]),
    ("float_power_", lambda m, x: x.float_power_(0.5), [arr((3,), F64, 0, 2)]),
    ("ldexp", lambda m, x, e: m.ldexp(x, e), [arr((3,)), arr((3,), I64)]),
    ("ldexp_int", lambda m, x, e: m.ldexp(x, e), [arr((3,), I64), arr((3,), I64)]),
    ("ldexp_", lambda m, x, e: x.ldexp_(e), [arr((3,), F64), arr((3,), I64)]),
    ("frexp", lambda m, x: m.frexp(x), [np.array([0.0, 1.0, -3.5, 1e-40, np.inf], F32)]),
    ("frexp_f64", lambda m, x: x.frexp(), [arr((2, 3), F64, transpose=True)]),
    ("isclose", lambda m, x: m.isclose(x, x + 1e-6), [arr((3, 4))]),
    (
        "isclose_nan",
        lambda m, x, y: m.isclose(x, y, equal_nan=True),
        [np.array([np.nan, 1, np.inf, -np.inf]), np.array([np.nan, 1.1, np.inf, np.inf])],
    ),
    (
        "isclose_tols",
        lambda m, x, y: m.isclose(x, y, rtol=0.1, atol=0.5),
        [np.array([1.0, 2.0, 3.0]), np.array([1.4, 2.7, 0.0])],
    ),
    ("isclose_int", lambda m, x, y: m.isclose(x, y, atol=1), [arr((5,), I64), arr((5,), I64)]),
    ("isclose_bool", lambda m, x, y: m.isclose(x, y), [arr((5,), bool), arr((5,), bool)]),
    ("isclose_zero_tol", lambda m, x: m.isclose(x, x, 0, 0), [arr((3,))]),
    ("isclose_complex", lambda m, x: m.isclose(x, x * (1 + 1e-7)), [carr((3,))]),
    ("allclose", lambda m, x: m.allclose(x, x + 1e-9), [arr((3,))]),
    ("allclose_false", lambda m, x: x.allclose(x + 1), [arr((3,))]),
    ("equal", lambda m, x: m.equal(x, x.clone()), [arr((2, 3))]),
    ("equal_dtype", lambda m, x: m.equal(x, x.long()), [arr((3,), I64).astype(F32)]),
    ("equal_shape", lambda m, x: m.equal(x, x[:1]), [arr((2,))]),
    ("equal_nan", lambda m, x: x.equal(x), [np.array([np.nan])]),
    ("isin", lambda m, e, t: m.isin(e, t), [arr((3, 4), I64), arr((3,), I64)]),
    ("isin_invert", lambda m, e, t: m.isin(e, t, invert=True), [arr((5,)), arr((2,))]),
    ("isin_promote", lambda m, e, t: m.isin(e, t), [arr((5,), I64).astype(F32), arr((3,), I64)]),
    ("isin_scalar_elements", lambda m, t: m.isin(2, t), [arr((5,), I64)]),
    ("isin_scalar_test", lambda m, e: m.isin(e, 1), [arr((5,), I64)]),
    ("isin_empty", lambda m, e, t: m.isin(e, t), [arr((0,), I64), arr((3,), I64)]),
    ("nextafter", lambda m, x, y: m.nextafter(x, y), [arr((4,)), arr((4,))]),
    ("nextafter_", lambda m, x, y: x.nextafter_(y), [arr((4,), F64), arr((), F64)]),
    (
        "addcmul",
        lambda m, x, a, b: m.addcmul(x, a, b, value=0.5),
        [arr((3,)), arr((2, 3)), arr((3,))],
    ),
    (
        "addcmul_int",
        lambda m, x, a, b: m.addcmul(x, a, b, value=2),
        [arr((3,), I64), arr((3,), I64), arr((3,), I64)],
    ),
    (
        "addcmul_int_float_value",
        lambda m, x, a, b: x.addcmul(a, b, value=0.5),
        [arr((3,), I64), arr((3,), I64), arr((3,), I64)],
    ),
    (
        "addcdiv",
        lambda m, x, a, b: m.addcdiv(x, a, b, value=-2),
        [arr((3,)), arr((3,)), arr((3,), F32, 1, 2)],
    ),
    ("addcmul_", lambda m, x, a, b: x.addcmul_(a, b, value=3), [arr((3,)), arr((3,)), arr(())]),
    ("addcdiv_", lambda m, x, a, b: x.addcdiv_(a, b), [arr((3,)), arr((3,)), arr((3,), F32, 1, 2)]),
    ("conj_real", lambda m, x: m.conj(x), [arr((3,))]),
    ("conj_physical", lambda m, x: m.conj_physical(x), [carr((3,))]),
    ("conj_physical_real", lambda m, x: x.conj_physical(), [arr((3,))]),
    ("conj_physical_", lambda m, x: x.conj_physical_(), [carr((2, 2), C128)]),
    ("resolve_conj", lambda m, x: m.resolve_conj(x), [arr((3,))]),
    ("resolve_neg", lambda m, x: m.resolve_neg(x), [arr((3,))]),
    ("is_conj", lambda m, x: m.is_conj(x), [arr((3,))]),
    ("real_complex", lambda m, x: m.real(x), [carr((2, 3))]),
    ("real_real", lambda m, x: x.real, [arr((2, 3))]),
    ("imag", lambda m, x: x.imag, [carr((3, 2), C128, transpose=True)]),
    ("angle_complex", lambda m, x: m.angle(x), [carr((4,))]),
    (
        "angle_real",
        lambda m, x: x.angle(),
        [np.array([-0.0, 0.0, -1.0, 2.0, np.nan, -np.inf], F32)],
    ),
    ("angle_int", lambda m, x: m.angle(x), [arr((4,), I64)]),
    ("angle_bool", lambda m, x: m.angle(x), [arr((4,), bool)]),
    ("view_as_real", lambda m, x: m.view_as_real(x), [carr((2, 3))]),
    ("view_as_real_t", lambda m, x: m.view_as_real(x), [carr((2, 3), C128, transpose=True)]),
    ("view_as_real_0d", lambda m, x: m.view_as_real(x), [carr(())]),
    ("view_as_complex", lambda m, x: m.view_as_complex(x), [arr((3, 2))]),
    ("view_as_complex_f64", lambda m, x: m.view_as_complex(x), [arr((2, 3, 2), F64)]),
    ("complex", lambda m, a, b: m.complex(a, b), [arr((3, 1)), arr((4,))]),
    ("complex_f64", lambda m, a, b: m.complex(a, b), [arr((3,), F64), arr((), F64)]),
    ("polar", lambda m, a, b: m.polar(a, b), [arr((3,), F32, 0, 2), arr((3,))]),
    ("positive", lambda m, x: m.positive(x), [arr((3,))]),
    ("sgn_complex", lambda m, x: m.sgn(x), [carr((3,))]),
    ("true_divide", lambda m, x, y: m.true_divide(x, y), [arr((3,), I64), arr((3,), I64, 1, 3)]),
    ("clamp_tensor", lambda m, x, lo, hi: m.clamp(x, lo, hi), [arr((3, 4)), arr((4,)), arr(())]),
    ("poisson_zero", lambda m, x: m.poisson(x * 0), [arr((3,), F32, 0, 2)]),
]


@pytest.mark.parametrize("fn, arrays", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_torch(fn, arrays, torch):
    got, got_inputs = run(tocha, fn, arrays)
    want, want_inputs = run(torch, fn, arrays)
    compare(got, want, got_inputs, want_inputs)


NUMPY = [
    ("logaddexp", lambda m, x: m.logaddexp(x, x * 2), lambda a: np.logaddexp(a, a * 2)),
    ("logaddexp2", lambda m, x: m.logaddexp2(x, -x), lambda a: np.logaddexp2(a, -a)),
    ("deg2rad", lambda m, x: m.deg2rad(x), np.deg2rad),
    ("rad2deg", lambda m, x: m.rad2deg(x), np.rad2deg),
    ("nextafter", lambda m, x: m.nextafter(x, x * 0), lambda a: np.nextafter(a, a * 0)),
    ("frexp", lambda m, x: m.frexp(x).mantissa, lambda a: np.frexp(a)[0]),
    ("ldexp", lambda m, x: m.ldexp(x, m.tensor(3)), lambda a: np.ldexp(a, 3)),
    (
        "isclose",
        lambda m, x: m.isclose(x, x + 1e-3, 1e-3, 0),
        lambda a: np.isclose(a, a + 1e-3, 1e-3, 0),
    ),
    ("float_power", lambda m, x: m.float_power(x.abs(), 1.5), lambda a: np.abs(a) ** 1.5),
]


@pytest.mark.parametrize("fn, ref", [c[1:] for c in NUMPY], ids=[c[0] for c in NUMPY])
def test_matches_numpy(fn, ref):
    a = arr((3, 4), F64)
    assert_tensor(fn(tocha, tocha.from_numpy(a)), ref(a))


def test_gcd_lcm_against_numpy():
    a, b = arr((20,), I64, -30, 30), arr((20,), I64, -30, 30)
    assert_tensor(tocha.gcd(tocha.from_numpy(a), tocha.from_numpy(b)), np.gcd(a, b))
    assert_tensor(tocha.lcm(tocha.from_numpy(a), tocha.from_numpy(b)), np.lcm(a, b))


# -- complex views ---------------------------------------------------------------------------
def test_real_and_imag_are_writable_views():
    z = tocha.zeros(3, dtype=tocha.complex64)
    z.real.fill_(1)
    z.imag = tocha.tensor([1.0, 2.0, 3.0])
    assert z.tolist() == [1 + 1j, 1 + 2j, 1 + 3j]
    assert z.real._base is z and z.imag.stride() == (2,)
    r = tocha.zeros(2)
    assert r.real is r
    r.real = tocha.ones(2)
    assert r.tolist() == [1.0, 1.0]


def test_view_as_real_and_complex_share_memory(torch):
    z = tocha.tensor([1 + 2j, 3 - 4j])
    v = tocha.view_as_real(z)
    v[0, 1] = 9
    assert z[0].item() == 1 + 9j and v._base is z
    assert v.stride() == torch.view_as_real(torch.tensor([1 + 2j, 3 - 4j])).stride()
    back = tocha.view_as_complex(v)
    assert back._base is z and back.tolist() == z.tolist()


def test_frexp_out_and_fields():
    x = tocha.tensor([8.0, 0.75])
    m, e = tocha.empty(2), tocha.empty(2, dtype=tocha.int32)
    result = tocha.frexp(x, out=(m, e))
    assert result.mantissa is m and result.exponent is e
    assert m.tolist() == [0.5, 0.75] and e.tolist() == [4, 0]


# -- errors -----------------------------------------------------------------------------------
ERRORS = [
    ("logaddexp_int", lambda m: m.logaddexp(m.arange(3), m.arange(3))),
    ("logaddexp_scalar", lambda m: m.logaddexp(m.ones(2), 2.0)),
    ("deg2rad_complex", lambda m: m.deg2rad(m.ones(2, dtype=m.complex64))),
    ("deg2rad_int_inplace", lambda m: m.arange(3).deg2rad_()),
    ("heaviside_dtypes", lambda m: m.heaviside(m.ones(2), m.ones(2, dtype=m.int64))),
    ("heaviside_scalar", lambda m: m.heaviside(m.ones(2), 0.5)),
    (
        "heaviside_complex",
        lambda m: m.heaviside(m.ones(2, dtype=m.complex64), m.ones(2, dtype=m.complex64)),
    ),
    ("gcd_float", lambda m: m.gcd(m.ones(2), m.ones(2))),
    ("gcd_bool", lambda m: m.gcd(m.ones(2, dtype=m.bool), m.ones(2, dtype=m.bool))),
    ("lcm_float", lambda m: m.lcm(m.ones(2), m.ones(2))),
    ("float_power_", lambda m: m.ones(2).float_power_(2)),
    ("isclose_dtype", lambda m: m.isclose(m.ones(2), m.ones(2, dtype=m.int64))),
    ("isclose_rtol", lambda m: m.isclose(m.ones(2), m.ones(2), rtol=-1)),
    ("isclose_atol", lambda m: m.isclose(m.ones(2), m.ones(2), atol=-1)),
    ("nextafter_int", lambda m: m.nextafter(m.arange(2), m.arange(2))),
    ("frexp_int", lambda m: m.frexp(m.arange(2))),
    ("addcdiv_int", lambda m: m.addcdiv(m.arange(2), m.arange(2), m.arange(2))),
    ("imag_real", lambda m: m.imag(m.ones(2))),
    ("view_as_real_real", lambda m: m.view_as_real(m.ones(2))),
    ("view_as_complex_size", lambda m: m.view_as_complex(m.ones(2, 3))),
    ("view_as_complex_0d", lambda m: m.view_as_complex(m.ones(()))),
    ("view_as_complex_stride", lambda m: m.view_as_complex(m.ones(2, 2).t())),
    ("view_as_complex_strides", lambda m: m.view_as_complex(m.ones(3, 3)[:, :2])),
    ("view_as_complex_offset", lambda m: m.view_as_complex(m.ones(5)[1:].view(2, 2))),
    ("view_as_complex_int", lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.int64))),
    ("complex_dtypes", lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64))),
    ("complex_int", lambda m: m.complex(m.arange(2), m.arange(2))),
    ("polar_int", lambda m: m.polar(m.arange(2), m.arange(2))),
    ("geometric_p", lambda m: m.zeros(2).geometric_(1)),
    ("geometric_bool", lambda m: m.zeros(2, dtype=m.bool).geometric_(0.5)),
    ("log_normal_std", lambda m: m.zeros(2).log_normal_(1, 0)),
    ("log_normal_int", lambda m: m.zeros(2, dtype=m.int64).log_normal_()),
    ("cauchy_sigma", lambda m: m.zeros(2).cauchy_(0, 0)),
    ("cauchy_int", lambda m: m.zeros(2, dtype=m.int64).cauchy_()),
    ("poisson_int", lambda m: m.poisson(m.arange(3))),
    ("poisson_negative", lambda m: m.poisson(-m.ones(3))),
]


@pytest.mark.parametrize("fn", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(fn, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(Exception) as expected:
            fn(torch)
        with pytest.raises(type(expected.value)) as got:
            fn(tocha)
    assert str(got.value).split("\n")[0] == str(expected.value).split("\n")[0]


# -- random samplers -----------------------------------------------------------------------------
def test_samplers_have_the_right_distribution():
    g = tocha.Generator().manual_seed(0)
    n = 200_000
    geo = tocha.empty(n, dtype=tocha.int64).geometric_(0.25, generator=g)
    assert geo.min().item() >= 1 and abs(geo.double().mean().item() - 4) < 0.05
    ln = tocha.empty(n, dtype=tocha.float64).log_normal_(0.5, 0.25, generator=g)
    assert abs(ln.log().mean().item() - 0.5) < 0.01 and abs(ln.log().std().item() - 0.25) < 0.01
    c = tocha.empty(n).cauchy_(2.0, 3.0, generator=g)
    assert abs(c.median().item() - 2.0) < 0.05
    assert abs(((c - 2).abs() < 3).double().mean().item() - 0.5) < 0.01
    p = tocha.poisson(tocha.full((n,), 3.5), generator=g)
    assert p.dtype is tocha.float32 and abs(p.mean().item() - 3.5) < 0.03
    assert abs(p.var().item() - 3.5) < 0.05


def test_samplers_are_seeded_and_in_place():
    x = tocha.empty(5)
    for name, args in (("geometric_", (0.3,)), ("log_normal_", ()), ("cauchy_", ())):
        tocha.manual_seed(7)
        first = getattr(x, name)(*args).clone()
        tocha.manual_seed(7)
        assert getattr(x, name)(*args) is x and x.tolist() == first.tolist()
