"""tocha.fft against PyTorch: values, dtypes, shapes, norms and errors. Its gradients need
tocha-autograd: tests/autograd/test_fft_grad.py."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_tensor

import tocha

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


OUT_CASES = [
    ("fft", REAL, "complex64"),
    ("fft", REAL, "complex128"),
    ("ifftn", CPLX, "complex64"),
    ("rfft2", REAL, "complex64"),
    ("irfft", CPLX, "float32"),
    ("hfftn", CPLX, "float64"),
    ("ihfft2", REAL, "complex64"),
]


@pytest.mark.parametrize("name, array, out_dtype", OUT_CASES)
def test_out_receives_the_transform(torch, name, array, out_dtype):
    a = array.astype("complex64" if array.dtype.kind == "c" else "float32")
    out = tocha.empty(0, dtype=getattr(tocha, out_dtype))
    mine = getattr(tocha.fft, name)(tocha.from_numpy(a.copy()), out=out)
    theirs = getattr(torch.fft, name)(
        torch.from_numpy(a.copy()), out=torch.empty(0, dtype=getattr(torch, out_dtype))
    )
    assert mine is out
    assert_tensor(mine, theirs.resolve_conj(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "name, array, out_dtype", [("fft", REAL, "float32"), ("irfft", CPLX, "complex64")]
)
def test_out_of_the_wrong_kind_is_refused(torch, name, array, out_dtype):
    a = array.astype("complex64" if array.dtype.kind == "c" else "float32")
    with pytest.raises(RuntimeError) as want:
        getattr(torch.fft, name)(
            torch.from_numpy(a.copy()), out=torch.empty(0, dtype=getattr(torch, out_dtype))
        )
    with pytest.raises(RuntimeError) as got:
        getattr(tocha.fft, name)(
            tocha.from_numpy(a.copy()), out=tocha.empty(0, dtype=getattr(tocha, out_dtype))
        )
    assert str(got.value) == str(want.value)


def test_frequencies_fill_out(torch):
    out = tocha.empty(0, dtype=tocha.float64)
    assert tocha.fft.fftfreq(5, out=out) is out
    assert_tensor(out, torch.fft.fftfreq(5, out=torch.empty(0, dtype=torch.float64)))
    out = tocha.empty(0)
    assert tocha.fft.rfftfreq(6, 0.5, out=out) is out
    assert_tensor(out, torch.fft.rfftfreq(6, 0.5))
