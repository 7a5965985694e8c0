"""tocha-onednn's erf: tocha's float32 rational in oneDNN's post-op chains. Within 7 float32
ulp of the true erf (as the built-in kernel) over a dense grid and random values, within a
few ulp of the built-in kernel, NaN, infinities and signed zeros kept; declined calls
(float64, small, strided) go to the built-in kernel; ``out=`` and the gradient."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
import tocha  # noqa: E402
from tests.onednn.spies import provided  # noqa: E402
from tocha_onednn import _erf  # noqa: E402

RNG = np.random.default_rng(7)
GRID = np.linspace(-6, 6, 400_001, dtype=np.float32)
SPECIALS = np.array(
    [0.0, -0.0, 1e-30, -1e-30, 1e-40, 3.99, 4.0, 4.01, 100.0, -1e30, np.inf, -np.inf, np.nan],
    np.float32,
)


def _ulps(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """|values - reference| in float32 steps at the reference."""
    step = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64)
    step[step == 0] = np.spacing(np.float32(0))
    return np.abs(values.astype(np.float64) - reference) / step


def test_within_7_ulp_of_the_true_erf_and_served():
    kernel, _, spy = provided(_erf, "erf", "erf")
    x = np.concatenate([GRID, RNG.standard_normal(100_000).astype(np.float32) * 2])
    reference = np.array([math.erf(v) for v in x.astype(np.float64)])
    ulps = _ulps(kernel(x), reference)
    assert spy.calls == 0
    assert ulps.max() <= 7 and ulps.mean() < 1.5


def test_within_a_few_ulp_of_the_built_in_kernel():
    kernel, generic, _ = provided(_erf, "erf", "erf")
    x = RNG.standard_normal((64, 1024)).astype(np.float32) * 3
    ours, theirs = kernel(x), generic(x)
    assert ours.shape == x.shape and ours.dtype == np.float32
    assert _ulps(ours, theirs.astype(np.float64)).max() <= 6


def test_specials_kept():
    kernel, generic, spy = provided(_erf, "erf", "erf")
    x = np.concatenate([GRID[: _erf.MIN_SIZE], SPECIALS])
    ours = kernel(x)[-len(SPECIALS) :]
    assert spy.calls == 0
    finite = np.isfinite(SPECIALS)
    np.testing.assert_array_equal(ours[~finite], generic(SPECIALS[~finite]))
    reference = np.array([math.erf(v) for v in SPECIALS[finite].astype(np.float64)])
    assert _ulps(ours[finite], reference).max() <= 1
    assert np.signbit(ours[1]) and not np.signbit(ours[0])


@pytest.mark.parametrize(
    "x",
    [
        GRID[: _erf.MIN_SIZE].astype(np.float64),
        GRID[: _erf.MIN_SIZE - 1],
        GRID[: 2 * _erf.MIN_SIZE : 2],  # every other element: not C-ordered
    ],
    ids=["float64", "small", "strided"],
)
def test_declined_calls_go_to_the_built_in_kernel(x):
    kernel, generic, spy = provided(_erf, "erf", "erf")
    np.testing.assert_array_equal(kernel(x), generic(x))
    assert spy.calls == 1


def test_out_and_the_tensor_api():
    x = tocha.from_numpy(GRID[: 4 * _erf.MIN_SIZE].reshape(4, -1).copy())
    out = tocha.empty(4, _erf.MIN_SIZE)
    assert tocha.erf(x, out=out) is out
    np.testing.assert_array_equal(out.numpy(), tocha.erf(x).numpy())
    y = x.clone()
    y.erf_()
    np.testing.assert_array_equal(y.numpy(), out.numpy())


def test_gradient():
    x = tocha.from_numpy(RNG.standard_normal(_erf.MIN_SIZE).astype(np.float32))
    x.requires_grad_()
    tocha.erf(x).sum().backward()
    expected = 2 / math.sqrt(math.pi) * np.exp(-(x.detach().numpy().astype(np.float64) ** 2))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=2e-6, atol=1e-7)
