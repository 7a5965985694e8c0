"""tocha-onednn's linear_pointwise (oneDNN's matmul with the bias and the activation as a
post-op) against tocha's built-in kernel: every activation, with and without bias, inputs of
1 to 3 dims, strided weights; the calls it declines; gradients through the provider."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
pytest.importorskip("tocha.nn")
import tocha  # noqa: E402
import tocha.nn.functional  # noqa: E402, F401  (declares linear_pointwise)
from tests.onednn.spies import provided  # noqa: E402
from tocha.export import ops  # noqa: E402
from tocha_onednn import _matmul  # noqa: E402

RNG = np.random.default_rng(3)
ACTIVATIONS = ["none", "relu", "gelu", "gelu_tanh", "tanh", "sigmoid", "silu"]


def f32(*shape):
    return RNG.standard_normal(shape, dtype=np.float32)


def pair():
    return provided(_matmul, "linear_pointwise", "linear_pointwise")


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("lead", [(), (7,), (2, 5)], ids=["1d", "2d", "3d"])
def test_linear_pointwise_matches_built_in(lead, bias, activation):
    x, w = f32(*lead, 12) * 2, f32(9, 12)
    args = (x, w, *([f32(9)] if bias else []), activation)
    kernel, generic, spy = pair()
    got, want = kernel(*args), generic(*args)
    assert got.shape == want.shape == lead + (9,) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert spy.calls == 0


def test_strided_operands():
    kernel, generic, spy = pair()
    x, w = f32(12, 6).T, f32(12, 8).T
    np.testing.assert_allclose(kernel(x, w, "relu"), generic(x, w, "relu"), rtol=1e-5, atol=1e-5)
    assert spy.calls == 0


@pytest.mark.parametrize(
    "args",
    [
        (f32(3, 4).astype(np.float64), f32(5, 4).astype(np.float64), "relu"),
        (f32(3, 4), f32(5, 4), f32(5).astype(np.float64), "relu"),
        (f32(0, 4), f32(5, 4), "relu"),
    ],
    ids=["float64", "float64-bias", "empty"],
)
def test_declined_calls_reach_the_built_in_kernel(args):
    kernel, generic, spy = pair()
    try:
        want = generic(*args)
    except RuntimeError as exc:  # a bias of another dtype: the built-in kernel's error
        with pytest.raises(RuntimeError, match=re.escape(str(exc))):
            kernel(*args)
        assert spy.calls == 1  # declined, the built-in kernel raised
        return
    got = kernel(*args)
    assert spy.calls == 1
    np.testing.assert_array_equal(got, want)


def test_bfloat16_is_served_where_the_cpu_has_it_else_declined():
    """A bfloat16 call runs on oneDNN where this CPU has bfloat16 matmuls (AVX-512 BF16 or
    AMX), within bfloat16's rounding of the built-in answer; elsewhere it is declined and
    gives the built-in kernel's answer exactly."""
    from tests.onednn.test_onednn_bfloat16 import _bf16_matmul_exists

    kernel, generic, spy = pair()
    x = tocha.randn(3, 4, dtype=tocha.bfloat16)._data
    w = tocha.randn(5, 4, dtype=tocha.bfloat16)._data
    got = kernel(x, w, "relu")
    want = generic(x, w, "relu").astype(np.float32)
    assert got.dtype == x.dtype
    if _bf16_matmul_exists():
        assert spy.calls == 0
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=2**-7, atol=2**-7)
    else:
        assert spy.calls == 1
        np.testing.assert_array_equal(got.astype(np.float32), want)


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_gradients_through_the_provider_match_float64(activation):
    arrays = [f32(4, 6), f32(3, 6), f32(3)]

    def grads(dtype):
        ts = [tocha.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
        out = ops.linear_pointwise(*ts, activation)
        out.backward(tocha.ones_like(out))
        return [out.detach().double().numpy()] + [t.grad.double().numpy() for t in ts]

    ours = grads(tocha.float32)
    assert tocha.backends.provided_kernels()["linear_pointwise"] == "onednn"
    for a, b in zip(ours, grads(tocha.float64)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
