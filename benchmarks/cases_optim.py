"""Optimizer benchmarks (issue tocha-optim): one Adam step over many parameters.

Targets, tocha against PyTorch's ``foreach=True`` Adam: at most 1.2x its time over 200
parameters totalling 10M floats, at most 1.5x over 200 parameters of 100 floats.
"""

from __future__ import annotations

import numpy as np
from harness import Case, faster_than_torch

N_PARAMS = 200


def params_and_grads(size: int):
    """A setup making 200 zero float32 parameters of `size` elements and seeded gradients."""

    def setup():
        rng = np.random.default_rng(0)
        params = [np.zeros(size, np.float32) for _ in range(N_PARAMS)]
        grads = [rng.standard_normal(size, dtype=np.float32) for _ in range(N_PARAMS)]
        return (*params, *grads)

    return setup


class AdamStep:
    """The timed call: one ``Adam(foreach=True)`` step, the optimizer made on the first call
    (the untimed one) for the given inputs."""

    def __init__(self):
        self.optimizers = {}

    def __call__(self, lib, *tensors):
        opt = self.optimizers.get(id(tensors[0]))
        if opt is None:
            params, grads = tensors[:N_PARAMS], tensors[N_PARAMS:]
            for p, g in zip(params, grads):
                p.requires_grad_(True)
                p.grad = g
            opt = self.optimizers[id(tensors[0])] = lib.optim.Adam(params, lr=1e-3, foreach=True)
        opt.step()


CASES = [
    Case(
        "Adam(foreach=True).step()",
        "200 x 50k float32",
        params_and_grads(50_000),
        AdamStep(),
        goal=faster_than_torch(1.2),
        repeats=5,
    ),
    Case(
        "Adam(foreach=True).step()",
        "200 x 100 float32",
        params_and_grads(100),
        AdamStep(),
        goal=faster_than_torch(1.5),
    ),
]
