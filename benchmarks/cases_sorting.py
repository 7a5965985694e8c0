"""Sorting and scattering benchmarks on 1M elements: tocha beside PyTorch, against NumPy's
own call for the same result.

Target: within 1.2x of NumPy (numpy/tocha throughput >= 0.83). ``sort`` returns values and
indices (stable), so its NumPy floor is the call that computes both: a stable ``argsort``
and the gather of the values.
"""

from __future__ import annotations

import numpy as np
from harness import Case, numpy_throughput

N = 10**6
SIZE = "1M float32"


def floats_and_index():
    """1M seeded float32 values and 1M int64 indices into them."""
    rng = np.random.default_rng(0)
    return rng.standard_normal(N, dtype=np.float32), rng.integers(0, N, N)


def floats():
    return floats_and_index()[:1]


def sort(lib, x):
    return lib.sort(x)


def numpy_sort(np, x):
    order = np.argsort(x, kind="stable")
    return x[order], order


def topk(lib, x):
    return lib.topk(x, 10)


def numpy_topk(np, x):
    part = np.argpartition(x, N - 10)[N - 10 :]
    order = np.argsort(x[part])[::-1]
    return x[part[order]], part[order]


def gather(lib, x, index):
    return lib.gather(x, 0, index)


def numpy_gather(np, x, index):
    return np.take_along_axis(x, index, 0)


def scatter_add(lib, x, index):
    return lib.scatter_add(x, 0, index, x)


def numpy_scatter_add(np, x, index):
    out = x.copy()
    np.add.at(out, index, x)
    return out


WITHIN = numpy_throughput(1 / 1.2)
CASES = [
    Case("tocha.sort(x)", SIZE, floats, sort, numpy=numpy_sort, goal=WITHIN, repeats=5),
    Case("tocha.topk(x, 10)", SIZE, floats, topk, numpy=numpy_topk, goal=WITHIN),
    Case("tocha.gather(x, 0, i)", SIZE, floats_and_index, gather, numpy=numpy_gather, goal=WITHIN),
    Case(
        "tocha.scatter_add(x, 0, i, x)",
        SIZE,
        floats_and_index,
        scatter_add,
        numpy=numpy_scatter_add,
        goal=WITHIN,
    ),
]
