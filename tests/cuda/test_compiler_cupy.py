"""tocha-compiler's CUDA generator (`tocha.compiler._codegen_cupy`): the generated kernels
against a plain NumPy evaluation of the same `FusedSpec`.

Without a GPU the kernels run on the CPU under the emulator of `cuda_emulator` (g++, a
thread per GPU thread) behind a CuPy-like namespace over NumPy; the same cases marked
``cuda`` run through CuPy on a real GPU (skipped without one). The emulated kernels are
built in parallel up front (g++ takes seconds per kernel), then each case runs.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("tocha.compiler", reason="tocha-compiler is not installed")
pytest.importorskip("tocha_cuda", reason="tocha-cuda is not installed (the emulator uses it)")

from tests.cuda import cuda_emulator, fakecupy  # noqa: E402
from tocha.compiler import _codegen_cupy  # noqa: E402
from tocha.compiler._codegen_cupy import _layout, compile_cupy  # noqa: E402
from tocha.compiler._spec import ELEMENTWISE_OPS, FusedSpec, Reduce, Step  # noqa: E402

RNG = np.random.default_rng(0)
TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-12, atol=1e-13)}


# -- a NumPy evaluation of a spec -------------------------------------------------------------
def _erf(a):
    return np.vectorize(math.erf, otypes=[np.float64])(a).astype(a.dtype)


def _gelu(a):
    half, root2 = a.dtype.type(0.5), a.dtype.type(math.sqrt(2.0))
    return a * (1 + _erf(a / root2)) * half


def _gelu_tanh(a):
    k, c = a.dtype.type(math.sqrt(2 / math.pi)), a.dtype.type(0.044715)
    return a * (1 + np.tanh(k * (a + c * a * a * a))) * a.dtype.type(0.5)


def _clamp(a, lo, hi):
    if lo is not None:
        a = np.maximum(a, lo)
    return a if hi is None else np.minimum(a, hi)


NUMPY_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "atan2": np.arctan2,
    "neg": np.negative,
    "abs": np.abs,
    "square": np.square,
    "reciprocal": lambda a: 1 / a,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "erf": _erf,
    "relu": lambda a: np.where((a > 0) | (a != a), a, 0).astype(a.dtype),
    "silu": lambda a: a * (1 / (1 + np.exp(-a))),
    "gelu": _gelu,
    "gelu_tanh": _gelu_tanh,
    "leaky_relu": lambda a, b: np.where(a > 0, a, a * b),
    "clamp": _clamp,
    "sign": np.sign,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "logical_not": np.logical_not,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "where": lambda a, b, c: np.where(a, b, c),
    "cast": lambda a: a,
}
for _name in "exp exp2 expm1 log log2 log10 log1p sqrt sin cos tan tanh".split():
    NUMPY_OPS[_name] = getattr(np, _name)
for _name in "floor ceil trunc".split():
    NUMPY_OPS[_name] = lambda a, name=_name: a if a.dtype.kind in "biu" else getattr(np, name)(a)
FLOAT_MATH = set(
    """div atan2 reciprocal rsqrt exp exp2 expm1 log log2 log10 log1p sqrt sin cos tan tanh
    sigmoid erf silu gelu gelu_tanh""".split()
)


def evaluate(spec: FusedSpec, arrays) -> tuple:
    """What `spec` computes on NumPy `arrays`, step by step as _spec.py says."""
    values = {name: np.asarray(a) for (name, _), a in zip(spec.inputs, arrays)}
    shape = np.broadcast_shapes(*(a.shape for a in values.values()))

    def arg(a, dtype):
        if a is None:
            return None
        return (values[a] if isinstance(a, str) else np.asarray(a)).astype(dtype)

    with np.errstate(all="ignore"):
        for step in spec.steps:
            compute = step.compute
            args = [arg(a, compute) for a in step.args]
            if step.op == "where":
                args[0] = arg(step.args[0], "bool")
            if step.op in FLOAT_MATH and np.dtype(compute).kind in "biu":
                args = [a.astype(np.float64) for a in args]
            values[step.name] = np.asarray(NUMPY_OPS[step.op](*args)).astype(step.dtype)
        outputs = [np.broadcast_to(values[name], shape) for name in spec.outputs]
        reduce = spec.reduce
        if reduce is not None:
            last = outputs[-1].astype(reduce.dtype)
            axis = tuple(d % last.ndim for d in reduce.dims) if reduce.dims else None
            fn = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce.op]
            outputs[-1] = np.asarray(fn(last, axis=axis, keepdims=reduce.keepdim), reduce.dtype)
    return tuple(outputs)


# -- the cases ----------------------------------------------------------------------------------
def _steps(rows) -> tuple[Step, ...]:
    """Steps from ``(name, op, args, dtype[, compute])`` rows (compute defaults to dtype)."""
    return tuple(Step(r[0], r[1], r[2], r[3], r[4] if len(r) > 4 else r[3]) for r in rows)


def _spec(inputs, rows, outputs=None, reduce=None) -> FusedSpec:
    steps = _steps(rows)
    return FusedSpec(tuple(inputs), steps, outputs or tuple(s.name for s in steps), reduce)


def _floats(*shape, dtype=np.float32):
    """Values on a half-integer grid (so that comparisons tie), with NaN and +-inf first."""
    x = (np.round(RNG.standard_normal(shape) * 4) / 2).astype(dtype)
    x.flat[:3] = [np.nan, np.inf, -np.inf]
    return x


def _positive(*shape, dtype=np.float32):
    return (RNG.random(shape) * 3 + 0.05).astype(dtype)


UNARY_X = """exp exp2 expm1 sin cos tan tanh sigmoid erf relu silu gelu gelu_tanh neg abs square
    floor ceil trunc sign""".split()
UNARY_P = "log log2 log10 log1p sqrt rsqrt reciprocal".split()
UNARY = _spec(
    [("x", "float32"), ("p", "float32")],
    [(f"{op}_", op, ("x",), "float32") for op in UNARY_X]
    + [(f"{op}_", op, ("p",), "float32") for op in UNARY_P]
    + [("not_", "logical_not", ("x",), "bool", "float32")],
)

BINARY = _spec(
    [("x", "float32"), ("y", "float32"), ("s", "float32"), ("p", "float32")],
    [
        ("add_", "add", ("x", "y"), "float32"),
        ("sub_", "sub", ("x", "s"), "float32"),
        ("mul_", "mul", ("x", np.float32(2.5)), "float32"),
        ("div_", "div", ("y", "x"), "float32"),
        ("pow_", "pow", ("p", "y"), "float32"),
        ("max_", "maximum", ("x", "y"), "float32"),
        ("min_", "minimum", ("y", "x"), "float32"),
        ("atan2_", "atan2", ("x", "y"), "float32"),
        ("leaky_", "leaky_relu", ("x", 0.01), "float32"),
        ("clamp_", "clamp", ("x", -0.5, 0.5), "float32"),
        ("clamp_hi", "clamp", ("x", None, 0.3), "float32"),
        ("clamp_lo", "clamp", ("x", -math.inf, None), "float32"),
        ("eq_", "eq", ("x", "y"), "bool", "float32"),
        ("ne_", "ne", ("x", "y"), "bool", "float32"),
        ("lt_", "lt", ("x", "y"), "bool", "float32"),
        ("le_", "le", ("x", "y"), "bool", "float32"),
        ("gt_", "gt", ("x", "s"), "bool", "float32"),
        ("ge_", "ge", ("x", 1), "bool", "float32"),
        ("and_", "logical_and", ("gt_", "x"), "bool", "float32"),
        ("or_", "logical_or", ("lt_", "x"), "bool", "float32"),
        ("where_", "where", ("gt_", "x", math.nan), "float32"),
        ("where_lit", "where", (np.True_, "x", 0), "float32"),
        ("to_f64", "cast", ("x",), "float64", "float32"),
        ("to_i32", "cast", ("p",), "int32", "float32"),
        ("to_bool", "cast", ("x",), "bool", "float32"),
        ("chain", "mul", ("add_", "s"), "float32"),
    ],
)

# Integer, bool and float64 steps, mixed input dtypes, several broadcast inputs.
MIXED = _spec(
    [("i", "int64"), ("j", "int32"), ("m", "bool"), ("d", "float64"), ("u", "uint8")],
    [
        ("add_", "add", ("i", "j"), "int64"),
        ("mul_", "mul", ("i", 3), "int64"),
        ("sub_", "sub", ("mul_", "u"), "int64"),
        ("max_", "maximum", ("i", "j"), "int64"),
        ("min_", "minimum", ("i", -2), "int64"),
        ("pow_", "pow", ("i", "j"), "int64"),
        ("abs_", "abs", ("i",), "int64"),
        ("neg_", "neg", ("i",), "int64"),
        ("sign_", "sign", ("i",), "int64"),
        ("floor_", "floor", ("i",), "int64"),
        ("square_", "square", ("j",), "int32"),
        ("relu_", "relu", ("i",), "int64"),
        ("clamp_", "clamp", ("i", -1, 2), "int64"),
        ("i32_", "mul", ("i", "j"), "int32"),
        ("div_", "div", ("i", "j"), "float64", "int64"),
        ("exp_", "exp", ("i",), "float64", "int64"),
        ("gt_", "gt", ("i", "j"), "bool", "int64"),
        ("and_", "logical_and", ("m", "gt_"), "bool"),
        ("or_", "logical_or", ("m", "i"), "bool"),
        ("not_", "logical_not", ("m",), "bool"),
        ("bool_add", "add", ("m", "m"), "bool"),
        ("where_", "where", ("m", "d", "i"), "float64"),
        ("to_i32", "cast", ("d",), "int32", "float64"),
        ("to_f32", "cast", ("i",), "float32", "int64"),
        ("gelu_", "gelu", ("d",), "float64"),
        ("erf_", "erf", ("d",), "float64"),
        ("sigmoid_", "sigmoid", ("d",), "float64"),
        ("pow_f", "pow", ("d", 2.0), "float64"),
        ("atan2_", "atan2", ("d", "i"), "float64"),
        ("leaky_", "leaky_relu", ("d", 0.2), "float64"),
        ("tanh_", "gelu_tanh", ("d",), "float64"),
        ("f32_math", "exp", ("d",), "float32", "float32"),
    ],
)

# The bench's chain ((x*w+b).tanh()*0.5+x).relu(), with its pre-activation kept.
CHAIN_ROWS = [
    ("t0", "mul", ("x", "w"), "float32"),
    ("t1", "add", ("t0", "b"), "float32"),
    ("t2", "tanh", ("t1",), "float32"),
    ("t3", "mul", ("t2", 0.5), "float32"),
    ("t4", "add", ("t3", "x"), "float32"),
    ("t5", "relu", ("t4",), "float32"),
]
CHAIN_INPUTS = [("x", "float32"), ("w", "float32"), ("b", "float32")]


def _chain(reduce=None) -> FusedSpec:
    return _spec(CHAIN_INPUTS, CHAIN_ROWS, ("t1", "t5"), reduce)


INTS = _spec(
    [("i", "int32"), ("j", "int32")],
    [("k", "mul", ("i", "j"), "int32"), ("k2", "add", ("k", 7), "int32")],
    reduce=Reduce("amin", (), False, "int32"),
)


def _chain_args(rows, cols, transposed=False):
    x = _floats(cols, rows).T if transposed else _floats(rows, cols)
    return [x, RNG.standard_normal(cols).astype(np.float32), np.array(0.25, np.float32)]


@dataclass
class Case:
    id: str
    spec: FusedSpec
    args: list


CASES = [
    Case("unary-float32", UNARY, [_floats(4, 40), _positive(4, 40)]),
    Case(
        "binary-broadcast-rows-0d",
        BINARY,
        [_floats(5, 24), _floats(24), np.array(0.5, np.float32), _positive(5, 24)],
    ),
    Case(
        "binary-noncontiguous",
        BINARY,
        [_floats(24, 5).T, _floats(5, 1), np.array(-1.0, np.float32), _positive(5, 24)],
    ),
    Case(
        "mixed-int-bool-float64",
        MIXED,
        [
            RNG.integers(-5, 6, (3, 4, 6)),
            RNG.integers(0, 4, (4, 1)).astype(np.int32),
            RNG.random((3, 1, 6)) > 0.5,
            RNG.standard_normal((3, 4, 6)) * 3,
            np.array(7, np.uint8),
        ],
    ),
    Case("chain", _chain(), _chain_args(6, 30)),
    Case("chain-transposed", _chain(), _chain_args(6, 30, transposed=True)),
    Case(
        "chain-sum-dim0-keepdim", _chain(Reduce("sum", (0,), True, "float32")), _chain_args(6, 30)
    ),
    Case("chain-sum-all-split", _chain(Reduce("sum", (), False, "float32")), _chain_args(3, 3000)),
    Case(
        "chain-amax-last-keepdim",
        _chain(Reduce("amax", (-1,), True, "float32")),
        _chain_args(5, 40),
    ),
    Case(
        "chain-mean-last2",
        _chain(Reduce("mean", (1, 2), False, "float32")),
        [_floats(2, 3, 50), _floats(50), np.array(1.5, np.float32)],
    ),
    Case(
        "ints-amin-all",
        INTS,
        [RNG.integers(-9, 9, (7, 11)).astype(np.int32), RNG.integers(-3, 3, 11).astype(np.int32)],
    ),
    Case("ints-amin-0d", INTS, [np.array(-4, np.int32), np.array(3, np.int32)]),
    Case(
        "chain-empty-sum",
        _chain(Reduce("sum", (-1,), False, "float32")),
        [np.zeros((3, 0), np.float32), np.zeros(0, np.float32), np.array(1.0, np.float32)],
    ),
]


def test_cases_cover_every_elementwise_op_in_float32():
    float32_ops = {s.op for c in CASES for s in c.spec.steps if "float32" in (s.compute, s.dtype)}
    assert float32_ops == set(ELEMENTWISE_OPS)


# -- running them -------------------------------------------------------------------------------
def _emulated_namespace():
    xp = fakecupy.make()
    xp.RawModule = cuda_emulator.RawModule
    return xp


def _cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA GPU")
    except Exception as exc:  # no driver
        pytest.skip(f"no CUDA GPU: {exc}")
    return cupy


@pytest.fixture(scope="module")
def emulated():
    """The emulated namespace, with every case's kernels built (in parallel) up front."""
    if not cuda_emulator.available():
        pytest.skip("g++ is not installed")
    xp = _emulated_namespace()
    sources = {compile_cupy(c.spec, xp).source(*c.args) for c in CASES if _size(c.args)}
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(lambda code: cuda_emulator.RawModule(code=code), sorted(sources)))
    return xp


