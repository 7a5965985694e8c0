"""Transformer benchmarks (issue tocha-nn): a TransformerEncoderLayer training step and the
attention core.

Target: TransformerEncoderLayer(d_model=256, nhead=4) (feed-forward 2048, batch_first), a
batch of 8 sequences of 128, forward + backward in training mode, at most 1.5x PyTorch's time
at 1 thread; with the default dropout 0.1 and with dropout 0.
"""

from __future__ import annotations

import numpy as np
from harness import Case, faster_than_torch

BATCH, SEQ, D_MODEL, HEADS = 8, 128, 256, 4


def tokens():
    """A seeded float32 batch ``(8, 128, 256)``."""
    rng = np.random.default_rng(0)
    return (rng.standard_normal((BATCH, SEQ, D_MODEL), dtype=np.float32),)


class EncoderStep:
    """The timed call: forward and backward of one encoder layer (the layer made on the first,
    untimed, call for the given input; gradients accumulate)."""

    def __init__(self, dropout: float):
        self.dropout = dropout
        self.layers = {}

    def __call__(self, lib, x):
        layer = self.layers.get(id(x))
        if layer is None:
            lib.manual_seed(0)
            layer = self.layers[id(x)] = lib.nn.TransformerEncoderLayer(
                D_MODEL, HEADS, dropout=self.dropout, batch_first=True
            )
            x.requires_grad_()
        layer(x).sum().backward()


def heads():
    """Seeded q, k, v ``(8, 4, 128, 64)`` float32."""
    rng = np.random.default_rng(0)
    shape = (BATCH, HEADS, SEQ, D_MODEL // HEADS)
    return tuple(rng.standard_normal(shape, dtype=np.float32) for _ in range(3))


def sdpa_step(lib, q, k, v):
    """F.scaled_dot_product_attention forward and backward into fresh gradients."""
    for t in (q, k, v):
        t.requires_grad_()
        t.grad = None
    lib.nn.functional.scaled_dot_product_attention(q, k, v).sum().backward()


WITHIN_1_5 = faster_than_torch(1.5)
CASES = [
    Case(
        "TransformerEncoderLayer fwd+bwd, dropout 0.1",
        "d 256, 4 heads, 8 x 128 float32",
        tokens,
        EncoderStep(0.1),
        goal=WITHIN_1_5,
    ),
    Case(
        "TransformerEncoderLayer fwd+bwd, dropout 0",
        "d 256, 4 heads, 8 x 128 float32",
        tokens,
        EncoderStep(0.0),
        goal=WITHIN_1_5,
    ),
    Case("F.scaled_dot_product_attention fwd+bwd", "8x4x128x64 float32", heads, sdpa_step),
]
