"""nn benchmarks (issue tocha-nn): one training step of a small MLP.

Target: an MLP 784-256-128-10 (ReLU) training step on a batch of 64 (SGD, cross-entropy) at
most 1.2x PyTorch's time at 1 thread. Until tocha has ``F.cross_entropy``, tocha's step uses
``log_softmax`` and ``gather`` (the same maths).
"""

from __future__ import annotations

import numpy as np
from harness import Case, faster_than_torch

BATCH, SIZES = 64, (784, 256, 128, 10)


def batch():
    """A seeded batch: float32 images and int64 labels."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32)
    return x, rng.integers(0, SIZES[-1], BATCH)


def cross_entropy(lib, logits, target):
    """``F.cross_entropy`` where the library has it, else its log_softmax + gather form."""
    F = lib.nn.functional
    if hasattr(F, "cross_entropy"):
        return F.cross_entropy(logits, target)
    return -F.log_softmax(logits, 1).gather(1, target.unsqueeze(1)).mean()


class MLPStep:
    """The timed call: zero_grad, forward, loss, backward, SGD step; the model and optimizer
    are made on the first (untimed) call for the given inputs."""

    def __init__(self):
        self.models = {}

    def __call__(self, lib, x, target):
        made = self.models.get(id(x))
        if made is None:
            nn = lib.nn
            model = nn.Sequential(
                nn.Linear(SIZES[0], SIZES[1]),
                nn.ReLU(),
                nn.Linear(SIZES[1], SIZES[2]),
                nn.ReLU(),
                nn.Linear(SIZES[2], SIZES[3]),
            )
            made = self.models[id(x)] = (model, lib.optim.SGD(model.parameters(), lr=0.01))
        model, opt = made
        opt.zero_grad()
        cross_entropy(lib, model(x), target).backward()
        opt.step()


def logits_and_labels(rows, classes):
    """A setup making seeded float32 logits and int64 labels."""

    def setup():
        rng = np.random.default_rng(0)
        return (
            rng.standard_normal((rows, classes), dtype=np.float32),
            rng.integers(0, classes, rows),
        )

    return setup


def cross_entropy_step(lib, logits, target):
    """The fused cross_entropy forward and backward (into a fresh .grad)."""
    logits.requires_grad_(True)
    logits.grad = None
    lib.nn.functional.cross_entropy(logits, target).backward()


def activations():
    """Seeded float32 activations ``(8, 128, 2048)`` (a transformer feed-forward's) and an
    output gradient."""
    rng = np.random.default_rng(0)
    shape = (8, 128, 2048)
    return tuple(rng.standard_normal(shape, dtype=np.float32) for _ in range(2))


def dropout_step(lib, x, g):
    """F.dropout(x, 0.1) in training, forward and backward (into a fresh .grad)."""
    x.requires_grad_(True)
    x.grad = None
    lib.nn.functional.dropout(x, 0.1).backward(g)


CASES = [
    Case(
        "MLP train step (SGD, CE)",
        "784-256-128-10, batch 64",
        batch,
        MLPStep(),
        goal=faster_than_torch(1.2),
    ),
    Case(
        "F.cross_entropy(x, t).backward()",
        "64 x 10 float32",
        logits_and_labels(64, 10),
        cross_entropy_step,
        goal=faster_than_torch(),
    ),
    Case(
        "F.cross_entropy(x, t).backward()",
        "512 x 1000 float32",
        logits_and_labels(512, 1000),
        cross_entropy_step,
        goal=faster_than_torch(1.5),
    ),
    Case(
        "F.dropout(x, 0.1) fwd+bwd",
        "8 x 128 x 2048 float32",
        activations,
        dropout_step,
        goal=faster_than_torch(1.5),
    ),
]
