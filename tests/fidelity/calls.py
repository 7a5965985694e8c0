"""Calls as plain data, run on a library (tocha or PyTorch), and their outcomes compared.

A *case* is a tuple ``(op, args, kwargs)``: ``op`` names a public callable (``torch.add``,
``Tensor.add_``, ``F.relu``, ``linalg.norm``, ``fft.fft``, ``special.erf``; ``torch`` stands
for the library under test), ``args`` a tuple of argument specs and ``kwargs`` a tuple of
``(name, spec)`` pairs. An argument spec is a tuple whose first item says what it builds:

- ``("T", shape, dtype, layout, seed, fill)``: a tensor drawn from a NumPy generator seeded by
  ``seed`` (``fill``: ``normal``, ``index`` (small non-negative ints), ``positive``,
  ``nonfinite`` (normal with NaN and infinities), ``far``/``negative`` (ints from 50 to 100,
  or their negatives: indices out of range)); ``layout`` ``c`` (contiguous), ``t`` (the
  transpose of a contiguous tensor) or ``s`` (every other element of the last dimension).
- ``("G", shape, seed)``: a float64 leaf tensor that requires grad.
- ``("O", dtype)``: an empty tensor of ``dtype`` given as ``out=``.
- ``("D", name)``: a dtype; ``("L", specs)``/``("U", specs)``: a list/tuple of specs;
  ``("V", value)``: a plain Python value; ``("X", what)``: an object of another kind
  (``object``, ``meta`` (a tensor on the meta device), ``lambda``).

Running a case gives an *outcome* (plain data, so PyTorch's can be recorded):
``("raise", type name, names of its classes, message, raw)``, ``("tensor", shape, dtype,
values, identity)``, ``("seq", type name, outcomes)``, ``("value", value)`` or
``("other", type name)``; with the float64 gradients of the ``G`` leaves when there are some.
"""

from __future__ import annotations

import builtins
import math
import traceback
import warnings

import numpy as np

DTYPES = ("float32", "float64", "float16", "bfloat16", "complex64", "int32", "int64", "bool")
FLOATING = ("float32", "float64", "float16", "bfloat16")
# Where a tensor's values may differ, by dtype: (relative, absolute) tolerance.
TOLERANCE = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
    "float32": (1e-4, 1e-5),
    "complex64": (1e-4, 1e-5),
    "float64": (1e-7, 1e-9),
    "complex128": (1e-7, 1e-9),
}
# Exceptions that only come from inside an implementation, never as an op's documented error.
INTERNAL_ERRORS = (
    "AttributeError",
    "KeyError",
    "UnboundLocalError",
    "NameError",
    "AssertionError",
    "ZeroDivisionError",
    "RecursionError",
    "FloatingPointError",
    "OverflowError",
    "UFuncTypeError",
    "AxisError",
)


class Library:
    """The namespaces of one library: ``torch`` or ``tocha``, addressed as in case ops."""

    def __init__(self, module):
        self.module = module
        self.name = module.__name__
        nn_functional = __import__(f"{self.name}.nn.functional", fromlist=["_"])
        self.namespaces = {
            "torch": module,
            "F": nn_functional,
            "linalg": module.linalg,
            "fft": module.fft,
            "special": module.special,
        }

    def function(self, op: str):
        """The callable an op names (``Tensor.x`` gives the unbound method)."""
        space, name = op.split(".", 1)
        if space == "Tensor":
            return getattr(self.module.Tensor, name)
        return getattr(self.namespaces[space], name)

    def dtype(self, name: str):
        return getattr(self.module, name)


