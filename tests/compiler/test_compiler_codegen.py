"""The CPU code generators of fused kernels: NumPy (`_codegen_numpy`) and numba
(`_codegen_numba`), both checked against a plain NumPy evaluation of each `FusedSpec` step.

numba compiles take a fraction of a second each: the specs below are few and large (one spec
holds every op of a dtype), and compiled callables are shared between tests.
"""

import contextlib
import functools
import math
import os
import subprocess
import sys
import textwrap
import threading
import tracemalloc

import numpy as np
import pytest

import tocha
from tocha.compiler import _codegen_numba, _codegen_numpy
from tocha.compiler._spec import ELEMENTWISE_OPS, FusedSpec, Reduce, Step

HAS_NUMBA = _codegen_numba.available()
needs_numba = pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")
GENERATORS = [
    pytest.param("numpy", id="numpy"),
    pytest.param("numba", id="numba", marks=needs_numba),
]
SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 30.0, -30.0, 1e-30]


@pytest.fixture(scope="module", autouse=True)
def compile_cache(tmp_path_factory):
    """Kernels of this module are written to (and loaded from) a fresh cache dir."""
    path = tmp_path_factory.mktemp("compile-cache")
    old = os.environ.get("TOCHA_COMPILE_CACHE")
    os.environ["TOCHA_COMPILE_CACHE"] = str(path)
    yield path
    if old is None:
        del os.environ["TOCHA_COMPILE_CACHE"]
    else:
        os.environ["TOCHA_COMPILE_CACHE"] = old


@pytest.fixture(scope="module", autouse=True)
def numba_loaded(compile_cache):
    """numba kernels run from the first call (not NumPy's forms while numba loads)."""
    if HAS_NUMBA:
        assert _codegen_numba.wait_for_numba(120)


@contextlib.contextmanager
def one_thread():
    """numba's loops on one thread (the parallel kernels are compiled by one test only)."""
    if not HAS_NUMBA:
        yield
        return
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(threads)


@functools.cache
def compiled(generator: str, spec: FusedSpec):
    """One callable per (generator, spec), shared by the tests."""
    if generator == "numba":
        return _codegen_numba.compile_numba(spec)
    return _codegen_numpy.compile_numpy(spec)


def _erf(x):
    return tocha.special.erf(tocha.from_numpy(np.ascontiguousarray(x))).numpy()


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _relu(a):
    return np.where((a > 0) | np.isnan(a), a, 0).astype(a.dtype)


