"""tocha.signal.windows against torch.signal.windows: values (computed in float64, so within
float32's rounding of PyTorch's float32 arithmetic), shapes, dtypes, periodic forms, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

WINDOWS = {
    "gaussian": {"std": 1.5},
    "cosine": {},
    "exponential": {"tau": 2.0},
    "exponential_centered": {"center": 2.0, "tau": 3.0, "sym": False},
    "general_cosine": {"a": [0.3, 0.5, 0.2]},
    "general_hamming": {"alpha": 0.6},
    "hamming": {},
    "hann": {},
    "blackman": {},
    "nuttall": {},
    "bartlett": {},
    "kaiser": {"beta": 4.0},
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("M", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("name", list(WINDOWS))
def test_values_match_torch(torch, name, M, sym, dtype):
    kwargs = dict(WINDOWS[name])
    fn = name.removesuffix("_centered")
    if "sym" in kwargs and not sym:
        pytest.skip("the centered window is periodic only")
    kwargs.setdefault("sym", sym)
    ours = getattr(tocha.signal.windows, fn)(M, dtype=getattr(tocha, dtype), **kwargs)
    theirs = getattr(torch.signal.windows, fn)(M, dtype=getattr(torch, dtype), **kwargs)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda w: w.gaussian(-1), ValueError, "non-negative window length"),
        (lambda w: w.gaussian(3, std=0), ValueError, "Standard deviation must be positive"),
        (lambda w: w.exponential(3, tau=0), ValueError, "Tau must be positive"),
        (lambda w: w.exponential(3, center=1.0), ValueError, "Center must be None"),
        (lambda w: w.kaiser(3, beta=-1), ValueError, "beta must be non-negative"),
        (lambda w: w.general_cosine(3, a=5), TypeError, "Coefficients must be a list/tuple"),
        (lambda w: w.hann(3, dtype=tocha.int64), ValueError, "float32 or float64"),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(tocha.signal.windows)


def test_the_module_is_reached_from_tocha_and_requires_grad():
    window = tocha.signal.windows.hann(4, requires_grad=True)
    assert window.requires_grad and window.is_leaf
