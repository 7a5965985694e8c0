"""Elementwise sweep (issue 27): the common unary and binary ops on 1M float32 elements, each
beside NumPy's fastest equivalent, to find ops whose NumPy path falls off a cliff for common
arguments (``pow(x, 3.0)`` was once 100x ``x * x * x``).

Target: at least 0.8 of the NumPy floor's throughput; ops NumPy lacks (erf, gelu) at most
PyTorch's time.
"""

from __future__ import annotations

import numpy as np
from harness import Case, faster_than_torch, numpy_throughput

SIZE = "1M float32"
N = 10**6


def floats(count: int, positive: bool = False):
    """A setup making `count` seeded float32 arrays of 1M elements (positive ones: in (0.1, 4))."""

    def setup():
        rng = np.random.default_rng(0)
        if positive:
            return tuple(rng.uniform(0.1, 4.0, N).astype(np.float32) for _ in range(count))
        return tuple(rng.standard_normal(N, dtype=np.float32) for _ in range(count))

    return setup


def _numpy_pow(exponent: float):
    """NumPy's fastest ``x ** exponent``: products, a square root and a reciprocal."""
    table = {
        2.0: lambda x: x * x,
        3.0: lambda x: x * x * x,
        0.5: np.sqrt,
        -1.0: lambda x: 1 / x,
        -0.5: lambda x: 1 / np.sqrt(x),
        1.5: lambda x: x * np.sqrt(x),
    }
    fn = table[exponent]
    return lambda np, x: fn(x)


def _pow(exponent):
    return lambda lib, x: lib.pow(x, exponent)


def _unary(name: str):
    return lambda lib, x: getattr(lib, name)(x)


UNARY = [  # tocha/torch name, NumPy's equivalent, positive inputs
    ("exp", np.exp, False),
    ("log", np.log, True),
    ("sqrt", np.sqrt, True),
    ("rsqrt", lambda x: 1 / np.sqrt(x), True),
    ("reciprocal", np.reciprocal, True),
    ("abs", np.abs, False),
    ("neg", np.negative, False),
    ("square", np.square, False),
    ("sin", np.sin, False),
    ("cos", np.cos, False),
    ("tanh", np.tanh, False),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), False),
    ("relu", lambda x: np.maximum(x, 0), False),
    ("floor", np.floor, False),
    ("round", np.round, False),
    ("sign", np.sign, False),
    ("log1p", np.log1p, True),
    ("expm1", np.expm1, False),
]

BINARY = [  # operator or function, NumPy's equivalent
    ("a - b", lambda lib, a, b: a - b, np.subtract),
    ("a / b", lambda lib, a, b: a / b, np.divide),
    ("maximum(a, b)", lambda lib, a, b: lib.maximum(a, b), np.maximum),
    ("a > b", lambda lib, a, b: a > b, np.greater),
    (
        "where(a > 0, a, b)",
        lambda lib, a, b: lib.where(a > 0, a, b),
        lambda a, b: np.where(a > 0, a, b),
    ),
    ("atan2(a, b)", lambda lib, a, b: lib.atan2(a, b), np.arctan2),
]

THROUGHPUT = numpy_throughput(0.8)
CASES = [
    *(
        Case(
            f"tocha.{name}(x)",
            SIZE,
            floats(1, positive),
            _unary(name),
            numpy=lambda np, x, fn=fn: fn(x),
            goal=THROUGHPUT,
        )
        for name, fn, positive in UNARY
    ),
    *(
        Case(
            f"tocha.pow(x, {e!r})",
            SIZE,
            floats(1, e % 1 != 0 or e < 0),
            _pow(e),
            numpy=_numpy_pow(e),
            goal=THROUGHPUT,
        )
        for e in (2.0, 3.0, 0.5, -1.0, -0.5, 1.5)
    ),
    *(
        Case(name, SIZE, floats(2), fn, numpy=lambda np, a, b, f=f: f(a, b), goal=THROUGHPUT)
        for name, fn, f in BINARY
    ),
    Case("tocha.erf(x)", SIZE, floats(1), _unary("erf"), goal=faster_than_torch()),
    Case(
        "F.gelu(x)",
        SIZE,
        floats(1),
        lambda lib, x: lib.nn.functional.gelu(x),
        goal=faster_than_torch(),
    ),
]