REFERENCE = {
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
    "square": lambda a: a * a,
    "reciprocal": lambda a: a.dtype.type(1) / a,
    "rsqrt": lambda a: a.dtype.type(1) / np.sqrt(a),
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
    "sigmoid": _sigmoid,
    "erf": _erf,
    "relu": _relu,
    "silu": lambda a: a * _sigmoid(a),
    "gelu": lambda a: a * (1 + _erf(a / a.dtype.type(math.sqrt(2)))) / 2,
    "gelu_tanh": lambda a: (
        a * (1 + np.tanh(a.dtype.type(math.sqrt(2 / math.pi)) * (a + 0.044715 * a**3))) / 2
    ),
    "leaky_relu": lambda a, b: np.where(a > 0, a, a * b),
    "clamp": lambda a, b, c: np.minimum(np.maximum(a, b), c),
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
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
FLOAT_ONLY = set(
    """div atan2 reciprocal rsqrt exp exp2 expm1 log log2 log10 log1p sqrt sin cos tan tanh
    sigmoid erf silu gelu gelu_tanh""".split()
)
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and", "logical_or"}
UNARY = set(
    """neg abs square reciprocal rsqrt exp exp2 expm1 log log2 log10 log1p sqrt sin cos tan tanh
    sigmoid erf relu silu gelu gelu_tanh floor ceil trunc sign logical_not cast""".split()
)


def _args(op: str, dtype: str) -> tuple:
    """The arguments of `op` in the all-ops spec (inputs ``x``, ``y``; constants typed by the
    generator)."""
    if op == "leaky_relu":
        return ("x", 0.01)
    if op == "clamp":
        return ("x", -0.5, 0.75) if dtype != "int64" else ("x", -3, 7)
    if op == "where":
        return ("y", "x", 2)
    if op in UNARY:
        return ("x",)
    return ("x", "y")


def _all_ops_spec(dtype: str, ops) -> FusedSpec:
    steps = []
    for op in sorted(ops):
        out = "bool" if op in COMPARISONS else dtype
        steps.append(Step(f"s_{op}", op, _args(op, dtype), out, dtype))
    if dtype == "int64":
        for op in ("div", "exp", "sigmoid", "gelu", "rsqrt", "atan2"):
            steps.append(Step(f"s_{op}_float", op, _args(op, dtype), "float32", dtype))
    if dtype != "bool":
        steps.append(Step("s_clamp_high", "clamp", ("x", None, 2), dtype, dtype))
        steps.append(Step("s_cast_bool", "cast", ("x",), "bool", dtype))
    else:
        steps.append(Step("s_cast_float", "cast", ("x",), "float32", "bool"))
    inputs = (("x", dtype), ("y", dtype))
    return FusedSpec(inputs, tuple(steps), tuple(s.name for s in steps))


def _reference_step(step: Step, values: dict) -> np.ndarray:
    compute = np.dtype(step.compute)
    args = []
    for pos, arg in enumerate(step.args):
        target = np.dtype(bool) if step.op == "where" and pos == 0 else compute
        if isinstance(arg, str):
            args.append(values[arg].astype(target))
        elif arg is not None:
            args.append(target.type(arg))
    if step.op in FLOAT_ONLY and compute.kind != "f":
        args = [a.astype(np.float64) for a in args]
    if step.op == "clamp" and step.args[1] is None:
        result = np.minimum(args[0], args[1])
    else:
        result = REFERENCE[step.op](*args)
    return np.asarray(result).astype(step.dtype)


def reference(spec: FusedSpec, *arrays) -> dict:
    """Every step of `spec`, evaluated one NumPy call at a time."""
    values = {name: np.asarray(a).astype(d) for (name, d), a in zip(spec.inputs, arrays)}
    with np.errstate(all="ignore"):
        for step in spec.steps:
            values[step.name] = _reference_step(step, values)
    return values


def _samples(dtype: str, size: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(size) > 0.5, rng.random(size) > 0.5
    if dtype == "int64":
        x = rng.integers(-20, 20, size)
        y = rng.integers(0, 4, size)
        return x, y
    x = np.concatenate([SPECIALS, rng.standard_normal(size - len(SPECIALS)) * 3])
    y = np.concatenate([SPECIALS[::-1], rng.standard_normal(size - len(SPECIALS)) * 3])
    rng.shuffle(y)
    return x.astype(dtype), y.astype(dtype)


def assert_close(got, want, dtype, name=""):
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    tol = {"float32": 2e-5, "float64": 1e-12}.get(str(dtype), 2e-5)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=name)


FLOAT_OPS = ELEMENTWISE_OPS
INT_OPS = set(
    """add sub mul pow maximum minimum neg abs square relu clamp floor ceil trunc sign eq ne lt
    le gt ge logical_not logical_and logical_or where cast""".split()
)
BOOL_OPS = {"eq", "ne", "logical_not", "logical_and", "logical_or", "where", "cast"}
OPS_BY_DTYPE = {"float32": FLOAT_OPS, "float64": FLOAT_OPS, "int64": INT_OPS, "bool": BOOL_OPS}


@pytest.mark.parametrize("generator", GENERATORS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_every_op_against_numpy(generator, dtype):
    spec = _all_ops_spec(dtype, OPS_BY_DTYPE[dtype])
    x, y = _samples(dtype)
    outputs = compiled(generator, spec)(x, y)
    want = reference(spec, x, y)
    assert len(outputs) == len(spec.outputs)
    for name, got in zip(spec.outputs, outputs):
        assert got.flags.c_contiguous
        assert_close(got, want[name], dtype, name)


@pytest.mark.parametrize("generator", GENERATORS)
def test_float32_arithmetic_is_exact(generator):
    """Constants are float32 and each step rounds to float32: the same bits as NumPy's."""
    steps = (
        Step("a", "mul", ("x", 0.1), "float32", "float32"),
        Step("b", "add", ("a", 1 / 3), "float32", "float32"),
        Step("c", "div", ("b", "x"), "float32", "float32"),
        Step("d", "sub", ("c", 0.7), "float32", "float32"),
    )
    spec = FusedSpec((("x", "float32"),), steps, ("d",))
    x, _ = _samples("float32")
    (got,) = compiled(generator, spec)(x)
    f = np.float32
    with np.errstate(all="ignore"):
        want = (x * f(0.1) + f(1 / 3)) / x - f(0.7)
    np.testing.assert_array_equal(got, want)


def test_mixed_dtypes_convert_to_compute():
    """int64 and bool inputs are converted to the step's compute dtype, results to its dtype."""
    steps = (
        Step("q", "div", ("i", "j"), "float32", "float32"),
        Step("m", "where", ("flag", "q", -1.5), "float32", "float32"),
        Step("n", "cast", ("m",), "int64", "float32"),
        Step("s", "mul", ("n", "flag"), "int64", "int64"),
    )
    spec = FusedSpec((("i", "int64"), ("j", "int64"), ("flag", "bool")), steps, ("q", "m", "s"))
    i, j = np.arange(-6, 6), np.array([1, 2, 3, 0] * 3)
    flag = np.arange(12) % 3 == 0
    want = reference(spec, i, j, flag)
    for generator in ("numpy", "numba") if HAS_NUMBA else ("numpy",):
        outputs = compiled(generator, spec)(i, j, flag)
        for name, got in zip(spec.outputs, outputs):
            assert_close(got, want[name], "float32", name)


# --- broadcasting and layouts ---------------------------------------------------------------

CHAIN = FusedSpec(
    (("x", "float32"), ("w", "float32"), ("b", "float32")),
    (
        Step("t0", "mul", ("x", "w"), "float32", "float32"),
        Step("t1", "add", ("t0", "b"), "float32", "float32"),
        Step("t2", "tanh", ("t1",), "float32", "float32"),
        Step("t3", "mul", ("t2", 0.5), "float32", "float32"),
        Step("t4", "add", ("t3", "x"), "float32", "float32"),
        Step("t5", "relu", ("t4",), "float32", "float32"),
    ),
    ("t1", "t5"),
)


def _f32(rng, shape):
    return np.asarray(rng.standard_normal(shape), dtype=np.float32)


def _layouts():
    rng = np.random.default_rng(1)
    base = _f32(rng, (5, 6))
    big = _f32(rng, (4, 3, 5))
    cases = {
        "0d": (np.array(0.5, np.float32), np.array(2.0, np.float32), np.array(-1, np.float32)),
        "1d": (_f32(rng, 7), _f32(rng, 7), _f32(rng, 7)),
        "bias-over-rows": (_f32(rng, (6, 5)), _f32(rng, 5), _f32(rng, 5)),
        "scalar-0d-input": (_f32(rng, (6, 5)), _f32(rng, (6, 5)), np.array(0.25, np.float32)),
        "size-1-dims": (_f32(rng, (6, 5)), _f32(rng, (6, 1)), _f32(rng, (1, 5))),
        "transposed": (base.T, _f32(rng, 5), _f32(rng, (6, 1))),
        "negative-stride": (big[::-1, :, ::-2], _f32(rng, 3), np.float32(0.5)),
        "zero-stride": (np.broadcast_to(_f32(rng, (1, 5)), (6, 5)), _f32(rng, 5), _f32(rng, 1)),
        "4d": (_f32(rng, (2, 3, 4, 5)), _f32(rng, (3, 1, 5)), _f32(rng, (2, 1, 1, 1))),
        "6d": (_f32(rng, (2, 1, 3, 2, 1, 2)), _f32(rng, (3, 1, 4, 1)), _f32(rng, ())),
        "outer-product": (_f32(rng, (5, 1)), _f32(rng, (1, 4)), _f32(rng, ())),
        "empty": (_f32(rng, (0, 3)), _f32(rng, 3), _f32(rng, 3)),
    }
    return cases


LAYOUTS = _layouts()


@pytest.mark.parametrize("generator", GENERATORS)
@pytest.mark.parametrize("case", list(LAYOUTS))
def test_broadcasting_layouts(generator, case):
    x, w, b = LAYOUTS[case]
    want = reference(CHAIN, x, w, b)
    shape = np.broadcast_shapes(np.shape(x), np.shape(w), np.shape(b))
    outputs = compiled(generator, CHAIN)(x, w, b)
    for name, got in zip(CHAIN.outputs, outputs):
        assert got.flags.c_contiguous
        assert_close(got, np.broadcast_to(want[name], shape), "float32", name)


@pytest.mark.parametrize("generator", GENERATORS)
def test_inputs_are_not_written(generator):
    x, w, b = (_f32(np.random.default_rng(2), (6, 5)) for _ in range(3))
    saved = [a.copy() for a in (x, w, b)]
    spec = FusedSpec(CHAIN.inputs, CHAIN.steps, ("t5",))
    compiled(generator, spec)(x, w, b)
    compiled(generator, spec)(x, w, b)
    for a, s in zip((x, w, b), saved):
        np.testing.assert_array_equal(a, s)


@pytest.mark.parametrize("generator", GENERATORS)
def test_inputs_are_converted_to_declared_dtypes(generator):
    """float64 arrays, Python numbers and byte-swapped arrays given for float32 inputs."""
    x = np.linspace(-2, 2, 30).reshape(6, 5)
    w = np.linspace(1, 2, 5).astype(">f4")
    got = compiled(generator, CHAIN)(x, w, 0.5)
    want = reference(CHAIN, x, w, 0.5)
    for name, value in zip(CHAIN.outputs, got):
        assert_close(value, want[name], "float32", name)


def test_float16_specs_run_through_numpy():
    steps = (
        Step("a", "mul", ("x", 3), "float16", "float16"),
        Step("b", "exp", ("a",), "float16", "float16"),
    )
    spec = FusedSpec((("x", "float16"),), steps, ("b",))
    x = np.linspace(-1, 1, 11).astype(np.float16)
    want = reference(spec, x)["b"]
    for generator in ("numpy", "numba") if HAS_NUMBA else ("numpy",):
        (got,) = compiled(generator, spec)(x)
        assert got.dtype == np.float16
        np.testing.assert_allclose(got, want, rtol=1e-3)


@pytest.mark.parametrize("generator", GENERATORS)
def test_wrong_calls_raise(generator):
    f = compiled(generator, CHAIN)
    with pytest.raises(TypeError, match="takes 3 inputs"):
        f(np.ones(3, np.float32))
    with pytest.raises(RuntimeError, match="do not broadcast"):
        f(np.ones(3, np.float32), np.ones(4, np.float32), np.ones(3, np.float32))


# --- reductions -------------------------------------------------------------------------------


def _reduced(op: str, dims: tuple, keepdim: bool, dtype: str = "float32") -> FusedSpec:
    steps = (
        Step("p", "mul", ("x", "w"), dtype, dtype),
        Step("q", "add", ("p", 0.25), dtype, dtype),
    )
    inputs = (("x", dtype), ("w", dtype))
    return FusedSpec(inputs, steps, ("p", "q"), Reduce(op, dims, keepdim, dtype))


def _numpy_reduce(value, op, dims, keepdim):
    axis = tuple(dims) if dims else None
    fn = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}[op]
    return np.asarray(fn(value, axis=axis, keepdims=keepdim))


REDUCTIONS = [
    ((), False),
    ((), True),
    ((-1,), False),
    ((-1,), True),
    ((1, 2), False),
    ((0,), True),
    ((0, 2), False),
]


@pytest.mark.parametrize("generator", GENERATORS)
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize(
    "dims,keepdim", REDUCTIONS, ids=[f"{d}-{'keep' if k else 'drop'}" for d, k in REDUCTIONS]
)
def test_reductions(generator, op, dims, keepdim):
    rng = np.random.default_rng(3)
    x, w = _f32(rng, (3, 4, 150)), _f32(rng, 150)
    spec = _reduced(op, dims, keepdim)
    p, q = compiled(generator, spec)(x, w)
    want = reference(spec, x, w)
    assert_close(p, want["p"], "float32")
    assert_close(q, _numpy_reduce(want["q"], op, dims, keepdim).astype(np.float32), "float32")


@pytest.mark.parametrize("generator", GENERATORS)
@pytest.mark.parametrize("op", ["amax", "amin", "sum"])
def test_reductions_propagate_nan(generator, op):
    rng = np.random.default_rng(3)
    x, w = _f32(rng, (3, 4, 150)), _f32(rng, 150)
    x[1, 2, 77] = np.nan
    _, q = compiled(generator, _reduced(op, (-1,), False))(x, w)
    assert np.isnan(q[1, 2]) and np.isnan(q).sum() == 1
    _, q = compiled(generator, _reduced(op, (), False))(x, w)
    assert np.isnan(q)


@pytest.mark.parametrize("generator", GENERATORS)
def test_reduction_of_integers_and_ndims(generator):
    spec = _reduced("sum", (), False, "int64")
    for shape in [(), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 4)]:
        x = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
        _, q = compiled(generator, spec)(x, np.int64(3))
        assert q.dtype == np.int64 and q.shape == ()
        assert q == (x * 3 + 0).sum()


