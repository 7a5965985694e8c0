"""GPU benchmarks (issue tocha-cuda): float16 matmul throughput, the overhead of small ops,
and one training step of an MLP, tocha-cuda against PyTorch on the same GPU.

Every case raises `Unavailable` (shown as n/a) for a library without a usable CUDA GPU, so
the module costs nothing on a machine without one. Each timed call ends with a synchronize,
so the figures are of finished GPU work.
Targets: matmul 8192x8192 float16 at least 0.8x PyTorch's TFLOP/s (CuPy's cuBLAS call);
a small op at most 3x PyTorch's time (Python dispatch over CuPy's launch); the MLP step at
most 2x.
"""

from __future__ import annotations

import numpy as np
from harness import Case, Unavailable, faster_than_torch

MATMUL_N = 8192


def _cuda(lib):
    """`lib`'s cuda module; Unavailable without a usable GPU."""
    if lib.__name__ == "numpy" or not lib.cuda.is_available():
        raise Unavailable("no CUDA GPU")
    return lib.cuda


def _no_inputs():
    return ()


class OnGpu:
    """A timed call on GPU tensors made on the first (untimed) call: `make(lib)` gives the
    tensors, `step(lib, *tensors)` the work."""

    def __init__(self, make, step):
        self.make, self.step, self.tensors = make, step, {}

    def __call__(self, lib):
        cuda = _cuda(lib)
        tensors = self.tensors.get(lib.__name__)
        if tensors is None:
            tensors = self.tensors[lib.__name__] = self.make(lib)
        self.step(lib, *tensors)
        cuda.synchronize()


def _matmul_inputs(lib):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((MATMUL_N, MATMUL_N), dtype=np.float32) for _ in range(2))
    return tuple(lib.from_numpy(x).to("cuda").half() for x in (a, b))


def _small_inputs(lib):
    return (lib.ones(100, device="cuda"),)


def _mlp_inputs(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(
        lib.nn.Linear(1024, 4096), lib.nn.ReLU(), lib.nn.Linear(4096, 1024)
    ).to("cuda")
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.randn(256, 1024, device="cuda")
    return model, opt, x


def _mlp_step(lib, model, opt, x):
    opt.zero_grad()
    (model(x) ** 2).mean().backward()
    opt.step()


CASES = [
    Case(
        "a @ b (cuda, float16; 1.1 TFLOP per call)",
        f"{MATMUL_N}x{MATMUL_N} float16",
        _no_inputs,
        OnGpu(_matmul_inputs, lambda lib, a, b: a @ b),
        goal=faster_than_torch(1.25),
        repeats=5,
    ),
    Case(
        "x + 1 (cuda)",
        "100 float32",
        _no_inputs,
        OnGpu(_small_inputs, lambda lib, x: x + 1),
        goal=faster_than_torch(3.0),
    ),
    Case(
        "MLP step: Adam, 1024-4096-1024 (cuda)",
        "batch 256 float32",
        _no_inputs,
        OnGpu(_mlp_inputs, _mlp_step),
        goal=faster_than_torch(2.0),
        repeats=5,
    ),
]
