"""Gradients of tocha.fft: gradcheck and gradgradcheck of real-to-real chains, and the
gradients of complex and real inputs against PyTorch. Its values and errors are in
tests/core/test_fft.py, which needs no tocha-autograd."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.autograd import gradcheck, gradgradcheck

# Real-to-real chains: gradcheck and gradgradcheck apply directly.
REAL_CHAINS = [
    ("fft_abs", lambda F, x: F.fft.fft(x).abs(), (2, 6)),
    ("rfft_abs", lambda F, x: F.fft.rfft(x, norm="ortho").abs(), (2, 6)),
    ("rfft_odd_abs", lambda F, x: F.fft.rfft(x, n=7).abs(), (2, 5)),
    ("ifft2_abs", lambda F, x: F.fft.ifft2(x, norm="forward").abs(), (3, 4)),
    ("fftn_abs", lambda F, x: F.fft.fftn(F.fft.fft(x), dim=0).abs(), (3, 4)),
    ("ihfft_hfft", lambda F, x: F.fft.hfft(F.fft.ihfft(x), n=7), (7,)),
    (
        "rfft_irfft",
        lambda F, x: F.fft.irfft(F.fft.rfft(x, norm="forward"), n=6, norm="forward"),
        (2, 6),
    ),
    ("rfftn_irfftn", lambda F, x: F.fft.irfftn(F.fft.rfftn(x), s=(3, 5)), (3, 5)),
    ("fftshift", lambda F, x: F.fft.fftshift(x), (3, 4)),
]


@pytest.mark.parametrize("name, fn, shape", REAL_CHAINS, ids=[c[0] for c in REAL_CHAINS])
def test_gradcheck(name, fn, shape):
    x = tocha.from_numpy(np.random.default_rng(1).standard_normal(shape)).requires_grad_()
    assert gradcheck(lambda t: fn(tocha, t), [x])
    if not name.endswith("abs"):  # abs of complex has no second derivative in tocha yet
        assert gradgradcheck(lambda t: fn(tocha, t), [x])


COMPLEX_GRADS = [
    ("fft", lambda F, x: F.fft.fft(x, norm="ortho"), (2, 6)),
    ("ifftn", lambda F, x: F.fft.ifftn(x), (3, 4)),
    ("irfft_even", lambda F, x: F.fft.irfft(x, n=8), (2, 5)),
    ("irfft_odd", lambda F, x: F.fft.irfft(x, n=9, norm="forward"), (2, 5)),
    ("hfft", lambda F, x: F.fft.hfft(x, n=7), (2, 4)),
    ("irfftn", lambda F, x: F.fft.irfftn(x, s=(3, 6)), (3, 4)),
]


@pytest.mark.parametrize("name, fn, shape", COMPLEX_GRADS, ids=[c[0] for c in COMPLEX_GRADS])
def test_complex_input_gradients_match_torch(torch, name, fn, shape):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    mine = tocha.from_numpy(a.copy()).requires_grad_()
    theirs = torch.from_numpy(a.copy()).requires_grad_()
    out_m, out_t = fn(tocha, mine), fn(torch, theirs)
    g = rng.standard_normal(tuple(out_t.shape)) + (
        1j * rng.standard_normal(tuple(out_t.shape)) if out_t.is_complex() else 0
    )
    out_m.backward(tocha.from_numpy(g.copy()))
    out_t.backward(torch.from_numpy(g.copy()))
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.resolve_conj().numpy(), atol=1e-10)


def test_real_input_gradients_match_torch(torch):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 6))
    for fn in (
        lambda F, x: F.fft.rfft(x),
        lambda F, x: F.fft.fft(x),
        lambda F, x: F.fft.ihfft(x, norm="ortho"),
    ):
        mine = tocha.from_numpy(a.copy()).requires_grad_()
        theirs = torch.from_numpy(a.copy()).requires_grad_()
        out_t = fn(torch, theirs)
        g = rng.standard_normal(tuple(out_t.shape)) + 1j * rng.standard_normal(tuple(out_t.shape))
        fn(tocha, mine).backward(tocha.from_numpy(g.copy()))
        out_t.backward(torch.from_numpy(g.copy()))
        want = theirs.grad.resolve_conj().numpy()
        np.testing.assert_allclose(mine.grad.numpy(), want, atol=1e-10)


# -- forward mode -----------------------------------------------------------------------------
@pytest.mark.parametrize("name, fn, shape", REAL_CHAINS, ids=[c[0] for c in REAL_CHAINS])
def test_forward_ad_gradcheck(name, fn, shape):
    x = tocha.from_numpy(np.random.default_rng(1).standard_normal(shape)).requires_grad_()
    assert gradcheck(lambda t: fn(tocha, t), [x], check_forward_ad=True, check_backward_ad=False)


def _tangent(lib, fn, a, t):
    forward_ad = lib.autograd.forward_ad
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(lib.from_numpy(a.copy()), lib.from_numpy(t.copy()))
        return forward_ad.unpack_dual(fn(lib, dual)).tangent.numpy(force=True)


def _random(rng, shape, complex_: bool):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if complex_ else a


TANGENT_CASES = [(name, fn, shape, True) for name, fn, shape in COMPLEX_GRADS] + [
    ("rfft", lambda F, x: F.fft.rfft(x), (3, 6), False),
    ("fft_of_real", lambda F, x: F.fft.fft(x), (3, 6), False),
    ("ihfft", lambda F, x: F.fft.ihfft(x, norm="ortho"), (3, 6), False),
    ("rfft2", lambda F, x: F.fft.rfft2(x, norm="forward"), (3, 5), False),
]


@pytest.mark.parametrize(
    "name, fn, shape, complex_", TANGENT_CASES, ids=[c[0] for c in TANGENT_CASES]
)
def test_tangents_are_the_transform_of_the_tangent(name, fn, shape, complex_):
    """The transforms are (real-)linear: the tangent is the transform of the input's tangent,
    and so the finite difference."""
    rng = np.random.default_rng(4)
    a, t = _random(rng, shape, complex_), _random(rng, shape, complex_)
    tangent = _tangent(tocha, fn, a, t)
    np.testing.assert_allclose(tangent, fn(tocha, tocha.from_numpy(t)).numpy(), atol=1e-12)
    eps = 1e-6
    plus = fn(tocha, tocha.from_numpy(a + eps * t)).numpy()
    minus = fn(tocha, tocha.from_numpy(a - eps * t)).numpy()
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), atol=1e-7)


@pytest.mark.parametrize(
    "name, fn, shape, complex_", TANGENT_CASES, ids=[c[0] for c in TANGENT_CASES]
)
def test_tangents_match_torch(torch, name, fn, shape, complex_):
    rng = np.random.default_rng(5)
    a, t = _random(rng, shape, complex_), _random(rng, shape, complex_)
    np.testing.assert_allclose(_tangent(tocha, fn, a, t), _tangent(torch, fn, a, t), atol=1e-10)
