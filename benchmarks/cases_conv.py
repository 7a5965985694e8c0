"""Convolution and pooling benchmarks: a Conv2d training step (forward and backward) and a
max pooling step.

Target: Conv2d 3->16, 3x3, padding 1, batch 32 of 32x32 float32, forward + backward, within
2x of PyTorch at one thread. The bare GEMM of the forward's im2col
(``(16, 27) @ (32, 27, 1024)``) is a case of its own: the floor NumPy's BLAS sets.
"""

from __future__ import annotations

import numpy as np
from harness import Case, faster_than_torch

BATCH, C_IN, C_OUT, SIZE = 32, 3, 16, 32


def conv_inputs():
    """An image batch, a 3x3 weight and a bias."""
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((BATCH, C_IN, SIZE, SIZE), dtype=np.float32),
        rng.standard_normal((C_OUT, C_IN, 3, 3), dtype=np.float32),
        rng.standard_normal(C_OUT, dtype=np.float32),
    )


def pool_inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((BATCH, C_OUT, SIZE, SIZE), dtype=np.float32),)


def conv_step(lib, x, w, b):
    """Forward and backward of conv2d, gradients for the input, weight and bias."""
    for t in (x, w, b):
        t.requires_grad_()
        t.grad = None
    lib.nn.functional.conv2d(x, w, b, padding=1).sum().backward()


def conv_step_weights(lib, x, w, b):
    """As `conv_step`, the input not requiring grad (a network's first layer)."""
    for t in (w, b):
        t.requires_grad_()
        t.grad = None
    lib.nn.functional.conv2d(x, w, b, padding=1).sum().backward()


def im2col_inputs():
    """The forward's GEMM operands: the weight matrix and the im2col matrices."""
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((C_OUT, C_IN * 9), dtype=np.float32),
        rng.standard_normal((BATCH, C_IN * 9, SIZE * SIZE), dtype=np.float32),
    )


def matmul(lib, w, cols):
    return lib.matmul(w, cols)


def pool_step(lib, x):
    """Forward and backward of a 2x2 max pooling."""
    x.requires_grad_()
    x.grad = None
    lib.nn.functional.max_pool2d(x, 2).sum().backward()


WITHIN_2 = faster_than_torch(2.0)
CASES = [
    Case(
        "conv2d(x, w, b, padding=1) fwd+bwd",
        "32x3x32x32 -> 16, 3x3 float32",
        conv_inputs,
        conv_step,
        goal=WITHIN_2,
    ),
    Case(
        "conv2d(x, w, b, padding=1) fwd+bwd, no input grad",
        "32x3x32x32 -> 16, 3x3 float32",
        conv_inputs,
        conv_step_weights,
        goal=WITHIN_2,
    ),
    Case(
        "matmul(w, cols) of conv2d's im2col",
        "16x27 @ 32x27x1024 float32",
        im2col_inputs,
        matmul,
        numpy=matmul,
    ),
    Case("max_pool2d(x, 2) fwd+bwd", "32x16x32x32 float32", pool_inputs, pool_step),
]
