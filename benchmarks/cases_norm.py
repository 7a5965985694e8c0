"""Normalization benchmarks (issue tocha-nn): forward and backward of the fused layers.

layer_norm on (8, 128, 256), batch_norm (training, BatchNorm2d-shaped) and group_norm (4
groups) on (32, 16, 32, 32), float32. The timed call is the forward
and the gradients of input, weight and bias for a given output gradient.
"""

from __future__ import annotations

import numpy as np
from harness import Case, faster_than_torch


def _inputs(shape, features):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape, dtype=np.float32)
    w = rng.standard_normal(features, dtype=np.float32)
    b = rng.standard_normal(features, dtype=np.float32)
    return x, w, b, rng.standard_normal(shape, dtype=np.float32)


def _grads(lib, out, x, w, b, g):
    return lib.autograd.grad(out, (x, w, b), g)


def layer_norm_step(lib, x, w, b, g):
    """F.layer_norm forward and backward."""
    for t in (x, w, b):
        t.requires_grad_()
    return _grads(lib, lib.nn.functional.layer_norm(x, (x.shape[-1],), w, b), x, w, b, g)


def batch_norm_step(lib, x, w, b, g):
    """F.batch_norm (training, no running statistics) forward and backward."""
    for t in (x, w, b):
        t.requires_grad_()
    out = lib.nn.functional.batch_norm(x, None, None, w, b, training=True)
    return _grads(lib, out, x, w, b, g)


def group_norm_step(lib, x, w, b, g):
    """F.group_norm (4 groups) forward and backward."""
    for t in (x, w, b):
        t.requires_grad_()
    return _grads(lib, lib.nn.functional.group_norm(x, 4, w, b), x, w, b, g)


CASES = [
    Case(
        "layer_norm fwd+bwd",
        "(8, 128, 256) float32",
        lambda: _inputs((8, 128, 256), 256),
        layer_norm_step,
        goal=faster_than_torch(1.5),
    ),
    Case(
        "batch_norm2d fwd+bwd",
        "(32, 16, 32, 32) float32",
        lambda: _inputs((32, 16, 32, 32), 16),
        batch_norm_step,
        goal=faster_than_torch(1.5),
    ),
    Case(
        "group_norm fwd+bwd",
        "(32, 16, 32, 32) float32, 4 groups",
        lambda: _inputs((32, 16, 32, 32), 16),
        group_norm_step,
        goal=faster_than_torch(1.2),
    ),
]
