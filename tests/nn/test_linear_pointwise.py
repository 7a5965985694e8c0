"""The linear_pointwise primitive (``act(x @ w.T + b)`` as one op): equal to the linear map
followed by the activation's function, with first and second derivatives and forward-mode
derivatives (gradcheck in float64)."""

from __future__ import annotations

import pytest

import tocha
import tocha.nn.functional as F
from tocha.autograd import gradcheck, gradgradcheck
from tocha.export import ops

REFERENCE = {
    "none": lambda z: z,
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"),
    "tanh": tocha.tanh,
    "sigmoid": tocha.sigmoid,
    "silu": F.silu,
}


def _inputs(lead, bias):
    gen = tocha.Generator().manual_seed(0)
    x = tocha.randn(*lead, 5, dtype=tocha.float64, generator=gen, requires_grad=True)
    w = tocha.randn(4, 5, dtype=tocha.float64, generator=gen, requires_grad=True)
    b = tocha.randn(4, dtype=tocha.float64, generator=gen, requires_grad=True)
    return (x, w, b) if bias else (x, w)


@pytest.mark.parametrize("activation", list(REFERENCE))
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_equals_linear_then_activation(activation, bias):
    for lead in [(3,), (2, 3), ()]:
        ins = _inputs(lead, bias)
        want = REFERENCE[activation](F.linear(*ins))
        got = ops.linear_pointwise(*ins, activation)
        assert got.shape == want.shape
        assert tocha.allclose(got, want)


@pytest.mark.parametrize("activation", list(REFERENCE))
def test_derivatives(activation):
    ins = _inputs((2, 3), True)

    def fn(*a):
        return ops.linear_pointwise(*a, activation)

    assert gradcheck(fn, ins, check_forward_ad=True)
    assert gradgradcheck(fn, ins)


def test_float32_result():
    x, w = tocha.randn(3, 5), tocha.randn(4, 5)
    out = ops.linear_pointwise(x, w, "relu")
    assert out.dtype == tocha.float32 and bool((out >= 0).all())
