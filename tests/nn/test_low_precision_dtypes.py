"""nn.functional ops keep a bfloat16 or float16 input's dtype, as PyTorch (issue 25 item 1:
NumPy computed them in float32), and the clamps keep an integer input's dtype (relu6 and
hardtanh of int64 gave float64)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3)).astype(np.float32)
W = RNG.standard_normal((4, 3)).astype(np.float32)
IMAGE = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
KERNEL = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
Q = RNG.standard_normal((1, 2, 4, 8)).astype(np.float32)
BILINEAR = RNG.standard_normal((2, 3, 3)).astype(np.float32)

POINTWISE = [
    "gelu", "elu", "celu", "selu", "leaky_relu", "hardtanh", "relu6", "hardsigmoid",
    "hardswish", "softshrink", "rrelu", "silu", "mish", "softplus", "logsigmoid",
]  # fmt: skip


def _pointwise(name):
    return lambda F, t: getattr(F, name)(t(X))


CALLS = {name: _pointwise(name) for name in POINTWISE}
CALLS.update(
    {
        "linear": lambda F, t: F.linear(t(X), t(W)),
        "bilinear": lambda F, t: F.bilinear(t(X), t(X), t(BILINEAR)),
        "conv2d": lambda F, t: F.conv2d(t(IMAGE), t(KERNEL)),
        "conv_transpose2d": lambda F, t: F.conv_transpose2d(t(IMAGE), t(KERNEL).transpose(0, 1)),
        "max_pool2d": lambda F, t: F.max_pool2d(t(IMAGE), 2),
        "avg_pool2d": lambda F, t: F.avg_pool2d(t(IMAGE), 2),
        "scaled_dot_product_attention": lambda F, t: F.scaled_dot_product_attention(
            t(Q), t(Q), t(Q)
        ),
    }
)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(CALLS))
def test_keeps_the_low_precision_dtype(torch, name, dtype):
    def make(lib):
        return lambda a: lib.tensor(a).to(getattr(lib, dtype))

    def rounded_in_float32(a):
        return torch.tensor(a).to(getattr(torch, dtype)).float()

    mine = CALLS[name](tocha.nn.functional, make(tocha))
    theirs = CALLS[name](torch.nn.functional, make(torch))
    assert str(mine.dtype).split(".")[-1] == dtype == str(theirs.dtype).split(".")[-1]
    # PyTorch's own low-precision kernels round by the CPU (a bfloat16 convolution with or
    # without AVX-512 BF16): the values are checked against its float32 result on the same
    # rounded inputs, rounded to the dtype.
    reference = CALLS[name](torch.nn.functional, rounded_in_float32)
    assert_tensor(mine.float(), reference.to(getattr(torch, dtype)).float(), rtol=3e-2, atol=3e-2)


def test_gradients_keep_bfloat16():
    x = tocha.tensor(IMAGE).bfloat16().requires_grad_()
    k = tocha.tensor(KERNEL).bfloat16().requires_grad_()
    tocha.nn.functional.conv2d(x, k).sum().backward()
    assert x.grad.dtype == k.grad.dtype == tocha.bfloat16


@pytest.mark.parametrize("name", ["relu6", "hardtanh"])
def test_clamps_keep_integers(torch, name):
    mine = getattr(tocha.nn.functional, name)(tocha.tensor([-3, 0, 2, 9]))
    theirs = getattr(torch.nn.functional, name)(torch.tensor([-3, 0, 2, 9]))
    assert_tensor(mine, theirs)
