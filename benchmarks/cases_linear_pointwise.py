"""A linear layer and its ReLU at inference (issue 23): ``relu(linear(x, w, b))`` under
no_grad, eager and compiled. tocha-compiler rewrites the pair into one ``linear_pointwise``,
which tocha-onednn runs as one oneDNN matmul with the bias and the ReLU fused (without the
plugin: NumPy's matmul, then the ReLU). PyTorch runs eagerly in both rows.

Shapes: an MLP's first layer on MNIST-sized inputs, (64, 784) @ (784, 256), and a wider
(512, 1024) @ (1024, 1024); float32.
"""

from __future__ import annotations

import numpy as np
from harness import Case


def _inputs(batch, features, out):
    def setup():
        rng = np.random.default_rng(0)
        return (
            rng.standard_normal((batch, features), dtype=np.float32),
            (rng.standard_normal((out, features)) / np.sqrt(features)).astype(np.float32),
            rng.standard_normal(out, dtype=np.float32),
        )

    return setup


def _layer(lib, x, w, b):
    return lib.nn.functional.relu(lib.nn.functional.linear(x, w, b))


def eager(lib, x, w, b):
    """The layer, eagerly, under no_grad."""
    with lib.no_grad():
        return _layer(lib, x, w, b)


class Compiled:
    """The layer compiled by tocha.compile (made on the first, untimed, call), under no_grad;
    PyTorch runs it eagerly."""

    def __init__(self):
        self.fns = {}

    def __call__(self, lib, x, w, b):
        if lib.__name__ != "tocha":
            return eager(lib, x, w, b)
        fn = self.fns.get(id(x))
        if fn is None:
            fn = self.fns[id(x)] = lib.compile(lambda x, w, b: _layer(lib, x, w, b))
        with lib.no_grad():
            return fn(x, w, b)


SHAPES = [((64, 784, 256), "64x784 @ 784x256"), ((512, 1024, 1024), "512x1024 @ 1024x1024")]
CASES = [
    case
    for dims, size in SHAPES
    for case in (
        Case("relu(linear(x, w, b)) no_grad", f"{size} float32", _inputs(*dims), eager),
        Case(
            "relu(linear(x, w, b)) no_grad, tocha.compile",
            f"{size} float32",
            _inputs(*dims),
            Compiled(),
        ),
    )
]
