"""Cases for the sweep, generated from an op's signature (`ops.Signature`), seeded by the op's
name so that the same op always gets the same cases.

For each signature: calls over every dtype of `calls.DTYPES` and shapes from 0-d and empty to
3-D with broadcasting partners; transposed and strided inputs; ``out=`` (of the dtype PyTorch
returns, found by a probe); float64 leaves for gradients. Arguments are drawn by kind and
name: a ``dim`` is a valid dimension, an ``index`` a small non-negative int64 tensor, a
``mask`` a bool tensor, a required ``str`` one of PyTorch's documented choices.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np

from tests.fidelity.calls import DTYPES
from tests.fidelity.ops import Param, Signature

SHAPES = ((), (0,), (5,), (3, 4), (2, 3, 4), (0, 3), (4, 1, 3))
DIM_INTS = {"dim", "dim0", "dim1", "dim2", "axis", "start_dim", "end_dim", "source", "destination"}
DIM_LISTS = {"dims", "dim", "axis", "source", "destination"}
SIZE_LISTS = {"size", "shape", "sizes"}
INTS = {
    "k": 1,
    "n": 2,
    "diagonal": 0,
    "offset": 1,
    "groups": 1,
    "num_classes": 3,
    "chunks": 2,
    "sections": 2,
    "split_size": 2,
    "repeats": 2,
    "length": 1,
    "start": 0,
    "step": 1,
    "end": 5,
    "window_length": 5,
    "steps": 4,
    "N": 3,
    "high": 5,
    "low": 0,
    "correction": 1,
    "m": 3,
    "upscale_factor": 1,
    "downscale_factor": 1,
    "bins": 4,
    "minlength": 0,
    "p": 2,
}
NUMBERS = {
    "eps": 1e-5,
    "p": 2.0,
    "alpha": 0.5,
    "beta": 0.5,
    "value": 1.5,
    "min": -0.5,
    "max": 0.5,
    "lambd": 0.5,
    "negative_slope": 0.1,
    "threshold": 0.5,
    "exponent": 2.0,
    "momentum": 0.1,
    "margin": 1.0,
    "end": 5,
    "start": 0,
    "step": 1,
    "low": 0,
    "high": 5,
    "weight": 0.25,
    "min_val": -0.5,
    "max_val": 0.5,
    "tol": 1e-5,
    "rtol": 1e-5,
    "atol": 1e-8,
    "ord": 2,
}
STRINGS = {
    "reduce": "sum",
    "rounding_mode": "floor",
    "ord": "fro",
    "norm": "ortho",
    "mode": "reduced",
    "padding": "same",
    "approximate": "tanh",
    "UPLO": "L",
    "side": "left",
    "equation": "i->i",
    "interpolation": "linear",
    "indexing": "ij",
    "padding_mode": "zeros",
    "reduction": "mean",
    "nonlinearity": "tanh",
    "driver": "gelsd",
    "dtype": "float32",
}
# Optional parameters the sweep sets now and then; the others keep their defaults.
VARIED = {
    "dim",
    "keepdim",
    "dtype",
    "alpha",
    "correction",
    "unbiased",
    "descending",
    "stable",
    "largest",
    "sorted",
    "return_counts",
    "return_inverse",
    "diagonal",
    "offset",
    "inplace",
    "p",
}


def _seed(op: str, salt: int) -> int:
    return zlib.crc32(f"{op}:{salt}".encode())


class Drawer:
    """Draws one call's arguments for a signature, around a main shape and dtype."""

    def __init__(self, rng: np.random.Generator, shape, dtype: str, layout: str, grad: bool):
        self.rng = rng
        self.shape = tuple(shape)
        self.dtype = dtype
        self.layout = layout
        self.grad = grad
        self.tensors = 0

    def seed(self) -> int:
        return int(self.rng.integers(0, 2**31))

    def tensor(self, name: str):
        shape = self.shape
        if self.tensors and self.rng.random() < 0.3 and shape:
            shape = shape[int(self.rng.integers(0, len(shape))) :]
        self.tensors += 1
        if name in ("index", "indices", "idx", "target") and not self.grad:
            if name == "target" and self.dtype not in ("int64",):
                return ("T", shape, self.dtype, "c", self.seed(), "normal")
            return ("T", shape, "int64", "c", self.seed(), "index")
        if name == "mask":
            return ("T", shape, "bool", "c", self.seed(), "normal")
        if self.grad:
            return ("G", shape, self.seed())
        return ("T", shape, self.dtype, self.layout, self.seed(), "normal")

    def dim(self):
        n = max(len(self.shape), 1)
        return int(self.rng.integers(-n, n))

    def value(self, param: Param, factory: bool):
        kind, name = param.kind.rstrip("?"), param.name
        if kind == "tensor":
            return self.tensor(name)
        if kind == "tensors":
            return ("L", (self.tensor(name), self.tensor(name)))
        if kind == "int":
            return ("V", self.dim() if name in DIM_INTS else INTS.get(name, 1))
        if kind == "ints":
            if name in SIZE_LISTS:
                return ("V", (2, 3) if factory else (-1,))
            if name in DIM_LISTS:
                n = len(self.shape)
                if n == 0:
                    return ("V", (0,))
                return ("V", tuple(int(d) for d in self.rng.permutation(n)))
            return ("V", (INTS.get(name, 1),))
        if kind in ("float", "scalar"):
            if name in NUMBERS:
                return ("V", NUMBERS[name])
            return ("V", [0.5, 2, -1.5][int(self.rng.integers(0, 3))])
        if kind == "bool":
            return ("V", bool(self.rng.random() < 0.5))
        if kind == "dtype":
            return ("D", DTYPES[int(self.rng.integers(0, len(DTYPES)))])
        if kind == "str":
            return ("V", STRINGS[name]) if name in STRINGS else None
        return None


