"""A `FusedSpec` run with NumPy ufuncs: the CPU fallback without numba, and the reference the
numba generator is tested against.

Each step is one ufunc call or a short sequence of them writing into one buffer; a buffer
whose value is dead (no later step reads it and the spec does not return it) is handed to a
later step of the same shape and dtype through ``out=``, so a chain of n steps allocates far
fewer than n temporaries. Everything runs under ``np.errstate(all="ignore")``, as tocha's
kernels do (PyTorch is silent on overflow and invalid values).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._spec import FusedSpec, Step

__all__ = ["compile_numpy", "iteration_shape", "reduce_array", "reduced_dims"]

_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "atan2": np.arctan2,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
}
_UNARY = {
    "neg": np.negative,
    "abs": np.absolute,
    "square": np.square,
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "sign": np.sign,
    "logical_not": np.logical_not,
}
_BOOL_RESULT = frozenset("eq ne lt le gt ge logical_not logical_and logical_or".split())
# Ops that keep an integer compute dtype; the others take integers converted to compute, then
# to float64 (NumPy's rule for its float ufuncs).
_INT_CLOSED = frozenset(
    """add sub mul pow maximum minimum neg abs square relu leaky_relu clamp floor ceil trunc
    sign where cast""".split()
)
# Ops whose kernel reads its arguments only before its first write into ``out``, so that
# ``out`` may be the buffer of an argument that dies at this step.
_ALIAS_SAFE = (
    frozenset(_BINARY)
    | frozenset(_UNARY)
    | {
        "reciprocal",
        "rsqrt",
        "sigmoid",
        "relu",
        "clamp",
    }
)
_SQRT_HALF = 0.7071067811865476
_TANH_K = 0.7978845608028654
_TANH_C = 0.044715


def _erf(x: np.ndarray) -> np.ndarray:
    from tocha.library import REGISTRY

    return REGISTRY["erf"].generic(np)(x)


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind in "fc"


def _kernel(step: Step) -> Callable:
    """``fn(args, out) -> array``: the step's value in its natural dtype (bool for the
    comparisons, compute otherwise), written into ``out`` when ``out`` is given."""
    op = step.op
    if op in _BINARY:
        ufunc = _BINARY[op]
        return lambda a, out: ufunc(a[0], a[1], out=out)
    if op in _UNARY:
        ufunc = _UNARY[op]
        return lambda a, out: ufunc(a[0], out=out)
    return _COMPOSITE[op]


def _reciprocal(a, out):
    return np.true_divide(a[0].dtype.type(1), a[0], out=out)


def _rsqrt(a, out):
    out = np.sqrt(a[0], out=out)
    return np.true_divide(out.dtype.type(1), out, out=out)


def _sigmoid(a, out):
    out = np.negative(a[0], out=out)
    np.exp(out, out=out)
    one = out.dtype.type(1)
    np.add(out, one, out=out)
    return np.true_divide(one, out, out=out)


def _silu(a, out):
    (x,) = a
    out = np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, out.dtype.type(1), out=out)
    return np.true_divide(x, out, out=out)


def _relu(a, out):
    out = np.maximum(a[0], a[0].dtype.type(0), out=out)
    # maximum(-0.0, 0) may keep the sign of zero; relu's result is +0 (NaN stays NaN).
    return np.add(out, out.dtype.type(0), out=out)


def _gelu(a, out):
    (x,) = a
    out = np.multiply(x, x.dtype.type(_SQRT_HALF), out=out)
    out[...] = _erf(out)
    np.add(out, out.dtype.type(1), out=out)
    np.multiply(out, x, out=out)
    return np.multiply(out, out.dtype.type(0.5), out=out)


def _gelu_tanh(a, out):
    (x,) = a
    t = x.dtype.type
    out = np.multiply(x, t(_TANH_C), out=out)
    np.multiply(out, x, out=out)
    np.multiply(out, x, out=out)
    np.add(out, x, out=out)
    np.multiply(out, t(_TANH_K), out=out)
    np.tanh(out, out=out)
    np.add(out, t(1), out=out)
    np.multiply(out, x, out=out)
    return np.multiply(out, t(0.5), out=out)


def _leaky_relu(a, out):
    x, slope = a
    out = np.multiply(x, slope, out=out)
    np.copyto(out, x, where=x > 0)
    return out


def _clamp(a, out):
    x, low, high = a
    if low is None and high is None:
        if out is None:
            return x.copy()
        out[...] = x
        return out
    if low is not None:
        x = out = np.maximum(x, low, out=out)
    if high is not None:
        x = out = np.minimum(x, high, out=out)
    return out


def _where(a, out):
    return np.where(a[0], a[1], a[2])


def _cast(a, out):
    return a[0]


def _erf_step(a, out):
    return _erf(a[0])


_COMPOSITE = {
    "reciprocal": _reciprocal,
    "rsqrt": _rsqrt,
    "sigmoid": _sigmoid,
    "silu": _silu,
    "relu": _relu,
    "gelu": _gelu,
    "gelu_tanh": _gelu_tanh,
    "leaky_relu": _leaky_relu,
    "clamp": _clamp,
    "where": _where,
    "cast": _cast,
    "erf": _erf_step,
}


def _natural_dtype(step: Step) -> np.dtype:
    compute = np.dtype(step.compute)
    if step.op in _BOOL_RESULT:
        return np.dtype(bool)
    if step.op == "cast" or _is_float(compute) or step.op in _INT_CLOSED:
        return compute
    return np.dtype(np.float64)


def _integer_identity(step: Step) -> bool:
    """floor/ceil/trunc of integers and sign of booleans return their argument."""
    kind = np.dtype(step.compute).kind
    return (step.op in ("floor", "ceil", "trunc") and kind in "iub") or (
        step.op == "sign" and kind == "b"
    )


def _convert(value, dtype: np.dtype):
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return value.astype(dtype, copy=False)
    return dtype.type(value)


def iteration_shape(spec: FusedSpec, arrays: tuple) -> tuple[int, ...]:
    """The broadcast shape of the spec's inputs, with a clear error on a wrong call."""
    if len(arrays) != len(spec.inputs):
        raise TypeError(f"fused kernel takes {len(spec.inputs)} inputs ({len(arrays)} given)")
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays))
    except ValueError:
        shapes = ", ".join(str(list(np.shape(a))) for a in arrays)
        raise RuntimeError(f"fused kernel inputs do not broadcast together: {shapes}") from None