@pytest.mark.parametrize("generator", GENERATORS)
def test_large_float32_sum_stays_pairwise(generator):
    """A float32 sum of 1M terms stays within 1e-6 of NumPy's pairwise sum (a naive float32
    loop is off by about 1e-4)."""
    rng = np.random.default_rng(4)
    x = rng.random(1_000_000, dtype=np.float32)
    w = np.float32(1)
    with one_thread():
        _, q = compiled(generator, _reduced("sum", (), False))(x, w)
        _, rows = compiled(generator, _reduced("mean", (-1,), False))(x.reshape(4, -1), w)
    want = np.sum(x + np.float32(0.25), dtype=np.float32)
    exact = np.sum(x.astype(np.float64) + 0.25)
    assert abs(float(q) - exact) / exact < 1e-6
    assert abs(float(q) - float(want)) / exact < 1e-6
    np.testing.assert_allclose(rows, (x.reshape(4, -1) + np.float32(0.25)).mean(-1), rtol=1e-6)


def test_amax_of_empty_raises():
    spec = _reduced("amax", (), False)
    with pytest.raises(RuntimeError, match="non-zero size"):
        _codegen_numpy.compile_numpy(spec)(np.ones((0, 3), np.float32), np.float32(1))


# --- numba: compile once, parallel loops, the disk cache, tanh --------------------------------


