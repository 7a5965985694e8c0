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


class MLPStepNumPy:
    """The NumPy floor of `MLPStep`: the same step hand-written on arrays, with the fewest
    NumPy calls (forward, cross-entropy and its gradient, backward, ``w -= lr * g``); weights
    are made on the first call for the given inputs."""

    def __init__(self):
        self.weights = {}

    def __call__(self, np_, x, target):
        params = self.weights.get(id(x))
        if params is None:
            rng = np.random.default_rng(1)
            params = self.weights[id(x)] = [
                array
                for fan_in, fan_out in zip(SIZES, SIZES[1:])
                for array in (
                    rng.uniform(-1, 1, (fan_out, fan_in)).astype(np.float32) / fan_in**0.5,
                    np.zeros(fan_out, np.float32),
                )
            ]
        w1, b1, w2, b2, w3, b3 = params
        h1 = x @ w1.T
        h1 += b1
        np_.maximum(h1, 0, out=h1)
        h2 = h1 @ w2.T
        h2 += b2
        np_.maximum(h2, 0, out=h2)
        logits = h2 @ w3.T
        logits += b3
        logits -= logits.max(axis=1, keepdims=True)
        np_.exp(logits, out=logits)
        logits /= logits.sum(axis=1, keepdims=True)
        rows = np_.arange(len(target))
        _loss = -np_.log(logits[rows, target]).mean()
        logits[rows, target] -= 1
        g3 = logits
        g3 /= len(target)
        g2 = g3 @ w3
        g2 *= h2 > 0
        g1 = g2 @ w2
        g1 *= h1 > 0
        grads = (g1.T @ x, g1.sum(0), g2.T @ h1, g2.sum(0), g3.T @ h2, g3.sum(0))
        for p, g in zip(params, grads, strict=True):
            g *= 0.01
            p -= g


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


def cross_entropy_numpy(np_, logits, target):
    """The NumPy floor of `cross_entropy_step`: the mean loss and its gradient by the logits."""
    rows = np_.arange(len(target))
    probs = logits - logits.max(axis=1, keepdims=True)
    np_.exp(probs, out=probs)
    probs /= probs.sum(axis=1, keepdims=True)
    _loss = -np_.log(probs[rows, target]).mean()
    probs[rows, target] -= 1
    probs /= len(target)


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
        numpy=MLPStepNumPy(),
        goal=faster_than_torch(1.2),
    ),
    Case(
        "F.cross_entropy(x, t).backward()",
        "64 x 10 float32",
        logits_and_labels(64, 10),
        cross_entropy_step,
        numpy=cross_entropy_numpy,
        goal=faster_than_torch(),
    ),
    Case(
        "F.cross_entropy(x, t).backward()",
        "512 x 1000 float32",
        logits_and_labels(512, 1000),
        cross_entropy_step,
        numpy=cross_entropy_numpy,
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