def reduced_dims(reduce, ndim: int) -> tuple[int, ...]:
    """`reduce`'s dims as sorted non-negative ints (all of them when it names none)."""
    if not reduce.dims:
        return tuple(range(ndim))
    return tuple(sorted({d % ndim for d in reduce.dims})) if ndim else ()


def reduce_array(value: np.ndarray, reduce) -> np.ndarray:
    """`reduce` (a `Reduce`) applied to `value` with NumPy: sums accumulate in its dtype."""
    dims = reduced_dims(reduce, value.ndim)
    dtype = np.dtype(reduce.dtype)
    value = value.astype(dtype, copy=False)
    if reduce.op in ("amax", "amin"):
        for d in dims:
            if value.shape[d] == 0:
                raise RuntimeError(
                    f"{reduce.op}(): Expected reduction dim {d} to have non-zero size."
                )
        fn = np.max if reduce.op == "amax" else np.min
        return np.asarray(fn(value, axis=dims, keepdims=reduce.keepdim))
    with np.errstate(all="ignore"):
        total = np.asarray(np.sum(value, axis=dims, dtype=dtype, keepdims=reduce.keepdim))
        if reduce.op == "mean":
            count = int(np.prod([value.shape[d] for d in dims]))
            total = np.asarray(np.true_divide(total, dtype.type(count), dtype=dtype))
    return total