def _array(shape, dtype: str, seed: int, fill: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if fill in ("far", "negative"):
        values = rng.integers(50, 100, size=shape) * (1 if fill == "far" else -1)
        return values.astype(dtype if dtype in ("int32", "int64") else "int64")
    if fill == "index" or dtype in ("int32", "int64"):
        high = 3 if fill == "index" else 6
        low = 0 if fill in ("index", "positive") else -5
        return rng.integers(low, high, size=shape).astype(dtype if dtype != "bool" else "int64")
    if dtype == "bool":
        return rng.random(shape) < 0.5
    values = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.standard_normal(shape)
    if fill == "positive":
        values = np.abs(values) + 0.1
    elif fill == "nonfinite" and values.size:
        flat = values.reshape(-1)
        picks = rng.integers(0, flat.size, size=min(3, flat.size))
        flat[picks[:1]] = np.nan
        flat[picks[1:2]] = np.inf
        flat[picks[2:3]] = -np.inf
    if dtype in ("float16", "bfloat16", "float32"):
        return values.astype(np.float32)
    return values.astype("complex64" if dtype == "complex64" else values.dtype)


def _tensor(lib: Library, shape, dtype: str, layout: str, seed: int, fill: str):
    shape = tuple(shape)
    if layout == "t" and len(shape) >= 2:
        stored = shape[::-1]
    elif layout == "s" and len(shape) >= 1:
        stored = shape[:-1] + (2 * shape[-1],)
    else:
        stored = shape
    t = lib.module.from_numpy(np.array(_array(stored, dtype, seed, fill), order="C"))
    if dtype == "bool" and t.dtype != lib.module.bool:
        t = t != 0
    if _dtype_name(t.dtype) != dtype:
        t = t.to(lib.dtype(dtype))
    if stored != shape and layout == "t":
        return t.permute(*range(len(shape) - 1, -1, -1))
    if stored != shape:
        return t[..., ::2]
    return t


class Built:
    """A case's arguments built for one library, with the tensors a result is checked against."""

    def __init__(self, lib: Library, args, kwargs):
        self.lib = lib
        self.leaves: list = []
        self.out = None
        self.args = [self.build(a) for a in args]
        self.kwargs = {k: self.build(v) for k, v in kwargs}

    def build(self, spec):
        kind = spec[0]
        lib = self.lib
        if kind == "T":
            return _tensor(lib, *spec[1:])
        if kind == "G":
            leaf = lib.module.from_numpy(_array(tuple(spec[1]), "float64", spec[2], "normal"))
            leaf.requires_grad_(True)
            self.leaves.append(leaf)
            return leaf
        if kind == "O":
            self.out = lib.module.empty(0, dtype=lib.dtype(spec[1]))
            return self.out
        if kind == "D":
            return lib.dtype(spec[1])
        if kind == "L":
            return [self.build(s) for s in spec[1]]
        if kind == "U":
            return tuple(self.build(s) for s in spec[1])
        if kind == "V":
            return spec[1]
        if kind == "X":
            return _other(lib, spec[1])
        raise ValueError(f"unknown argument spec {spec!r}")


def _other(lib: Library, what: str):
    if what == "object":
        return object()
    if what == "lambda":
        return lambda x: x
    if what == "meta":
        return lib.module.empty(2, 3, device="meta")
    if what == "cuda":
        return lib.module.device("cuda")
    raise ValueError(f"unknown object {what!r}")


def _is_tensor(lib: Library, value) -> bool:
    return isinstance(value, lib.module.Tensor)


def _values(lib: Library, t) -> np.ndarray:
    t = t.detach()
    if t.is_complex() or str(t.dtype).endswith("bfloat16") or str(t.dtype).endswith("float16"):
        t = t.resolve_conj() if t.is_complex() else t.to(lib.module.float32)
    if t.device.type != "cpu":
        t = t.cpu()
    try:
        return np.array(t.numpy(), copy=True)
    except RuntimeError:  # PyTorch's zero tensors (gradients) need force=True
        return np.array(t.numpy(force=True), copy=True)


def _dtype_name(dtype) -> str:
    return str(dtype).split(".")[-1]


def describe(lib: Library, value, built: Built | None = None, receiver=None, depth=0):
    """The outcome of a returned value (see the module's docstring)."""
    if _is_tensor(lib, value):
        if value.layout != lib.module.strided or value.device.type == "meta":
            return ("other", f"Tensor({value.layout}, {value.device.type})")
        identity = ""
        if built is not None and built.out is not None and value is built.out:
            identity = "out"
        elif receiver is not None and value is receiver:
            identity = "self"
        shape, dtype = tuple(value.shape), _dtype_name(value.dtype)
        return ("tensor", shape, dtype, _values(lib, value), identity)
    if isinstance(value, (tuple, list)) and depth < 3:
        kind = "list" if isinstance(value, list) else "tuple"
        return ("seq", kind, tuple(describe(lib, v, built, receiver, depth + 1) for v in value))
    if isinstance(value, lib.module.dtype):
        return ("value", "dtype:" + _dtype_name(value))
    if isinstance(value, (bool, int, float, complex, str, type(None))):
        return ("value", value)
    return ("other", type(value).__name__)


def _raw(exc: BaseException) -> bool:
    """Whether an exception comes from inside the implementation (NumPy, or Python's own
    errors in library code) rather than from an argument check."""
    if type(exc).__name__ in INTERNAL_ERRORS:
        return True
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and ("/numpy/" in frames[-1].filename or "ml_dtypes" in frames[-1].filename)


def failure(exc: BaseException):
    names = tuple(c.__name__ for c in type(exc).__mro__ if c is not object)
    message = str(exc).split("\nException raised from ")[0][:300]
    return ("raise", type(exc).__name__, names, message, _raw(exc))


def run(lib: Library, case, seed: int = 0):
    """Run one case on a library, its random generator seeded with `seed`: ``(outcome,
    gradients)``; gradients is None unless the case has ``G`` leaves and a differentiable
    floating result."""
    op, args, kwargs = case
    lib.module.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            built = Built(lib, args, kwargs)
        except Exception as exc:  # a spec the library cannot build (meta device, ...)
            return ("unbuilt", failure(exc)), None
        receiver = built.args[0] if op.startswith("Tensor.") and built.args else None
        try:
            function = lib.function(op)
            result = function(*built.args, **built.kwargs)
            outcome = describe(lib, result, built, receiver)
        except Exception as exc:
            return failure(exc), None
        return outcome, _gradients(lib, built, result)


def _gradients(lib: Library, built: Built, result):
    if not built.leaves or not _is_tensor(lib, result) or not result.requires_grad:
        return None
    if not result.is_floating_point():
        return None
    try:
        weights = np.random.default_rng(0).standard_normal(tuple(result.shape))
        w = lib.module.from_numpy(weights).to(result.dtype)
        grads = lib.module.autograd.grad((result * w).sum(), built.leaves, allow_unused=True)
        return ("grads", tuple(None if g is None else _values(lib, g) for g in grads))
    except Exception as exc:
        return failure(exc)


def _close(want: np.ndarray, got: np.ndarray, dtype: str) -> bool:
    if want.shape != got.shape:
        return False
    if want.dtype.kind in "biu" or dtype in ("bool", "int32", "int64", "uint8", "int8", "int16"):
        return np.array_equal(want, got)
    rtol, atol = TOLERANCE.get(dtype, (1e-4, 1e-5))
    want = want.astype(np.complex128) if want.dtype.kind == "c" else want.astype(np.float64)
    got = got.astype(np.complex128) if got.dtype.kind == "c" else got.astype(np.float64)
    scale = float(np.nanmax(np.abs(want[np.isfinite(want)]), initial=0.0))
    with np.errstate(invalid="ignore"):
        return bool(np.allclose(got, want, rtol=rtol, atol=atol * max(1.0, scale), equal_nan=True))


def _same_exception(want, got) -> bool:
    """torch's class is among tocha's classes, or tocha's is a subclass of the builtin
    exception torch's derives from (torch's own classes, such as LinAlgError, are
    RuntimeErrors and ValueErrors)."""
    if want[1] in got[2]:
        return True
    if want[1] in INTERNAL_ERRORS and got[1] in ("TypeError", "ValueError", "RuntimeError"):
        return True  # PyTorch's own raw error; tocha's clean one is as good
    builtin = next((n for n in want[2] if hasattr(builtins, n)), "Exception")
    return builtin != "Exception" and builtin in got[2]


def classify(want, got, random: bool = False) -> str:
    """The class of agreement between torch's outcome (``want``) and tocha's (``got``),
    each as returned by `run` (outcome, gradients)."""
    (w, wg), (g, gg) = want, got
    if w[0] == "unbuilt" or g[0] == "unbuilt":
        return "unbuilt"
    if w[0] == "raise" and g[0] == "raise":
        if _same_exception(w, g):
            return "agree-raise"
        return "differ-exception-raw" if g[4] else "differ-exception-type"
    if w[0] == "raise":
        return "torch-refuses-tocha-accepts"
    if g[0] == "raise":
        return "tocha-only-failure-raw" if g[4] else "tocha-only-failure"
    verdict = _compare(w, g, random)
    if verdict != "agree":
        return verdict
    if wg is not None and not random and not _same_gradients(wg, gg):
        return "differ-grad"
    return "agree"


def _same_gradients(want, got) -> bool:
    if want[0] == "raise":
        return got is not None and got[0] == "raise"
    if got is None or got[0] == "raise" or len(want[1]) != len(got[1]):
        return False
    for a, b in zip(want[1], got[1]):
        if (a is None) != (b is None):
            return False
        if a is not None and not _close(a, b, "float64"):
            return False
    return True


def _compare(w, g, random: bool) -> str:
    if w[0] != g[0]:
        return "differ-kind"
    if w[0] == "tensor":
        if w[1] != g[1]:
            return "differ-shape"
        if w[2] != g[2]:
            return "differ-dtype"
        if w[4] != g[4]:
            return "differ-identity"
        if random or _close(w[3], g[3], w[2]):
            return "agree"
        return "differ-values"
    if w[0] == "seq":
        if len(w[2]) != len(g[2]):
            return "differ-shape"
        for a, b in zip(w[2], g[2]):
            verdict = _compare(a, b, random)
            if verdict != "agree":
                return verdict
        return "agree"
    if w[0] == "value":
        a, b = w[1], g[1]
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return "agree"
        if isinstance(a, (int, float, complex)) and isinstance(b, (int, float, complex)):
            if type(a) is not type(b) and (isinstance(a, bool) or isinstance(b, bool)):
                return "differ-dtype"
            return "agree" if random or np.isclose(a, b, rtol=1e-4, atol=1e-6) else "differ-values"
        return "agree" if random or a == b else "differ-values"
    return "agree"
