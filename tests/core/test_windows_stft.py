"""Window functions and the short-time Fourier transforms (stft, istft) against PyTorch:
defaults, periodic and symmetric windows, dtypes, padding modes, onesided, normalized,
return_complex, length, errors. Gradients: tests/autograd/test_missing_routines_grad.py."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_tensor

import tocha

_RNG = np.random.default_rng(7)
SIGNAL = _RNG.standard_normal((2, 64))
COMPLEX_SIGNAL = SIGNAL[0] + 1j * SIGNAL[1]


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("hann_window", {}),
        ("hamming_window", {}),
        ("hamming_window", {"alpha": 0.5, "beta": 0.4}),
        ("blackman_window", {}),
        ("bartlett_window", {}),
        ("kaiser_window", {}),
        ("kaiser_window", {"beta": 3.5}),
    ],
)
@pytest.mark.parametrize("length", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(torch, name, kwargs, length, periodic):
    got = getattr(tocha, name)(length, periodic, **kwargs)
    want = getattr(torch, name)(length, periodic, **kwargs)
    assert_tensor(got, want)
    got = getattr(tocha, name)(length, dtype=tocha.float64)
    want = getattr(torch, name)(length, dtype=torch.float64)
    assert_tensor(got, want, rtol=1e-12)


def test_window_options_and_errors(torch):
    assert tocha.hann_window(4, requires_grad=False).dtype == tocha.get_default_dtype()
    assert tocha.hann_window(4, device="cpu").device.type == "cpu"
    for make in (
        lambda lib: lib.hann_window(3, dtype=lib.int64),
        lambda lib: lib.blackman_window(-1),
    ):
        with pytest.raises(RuntimeError) as theirs:
            make(torch)
        with pytest.raises(RuntimeError) as mine:
            make(tocha)
        assert str(mine.value).split(",")[0] == str(theirs.value).split(",")[0]


STFT_CASES = [
    {"n_fft": 16},
    {"n_fft": 16, "hop_length": 3},
    {"n_fft": 16, "window": "hann"},
    {"n_fft": 16, "win_length": 10, "window": "hann10"},
    {"n_fft": 15, "hop_length": 5, "center": False},
    {"n_fft": 16, "pad_mode": "constant"},
    {"n_fft": 16, "pad_mode": "replicate", "normalized": True},
    {"n_fft": 16, "pad_mode": "circular"},
    {"n_fft": 16, "onesided": False, "window": "hann"},
]


def _window(lib, spec, dtype):
    if spec == "hann":
        return lib.hann_window(16, dtype=dtype)
    if spec == "hann10":
        return lib.hann_window(10, dtype=dtype)
    return None


@pytest.mark.parametrize("case", STFT_CASES)
@pytest.mark.parametrize("batched", [False, True])
def test_stft_matches_torch(torch, case, batched):
    data = SIGNAL if batched else SIGNAL[0]
    kwargs = dict(case)
    spec = kwargs.pop("window", None)
    got = tocha.stft(
        tocha.from_numpy(data.copy()),
        window=_window(tocha, spec, tocha.float64),
        return_complex=True,
        **kwargs,
    )
    want = torch.stft(
        torch.from_numpy(data.copy()),
        window=_window(torch, spec, torch.float64),
        return_complex=True,
        **kwargs,
    )
    assert_tensor(got, want, rtol=1e-10, atol=1e-10)


def test_stft_of_complex_and_float32_signals(torch):
    got = tocha.stft(tocha.from_numpy(COMPLEX_SIGNAL.copy()), 8, return_complex=True)
    want = torch.stft(torch.from_numpy(COMPLEX_SIGNAL.copy()), 8, return_complex=True)
    assert_tensor(got, want, rtol=1e-10, atol=1e-10)
    x32 = SIGNAL.astype(np.float32)
    got = tocha.stft(
        tocha.from_numpy(x32.copy()), 8, window=tocha.hann_window(8), return_complex=True
    )
    want = torch.stft(
        torch.from_numpy(x32.copy()), 8, window=torch.hann_window(8), return_complex=True
    )
    assert_tensor(got, want, atol=1e-5)
    assert_tensor(
        tocha.from_numpy(x32.copy()).stft(8, return_complex=True),
        torch.from_numpy(x32.copy()).stft(8, return_complex=True),
        atol=1e-5,
    )


def test_stft_return_complex_rules(torch):
    with pytest.raises(RuntimeError) as theirs:
        torch.stft(torch.ones(32), 8)
    with pytest.raises(RuntimeError) as mine:
        tocha.stft(tocha.ones(32), 8)
    assert str(mine.value) == str(theirs.value)
    with pytest.warns(UserWarning, match="stft with return_complex=False is deprecated"):
        got = tocha.stft(tocha.from_numpy(SIGNAL[0].copy()), 8, return_complex=False)
    want = torch.stft(torch.from_numpy(SIGNAL[0].copy()), 8, return_complex=False)
    assert_tensor(got, want, rtol=1e-10, atol=1e-10)


ISTFT_CASES = [
    {"n_fft": 16, "window": "hann"},
    {"n_fft": 16, "hop_length": 4, "window": "hann", "length": 60},
    {"n_fft": 16, "hop_length": 4, "window": "hann", "length": 70},
    {"n_fft": 16, "window": "hann", "normalized": True},
    {"n_fft": 16, "hop_length": 8},
    {"n_fft": 16, "win_length": 10, "window": "hann10", "hop_length": 2},
    {"n_fft": 16, "window": "hann", "onesided": False},
]


@pytest.mark.parametrize("case", ISTFT_CASES)
def test_istft_matches_torch_and_inverts_stft(torch, case):
    kwargs = dict(case)
    spec = kwargs.pop("window", None)
    length = kwargs.pop("length", None)
    forward = {k: v for k, v in kwargs.items() if k != "length"}
    x = tocha.from_numpy(SIGNAL.copy())
    spectrum = tocha.stft(
        x, window=_window(tocha, spec, tocha.float64), return_complex=True, **forward
    )
    got = tocha.istft(spectrum, window=_window(tocha, spec, tocha.float64), length=length, **kwargs)
    t_spectrum = torch.stft(
        torch.from_numpy(SIGNAL.copy()),
        window=_window(torch, spec, torch.float64),
        return_complex=True,
        **forward,
    )
    want = torch.istft(
        t_spectrum, window=_window(torch, spec, torch.float64), length=length, **kwargs
    )
    assert_tensor(got, want, rtol=1e-10, atol=1e-10)
    n = min(64, got.shape[-1])
    np.testing.assert_allclose(got.numpy()[..., :n], SIGNAL[..., :n], atol=1e-10)


def test_istft_errors(torch):
    real = tocha.ones(9, 5)
    with pytest.raises(RuntimeError, match="complex-valued input"):
        tocha.istft(real, 16)
    with pytest.raises(RuntimeError) as theirs:
        torch.istft(torch.zeros(9, 5, dtype=torch.complex64), 16, window=torch.zeros(16))
    with pytest.raises(RuntimeError) as mine:
        tocha.istft(tocha.zeros(9, 5, dtype=tocha.complex64), 16, window=tocha.zeros(16))
    assert "window overlap add min" in str(mine.value) and "window overlap add min" in str(
        theirs.value
    )


HERMITIAN = _RNG.standard_normal((3, 4, 5)) + 1j * _RNG.standard_normal((3, 4, 5))
REAL_GRID = _RNG.standard_normal((3, 4, 6))


@pytest.mark.parametrize(
    "name, data, kwargs",
    [
        ("hfftn", HERMITIAN, {}),
        ("hfft2", HERMITIAN, {"norm": "ortho"}),
        ("hfftn", HERMITIAN, {"s": (3, 7), "norm": "forward"}),
        ("ihfftn", REAL_GRID, {}),
        ("ihfft2", REAL_GRID, {"norm": "forward"}),
        ("ihfftn", REAL_GRID, {"s": (2, 5), "dim": (0, 2)}),
    ],
)
def test_hermitian_transforms_in_n_dims(torch, name, data, kwargs):
    got = getattr(tocha.fft, name)(tocha.from_numpy(data.copy()), **kwargs)
    want = getattr(torch.fft, name)(torch.from_numpy(data.copy()), **kwargs)
    assert_tensor(got, want, rtol=1e-10, atol=1e-10)
