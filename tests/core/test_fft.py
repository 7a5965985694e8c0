"""tocha.fft against PyTorch: values, dtypes, shapes, norms, errors and gradients."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_tensor

import tocha
from tocha.autograd import gradcheck, gradgradcheck

_RNG = np.random.default_rng(0)
REAL = _RNG.standard_normal((3, 8))
CPLX = _RNG.standard_normal((3, 5)) + 1j * _RNG.standard_normal((3, 5))

CASES = [
    ("fft", REAL, {}),
    ("fft", REAL, {"n": 5, "norm": "ortho"}),
    ("fft", CPLX, {"dim": 0}),
    ("ifft", REAL, {"norm": "forward"}),
    ("ifft", CPLX, {"n": 9}),
    ("rfft", REAL, {}),
    ("rfft", REAL, {"n": 11, "dim": 0, "norm": "forward"}),
    ("irfft", CPLX, {}),
    ("irfft", CPLX, {"n": 7, "norm": "ortho"}),
    ("hfft", CPLX, {}),
    ("hfft", CPLX, {"n": 9, "norm": "forward"}),
    ("ihfft", REAL, {}),
    ("ihfft", REAL, {"n": 6, "norm": "ortho"}),
    ("fft2", REAL, {}),
    ("ifft2", CPLX, {"s": (4, 4)}),
    ("fftn", REAL, {"s": (2, 6)}),
    ("fftn", CPLX, {"dim": 0, "norm": "ortho"}),
    ("ifftn", REAL, {}),
    ("rfft2", REAL, {}),
    ("rfftn", REAL, {"s": (4, 6), "norm": "ortho"}),
    ("irfft2", CPLX, {"s": (4, 6)}),
    ("irfftn", CPLX, {}),
    ("fftshift", REAL, {}),
    ("ifftshift", REAL, {"dim": 1}),
    ("fftshift", CPLX, {"dim": (0,)}),
]


@pytest.mark.parametrize("precision", [32, 64])
@pytest.mark.parametrize("name, array, kwargs", CASES)
def test_values_match_torch(torch, name, array, kwargs, precision):
    kind = array.dtype.kind
    dtype = {
        ("f", 32): "float32",
        ("f", 64): "float64",
        ("c", 32): "complex64",
        ("c", 64): "complex128",
    }[kind, precision]
    a = array.astype(dtype)
    mine = getattr(tocha.fft, name)(tocha.from_numpy(a.copy()), **kwargs)
    theirs = getattr(torch.fft, name)(torch.from_numpy(a.copy()), **kwargs).resolve_conj()
    assert_tensor(mine, theirs, rtol=1e-5 if precision == 32 else 1e-12, atol=1e-5)


def test_integer_input_promotes_to_default_float():
    assert tocha.fft.fft(tocha.arange(4)).dtype == tocha.complex64
    assert tocha.fft.irfft(tocha.ones(3, dtype=tocha.float64)).dtype == tocha.float64


def test_frequencies(torch):
    assert_tensor(tocha.fft.fftfreq(5), torch.fft.fftfreq(5))
    assert_tensor(
        tocha.fft.rfftfreq(6, 0.5, dtype=tocha.float64),
        torch.fft.rfftfreq(6, 0.5, dtype=torch.float64),
    )


@pytest.mark.parametrize(
    "fn, message",
    [
        (lambda: tocha.fft.fft(tocha.ones(4), norm="bad"), 'Invalid normalization mode: "bad"'),
        (lambda: tocha.fft.fft(tocha.ones(4), n=0), "Invalid number of data points (0) specified"),
        (lambda: tocha.fft.irfft(tocha.ones(1)), "Invalid number of data points (0) specified"),
        (
            lambda: tocha.fft.fftn(tocha.ones(4), s=(4, 4)),
            "Got shape with 2 values but input tensor only has 1 dimensions.",
        ),
        (
            lambda: tocha.fft.rfft(tocha.ones(4, dtype=tocha.complex64)),
            "rfft expects a real input tensor, but got ComplexFloat",
        ),
    ],
)
def test_errors(fn, message):
    with pytest.raises(RuntimeError) as info:
        fn()
    assert message in str(info.value)


def test_dim_out_of_range():
    with pytest.raises(IndexError):
        tocha.fft.fft(tocha.ones(4), dim=3)


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
