"""The CUDA generator: a `FusedSpec` as one generated CUDA C kernel, run through CuPy.

`compile_cupy(spec, xp)` returns a callable that, on each call, picks the kernel *variant*
its arguments need, generates and compiles it once (``xp.RawModule``), and launches it:

- **Elementwise.** One thread per element of the iteration shape (a grid-stride loop) loads
  every input, computes every step in registers and stores the outputs, C-contiguous.
- **Inputs.** Each input is read as a C-contiguous array (a strided one is made contiguous
  first) in one of three ways, chosen per call: *dense* (it has the iteration shape: element
  ``i`` at ``i``), *scalar* (one element, loaded once per thread) or *strided* (broadcast: its
  element strides over the iteration shape, 0 along broadcast dims). Adjacent dims that every
  strided input walks contiguously are merged first, so the index arithmetic runs over as few
  dims as the broadcast needs (none when no input is strided). Sizes and strides are kernel
  arguments, so one variant serves every shape of the same rank.
- **Reductions.** ``sum``, ``mean``, ``amax`` and ``amin`` over all dims or the last dims run
  in the kernel: one block reduces one row (a long row is split over several blocks, whose
  partial results CuPy reduces), computing the elementwise chain for each value it reads;
  the spec's other outputs are stored on the way. Other dims are reduced by CuPy after the
  elementwise kernel.
- **Types.** float32 steps compute in ``float`` (``expf``, ``tanhf``, ...), float64 in
  ``double``; integer and bool steps in their C types (true division and the float-only
  functions in ``double``). ``maximum``, ``minimum``, ``relu``, ``clamp`` and ``amax``/``amin``
  propagate NaN as NumPy does. float16, bfloat16 and complex are declined with
  `NotImplementedError`, for the caller to fall back.

Compiled variants are cached per namespace, spec key and variant (input dtypes and kinds,
rank, index width); each callable also keeps its launch (grid, sizes, strides) per input
shapes and dtypes, so a repeated call costs a lookup, the output allocations and the launch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from numbers import Number

import numpy as np

from ._spec import ELEMENTWISE_OPS, REDUCE_OPS, FusedSpec, Reduce, Step

__all__ = ["FusedCupyKernel", "compile_cupy"]

C_TYPES = {
    "bool": "bool",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "float32": "float",
    "float64": "double",
}
FLOATS = frozenset({"float32", "float64"})
# Ops whose value is not an integer: with an integer or bool `compute` they run in double.
FLOAT_MATH = frozenset(
    """div atan2 reciprocal rsqrt exp exp2 expm1 log log2 log10 log1p sqrt sin cos tan tanh
    sigmoid erf silu gelu gelu_tanh""".split()
)
COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
THREADS = 256  # the largest block, for both kernels
MAX_BLOCKS = 65535
REDUCE_BLOCKS = 1024  # enough blocks to fill a GPU, for rows split across blocks
VALUES_PER_THREAD = 16  # a row is split across blocks only beyond this many per thread
KERNEL = "tocha_fused"
# Below this many elements a kernel indexes with 32-bit ints (64-bit division is slow on a
# GPU); the margin keeps a grid-stride step past the end from overflowing.
NARROW_LIMIT = 2**30
MAX_LAUNCHES = 256  # input shapes remembered per kernel (more: forget them all)

# Device helpers every generated kernel starts with. The comparisons are written so that NaN
# propagates (fmaxf/fminf would drop it).
HELPERS = r"""
template <class T> __device__ T tk_max(T a, T b) { return (a > b || a != a) ? a : b; }
template <class T> __device__ T tk_min(T a, T b) { return (a < b || a != a) ? a : b; }
template <class T> __device__ T tk_relu(T a) { return (a > (T)0 || a != a) ? a : (T)0; }
template <class T> __device__ T tk_sign(T a) {
  return a > (T)0 ? (T)1 : (a < (T)0 ? (T)-1 : a);
}
// a ** b for integers, wrapping on overflow; a negative b gives 0 unless |a| is 1.
__device__ long long tk_ipow(long long a, long long b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  unsigned long long r = 1, base = (unsigned long long)a;
  for (; b; b >>= 1, base *= base)
    if (b & 1) r *= base;
  return (long long)r;
}
"""


def compile_cupy(spec: FusedSpec, xp) -> FusedCupyKernel:
    """The fused kernel of `spec` on CuPy module `xp` (or a stand-in with CuPy's
    ``RawModule``, ``empty``, ``sum``...): a callable taking the input arrays in
    ``spec.inputs`` order (any strides, broadcastable to one iteration shape ``S``) and
    returning one C-contiguous array per name of ``spec.outputs``, each of shape ``S``,
    except the last one when ``spec.reduce`` is set, which is reduced over its dims.

    Raises `NotImplementedError` for what it does not generate (float16, bfloat16 or complex
    values, numbers that are not real) and `ValueError` for a malformed spec."""
    _check(spec)
    return FusedCupyKernel(spec, xp)


@dataclass(frozen=True)
class Variant:
    """What one generated kernel is specialized for: the inputs' dtypes, how each is read
    (``"dense"``, ``"scalar"`` or ``"strided"``), the rank of the strided reads, whether the
    kernel reduces the last output, and whether it indexes with 64-bit ints."""

    dtypes: tuple[str, ...]
    kinds: tuple[str, ...]
    ndim: int
    reduces: bool
    wide: bool

    @property
    def index(self) -> str:
        """The C type of the kernel's indices, sizes and strides."""
        return "long long" if self.wide else "int"


