"""Convolution and pooling benchmarks: a Conv2d training step (forward and backward), max
and average pooling steps and a ResNet-18-style training step.

Target: Conv2d 3->16, 3x3, padding 1, batch 32 of 32x32 float32, forward + backward, within
2x of PyTorch at one thread. The bare GEMM of the forward's im2col
(``(16, 27) @ (32, 27, 1024)``) is a case of its own: the floor NumPy's BLAS sets.

The ResNet case is ResNet-18's layout for 32x32 images (a 3x3 stem, four stages of two basic
blocks with batch norm, strided 3x3 and 1x1 shortcuts between stages, average pooling, a
linear head) at a quarter of its width (16 to 128 channels), one SGD-free training step:
forward, cross entropy, backward. Target (issue 23, with tocha-onednn): within 1.2x.
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


def overlapping_pool_step(lib, x):
    """Forward and backward of ResNet's stem pooling: 3x3 windows, stride 2, padding 1."""
    x.requires_grad_()
    x.grad = None
    lib.nn.functional.max_pool2d(x, 3, 2, 1).sum().backward()


def avg_pool_step(lib, x):
    """Forward and backward of a 2x2 average pooling."""
    x.requires_grad_()
    x.grad = None
    lib.nn.functional.avg_pool2d(x, 2).sum().backward()


def resnet(lib, width=16, classes=10):
    """ResNet-18's layout for 32x32 inputs, `width` channels in the first stage."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            out = nn.functional.relu(self.bn1(self.conv1(x)))
            return nn.functional.relu(self.bn2(self.conv2(out)) + self.shortcut(x))

    layers = [nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()]
    cin = width
    for stage in range(4):
        cout = width * 2**stage
        layers += [Block(cin, cout, 1 if stage == 0 else 2), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def resnet_inputs():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((BATCH, 3, SIZE, SIZE), dtype=np.float32),
        rng.integers(0, 10, BATCH),
    )


class ResNetStep:
    """The timed call: zero the gradients, forward, cross entropy, backward. The model is made
    on the first (untimed) call, seeded alike in every library."""

    def __init__(self):
        self.models = {}

    def __call__(self, lib, x, y):
        model = self.models.get(id(x))
        if model is None:
            model = self.models[id(x)] = resnet(lib)
            rng = np.random.default_rng(1)
            with lib.no_grad():
                for p in model.parameters():
                    values = rng.standard_normal(tuple(p.shape)) * 0.1
                    p.copy_(lib.from_numpy(values.astype(np.float32)))
        model.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()


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
    Case(
        "max_pool2d(x, 3, 2, 1) fwd+bwd", "32x16x32x32 float32", pool_inputs, overlapping_pool_step
    ),
    Case("avg_pool2d(x, 2) fwd+bwd", "32x16x32x32 float32", pool_inputs, avg_pool_step),
    Case(
        "ResNet-18-style (width 16) conv train step",
        "32x3x32x32 float32, 10 classes",
        resnet_inputs,
        ResNetStep(),
        goal=faster_than_torch(1.2),
    ),
]
