"""Window functions, as ``torch.signal.windows`` (SciPy's definitions): each returns `M`
values, symmetric by default; ``sym=False`` gives the periodic window (the first `M` values
of the symmetric window of ``M + 1``), as spectral analysis wants. Values are computed in
float64 and returned in `dtype` (float32 or float64; the default float dtype by default).

Example:
    >>> tocha.signal.windows.gaussian(5, std=1.0)
    tensor([0.1353, 0.6065, 1.0000, 0.6065, 0.1353])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import tocha
from tocha import Tensor

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _window(
    name: str,
    M: int,
    sym: bool,
    dtype,
    layout,
    device,
    requires_grad: bool,
    values: Callable[[Tensor, int], Tensor],
    single_is_one: bool = True,
) -> Tensor:
    """The window `values(n, length)` gives for the float64 positions ``n = 0..length-1``,
    checked, made periodic unless `sym`, and cast to `dtype`; a window of one value is 1
    when `single_is_one`."""
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not tocha.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dtype = tocha.get_default_dtype() if dtype is None else dtype
    if dtype not in (tocha.float32, tocha.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    if M == 0 or (M == 1 and single_is_one):
        result = tocha.ones(M, dtype=dtype, device=device)
    else:
        length = M if sym else M + 1
        n = tocha.arange(length, dtype=tocha.float64, device=device)
        result = values(n, length)[:M].to(dtype)
    return result.requires_grad_(requires_grad)


def _positive(value: float, what: str) -> None:
    if value <= 0:
        raise ValueError(f"{what} must be positive, got: {value} instead.")


def gaussian(
    M: int,
    *,
    std: float = 1.0,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """``exp(-((n - (M - 1) / 2) / std) ** 2 / 2)``."""
    _positive(std, "Standard deviation")
    return _window(
        "gaussian",
        M,
        sym,
        dtype,
        layout,
        device,
        requires_grad,
        lambda n, m: (-(((n - (m - 1) / 2) / std) ** 2) / 2).exp(),
    )


def exponential(
    M: int,
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """``exp(-|n - center| / tau)``, `center` the middle of the window by default (a
    `center` is for periodic windows only)."""
    _positive(tau, "Tau")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def values(n, m):
        c = (m - 1) / 2 if center is None else center
        return (-(n - c).abs() / tau).exp()

    return _window(
        "exponential", M, sym, dtype, layout, device, requires_grad, values, center is None
    )


def cosine(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """``sin(pi * (n + 0.5) / M)``, the sine window."""
    return _window(
        "cosine",
        M,
        sym,
        dtype,
        layout,
        device,
        requires_grad,
        lambda n, m: (math.pi * (n + 0.5) / m).sin(),
    )


def general_cosine(
    M: int,
    *,
    a: Iterable[float],
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """``sum_k (-1)^k a[k] cos(2 pi k n / (M - 1))``: a weighted sum of cosines."""
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")

    def values(n, m):
        angle = 2 * math.pi * n / (m - 1)
        return sum((-1) ** k * c * (k * angle).cos() for k, c in enumerate(a))

    return _window("general_cosine", M, sym, dtype, layout, device, requires_grad, values)


def general_hamming(
    M: int,
    *,
    alpha: float = 0.54,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The cosine sum with coefficients ``[alpha, 1 - alpha]``."""
    return general_cosine(
        M,
        a=[alpha, 1.0 - alpha],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def hamming(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """`general_hamming` with ``alpha=0.54``."""
    return general_hamming(
        M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def hann(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """`general_hamming` with ``alpha=0.5``."""
    return general_hamming(
        M,
        alpha=0.5,
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def blackman(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The cosine sum with coefficients ``[0.42, 0.5, 0.08]``."""
    return general_cosine(
        M,
        a=[0.42, 0.5, 0.08],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def nuttall(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """Nuttall's 4-term cosine sum (minimum side lobes)."""
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


def bartlett(
    M: int,
    *,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """``1 - |2 n / (M - 1) - 1|``, the triangular window that is 0 at both ends."""
    return _window(
        "bartlett",
        M,
        sym,
        dtype,
        layout,
        device,
        requires_grad,
        lambda n, m: 1 - (2 * n / (m - 1) - 1).abs(),
    )


def kaiser(
    M: int,
    *,
    beta: float = 12.0,
    sym: bool = True,
    dtype=None,
    layout=tocha.strided,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """``I0(beta * sqrt(1 - ((n - N / 2) / (N / 2)) ** 2)) / I0(beta)``, ``N = M - 1``."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")

    def values(n, m):
        half = (m - 1) / 2
        inside = (1 - ((n - half) / half) ** 2).clamp(min=0)
        return tocha.special.i0(beta * inside.sqrt()) / tocha.special.i0(
            tocha.tensor(beta, dtype=tocha.float64)
        )

    return _window("kaiser", M, sym, dtype, layout, device, requires_grad, values)
