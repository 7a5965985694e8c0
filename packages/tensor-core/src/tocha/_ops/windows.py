"""Window functions, as PyTorch's: `hann_window`, `hamming_window`, `blackman_window`,
`bartlett_window`, `kaiser_window`.

Each takes ``window_length`` and ``periodic`` (default True: the window of length
``window_length + 1`` without its last point, as spectral analysis wants), then the factory
keywords (``dtype``: a floating dtype, default the default dtype; ``device``;
``requires_grad``). Values are computed in float64 and rounded once to the dtype.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import _dtype
from .._api import PUBLIC, export
from ._argcheck import check_bool, check_dtype

__all__: list[str] = []


def _window(name: str, window_length, periodic, dtype, device, requires_grad, values):
    if not isinstance(window_length, builtins.int) or isinstance(window_length, builtins.bool):
        raise TypeError(
            f"{name}(): argument 'window_length' (position 1) must be int, not "
            f"{type(window_length).__name__}"
        )
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    if window_length >= 2**63:
        raise ValueError("Overflow when unpacking long long")
    check_bool(name, periodic, "periodic")
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if not isinstance(dtype, _dtype.dtype):
        check_dtype(name, dtype)
    if dtype.is_complex:  # PyTorch's arange, which it starts with, has no complex kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dtype.TITLE[dtype]}'")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        array = np.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        array = values(np.arange(n, dtype=np.float64), n)[:window_length]
    return PUBLIC["tensor"](array, dtype=dtype, device=device, requires_grad=requires_grad)


def _cosine_sum(*coefficients):
    def values(k, n):
        phase = 2 * np.pi * k / (n - 1)
        return builtins.sum((-1) ** i * a * np.cos(i * phase) for i, a in enumerate(coefficients))

    return values


def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
):
    """The Hann window: ``0.5 - 0.5 cos(2 pi k / (N - 1))``."""
    return _window(
        "hann_window", window_length, periodic, dtype, device, requires_grad, _cosine_sum(0.5, 0.5)
    )


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
):
    """The Hamming window: ``alpha - beta cos(2 pi k / (N - 1))``."""
    return _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        _cosine_sum(alpha, beta),
    )


def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
):
    """The Blackman window: ``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))``."""
    return _window(
        "blackman_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        _cosine_sum(0.42, 0.5, 0.08),
    )


def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
):
    """The Bartlett (triangular) window: ``1 - |2 k / (N - 1) - 1|``."""
    return _window(
        "bartlett_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda k, n: 1 - np.abs(2 * k / (n - 1) - 1),
    )


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
):
    """The Kaiser window: ``I0(beta sqrt(1 - (2 k / (N - 1) - 1)^2)) / I0(beta)``."""
    return _window(
        "kaiser_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda k, n: (
            np.i0(beta * np.sqrt(np.clip(1 - (2 * k / (n - 1) - 1) ** 2, 0, None))) / np.i0(beta)
        ),
    )


for _fn in (hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window):
    export(_fn)
