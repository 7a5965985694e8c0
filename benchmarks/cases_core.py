"""Core tensor benchmarks (issue 2): the per-op overhead on small tensors, the throughput on
large ones, and what ``import tocha`` costs.

Targets: on small tensors tocha is at least as fast as PyTorch; on large ones it keeps 95% of
NumPy's throughput; ``import tocha`` costs at most 50 ms more than ``import numpy``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
from harness import Case, child_cpu_time, extra_over_numpy, faster_than_torch, numpy_throughput


def floats(*shapes):
    """A setup making seeded standard-normal float32 arrays of these shapes."""

    def setup():
        rng = np.random.default_rng(0)
        return tuple(rng.standard_normal(shape, dtype=np.float32) for shape in shapes)

    return setup


def no_inputs():
    """The setup of a case that takes no inputs."""
    return ()


# The timed calls: each takes the library module first, then the inputs.
def add(lib, a, b):
    return a + b


def mul(lib, a, b):
    return a * b


def total(lib, a):
    return a.sum()


def relu(lib, a):
    return lib.relu(a)


def numpy_relu(np, a):
    return np.maximum(a, 0)


def matmul(lib, a, b):
    return a @ b


def fresh_python(statement: str):
    """A callable running `statement` in a fresh interpreter, for cases timed by
    `child_cpu_time` (start-up and imports, not the waits of a busy machine). Bytecode
    caching is on, as for a user (PYTHONDONTWRITEBYTECODE would time the compiler)."""
    command = [sys.executable, "-c", statement]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached = []

    def run(lib):
        if not cached:  # the first run writes the bytecode caches; only later runs count
            subprocess.run(command, check=True, env=env)
            cached.append(True)
        subprocess.run(command, check=True, env=env)

    return run


SMALL = "100 float32"
CASES = [
    Case("a + b", SMALL, floats(100, 100), add, numpy=add, goal=faster_than_torch()),
    Case("a * b", SMALL, floats(100, 100), mul, numpy=mul, goal=faster_than_torch()),
    Case("a.sum()", SMALL, floats(100), total, numpy=total, goal=faster_than_torch()),
    Case("tocha.relu(a)", SMALL, floats(100), relu, numpy=numpy_relu, goal=faster_than_torch()),
    Case(
        "a @ b",
        "8x8 float32",
        floats((8, 8), (8, 8)),
        matmul,
        numpy=matmul,
        goal=faster_than_torch(),
    ),
    Case("a + b", "10M float32", floats(10**7, 10**7), add, numpy=add, goal=numpy_throughput()),
    Case(
        "a @ b",
        "1024x1024 float32",
        floats((1024, 1024), (1024, 1024)),
        matmul,
        numpy=matmul,
        goal=numpy_throughput(),
    ),
    Case(
        "import tocha",
        "fresh python",
        no_inputs,
        fresh_python("import tocha"),
        torch=fresh_python("import torch"),
        numpy=fresh_python("import numpy"),
        loops=1,
        repeats=10,
        clock=child_cpu_time,
        goal=extra_over_numpy(0.050),
    ),
]