def draw_call(op: str, signature: Signature, drawer: Drawer):
    """One case of `op` with `signature`, or None when a required argument can't be drawn."""
    factory = not any(p.kind.startswith("tensor") for p in signature.params)
    args, kwargs = [], []
    positional = True
    for param in signature.params:
        chosen = param.required or (param.name in VARIED and drawer.rng.random() < 0.4)
        if not chosen:
            positional = False
            continue
        spec = drawer.value(param, factory)
        if spec is None:
            if param.required:
                return None
            positional = False
            continue
        if param.required and positional and not param.keyword_only:
            args.append(spec)
        else:
            positional = False
            kwargs.append((param.name, spec))
    if factory and drawer.rng.random() < 0.5 and not any(k == "dtype" for k, _ in kwargs):
        kwargs.append(("dtype", ("D", drawer.dtype)))
    return (op, tuple(args), tuple(kwargs))


def cases_for(
    op: str,
    signatures: list[Signature],
    per_signature: int = 16,
    probe: Callable | None = None,
) -> list:
    """The cases of one op: plain calls over dtypes and shapes, transposed and strided
    inputs, ``out=`` (when `probe` gives PyTorch's result dtype) and float64 gradients."""
    found = []
    in_place = op.endswith("_")
    for number, signature in enumerate(signatures[:3]):
        rng = np.random.default_rng(_seed(op, number))
        for i in range(per_signature):
            dtype = DTYPES[i % len(DTYPES)]
            shape = SHAPES[int(rng.integers(0, len(SHAPES)))]
            found.append(draw_call(op, signature, Drawer(rng, shape, dtype, "c", False)))
        for layout, shape in (("t", (3, 4)), ("s", (2, 3, 4))):
            found.append(draw_call(op, signature, Drawer(rng, shape, "float32", layout, False)))
        if not in_place:
            for shape in ((3, 4), (5,)):
                found.append(draw_call(op, signature, Drawer(rng, shape, "float64", "c", True)))
        if signature.has_out and probe is not None and not in_place and not op.startswith("F."):
            for dtype, shape in (("float32", (3, 4)), ("int64", (5,))):
                case = draw_call(op, signature, Drawer(rng, shape, dtype, "c", False))
                result = probe(case) if case is not None else None
                if result is not None:
                    found.append(case[:2] + (case[2] + (("out", ("O", result)),),))
    unique, seen = [], set()
    for case in found:
        if case is not None and repr(case) not in seen:
            seen.add(repr(case))
            unique.append(case)
    return unique