def _size(args) -> int:
    return math.prod(np.broadcast_shapes(*(np.shape(a) for a in args)))


BACKENDS = ["emulator", pytest.param("cuda", marks=pytest.mark.cuda)]


@pytest.fixture(params=BACKENDS)
def xp(request):
    if request.param == "cuda":
        return _cupy()
    return request.getfixturevalue("emulated")


def _to_xp(xp, a):
    """NumPy array `a` on `xp`, keeping a transposed view transposed."""
    if xp.__name__ == "cupy" and not a.flags.c_contiguous and a.flags.f_contiguous:
        return xp.asarray(a.T).T
    return xp.asarray(a) if xp.__name__ == "cupy" else a


def _check(xp, spec, args):
    got = compile_cupy(spec, xp)(*(_to_xp(xp, a) for a in args))
    want = evaluate(spec, args)
    assert len(got) == len(want) == len(spec.outputs)
    for name, g, w in zip(spec.outputs, got, want):
        g = xp.asnumpy(g)
        assert g.dtype == w.dtype and g.shape == w.shape, (name, g.dtype, g.shape, w.shape)
        assert g.flags.c_contiguous, name
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, **TOL[g.dtype.name], err_msg=name)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_generated_kernel_matches_numpy(xp, case):
    _check(xp, case.spec, case.args)


