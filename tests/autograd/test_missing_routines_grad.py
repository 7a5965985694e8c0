"""Gradients of the routines added for issue 26 (composed of other ops, so both modes come
from those): gradcheck in reverse and forward mode, and the gradients against PyTorch's.
Their values are in tests/core/test_missing_routines.py and test_windows_stft.py."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.autograd import gradcheck

_RNG = np.random.default_rng(11)
DATA = {
    "mat": _RNG.standard_normal((3, 4)),
    "vec": _RNG.standard_normal(5),
    "distinct": np.array([[0.3, 1.7, -0.4, 2.2, 0.9], [1.1, -1.3, 0.5, 0.1, 2.6]]),
    "signal": _RNG.standard_normal(24),
    "spd": np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]),
    "positive": np.array([0.7, 1.3, 2.9, 4.1]),
}


def _spd(L, x):
    return x @ x.mT + L.eye(x.shape[-1], dtype=x.dtype)


CASES = [
    ("unfold", lambda L, x: x.unfold(1, 2, 1) * 1.5, "mat"),
    ("t_", lambda L, x: (x * 2).t_(), "mat"),
    ("squeeze_unsqueeze_", lambda L, x: (x * 1).unsqueeze_(0).squeeze_(0), "mat"),
    ("transpose_", lambda L, x: (x + 0).transpose_(0, 1) @ x, "mat"),
    ("ravel", lambda L, x: L.ravel(x.t()), "mat"),
    ("inner", lambda L, x: L.inner(x, x), "mat"),
    ("addr", lambda L, x: L.addr(x[:3, :3], x[0, :3], x[1, :3], beta=0.5, alpha=2.0), "mat"),
    ("dist", lambda L, x: L.dist(x[0], x[1], 3), "mat"),
    ("addmm_", lambda L, x: (x[:, :3] * 1).addmm_(x[:, :2], x[:2, :3]), "mat"),
    ("cumsum_", lambda L, x: (x * 1).cumsum_(1), "mat"),
    ("quantile_linear", lambda L, x: L.quantile(x, 0.35, dim=1), "distinct"),
    ("quantile_midpoint", lambda L, x: L.quantile(x, 0.5, interpolation="midpoint"), "distinct"),
    ("nanquantile", lambda L, x: L.nanquantile(x, 0.8, dim=0, keepdim=True), "distinct"),
    (
        "stft",
        lambda L, x: L.view_as_real(
            L.stft(x, 8, hop_length=3, window=L.hann_window(8, dtype=x.dtype), return_complex=True)
        ),
        "signal",
    ),
    (
        "istft",
        lambda L, x: L.istft(
            L.stft(x, 8, window=L.hann_window(8, dtype=x.dtype), return_complex=True),
            8,
            window=L.hann_window(8, dtype=x.dtype),
        ),
        "signal",
    ),
    (
        "cholesky_solve",
        lambda L, x: L.cholesky_solve(x[:, :2], L.linalg.cholesky(_spd(L, x))),
        "spd",
    ),
    ("cholesky_inverse", lambda L, x: L.cholesky_inverse(L.linalg.cholesky(_spd(L, x))), "spd"),
    ("legendre", lambda L, x: L.special.legendre_polynomial_p(x / 5, 4), "positive"),
    ("spherical_bessel_j0", lambda L, x: L.special.spherical_bessel_j0(x), "positive"),
    ("bessel_j0", lambda L, x: L.special.bessel_j0(x), "positive"),
    ("modified_bessel_k1", lambda L, x: L.special.modified_bessel_k1(x), "positive"),
    ("gammainc_x", lambda L, x: L.special.gammainc(L.full_like(x, 2.5), x), "positive"),
    ("as_strided_scatter", lambda L, x: L.as_strided_scatter(x, x[0, :2] * 3, (2,), (4,)), "mat"),
    ("sum_to_size", lambda L, x: x.sum_to_size(1, 4), "mat"),
]


@pytest.mark.parametrize("name, fn, key", CASES, ids=[c[0] for c in CASES])
def test_gradcheck_both_modes(name, fn, key):
    x = tocha.tensor(DATA[key], dtype=tocha.float64, requires_grad=True)
    assert gradcheck(lambda t: fn(tocha, t), [x], check_forward_ad=True)


# PyTorch does not differentiate its Bessel functions, polynomials and gammainc; its
# as_strided_scatter gradient is not the derivative (gradcheck above checks tocha's).
NOT_COMPARED = (
    "gammainc_x",
    "modified_bessel_k1",
    "bessel_j0",
    "legendre",
    "spherical_bessel_j0",
    "as_strided_scatter",
)
TORCH_CASES = [c for c in CASES if c[0] not in NOT_COMPARED]


@pytest.mark.parametrize("name, fn, key", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_gradients_match_torch(torch, name, fn, key):
    x = tocha.tensor(DATA[key], dtype=tocha.float64, requires_grad=True)
    fn(tocha, x).sum().backward()
    t = torch.tensor(DATA[key], dtype=torch.float64, requires_grad=True)
    fn(torch, t).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.asarray(t.grad), rtol=1e-8, atol=1e-10)


def test_inplace_view_op_on_a_non_leaf_keeps_history():
    x = tocha.arange(6.0, dtype=tocha.float64).reshape(2, 3).requires_grad_()
    y = x * 2
    y.t_()
    assert tuple(y.shape) == (3, 2)
    (y * tocha.arange(6.0, dtype=tocha.float64).reshape(3, 2)).sum().backward()
    assert x.grad.tolist() == [[0.0, 4.0, 8.0], [2.0, 6.0, 10.0]]