class _Step:
    """A step ready to run: its kernel, how its arguments are read and converted, and which
    values die once it has run."""

    __slots__ = ("name", "kernel", "args", "compute", "work", "dtype", "dying", "alias_safe")

    def __init__(self, step: Step, dying: tuple) -> None:
        self.name = step.name
        compute = self.compute = np.dtype(step.compute)
        natural = _natural_dtype(step)
        self.work = natural if natural != compute and step.op not in _BOOL_RESULT else None
        self.dtype = np.dtype(step.dtype)
        self.dying = dying
        self.alias_safe = step.op in _ALIAS_SAFE and natural == self.dtype
        if _integer_identity(step):
            self.kernel = lambda a, out: a[0].copy()
            self.alias_safe = False
        else:
            self.kernel = _kernel(step)
        # (name, None) reads a value; (None, constant) is a constant already converted.
        args = []
        for pos, arg in enumerate(step.args):
            target = np.dtype(bool) if step.op == "where" and pos == 0 else compute
            if isinstance(arg, str):
                args.append((arg, target))
            else:
                value = None if arg is None else _convert(target.type(arg), self.work or target)
                args.append((None, value))
        self.args = args

    def run(self, values: dict, pool: dict, owned: set) -> None:
        args = []
        for name, target in self.args:
            if name is None:
                args.append(target)
                continue
            value = values[name].astype(target, copy=False)
            if self.work is not None and target is self.compute:
                value = value.astype(self.work, copy=False)
            args.append(value)
        out = None
        if self.alias_safe:
            _release(pool, values, owned, self.dying)
            shapes = {a.shape for a in args if isinstance(a, np.ndarray)}
            shape = shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(*shapes)
            free = pool.get((shape, self.dtype))
            out = free.pop() if free else None
        result = self.kernel(args, out)
        value = np.asarray(result).astype(self.dtype, copy=False)
        values[self.name] = value
        if out is not None or value is not result:
            owned.add(self.name)
        elif any(value is a for a in args):
            # the step returned an argument (a cast to its own dtype): the buffer lives on
            # under this step's name, and is not handed out when the argument dies.
            for name in self.dying:
                if values.get(name) is value:
                    del values[name]
                    if name in owned:
                        owned.discard(name)
                        owned.add(self.name)
        elif value.base is None:
            owned.add(self.name)
        if not self.alias_safe:
            _release(pool, values, owned, self.dying)


class _Plan:
    """The static part of a run: the steps and what dies after each."""

    def __init__(self, spec: FusedSpec) -> None:
        self.spec = spec
        kept = set(spec.outputs) | {name for name, _ in spec.inputs}
        last_use: dict[str, int] = {}
        for i, step in enumerate(spec.steps):
            for arg in step.args:
                if isinstance(arg, str):
                    last_use[arg] = i
        self.steps = []
        for i, step in enumerate(spec.steps):
            dying = {a for a in step.args if isinstance(a, str) and last_use[a] == i} - kept
            if step.name not in last_use and step.name not in kept:
                dying.add(step.name)
            self.steps.append(_Step(step, tuple(sorted(dying))))
        self.computed = {step.name for step in spec.steps}
        self.dtypes = [np.dtype(d) for _, d in spec.inputs]
        self.names = [name for name, _ in spec.inputs]
        self.shapes: dict[tuple, tuple] = {}

    def run(self, arrays: tuple) -> tuple:
        spec = self.spec
        if len(arrays) != len(self.names):
            iteration_shape(spec, arrays)
        values = {
            name: np.asarray(a).astype(d, copy=False)
            for name, d, a in zip(self.names, self.dtypes, arrays)
        }
        shapes = tuple([v.shape for v in values.values()])
        shape = self.shapes.get(shapes)
        if shape is None:
            if len(self.shapes) >= 64:
                self.shapes.clear()
            shape = self.shapes[shapes] = iteration_shape(spec, arrays)
        pool: dict[tuple, list] = {}
        owned: set[str] = set()
        for step in self.steps:
            step.run(values, pool, owned)
        results = []
        for name in spec.outputs:
            value = values[name]
            if value.shape != shape or not value.flags.c_contiguous or name not in self.computed:
                value = np.ascontiguousarray(np.broadcast_to(value, shape)).copy()
            results.append(value)
        if spec.reduce is not None:
            results[-1] = reduce_array(results[-1], spec.reduce)
        return tuple(results)


def _release(pool: dict, values: dict, owned: set, dying: tuple) -> None:
    for name in dying:
        value = values.pop(name, None)
        if name in owned and isinstance(value, np.ndarray) and value.flags.c_contiguous:
            pool.setdefault((value.shape, value.dtype), []).append(value)


def compile_numpy(spec: FusedSpec) -> Callable[..., tuple]:
    """A callable that runs `spec` with NumPy ufuncs.

    Args:
        spec: the fused kernel.

    Returns:
        ``fn(*arrays) -> tuple`` of one array per name of ``spec.outputs``; the arrays are the
        inputs in ``spec.inputs`` order, broadcastable to one iteration shape.
    """
    plan = _Plan(spec)

    def run(*arrays):
        with np.errstate(all="ignore"):
            return plan.run(arrays)

    run.spec = spec
    return run