# -- plumbing -----------------------------------------------------------------------------------
def test_layout_merges_dims_every_strided_input_walks_contiguously():
    x, b = (4, 3, 5), (3, 5)
    assert _layout([x, b], x, 60) == (("dense", "strided"), [4, 15], [[0, 1]])
    kinds, sizes, strides = _layout([(), (4, 1, 1), b], x, 60)
    assert kinds == ("scalar", "strided", "strided")
    assert sizes == [4, 15] and strides == [[1, 0], [0, 1]]
    assert _layout([(1, 3, 1), (4, 1, 5)], x, 60)[1:] == ([4, 3, 5], [[0, 1, 0], [5, 0, 1]])
    assert _layout([x, x], x, 60) == (("dense", "dense"), [], [])


def test_wide_indices_past_narrow_limit(xp, monkeypatch):
    monkeypatch.setattr(_codegen_cupy, "NARROW_LIMIT", 0)
    case = CASES[8]  # a reduction with a broadcast input: every index kind in the kernel
    assert "long long i = row * inner + j;" in compile_cupy(case.spec, xp).source(*case.args)
    _check(xp, case.spec, case.args)


def test_kernels_are_compiled_once_per_variant(emulated):
    built = []

    class Counting(cuda_emulator.RawModule):
        def __init__(self, code, options=()):
            built.append(code)
            super().__init__(code, options)

    xp = _emulated_namespace()
    xp.RawModule = Counting
    spec, args = CASES[4].spec, CASES[4].args
    compile_cupy(spec, xp)(*args)
    compile_cupy(spec, xp)(*args)
    compile_cupy(spec, xp)(*_chain_args(3, 7))  # another shape of the same variant
    assert len(built) == 1
    compile_cupy(_chain(Reduce("sum", (0,), True, "float32")), xp)(*args)  # same map kernel
    assert len(built) == 1
    assert 'extern "C" __global__ void tocha_fused(' in built[0]
    assert "tanhf(" in built[0]


def test_declines_half_precision_and_rejects_bad_specs():
    half = _spec([("x", "float16")], [("y", "neg", ("x",), "float16")])
    with pytest.raises(NotImplementedError, match="float16"):
        compile_cupy(half, _emulated_namespace())
    with pytest.raises(ValueError, match="unknown elementwise op"):
        compile_cupy(_spec([("x", "float32")], [("y", "frobnicate", ("x",), "float32")]), None)
    with pytest.raises(ValueError, match="unknown 'z'"):
        compile_cupy(_spec([("x", "float32")], [("y", "add", ("x", "z"), "float32")]), None)
    with pytest.raises(NotImplementedError, match="no CUDA literal"):
        compile_cupy(_spec([("x", "float32")], [("y", "add", ("x", 1j), "float32")]), None)
    with pytest.raises(TypeError, match="takes 3 inputs but 1 were given"):
        compile_cupy(_chain(), _emulated_namespace())(np.zeros(3, np.float32))