# Compiled kernels of every namespace: (namespace, spec key, variant) -> function.
_FUNCTIONS: dict = {}


class FusedCupyKernel:
    """The callable `compile_cupy` returns (see there). What a call needs beyond its arrays
    (kernel, grid, sizes and strides) is worked out once per input shapes and dtypes."""

    def __init__(self, spec: FusedSpec, xp):
        self.spec, self.xp = spec, xp
        self.key = spec.key()
        # The elementwise kernel does not depend on the reduction: specs that differ only in
        # one CuPy reduces after it share it.
        self.map_key = replace(spec, reduce=None).key()
        self._launches: dict = {}  # ((shape, dtype) of each input) -> _Launch

    def __call__(self, *arrays):
        xp = self.xp
        arrays = tuple(
            a if isinstance(a, xp.ndarray) and a.flags.c_contiguous else _contiguous(xp, a)
            for a in arrays
        )
        signature = tuple((a.shape, a.dtype) for a in arrays)
        launch = self._launches.get(signature)
        if launch is None:
            if len(self._launches) >= MAX_LAUNCHES:
                self._launches.clear()
            launch = self._launches[signature] = self._launch(signature)
        return launch(xp, arrays)

    def source(self, *arrays) -> str:
        """The CUDA source of the kernel that a call with `arrays` runs (for logs)."""
        xp = self.xp
        arrays = [_contiguous(xp, a) for a in arrays]
        layout = _Layout(self.spec, tuple((a.shape, a.dtype) for a in arrays))
        return generate_source(self.spec, layout.variant)

    def _launch(self, signature) -> _Launch:
        layout = _Layout(self.spec, signature)
        variant, n, shape = layout.variant, layout.n, layout.shape
        dtypes = [
            np.dtype(_output_dtype(self.spec, name, variant.dtypes)) for name in self.spec.outputs
        ]
        index = np.int64 if variant.wide else np.int32
        strides = tuple(index(v) for v in layout.index_args)
        if layout.reduced is None:
            fn = self._function(self.map_key, variant) if n else None
            threads = _block(n)
            grid = (min(max(-(-n // threads), 1), MAX_BLOCKS),)
            tail = (index(n), *strides)
            return _Launch(fn, grid, (threads,), tail, shape, dtypes, None, self.spec.reduce)
        reduce, dims = self.spec.reduce, layout.reduced
        inner = math.prod(shape[len(shape) - len(dims) :])
        outer = n // inner
        threads = _block(inner)
        chunks = max(1, min(-(-inner // (threads * VALUES_PER_THREAD)), REDUCE_BLOCKS // outer))
        tasks = outer * chunks
        if reduce.keepdim:
            out_shape = tuple(1 if d in dims else s for d, s in enumerate(shape))
        else:
            out_shape = shape[: len(shape) - len(dims)]
        rows = _Rows(reduce.op, np.dtype(reduce.dtype), outer, chunks, inner, out_shape)
        tail = (index(inner), index(chunks), index(tasks), *strides)
        fn = self._function(self.key, variant)
        grid = (min(tasks, MAX_BLOCKS),)
        return _Launch(fn, grid, (threads,), tail, shape, dtypes[:-1], rows, None)

    def _function(self, key: str, variant: Variant):
        cache_key = (self.xp, key, variant)
        fn = _FUNCTIONS.get(cache_key)
        if fn is None:
            module = self.xp.RawModule(code=generate_source(self.spec, variant))
            fn = _FUNCTIONS[cache_key] = module.get_function(KERNEL)
        return fn


class _Layout:
    """How a call with inputs of `signature` ((shape, dtype) pairs) runs: the iteration
    shape and size, the kernel variant, the sizes and strides it takes, and the dims the kernel
    reduces (None: none, CuPy reduces after it if the spec reduces)."""

    def __init__(self, spec: FusedSpec, signature):
        if len(signature) != len(spec.inputs):
            raise TypeError(
                f"fused kernel takes {len(spec.inputs)} inputs but {len(signature)} were given"
            )
        dtypes = tuple(dtype.name for _, dtype in signature)
        for dtype in dtypes:
            _c_type(dtype)
        shapes = [s for s, _ in signature]
        self.shape = shape = tuple(np.broadcast_shapes(*shapes))
        self.n = n = math.prod(shape)
        kinds, sizes, strides = _layout(shapes, shape, n)
        self.index_args = (*sizes, *(v for walk in strides for v in walk))
        self.reduced = None
        if spec.reduce is not None and n:
            dims = _reduced_dims(spec.reduce, len(shape))
            if dims == tuple(range(len(shape) - len(dims), len(shape))):
                self.reduced = dims
        wide = n >= NARROW_LIMIT
        self.variant = Variant(dtypes, kinds, len(sizes), self.reduced is not None, wide)


@dataclass(frozen=True)
class _Rows:
    """A reduction in the kernel: `outer` rows of `inner` values, each split over `chunks`
    blocks, reduced by `op` in `dtype` to an array of `shape`."""

    op: str
    dtype: np.dtype
    outer: int
    chunks: int
    inner: int
    shape: tuple[int, ...]


@dataclass(frozen=True)
class _Launch:
    """One call's kernel `fn` (None: nothing to compute) on `grid` x `block` threads, the
    arguments after the arrays, the iteration shape, the dtypes of the arrays it stores,
    `rows` if it reduces, and the reduction CuPy does `after` it, if any."""

    fn: Callable | None
    grid: tuple[int]
    block: tuple[int]
    tail: tuple
    shape: tuple[int, ...]
    dtypes: tuple
    rows: _Rows | None
    after: Reduce | None

    def __call__(self, xp, arrays) -> tuple:
        outputs = tuple(xp.empty(self.shape, dtype=d) for d in self.dtypes)
        rows = self.rows
        if rows is None:
            if self.fn is not None:
                self.fn(self.grid, self.block, (*arrays, *outputs, *self.tail))
            return outputs if self.after is None else _reduce_after(xp, outputs, self.after)
        partial = xp.empty((rows.outer * rows.chunks,), dtype=rows.dtype)
        self.fn(self.grid, self.block, (*arrays, *outputs, partial, *self.tail))
        if rows.chunks > 1:
            partial = _reduce_rows(xp, partial.reshape(rows.outer, rows.chunks), rows)
        return (*outputs, partial.reshape(rows.shape))


# -- per-call layout ------------------------------------------------------------------------
def _contiguous(xp, a):
    if not isinstance(a, xp.ndarray):
        a = xp.asarray(a)
    return a if a.flags.c_contiguous else xp.ascontiguousarray(a)


def _block(n: int) -> int:
    """A power-of-two block of 32 to `THREADS` threads for `n` values."""
    threads = 32
    while threads < n and threads < THREADS:
        threads *= 2
    return threads


def _layout(shapes, shape, n):
    """(kinds, sizes, strides): how each input (of `shapes`, C-contiguous) is read over
    iteration `shape` of `n` elements, and the merged dims of the strided reads with each
    strided input's element strides over them."""
    sizes_in = [math.prod(s) for s in shapes]
    kinds = tuple(
        "dense" if size == n else "scalar" if size == 1 else "strided" for size in sizes_in
    )
    walks = [_element_strides(s, shape) for s, k in zip(shapes, kinds) if k == "strided"]
    sizes: list[int] = []
    strides: list[list[int]] = [[] for _ in walks]
    if walks:
        for d, size in enumerate(shape):
            if size == 1:
                continue
            if sizes and all(s[-1] == w[d] * size for s, w in zip(strides, walks)):
                sizes[-1] *= size
                for s, w in zip(strides, walks):
                    s[-1] = w[d]
                continue
            sizes.append(size)
            for s, w in zip(strides, walks):
                s.append(w[d])
    return kinds, sizes, strides


def _element_strides(in_shape, shape) -> list[int]:
    """The element strides of a C-contiguous array of `in_shape` broadcast to `shape`."""
    strides = [0] * len(shape)
    step = 1
    for d in range(1, len(in_shape) + 1):
        size = in_shape[-d]
        if size != 1:
            strides[-d] = step
        step *= size
    return strides


def _output_dtype(spec: FusedSpec, name: str, dtypes) -> str:
    for step in spec.steps:
        if step.name == name:
            return step.dtype
    return dtypes[[n for n, _ in spec.inputs].index(name)]


def _reduced_dims(reduce: Reduce, ndim: int) -> tuple[int, ...]:
    if not reduce.dims or ndim == 0:
        return tuple(range(ndim))
    return tuple(sorted({d % ndim for d in reduce.dims}))


def _reduce_rows(xp, partial, rows: _Rows):
    """The partial results of rows split across blocks, reduced along axis 1."""
    if rows.op == "amax":
        return xp.max(partial, axis=1)
    if rows.op == "amin":
        return xp.min(partial, axis=1)
    total = xp.sum(partial, axis=1, dtype=rows.dtype)
    if rows.op == "mean":
        total = (total / rows.inner).astype(rows.dtype, copy=False)
    return total


def _reduce_after(xp, outputs: tuple, reduce: Reduce) -> tuple:
    """`outputs` with the last one reduced by `xp` (dims the kernel does not reduce)."""
    last = outputs[-1]
    dims = _reduced_dims(reduce, last.ndim)
    if reduce.op in ("sum", "mean"):
        fn = xp.sum if reduce.op == "sum" else xp.mean
        value = fn(last, axis=dims, dtype=reduce.dtype, keepdims=reduce.keepdim)
    else:
        fn = xp.max if reduce.op == "amax" else xp.min
        value = fn(last.astype(reduce.dtype, copy=False), axis=dims, keepdims=reduce.keepdim)
    return (*outputs[:-1], xp.ascontiguousarray(xp.asarray(value, dtype=reduce.dtype)))


# -- checking a spec ------------------------------------------------------------------------
def _c_type(dtype: str) -> str:
    c_type = C_TYPES.get(str(dtype))
    if c_type is None:
        raise NotImplementedError(f"compile_cupy: no CUDA code generated for dtype {dtype}")
    return c_type


def _check(spec: FusedSpec) -> None:
    known = set()
    for name, dtype in spec.inputs:
        _c_type(dtype)
        known.add(name)
    for step in spec.steps:
        if step.op not in ELEMENTWISE_OPS:
            raise ValueError(f"compile_cupy: unknown elementwise op {step.op!r}")
        _c_type(step.dtype)
        _c_type(step.compute)
        for arg in step.args:
            if isinstance(arg, str):
                if arg not in known:
                    raise ValueError(f"compile_cupy: step {step.name!r} reads unknown {arg!r}")
            elif arg is None:
                if step.op != "clamp":
                    raise ValueError(f"compile_cupy: step {step.name!r} has a None argument")
            elif not isinstance(arg, (Number, np.bool_)) or isinstance(
                arg, (complex, np.complexfloating)
            ):
                raise NotImplementedError(f"compile_cupy: no CUDA literal for {arg!r}")
        known.add(step.name)
    if not spec.outputs:
        raise ValueError("compile_cupy: a fused kernel needs at least one output")
    for name in spec.outputs:
        if name not in known:
            raise ValueError(f"compile_cupy: unknown output {name!r}")
    if spec.reduce is not None:
        if spec.reduce.op not in REDUCE_OPS:
            raise ValueError(f"compile_cupy: unknown reduction {spec.reduce.op!r}")
        _c_type(spec.reduce.dtype)


# -- generating the source ------------------------------------------------------------------
def generate_source(spec: FusedSpec, variant: Variant) -> str:
    """The CUDA C source of `spec`'s kernel `tocha_fused` for `variant`."""
    body = _Body(spec, variant)
    if variant.reduces:
        return HELPERS + _reduce_kernel(body, spec.reduce)
    return HELPERS + _map_kernel(body)


class _Body:
    """The per-element code of a kernel: offsets, loads, steps and stores."""

    def __init__(self, spec: FusedSpec, variant: Variant):
        self.spec, self.variant = spec, variant
        self.types: dict[str, str] = {}  # value name -> dtype
        self.names: dict[str, str] = {}  # spec name -> C variable
        self.stored = spec.outputs[:-1] if variant.reduces else spec.outputs
        self.strided = [k for k, kind in enumerate(variant.kinds) if kind == "strided"]

    def params(self) -> list[str]:
        params = [f"const {_c_type(dtype)}* x{k}" for k, dtype in enumerate(self.variant.dtypes)]
        for k, name in enumerate(self.stored):
            params.append(f"{_c_type(_output_dtype(self.spec, name, self.variant.dtypes))}* y{k}")
        return params

    def index_params(self) -> list[str]:
        ndim = self.variant.ndim
        index = self.variant.index
        params = [f"{index} d{d}" for d in range(ndim)]
        params += [f"{index} s{k}_{d}" for k in self.strided for d in range(ndim)]
        return params

    def hoisted(self) -> list[str]:
        """Loads of the scalar inputs, once per thread."""
        lines = []
        for k, kind in enumerate(self.variant.kinds):
            if kind == "scalar":
                lines.append(f"const {_c_type(self.variant.dtypes[k])} a{k} = x{k}[0];")
        return lines

    def element(self) -> list[str]:
        """Code that computes element `i`: returns the lines; `last` names the last output's
        C variable afterwards."""
        lines = self._offsets()
        for k, ((name, _), kind) in enumerate(zip(self.spec.inputs, self.variant.kinds)):
            dtype = self.variant.dtypes[k]
            self.names[name], self.types[name] = f"a{k}", dtype
            if kind != "scalar":
                where = "i" if kind == "dense" else f"o{k}"
                lines.append(f"const {_c_type(dtype)} a{k} = x{k}[{where}];")
        for j, step in enumerate(self.spec.steps):
            value = _convert(_step_value(step, self._arg), _value_type(step), step.dtype)
            lines.append(f"const {_c_type(step.dtype)} v{j} = {value};")
            self.names[step.name], self.types[step.name] = f"v{j}", step.dtype
        for k, name in enumerate(self.stored):
            lines.append(f"y{k}[i] = {self.names[name]};")
        self.last = self.names[self.spec.outputs[-1]]
        self.last_type = self.types[self.spec.outputs[-1]]
        return lines

    def _offsets(self) -> list[str]:
        ndim = self.variant.ndim
        if not self.strided:
            return []
        offsets = ", ".join(f"o{k} = 0" for k in self.strided)
        lines = [f"{self.variant.index} r = i, q, {offsets};"]
        for d in range(ndim - 1, 0, -1):
            adds = " ".join(f"o{k} += q * s{k}_{d};" for k in self.strided)
            lines.append(f"q = r % d{d}; r /= d{d}; {adds}")
        lines.append(" ".join(f"o{k} += r * s{k}_0;" for k in self.strided))
        return lines

    def _arg(self, arg, dtype: str) -> str:
        """Step argument `arg` (a name or a number) as a value of `dtype`."""
        if isinstance(arg, str):
            return _convert(self.names[arg], self.types[arg], dtype)
        return _literal(arg, dtype)


def _value_type(step: Step) -> str:
    """The dtype of the C expression `_step_value` writes for `step`."""
    if step.op in COMPARISONS or step.op.startswith("logical_"):
        return "bool"
    if step.op == "pow" and step.compute not in FLOATS:
        return "int64"
    return _math_type(step)


def _math_type(step: Step) -> str:
    """The dtype `step` computes in: its `compute`, or double for float math on integers."""
    if step.compute in FLOATS or step.op not in FLOAT_MATH:
        return step.compute
    return "float64"


def _step_value(step: Step, arg: Callable[[object, str], str]) -> str:
    """The C expression of `step`, reading its arguments through `arg(value, dtype)`."""
    op, t = step.op, _math_type(step)

    def val(index: int) -> str:
        if t == step.compute:
            return arg(step.args[index], t)
        return _convert(arg(step.args[index], step.compute), step.compute, t)

    f = "f" if t == "float32" else ""
    one, half = _literal(1.0, t), _literal(0.5, t)
    if op in ("add", "sub", "mul", "div"):
        return f"({val(0)} {'+-*/'[('add', 'sub', 'mul', 'div').index(op)]} {val(1)})"
    if op in COMPARISONS:
        return f"({val(0)} {COMPARISONS[op]} {val(1)})"
    if op == "logical_not":
        return f"(!{val(0)})"
    if op in ("logical_and", "logical_or"):
        return f"({val(0)} {'&&' if op == 'logical_and' else '||'} {val(1)})"
    if op == "where":
        return f"({arg(step.args[0], 'bool')} ? {val(1)} : {val(2)})"
    if op == "cast":
        return val(0)
    if op == "clamp":
        value = val(0)
        if step.args[1] is not None:
            value = f"tk_max({value}, {val(1)})"
        if step.args[2] is not None:
            value = f"tk_min({value}, {val(2)})"
        return value
    if op in ("maximum", "minimum"):
        return f"tk_{op[:3]}({val(0)}, {val(1)})"
    if op == "relu":
        return f"tk_relu({val(0)})"
    if op == "sign":
        return f"tk_sign({val(0)})"
    if op == "neg":
        return f"(-{val(0)})"
    if op == "square":
        a = val(0)
        return f"({a} * {a})"
    if op == "leaky_relu":
        a = val(0)
        return f"({a} > {_literal(0, t)} ? {a} : {a} * {val(1)})"
    if t not in FLOATS:
        return _integer_value(op, val)
    a = val(0)
    if op in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos",
              "tan", "tanh", "erf", "floor", "ceil", "trunc"):  # fmt: skip
        return f"{op}{f}({a})"
    if op == "abs":
        return f"fabs{f}({a})"
    if op in ("pow", "atan2"):
        return f"{op}{f}({a}, {val(1)})"
    if op == "reciprocal":
        return f"({one} / {a})"
    if op == "rsqrt":
        return f"({one} / sqrt{f}({a}))"
    if op == "sigmoid":
        return f"({one} / ({one} + exp{f}(-{a})))"
    if op == "silu":
        return f"({a} * ({one} / ({one} + exp{f}(-{a}))))"
    if op == "gelu":
        return f"({a} * ({one} + erf{f}({a} / {_literal(math.sqrt(2.0), t)})) * {half})"
    if op == "gelu_tanh":
        k, c = _literal(math.sqrt(2.0 / math.pi), t), _literal(0.044715, t)
        return f"({a} * ({one} + tanh{f}({k} * ({a} + {c} * {a} * {a} * {a}))) * {half})"
    raise AssertionError(op)  # every op of ELEMENTWISE_OPS is handled above


def _integer_value(op: str, val: Callable[[int], str]) -> str:
    """The C expression of integer or bool op `op` (those with no float math)."""
    a = val(0)
    if op == "pow":
        return f"tk_ipow((long long){a}, (long long){val(1)})"
    if op == "abs":
        return f"({a} < 0 ? -{a} : {a})"
    if op in ("floor", "ceil", "trunc"):
        return a
    raise AssertionError(op)


def _convert(expr: str, source: str, target: str) -> str:
    """`expr`, of dtype `source`, converted to `target` as NumPy's ``astype`` does."""
    if source == target:
        return expr
    return f"(({_c_type(target)}){expr})"


def _literal(value, dtype: str) -> str:
    """Python number `value` as a C constant of `dtype`."""
    c_type = _c_type(dtype)
    if dtype == "bool":
        return "true" if value else "false"
    if dtype in FLOATS:
        value = float(value)
        if math.isnan(value):
            text = "__int_as_float(0x7fc00000)"
        elif math.isinf(value):
            text = f"{'-' if value < 0 else ''}__int_as_float(0x7f800000)"
        else:
            text = repr(value)
        return f"(({c_type}){text})"
    if isinstance(value, float) and not math.isfinite(value):
        raise NotImplementedError(f"compile_cupy: {value} has no {dtype} value")
    value = int(value)
    if value == -(2**63):
        return f"(({c_type})(-9223372036854775807LL - 1))"
    return f"(({c_type}){value}{'ULL' if value >= 2**63 else 'LL'})"


def _kernel(params: Sequence[str], prologue: Sequence[str], loop: Sequence[str]) -> str:
    """An ``extern "C"`` kernel named `KERNEL`."""
    lines = [f'extern "C" __global__ void {KERNEL}({", ".join(params)}) {{']
    lines += [f"  {line}" for line in prologue]
    lines += [f"  {line}" for line in loop]
    return "\n".join(lines) + "\n}\n"


def _map_kernel(body: _Body) -> str:
    index = body.variant.index
    params = [*body.params(), f"{index} n", *body.index_params()]
    element = body.element()
    loop = [
        f"for ({index} i = ({index})blockIdx.x * blockDim.x + threadIdx.x; i < n;",
        f"     i += ({index})gridDim.x * blockDim.x) {{",
        *(f"  {line}" for line in element),
        "}",
    ]
    return _kernel(params, body.hoisted(), loop)


def _reduce_kernel(body: _Body, reduce: Reduce) -> str:
    acc_type, dtype, index = _c_type(reduce.dtype), reduce.dtype, body.variant.index
    params = [
        *body.params(),
        f"{acc_type}* partial",
        f"{index} inner",
        f"{index} chunks",
        f"{index} tasks",
        *body.index_params(),
    ]
    element = body.element()
    value = _convert(body.last, body.last_type, dtype)
    if reduce.op in ("sum", "mean"):
        init, combine = _literal(0, dtype), "({a} + {b})"
    else:
        init = _extreme(dtype, reduce.op == "amin")
        combine = "tk_max({a}, {b})" if reduce.op == "amax" else "tk_min({a}, {b})"
    finish = (
        f"chunks == 1 ? ({acc_type})(smem[0] / ({acc_type})inner) : smem[0]"
        if reduce.op == "mean"
        else "smem[0]"
    )
    loop = [
        f"for ({index} task = blockIdx.x; task < tasks; task += gridDim.x) {{",
        f"  {index} row = task / chunks, chunk = task % chunks;",
        f"  {acc_type} acc = {init};",
        f"  for ({index} j = chunk * threads + threadIdx.x; j < inner; j += chunks * threads) {{",
        f"    {index} i = row * inner + j;",
        *(f"    {line}" for line in element),
        f"    acc = ({acc_type}){combine.format(a='acc', b=value)};",
        "  }",
        "  smem[threadIdx.x] = acc;",
        "  __syncthreads();",
        "  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {",
        "    if (threadIdx.x < s) {",
        f"      smem[threadIdx.x] = ({acc_type})"
        f"{combine.format(a='smem[threadIdx.x]', b='smem[threadIdx.x + s]')};",
        "    }",
        "    __syncthreads();",
        "  }",
        f"  if (threadIdx.x == 0) partial[task] = {finish};",
        "  __syncthreads();",
        "}",
    ]
    prologue = [
        f"__shared__ {acc_type} smem[{THREADS}];",
        f"const {index} threads = blockDim.x;",
        *body.hoisted(),
    ]
    return _kernel(params, prologue, loop)


def _extreme(dtype: str, high: bool) -> str:
    """The identity of amin (`high`) or amax over `dtype`: +-inf, or the type's bound."""
    if dtype in FLOATS:
        return _literal(math.inf if high else -math.inf, dtype)
    if dtype == "bool":
        return _literal(high, dtype)
    info = np.iinfo(dtype)
    return _literal(int(info.max if high else info.min), dtype)
