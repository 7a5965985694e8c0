"""tocha-onednn's GELU (erf and tanh forms), forward and backward: against PyTorch (recorded),
bit for bit for the erf form, within a rounding step for tanh; against tocha's built-in
kernels; infinities and NaN as PyTorch gives them; declined calls (float64, strided,
mismatched shapes); float64 gradients end to end through the built-in kernels."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
pytest.importorskip("tocha.nn")
import tocha  # noqa: E402
from tests.onednn.spies import provided  # noqa: E402
from tocha_onednn import _eltwise  # noqa: E402

RNG = np.random.default_rng(5)
X = np.concatenate(
    [
        RNG.standard_normal(3000).astype(np.float32) * 4,
        np.linspace(-12, 12, 2000, dtype=np.float32),
        np.array([0.0, -0.0, 1e-30, 50.0, -50.0, np.inf, -np.inf, np.nan], np.float32),
    ]
).reshape(-1, 8)
G = RNG.standard_normal(X.shape).astype(np.float32)


def _gelu(lib, approximate):
    x = lib.tensor(X, requires_grad=True)
    y = lib.nn.functional.gelu(x, approximate=approximate)
    y.backward(lib.tensor(G))
    return y.detach().numpy(), x.grad.numpy()


def test_erf_form_equals_torch_bit_for_bit(torch):
    ours, theirs = _gelu(tocha, "none"), _gelu(torch, "none")
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_tanh_form_within_rounding_of_torch(torch):
    """The tanh form cancels for negative x (``1 + tanh`` near 0): a few float32 steps of
    ``|x|`` apart where the result is near 0."""
    ours, theirs = _gelu(tocha, "tanh"), _gelu(torch, "tanh")
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=5e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_matches_built_in_and_is_served(approximate):
    forward, generic, spy = provided(_eltwise, "gelu", "gelu")
    backward, generic_bwd, spy_bwd = provided(_eltwise, "gelu_backward", "gelu_backward")
    finite = X[np.isfinite(X).all(1)]
    g = G[: len(finite)]
    atol = 5e-6  # both forms cancel for negative x (the gradient near 0), as above
    np.testing.assert_allclose(
        forward(finite, approximate), generic(finite, approximate), rtol=1e-5, atol=atol
    )
    np.testing.assert_allclose(
        backward(g, finite, approximate),
        generic_bwd(g, finite, approximate),
        rtol=1e-5,
        atol=atol,
    )
    assert spy.calls == 0 and spy_bwd.calls == 0


def test_declined_calls_reach_the_built_in_kernels():
    forward, generic, spy = provided(_eltwise, "gelu", "gelu")
    backward, _, spy_bwd = provided(_eltwise, "gelu_backward", "gelu_backward")
    x64 = X[:10].astype(np.float64)
    strided = X[:600, ::2]
    np.testing.assert_array_equal(forward(x64, "none"), generic(x64, "none"))
    forward(strided, "none")
    forward(X[:0], "none")
    assert spy.calls == 3
    backward(G[:1], X[:5], "none")  # a broadcast gradient
    backward(G[:10].astype(np.float64), x64, "tanh")
    assert spy_bwd.calls == 2


def test_float64_gradients_go_through_the_built_in_kernels():
    x = tocha.tensor(X[:20][np.isfinite(X[:20]).all(1)].astype(np.float64), requires_grad=True)
    for approximate in ("none", "tanh"):
        f = lambda t, a=approximate: tocha.nn.functional.gelu(t, approximate=a)  # noqa: E731
        assert tocha.autograd.gradcheck(f, (x,))
        assert tocha.autograd.gradgradcheck(f, (x,))
