"""Linear algebra and FFT benchmarks: a batched solve and SVD, and a large FFT.

Target: each within 1.2x of NumPy's own call (tocha runs NumPy's routine; the rest is the
dispatch and the dtype bookkeeping).
"""

from __future__ import annotations

import numpy as np
from harness import Case, numpy_throughput

BATCH, N = 32, 64


def systems():
    """A batch of well-conditioned 64x64 float32 systems and 8 right-hand sides each."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((BATCH, N, N), dtype=np.float32) + N * np.eye(N, dtype=np.float32)
    return a, rng.standard_normal((BATCH, N, 8), dtype=np.float32)


def matrices():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((BATCH, N, N), dtype=np.float32),)


def signal():
    rng = np.random.default_rng(0)
    return (rng.standard_normal(2**20, dtype=np.float32),)


def solve(lib, a, b):
    return lib.linalg.solve(a, b)


def svd(lib, a):
    return lib.linalg.svd(a)


def fft(lib, x):
    return lib.fft.fft(x)


WITHIN_1_2 = numpy_throughput(1 / 1.2)
CASES = [
    Case("linalg.solve(A, B)", "32x64x64 float32", systems, solve, numpy=solve, goal=WITHIN_1_2),
    Case("linalg.svd(A)", "32x64x64 float32", matrices, svd, numpy=svd, goal=WITHIN_1_2),
    Case("fft.fft(x)", "1M float32", signal, fft, numpy=fft, goal=WITHIN_1_2),
]
