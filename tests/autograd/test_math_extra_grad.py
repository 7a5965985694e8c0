"""Gradients of the math extras (tocha/_ops/math_extra.py) and of poisson: gradcheck (reverse
and forward mode) and gradgradcheck in float64, and PyTorch's gradients and forward-mode
tangents, of real and complex inputs. Their values
and errors are in tests/core/test_math_extra.py, which needs no tocha-autograd."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.autograd.forward import assert_tangents_match
from tests.core.helpers import assert_tensor
from tocha import autograd

C64, C128 = np.complex64, np.complex128
# This module's own generator: its samples do not depend on which other modules drew first.
RNG = np.random.default_rng(0)


def carr(shape, dtype=C64):
    """A complex array of random values."""
    real, imag = RNG.uniform(-3, 3, shape), RNG.uniform(-3, 3, shape)
    return np.asarray(real + 1j * imag).astype(dtype)


def test_poisson_gradient_is_zero():
    rates = tocha.full((3,), 2.0, dtype=tocha.float64).requires_grad_()
    tocha.poisson(rates).sum().backward()
    assert rates.grad.tolist() == [0.0, 0.0, 0.0]


def test_poisson_tangent_is_zero():
    forward_ad = tocha.autograd.forward_ad
    with forward_ad.dual_level():
        rates = forward_ad.make_dual(tocha.full((3,), 2.0, dtype=tocha.float64), tocha.ones(3))
        assert forward_ad.unpack_dual(tocha.poisson(rates)).tangent.tolist() == [0.0, 0.0, 0.0]


# -- gradients ---------------------------------------------------------------------------------
GRADS = [
    ("logaddexp", lambda m, x, y: m.logaddexp(x, y), [(3, 4), (4,)]),
    ("logaddexp2", lambda m, x, y: m.logaddexp2(x, y), [(3,), (3,)]),
    ("deg2rad", lambda m, x: m.deg2rad(x), [(3,)]),
    ("rad2deg", lambda m, x: m.rad2deg(x), [(3,)]),
    ("float_power", lambda m, x, y: m.float_power(x.abs(), y), [(3,), (3,)]),
    ("ldexp", lambda m, x: m.ldexp(x, m.tensor([1, -2, 3])), [(3,)]),
    ("frexp", lambda m, x: m.frexp(x).mantissa * 1, [(2, 3)]),
    ("addcmul", lambda m, x, a, b: m.addcmul(x, a, b, value=0.5), [(3,), (2, 3), (3,)]),
    ("addcdiv", lambda m, x, a, b: m.addcdiv(x, a, b, value=2), [(3,), (3,), (3,)]),
    ("polar", lambda m, a, b: m.view_as_real(m.polar(a.abs(), b)), [(3,), (3,)]),
    ("complex", lambda m, a, b: m.view_as_real(m.complex(a, b)) * 2, [(3,), (2, 3)]),
    ("angle_real", lambda m, x: m.angle(x) + x, [(3,)]),
]


def _arrays(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 2.0, s) * rng.choice([-1, 1], s) for s in shapes]


def _leaves(lib, shapes, seed):
    return [lib.from_numpy(a).requires_grad_() for a in _arrays(shapes, seed)]


@pytest.mark.parametrize("fn, shapes", [g[1:] for g in GRADS], ids=[g[0] for g in GRADS])
def test_gradcheck(fn, shapes):
    inputs = _leaves(tocha, shapes, 1)
    assert autograd.gradcheck(lambda *xs: fn(tocha, *xs), inputs, check_forward_ad=True)
    assert autograd.gradgradcheck(lambda *xs: fn(tocha, *xs), inputs)


# PyTorch's gradient of ldexp is 0 where the exponent is negative (its 2 ** other is taken in
# integers), which the gradcheck above shows to be wrong.
TORCH_GRADS = [g for g in GRADS if g[0] != "ldexp"]


@pytest.mark.parametrize(
    "fn, shapes", [g[1:] for g in TORCH_GRADS], ids=[g[0] for g in TORCH_GRADS]
)
def test_gradients_match_torch(fn, shapes, torch):
    results = []
    for lib in (tocha, torch):
        xs = _leaves(lib, shapes, 2)
        out = fn(lib, *xs)
        weights = np.random.default_rng(3).uniform(-1, 1, tuple(out.shape))
        (out * lib.from_numpy(weights)).sum().backward()
        results.append([x.grad for x in xs])
    for got, want in zip(*results):
        assert_tensor(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "fn, shapes", [g[1:] for g in TORCH_GRADS], ids=[g[0] for g in TORCH_GRADS]
)
def test_tangents_match_torch(fn, shapes, torch):
    assert_tangents_match(torch, fn, _arrays(shapes, 2), rtol=1e-6, atol=1e-8)


# Complex inputs: gradients of real losses, with PyTorch's convention, against PyTorch.
COMPLEX_GRADS = [
    ("real", lambda m, z: m.real(z) * 3),
    ("imag", lambda m, z: m.imag(z) * 3),
    ("view_as_real", lambda m, z: m.view_as_real(z)),
    ("angle", lambda m, z: m.angle(z)),
    ("conj_physical", lambda m, z: m.view_as_real(m.conj_physical(z))),
    ("view_as_complex", lambda m, z: m.view_as_real(m.view_as_complex(m.view_as_real(z) * 2))),
]


@pytest.mark.parametrize("fn", [g[1] for g in COMPLEX_GRADS], ids=[g[0] for g in COMPLEX_GRADS])
def test_complex_gradients_match_torch(fn, torch):
    z = carr((3,), C128)
    weights = np.random.default_rng(4).uniform(-1, 1, (3, 2))
    grads = []
    for lib in (tocha, torch):
        x = lib.from_numpy(z.copy()).requires_grad_()
        out = fn(lib, x)
        w = lib.from_numpy(weights[:, 0] if out.ndim == 1 else weights)
        (out * w).sum().backward()
        grads.append(x.grad)
    assert_tensor(grads[0], grads[1])


# Complex inputs in forward mode: holomorphic ops take ``t * f'(z)``, the others PyTorch's
# tangents (abs: ``Re(conj(z) t) / |z|``, angle: ``Im(conj(z) t) / |z|^2``...).
COMPLEX_TANGENTS = COMPLEX_GRADS + [
    ("abs", lambda m, z: m.abs(z)),
    ("sgn", lambda m, z: m.sgn(z)),
    ("conj", lambda m, z: z.conj() * 1),
    ("complex_of_parts", lambda m, z: m.complex(z.real, z.imag * 2)),
    ("reciprocal", lambda m, z: z.reciprocal()),
    ("exp_sqrt", lambda m, z: z.exp() + z.sqrt()),
    ("mul_div", lambda m, z: z * z.conj() / (z + 4)),
    ("pow", lambda m, z: z**2.5),
    ("prod_cumprod", lambda m, z: z.prod() + z.cumprod(0)),
    ("norm", lambda m, z: m.linalg.vector_norm(z, 3)),
    ("var_std", lambda m, z: z.var() + z.std()),
    ("sum_mean", lambda m, z: z.sum() + z.mean()),
]


@pytest.mark.parametrize(
    "fn", [g[1] for g in COMPLEX_TANGENTS], ids=[g[0] for g in COMPLEX_TANGENTS]
)
def test_complex_tangents_match_torch(fn, torch):
    rng = np.random.default_rng(5)
    z = rng.uniform(-3, 3, 3) + 1j * rng.uniform(-3, 3, 3)
    assert_tangents_match(torch, fn, [z], rtol=1e-7, atol=1e-10)


def test_nextafter_passes_the_tangent_of_its_first_argument_where_it_moves(torch):
    arrays = [np.array([1.0, 2.0, -1.0]), np.array([0.0, 3.0, -1.0])]
    assert_tangents_match(torch, lambda m, x, y: m.nextafter(x, y), arrays)
    assert_tangents_match(torch, lambda m, x, y: m.nextafter(x.detach(), y), arrays)


def test_heaviside_has_no_forward_rule(torch):
    for lib in (tocha, torch):
        with lib.autograd.forward_ad.dual_level():
            x = lib.autograd.forward_ad.make_dual(lib.ones(2), lib.ones(2))
            with pytest.raises(NotImplementedError, match="forward AD with aten::heaviside"):
                lib.heaviside(x, lib.ones(2))


def test_heaviside_has_no_derivative_and_nextafter_passes_it(torch):
    grads = []
    for lib in (tocha, torch):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
            lib.heaviside(x, lib.ones(2, dtype=lib.float64)).sum().backward()
        y = lib.tensor([0.0, 1.0], dtype=lib.float64, requires_grad=True)  # a tie: x == y
        lib.nextafter(x, y).sum().backward()
        grads.append((x.grad, y.grad))
    for got, want in zip(*grads):
        assert_tensor(got, want)