@needs_numba
def test_second_call_reuses_the_kernel():
    f = compiled("numba", CHAIN)
    x, w, b = LAYOUTS["bias-over-rows"]
    f(x, w, b)
    variants = dict(f.variants)
    f(x, w, b)
    f(x * 2, w, b)
    assert f.variants == variants
    for dispatcher in variants.values():
        assert len(dispatcher.signatures) == 1


@needs_numba
def test_parallel_loops_match():
    """Large iterations run under prange when numba has threads: the same values, and the
    same row sums."""
    rng = np.random.default_rng(5)
    x, w = _f32(rng, (300, 400)), _f32(rng, 400)
    b = np.float32(0.1)
    spec = FusedSpec(
        CHAIN.inputs, CHAIN.steps, CHAIN.outputs, Reduce("sum", (-1,), False, "float32")
    )
    t1, t5 = compiled("numba", spec)(x, w, b)
    want = reference(spec, x, w, b)
    assert_close(t1, want["t1"], "float32")
    assert_close(t5, want["t5"].sum(-1), "float32")


@needs_numba
def test_disk_cache_is_used_by_another_process(compile_cache):
    steps = (*CHAIN.steps[:2], Step("t2", "mul", ("t1", 0.125), "float32", "float32"))
    spec = FusedSpec(CHAIN.inputs, steps, ("t2",))
    x = np.ones(10, np.float32)
    compiled("numba", spec)(x, x, x)
    assert list(compile_cache.glob("k_*.py"))
    script = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        from tocha.compiler import _codegen_numba
        from tocha.compiler._spec import FusedSpec, Step
        assert "numba" not in sys.modules  # numba is imported on first use only
        spec = {spec!r}
        f = _codegen_numba.compile_numba(spec)
        x = np.ones(10, np.float32)
        f(x, x, x)  # while numba loads in the background: NumPy's form of the kernel
        assert f.numpy is not None and not f.variants
        assert _codegen_numba.wait_for_numba(120)
        f(x, x, x)
        (dispatcher,) = f.variants.values()
        stats = dispatcher.stats
        print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
        """
    )
    env = dict(os.environ, TOCHA_COMPILE_CACHE=str(compile_cache))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0"]


@needs_numba
def test_tanh32_on_a_dense_grid():
    """The vectorisable float32 tanh: a few ulp from the correctly rounded value everywhere,
    exact at the special values."""
    spec = FusedSpec(
        (("x", "float32"),), (Step("t", "tanh", ("x",), "float32", "float32"),), ("t",)
    )
    grid = np.linspace(-12, 12, 300_001, dtype=np.float32)
    tiny = np.geomspace(1e-38, 1, 2001, dtype=np.float32)
    huge = np.array([1e4, 3e38, np.inf], np.float32)
    x = np.concatenate([grid, tiny, -tiny, huge, -huge])
    with one_thread():
        (got,) = compiled("numba", spec)(x)
        (negated,) = compiled("numba", spec)(-x)
    exact = np.tanh(x.astype(np.float64))
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(got - exact) / ulp) <= 8
    assert np.all(np.abs(got) <= 1)
    np.testing.assert_array_equal(got, -negated)
    special = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0], np.float32)
    (got,) = compiled("numba", spec)(special)
    np.testing.assert_array_equal(got[:2], [1, -1])
    assert np.isnan(got[2])
    assert np.signbit(got[3]) and not np.signbit(got[4])


@needs_numba
def test_exp32_on_a_dense_grid():
    """The vectorisable float32 exp (and sigmoid, silu through it): about 1 ulp, with
    overflow to inf, underflow through the subnormals to 0, and NaN kept."""
    spec = FusedSpec(
        (("x", "float32"),),
        (
            Step("e", "exp", ("x",), "float32", "float32"),
            Step("s", "sigmoid", ("x",), "float32", "float32"),
        ),
        ("e", "s"),
    )
    x = np.linspace(-110, 95, 400_001, dtype=np.float32)
    edges = [88.72283, 88.72284, -87.33, -87.34, -103.9, -104.0, np.inf, -np.inf, np.nan]
    x = np.concatenate([x, np.linspace(-1, 1, 100_001, dtype=np.float32), edges])
    x = x.astype(np.float32)
    with one_thread():
        e, s = compiled("numba", spec)(x)
    with np.errstate(all="ignore"):
        exact = np.exp(x.astype(np.float64))
        want = exact.astype(np.float32)
    finite = np.isfinite(want)
    ulp = np.spacing(want[finite]).astype(np.float64)
    assert np.max(np.abs(e[finite] - exact[finite]) / ulp) <= 2
    np.testing.assert_array_equal(e[~finite], want[~finite])
    with np.errstate(all="ignore"):
        sigmoid = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    # below -88, 1 + exp(-x) overflows: 0 where the exact value is subnormal, as with libm
    np.testing.assert_allclose(s, sigmoid, rtol=1e-6, atol=1e-37, equal_nan=True)


@needs_numba
def test_erf_and_gelu_match_tocha():
    spec = FusedSpec(
        (("x", "float32"),),
        (
            Step("e", "erf", ("x",), "float32", "float32"),
            Step("g", "gelu", ("x",), "float32", "float32"),
            Step("h", "gelu_tanh", ("x",), "float32", "float32"),
        ),
        ("e", "g", "h"),
    )
    x = np.linspace(-8, 8, 20001, dtype=np.float32)
    e, g, h = compiled("numba", spec)(x)
    t = tocha.from_numpy(x)
    np.testing.assert_allclose(e, tocha.special.erf(t).numpy(), rtol=1e-6, atol=1e-7)
    exact = np.vectorize(math.erf)(x.astype(np.float64))
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(e - exact) / ulp) <= 8
    special = np.array([np.inf, -np.inf, np.nan, -0.0, 1e-30], np.float32)
    e = compiled("numba", spec)(special)[0]
    np.testing.assert_array_equal(e[[0, 1, 4]], [1, -1, np.float32(1e-30) * np.float32(1.1283791)])
    assert np.isnan(e[2]) and np.signbit(e[3])
    # Near x = -5, 1 + erf(x / sqrt 2) loses most digits in float32: about 1e-6 from the
    # exact value there, for tocha's own gelu as for this one.
    F = tocha.nn.functional
    np.testing.assert_allclose(g, F.gelu(t).numpy(), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(h, F.gelu(t, approximate="tanh").numpy(), rtol=2e-6, atol=2e-6)
    x64 = x.astype(np.float64)
    exact = x64 * (1 + np.vectorize(math.erf)(x64 / math.sqrt(2))) / 2
    assert np.max(np.abs(g - exact)) < 1.5e-6


@needs_numba
def test_generated_source_is_typed():
    source = _codegen_numba.kernel_source(CHAIN, ("rows", "ccc", None, False, False))
    assert "cache=True" in source and "fastmath" not in source
    assert "np.float32(float.fromhex('0x1.0000000000000p-1'))" in source
    assert "math.tanh" in source


# --- numpy: buffers are reused ----------------------------------------------------------------


@pytest.mark.parametrize("generator", GENERATORS)
def test_buffers_are_not_reused_while_alive(generator):
    """A cast to the same dtype hands its argument's buffer on: a later step must not write
    over it (nor over an input, a clamp without bounds, or an output)."""
    f32 = "float32"
    steps = (
        Step("a", "mul", ("x", 2), f32, f32),
        Step("c", "cast", ("a",), f32, f32),
        Step("d", "add", ("x", 1), f32, f32),
        Step("e", "clamp", ("c", None, None), f32, f32),
        Step("f", "mul", ("d", 3), f32, f32),
        Step("g", "cast", ("x",), f32, f32),
        Step("h", "neg", ("g",), f32, f32),
    )
    spec = FusedSpec((("x", f32),), steps, ("c", "e", "f", "h"))
    x = np.arange(6, dtype=np.float32)
    c, e, f, h = compiled(generator, spec)(x)
    np.testing.assert_array_equal(c, x * 2)
    np.testing.assert_array_equal(e, x * 2)
    np.testing.assert_array_equal(f, (x + 1) * 3)
    np.testing.assert_array_equal(h, -x)
    np.testing.assert_array_equal(x, np.arange(6))


def test_numpy_generator_reuses_buffers():
    """A 6-step chain over 1M float32 computes in place in one buffer: its output."""
    spec = FusedSpec(CHAIN.inputs, CHAIN.steps, ("t5",))
    x = w = b = np.ones(1_000_000, np.float32)
    f = _codegen_numpy.compile_numpy(spec)
    f(x, w, b)
    tracemalloc.start()
    try:
        f(x, w, b)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * x.nbytes


@needs_numba
def test_kernels_run_as_numpy_while_numba_loads_and_when_it_fails(monkeypatch, caplog):
    spec = FusedSpec(
        (("x", "float32"),), (Step("t", "mul", ("x", 3.0), "float32", "float32"),), ("t",)
    )
    x = np.arange(5, dtype=np.float32)
    monkeypatch.setattr(_codegen_numba, "_READY", threading.Event())
    monkeypatch.setattr(_codegen_numba, "_STATE", {"loader": "loading", "failed": False})
    f = _codegen_numba.compile_numba(spec)
    np.testing.assert_array_equal(f(x)[0], x * 3)
    assert f.numpy is not None and not f.variants and not _codegen_numba.ready()

    def broken(*args):
        raise ImportError("no numba here")

    monkeypatch.setattr(_codegen_numba, "_load", broken)
    monkeypatch.setenv("TOCHA_LOGS", "fallbacks")
    caplog.set_level("DEBUG", logger="tocha.compiler")
    _codegen_numba._start()
    assert not _codegen_numba.ready() and not _codegen_numba.wait_for_numba(0)
    np.testing.assert_array_equal(f(x)[0], x * 3)
    assert not f.variants and "numba did not load" in caplog.text
