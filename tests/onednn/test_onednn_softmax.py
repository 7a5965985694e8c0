"""tocha-onednn's softmax and log_softmax kernels against tocha's built-in ones, forward and
backward, over dims and shapes; rows with NaN or infinities as PyTorch gives them; declined
calls; gradients end to end against the built-in float64 ones."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
pytest.importorskip("tocha.nn")
import tocha  # noqa: E402
import tocha.nn.functional as F  # noqa: E402
from tests.onednn.spies import provided  # noqa: E402
from tocha_onednn import _softmax  # noqa: E402


@pytest.fixture(autouse=True)
def every_size(monkeypatch):
    """The kernels serve small inputs too (they leave them to NumPy by default)."""
    monkeypatch.setattr(_softmax, "SMALL", 0)


RNG = np.random.default_rng(2)
OPS = [
    ("softmax", "softmax", "softmax_backward_data", "softmax_backward"),
    ("log_softmax", "log_softmax", "log_softmax_backward_data", "log_softmax_backward"),
]
SHAPES = [("vector", (7,), 0), ("rows", (5, 9), -1), ("cols", (5, 9), 0), ("3d", (3, 4, 6), 1)]


def pair(op_name, factory):
    return provided(_softmax, op_name, factory)


@pytest.mark.parametrize("shape,dim", [s[1:] for s in SHAPES], ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("op", OPS, ids=[o[0] for o in OPS])
def test_matches_built_in(op, shape, dim):
    forward, generic, spy = pair(op[0], op[1])
    x = RNG.standard_normal(shape, dtype=np.float32) * 4
    out = forward(x, dim)
    np.testing.assert_allclose(out, generic(x, dim), rtol=1e-5, atol=1e-5)
    backward, generic_b, spy_b = pair(op[2], op[3])
    g = RNG.standard_normal(shape, dtype=np.float32)
    np.testing.assert_allclose(backward(g, out, dim), generic_b(g, out, dim), rtol=1e-5, atol=1e-5)
    assert spy.calls == spy_b.calls == 0


@pytest.mark.parametrize("op", OPS, ids=[o[0] for o in OPS])
def test_non_finite_rows_as_pytorch(op):
    forward, generic, _ = pair(op[0], op[1])
    inf, nan = np.inf, np.nan
    x = np.array([[-inf, -inf, -inf], [0, -inf, 1], [inf, 0, 1], [nan, 0, 1]], np.float32)
    with np.errstate(all="ignore"):  # as tocha's dispatcher runs kernels
        want, got = generic(x, 1), forward(x, 1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)


def test_declined_calls():
    forward, _, spy = pair("softmax", "softmax")
    forward(np.ones(3), 0)
    forward(np.ones((2, 3), np.float16), 1)
    assert spy.calls == 2


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax], ids=["softmax", "log_softmax"])
def test_gradients_match_built_in_float64(fn):
    x = RNG.standard_normal((4, 6))
    g = RNG.standard_normal((4, 6))
    results = []
    for dtype in (tocha.float32, tocha.float64):
        t = tocha.tensor(x, dtype=dtype, requires_grad=True)
        out = fn(t, dim=1)
        out.backward(tocha.tensor(g, dtype=dtype))
        results.append((out.detach().numpy(), t.grad.numpy()))
    assert tocha.backends.provided_kernels()["softmax"] == "onednn"
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
