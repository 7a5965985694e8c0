"""The Python array API standard on tocha: array-api-compat's torch namespace, wrapping tocha
through the torch alias, against array-api-strict (the standard's reference implementation).

A substitute for data-apis/array-api-tests, which is not on PyPI: every name of the
standard's namespace (array-api-strict's ``__all__``, ``linalg`` and ``fft``) is either
checked here on hypothesis-drawn inputs (0-d and empty shapes, broadcasting, the standard's
dtypes that torch has, ``axis=``/``keepdims=``) for equal values, NaN positions, dtypes and
shapes, or listed in `NOT_CHECKED` with the reason: the places where torch itself departs from
the standard, as array-api-compat lists them in its torch xfails.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import sys
from collections.abc import Callable

import numpy as np
import pytest

compat = pytest.importorskip("array_api_compat")
xps = pytest.importorskip("array_api_strict")
hypothesis = pytest.importorskip("hypothesis")

import hypothesis.extra.numpy as hnp  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tocha  # noqa: E402
import tocha.compat  # noqa: E402

# The modules that name torch: the alias's while these tests call array-api-compat, a real
# PyTorch's (or none) otherwise, so that other tests in the process see what they expect.
SWAPPED = ("torch", "array_api_compat.torch")


def swapped(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in SWAPPED)


@contextlib.contextmanager
def torch_is_tocha(modules: dict | None = None):
    """``import torch`` gives tocha meanwhile, and array-api-compat's torch namespace is
    `modules`' (`TOCHA_MODULES`: the one bound to tocha; None: imported afresh under the
    alias). array-api-compat looks an array's namespace up in ``sys.modules["torch"]``
    (`array_namespace`), as in a program run under the alias. Afterwards sys.modules and
    ``array_api_compat.torch`` are as before."""
    saved = {n: m for n, m in sys.modules.items() if swapped(n)}
    attribute = vars(compat).get("torch")
    for name in saved:
        del sys.modules[name]
    tocha.compat.alias_torch()
    sys.modules.update(modules or {})
    try:
        yield
    finally:
        tocha.compat.unalias_torch()
        for name in [n for n in sys.modules if swapped(n)]:
            del sys.modules[name]
        sys.modules.update(saved)
        if attribute is None:
            vars(compat).pop("torch", None)
        else:
            compat.torch = attribute


def load_compat_namespace() -> dict:
    """array_api_compat.torch and its linalg and fft, imported with tocha as torch."""
    with torch_is_tocha():
        importlib.import_module("array_api_compat.torch.linalg")
        importlib.import_module("array_api_compat.torch.fft")
        return {n: m for n, m in sys.modules.items() if n.startswith("array_api_compat.torch")}


TOCHA_MODULES = {"torch": tocha, **load_compat_namespace()}
xp = TOCHA_MODULES["array_api_compat.torch"]


# Few examples, drawn the same on every run; no timing checks (a loaded machine is slow).
SETTINGS = settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

BOOL = ["bool"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]
FLOATS = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
REAL = INTS + FLOATS
NUMERIC = REAL + COMPLEX
ALL = BOOL + NUMERIC

# Where torch (through array-api-compat) departs from the standard: array-api-compat's torch
# xfails that these tests meet. Each is a skipped test, with its reason.
DEPARTURES = {
    "sum/prod/cumulative_sum/cumulative_prod of uint8": "the standard sums uint8 in uint64; "
    "torch has no full uint64 and gives int64 (array-api-compat torch xfail)",
    "std/var with axis=()": "array-api-compat returns zeros for torch (pytorch/pytorch#29137), "
    "the standard NaN where the correction reaches the (single-element) count",
    "count_nonzero with axis=()": "torch.count_nonzero counts over every axis for dim=() "
    "(array-api-compat passes it on), the standard over none",
    "unique_all": "array-api-compat raises NotImplementedError for torch "
    "(pytorch/pytorch#36748: torch.unique gives no first indices)",
    "can_cast": "torch casts within and up kinds (int8 to uint8, float64 to float32) where the "
    "standard allows only safe casts: test_can_cast checks torch's rule instead",
    "uint16/uint32/uint64": "torch's limited support of uint16, uint32 and uint64 "
    "(array-api-compat torch xfail): those dtypes are not drawn",
}


@pytest.mark.parametrize("departure", sorted(DEPARTURES))
def test_torch_departure(departure):
    pytest.skip(f"{departure}: {DEPARTURES[departure]}")


# Names of the standard that these tests do not call, with the reason.
NOT_CHECKED = {
    "ArrayAPIStrictFlags": "array-api-strict's own configuration, not the standard",
    "get_array_api_strict_flags": "array-api-strict's own configuration, not the standard",
    "set_array_api_strict_flags": "array-api-strict's own configuration, not the standard",
    "reset_array_api_strict_flags": "array-api-strict's own configuration, not the standard",
    "Device": "array-api-strict's device class; devices are checked by __array_namespace_info__",
    "__version__": "array-api-strict's version",
    "unique_all": DEPARTURES["unique_all"],
    "uint16": "torch has uint16/uint32/uint64 with limited support (array-api-compat xfail)",
    "uint32": "torch has uint16/uint32/uint64 with limited support (array-api-compat xfail)",
    "uint64": "torch has uint16/uint32/uint64 with limited support (array-api-compat xfail)",
}


def strict_dtype(name: str):
    return getattr(xps, name)


def tocha_dtype(name: str):
    return getattr(xp, name)


def arrays(dtypes: list[str], shape=None, min_dims: int = 0, max_dims: int = 3, elements=None):
    """NumPy arrays of one of `dtypes`, any shape up to 3-d (0-d and empty included)."""
    shapes = hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=4)
    return st.sampled_from(dtypes).flatmap(
        lambda dt: hnp.arrays(
            np.dtype(dt),
            shape if shape is not None else shapes,
            elements=elements_for(dt, elements),
        )
    )


def elements_for(dtype: str, elements):
    if elements is not None:
        return elements(dtype)
    kind = np.dtype(dtype).kind
    if kind == "f":
        return st.floats(width=np.dtype(dtype).itemsize * 8, min_value=-1e3, max_value=1e3) | (
            st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5])
        )
    if kind == "c":
        part = st.sampled_from([0.0, -0.0, 1.0, -2.5, 0.5, 3.0])
        return st.builds(complex, part, part)
    if kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(info.min, -100), min(info.max, 100))
    return None


STRICT_ARRAY = type(xps.asarray(0))


def to_numpy(result):
    """A result of either namespace as a NumPy array (tuples elementwise)."""
    if isinstance(result, tuple | list):
        return [to_numpy(r) for r in result]
    if isinstance(result, STRICT_ARRAY):
        return np.asarray(result)
    if isinstance(result, tocha.Tensor):
        return result.numpy()
    return result


def tolerance(dtype) -> dict:
    if dtype in (np.float32, np.complex64):
        return {"rtol": 2e-4, "atol": 1e-5}
    return {"rtol": 1e-9, "atol": 1e-12}


def assert_same(expected, actual, what: str, zero_signs: bool = False, **tol) -> None:
    """Values (NaN positions included), dtype and shape of `actual` equal `expected`'s;
    with `zero_signs`, the signs of zeros too (the standard's elementwise special cases)."""
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), what
        for e, a in zip(expected, actual, strict=True):
            assert_same(e, a, what, zero_signs, **tol)
        return
    if not isinstance(expected, np.ndarray):
        assert expected == actual or (expected != expected and actual != actual), what
        return
    assert isinstance(actual, np.ndarray), f"{what}: {type(actual)}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if expected.dtype.kind == "f" and zero_signs:
        zeros = expected == 0
        np.testing.assert_array_equal(
            np.signbit(actual[zeros]), np.signbit(expected[zeros]), err_msg=f"{what}: signed zeros"
        )
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(
            actual, expected, equal_nan=True, **(tol or tolerance(expected.dtype)), err_msg=what
        )
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def compare(
    name: str,
    make_args: Callable,
    *arrays_in,
    default_float: bool = False,
    zero_signs: bool = False,
    namespace="",
    **tol,
):
    """Call `name` of both namespaces with the arrays made from `arrays_in` (NumPy arrays)
    and compare; `make_args(ns, *arrays)` gives (args, kwargs). `default_float`: the result's
    floating dtype is the default one, which the standard leaves to the library (float64 in
    array-api-strict, float32 in torch)."""
    ns_strict = getattr(xps, namespace) if namespace else xps
    ns_tocha = getattr(xp, namespace) if namespace else xp
    strict_in = [xps.asarray(a) for a in arrays_in]
    tocha_in = [xp.asarray(a) for a in arrays_in]
    args, kwargs = make_args(xps, *strict_in)
    try:
        expected = getattr(ns_strict, name)(*args, **kwargs)
    except Exception:
        return  # outside the standard's domain: nothing to compare
    args, kwargs = make_args(xp, *tocha_in)
    with torch_is_tocha(TOCHA_MODULES):
        actual = getattr(ns_tocha, name)(*args, **kwargs)
    expected = to_numpy(expected)
    if default_float:
        expected = (
            [e.astype(np.float32) if e.dtype == np.float64 else e for e in expected]
            if isinstance(expected, list)
            else (expected.astype(np.float32) if expected.dtype == np.float64 else expected)
        )
    prefix = f"{namespace}." if namespace else ""
    what = f"{prefix}{name}{tuple(a.dtype for a in arrays_in)}{[a.shape for a in arrays_in]}"
    assert_same(expected, to_numpy(actual), what, zero_signs, **tol)


def plain(ns, *a):
    return a, {}


# ---------------------------------------------------------------- elementwise functions

UNARY = {
    "abs": NUMERIC,
    "acos": FLOATS + COMPLEX,
    "acosh": FLOATS + COMPLEX,
    "asin": FLOATS + COMPLEX,
    "asinh": FLOATS + COMPLEX,
    "atan": FLOATS + COMPLEX,
    "atanh": FLOATS + COMPLEX,
    "bitwise_invert": BOOL + INTS,
    "ceil": REAL,
    "conj": NUMERIC,
    "cos": FLOATS + COMPLEX,
    "cosh": FLOATS + COMPLEX,
    "exp": FLOATS + COMPLEX,
    "expm1": FLOATS + COMPLEX,
    "floor": REAL,
    "imag": COMPLEX,
    "isfinite": NUMERIC,
    "isinf": NUMERIC,
    "isnan": NUMERIC,
    "log": FLOATS + COMPLEX,
    "log1p": FLOATS + COMPLEX,
    "log2": FLOATS + COMPLEX,
    "log10": FLOATS + COMPLEX,
    "logical_not": BOOL,
    "negative": NUMERIC,
    "positive": NUMERIC,
    "real": NUMERIC,
    "reciprocal": FLOATS + COMPLEX,
    "round": NUMERIC,
    "sign": NUMERIC,
    "signbit": FLOATS,
    "sin": FLOATS + COMPLEX,
    "sinh": FLOATS + COMPLEX,
    "sqrt": FLOATS + COMPLEX,
    "square": NUMERIC,
    "tan": FLOATS + COMPLEX,
    "tanh": FLOATS + COMPLEX,
    "trunc": REAL,
}

BINARY = {
    "add": NUMERIC,
    "atan2": FLOATS,
    "bitwise_and": BOOL + INTS,
    "bitwise_left_shift": INTS,
    "bitwise_or": BOOL + INTS,
    "bitwise_right_shift": INTS,
    "bitwise_xor": BOOL + INTS,
    "copysign": FLOATS,
    "divide": FLOATS + COMPLEX,
    "equal": ALL,
    "floor_divide": REAL,
    "greater": REAL,
    "greater_equal": REAL,
    "hypot": FLOATS,
    "less": REAL,
    "less_equal": REAL,
    "logaddexp": FLOATS,
    "logical_and": BOOL,
    "logical_or": BOOL,
    "logical_xor": BOOL,
    "maximum": REAL,
    "minimum": REAL,
    "multiply": NUMERIC,
    "nextafter": FLOATS,
    "not_equal": ALL,
    "pow": FLOATS + COMPLEX,
    "remainder": REAL,
    "subtract": NUMERIC,
}

# Known departures of torch from the standard (array-api-compat's torch xfails), per case.
UNARY_SKIPS: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_elementwise(name):
    @SETTINGS
    @given(x=arrays(UNARY[name]))
    def check(x):
        reason = UNARY_SKIPS.get((name, x.dtype.name))
        if reason:
            pytest.skip(reason)
        compare(name, plain, x, zero_signs=True)

    check()


def shift_elements(dtype):
    kind = np.dtype(dtype).kind
    if kind in "iu":
        return st.integers(0, min(np.iinfo(dtype).bits - 1, 6))
    return elements_for(dtype, None)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_elementwise(name):
    dtypes = BINARY[name]

    @SETTINGS
    @given(
        dtype=st.sampled_from(dtypes),
        shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, min_side=0, max_side=3),
        data=st.data(),
    )
    def check(dtype, shapes, data):
        elements = shift_elements if "shift" in name else None
        x1 = data.draw(
            hnp.arrays(
                np.dtype(dtype), shapes.input_shapes[0], elements=elements_for(dtype, elements)
            )
        )
        x2 = data.draw(
            hnp.arrays(
                np.dtype(dtype), shapes.input_shapes[1], elements=elements_for(dtype, elements)
            )
        )
        if (
            name in ("floor_divide", "remainder")
            and np.dtype(dtype).kind in "iu"
            and (x2 == 0).any()
        ):
            x2 = np.where(x2 == 0, 1, x2).astype(dtype)
        compare(name, plain, x1, x2, zero_signs=True)

    check()


@SETTINGS
@given(x=arrays(REAL), bounds=st.tuples(st.integers(-50, 0), st.integers(0, 50)))
def test_clip(x, bounds):
    low, high = bounds
    compare("clip", lambda ns, a: ((a,), {"min": low, "max": high}), x)
    compare("clip", lambda ns, a: ((a,), {"max": high}), x)
    if x.ndim:
        lows = np.zeros(x.shape[-1:], dtype=x.dtype)
        compare("clip", lambda ns, a, m: ((a,), {"min": m}), x, lows)


def test_binary_with_python_scalars():
    x = np.array([1.5, -2.0, 0.0], dtype=np.float32)
    for name in ("add", "multiply", "subtract", "divide", "pow", "maximum", "minimum"):
        compare(name, lambda ns, a: ((a, 2), {}), x)
        compare(name, lambda ns, a: ((a, 2.0), {}), x)


# ---------------------------------------------------------------- statistical functions


def axes(ndim: int):
    """axis= values: None, one axis (maybe negative) or a tuple of distinct axes."""
    one = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
    several = (
        st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple)
        if ndim
        else st.just(())
    )
    return st.none() | one | several


def reduction_test(name: str, dtypes: list[str], nonempty: bool = False, extra=None):
    @SETTINGS
    @given(data=st.data(), x=arrays(dtypes), keepdims=st.booleans())
    def check(data, x, keepdims):
        axis = data.draw(axes(x.ndim))
        if nonempty and x.size == 0:
            return
        if name in ("std", "var", "count_nonzero") and axis == ():
            return  # a departure: see DEPARTURES
        kwargs = {"axis": axis, "keepdims": keepdims, **(extra or {})}
        compare(name, lambda ns, a: ((a,), kwargs), x)

    return check


# uint8 sums and products: a departure (see DEPARTURES).
SIGNED_NUMERIC = [d for d in NUMERIC if d != "uint8"]
test_sum = reduction_test("sum", SIGNED_NUMERIC)
test_prod = reduction_test("prod", SIGNED_NUMERIC)
test_sum_dtype = reduction_test("sum", [d for d in INTS if d != "uint8"], extra={"dtype": None})
test_mean = reduction_test("mean", FLOATS + COMPLEX, nonempty=True)
test_std = reduction_test("std", FLOATS, nonempty=True)
test_var = reduction_test("var", FLOATS, nonempty=True, extra={"correction": 1})
test_max = reduction_test("max", REAL, nonempty=True)
test_min = reduction_test("min", REAL, nonempty=True)
test_all = reduction_test("all", ALL)
test_any = reduction_test("any", ALL)
test_count_nonzero = reduction_test("count_nonzero", ALL)


def cumulative_test(name: str):
    @SETTINGS
    @given(x=arrays(SIGNED_NUMERIC, min_dims=1), data=st.data(), include_initial=st.booleans())
    def check(x, data, include_initial):
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        kwargs = {"axis": axis, "include_initial": include_initial}
        compare(name, lambda ns, a: ((a,), kwargs), x)

    return check


test_cumulative_sum = cumulative_test("cumulative_sum")
test_cumulative_prod = cumulative_test("cumulative_prod")


@SETTINGS
@given(x=arrays(NUMERIC, min_dims=1), data=st.data(), n=st.integers(1, 2))
def test_diff(x, data, n):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    compare("diff", lambda ns, a: ((a,), {"axis": axis, "n": n}), x)


# ---------------------------------------------------------------- searching, sorting, sets


def index_test(name: str):
    @SETTINGS
    @given(
        x=arrays(
            REAL, min_dims=1, elements=lambda dt: elements_for(dt, None).filter(lambda v: v == v)
        ),
        data=st.data(),
        keepdims=st.booleans(),
    )
    def check(x, data, keepdims):
        if x.size == 0:
            return
        axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
        compare(name, lambda ns, a: ((a,), {"axis": axis, "keepdims": keepdims}), x)

    return check


test_argmax = index_test("argmax")
test_argmin = index_test("argmin")


@SETTINGS
@given(x=arrays(ALL, min_dims=1))
def test_nonzero(x):
    compare("nonzero", plain, x)


@SETTINGS
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3), data=st.data()
)
def test_where(shapes, data):
    condition = data.draw(hnp.arrays(np.bool_, shapes.input_shapes[0]))
    x1 = data.draw(hnp.arrays(np.float64, shapes.input_shapes[1], elements=st.floats(-9, 9)))
    x2 = data.draw(hnp.arrays(np.float64, shapes.input_shapes[2], elements=st.floats(-9, 9)))
    compare("where", plain, condition, x1, x2)


@SETTINGS
@given(
    x1=hnp.arrays(np.float64, st.integers(0, 6), elements=st.floats(-9, 9)),
    x2=arrays(["float64"]),
    side=st.sampled_from(["left", "right"]),
)
def test_searchsorted(x1, x2, side):
    compare("searchsorted", lambda ns, a, b: ((a, b), {"side": side}), np.sort(x1), x2)


def sort_test(name: str):
    @SETTINGS
    @given(
        x=arrays(
            REAL, min_dims=1, elements=lambda dt: elements_for(dt, None).filter(lambda v: v == v)
        ),
        data=st.data(),
        descending=st.booleans(),
    )
    def check(x, data, descending):
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        compare(
            name, lambda ns, a: ((a,), {"axis": axis, "descending": descending, "stable": True}), x
        )

    return check


test_sort = sort_test("sort")
test_argsort = sort_test("argsort")


def in_value_order(parts: list[np.ndarray]) -> list[np.ndarray]:
    """unique_values / unique_counts' arrays ordered by value (the standard leaves it open)."""
    order = np.argsort(parts[0], kind="stable")
    return [p[order] for p in parts]


SMALL_VALUES = arrays(
    INTS + FLOATS,
    elements=lambda dt: (
        st.integers(-3, 3).map(float) if np.dtype(dt).kind == "f" else st.integers(0, 3)
    ),
)


@SETTINGS
@given(x=SMALL_VALUES)
def test_unique_values_and_counts(x):
    with torch_is_tocha(TOCHA_MODULES):
        values = to_numpy(xp.unique_values(xp.asarray(x)))
        counts = to_numpy(list(xp.unique_counts(xp.asarray(x))))
    assert_same(np.sort(np.asarray(xps.unique_values(xps.asarray(x)))), np.sort(values), "values")
    expected = in_value_order(to_numpy(list(xps.unique_counts(xps.asarray(x)))))
    assert_same(expected, in_value_order(counts), f"unique_counts{x.dtype}{x.shape}")


@SETTINGS
@given(x=SMALL_VALUES)
def test_unique_inverse(x):
    """The values (in any order) as the standard's, and values[inverse] gives back x."""
    with torch_is_tocha(TOCHA_MODULES):
        values, inverse = to_numpy(list(xp.unique_inverse(xp.asarray(x))))
    expected_values, expected_inverse = to_numpy(list(xps.unique_inverse(xps.asarray(x))))
    assert_same(np.sort(expected_values), np.sort(values), f"unique_inverse{x.dtype}{x.shape}")
    assert inverse.shape == expected_inverse.shape and inverse.dtype == expected_inverse.dtype
    np.testing.assert_array_equal(values[inverse], x)


@SETTINGS
@given(
    x=arrays(INTS, elements=lambda dt: st.integers(0, 5)),
    y=arrays(INTS, elements=lambda dt: st.integers(0, 5)),
)
def test_isin(x, y):
    compare("isin", plain, x, y.astype(x.dtype))
    # array-api-strict 2.6 ignores invert=True (isin(0, 0, invert=True) is True there): the
    # inverted result is checked against the plain one.
    with torch_is_tocha(TOCHA_MODULES):
        plain_result = xp.isin(xp.asarray(x), xp.asarray(y.astype(x.dtype)))
        inverted = xp.isin(xp.asarray(x), xp.asarray(y.astype(x.dtype)), invert=True)
    np.testing.assert_array_equal(to_numpy(inverted), ~to_numpy(plain_result))


# ---------------------------------------------------------------- manipulation


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
def test_broadcast_arrays_and_shapes(shapes):
    arrays_in = [np.ones(s, dtype=np.int32) for s in shapes.input_shapes]
    compare("broadcast_arrays", plain, *arrays_in)
    assert tuple(xp.broadcast_shapes(*shapes.input_shapes)) == tuple(
        xps.broadcast_shapes(*shapes.input_shapes)
    )


@SETTINGS
@given(
    x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)),
    lead=st.lists(st.integers(0, 2), max_size=2),
    stretch=st.booleans(),
)
def test_broadcast_to(x, lead, stretch):
    """To a shape with more leading dims, and with its size-1 dims stretched to 2."""
    shape = tuple(2 if stretch and s == 1 else s for s in x.shape)
    compare("broadcast_to", lambda ns, a: ((a, (*lead, *shape)), {}), x)


@SETTINGS
@given(x=arrays(ALL, min_dims=1), data=st.data(), n=st.integers(1, 3))
def test_concat_and_stack(x, data, n):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    parts = [x] * n
    compare("concat", lambda ns, *a: ((list(a),), {"axis": axis}), *parts)
    compare("concat", lambda ns, *a: ((list(a),), {"axis": None}), *parts)
    compare("stack", lambda ns, *a: ((list(a),), {"axis": axis}), *parts)
    compare("unstack", lambda ns, a: ((a,), {"axis": axis}), x)


@SETTINGS
@given(x=arrays(ALL), data=st.data())
def test_expand_dims_flip_roll(x, data):
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim))
    compare("expand_dims", lambda ns, a: ((a,), {"axis": axis}), x)
    flip_axis = data.draw(axes(x.ndim))
    compare("flip", lambda ns, a: ((a,), {"axis": flip_axis}), x)
    shift = data.draw(st.integers(-5, 5))
    compare("roll", lambda ns, a: ((a, shift), {}), x)
    if x.ndim:
        roll_axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        compare("roll", lambda ns, a: ((a, shift), {"axis": roll_axis}), x)


@SETTINGS
@given(x=arrays(ALL), data=st.data())
def test_permute_moveaxis_reshape_squeeze(x, data):
    order = data.draw(st.permutations(range(x.ndim)))
    compare("permute_dims", lambda ns, a: ((a, tuple(order)), {}), x)
    if x.ndim:
        src, dst = (
            data.draw(st.integers(-x.ndim, x.ndim - 1)),
            data.draw(st.integers(-x.ndim, x.ndim - 1)),
        )
        compare("moveaxis", lambda ns, a: ((a, src, dst), {}), x)
    compare("reshape", lambda ns, a: ((a, (-1,)), {}), x)
    compare("reshape", lambda ns, a: ((a, tuple(reversed(x.shape))), {"copy": None}), x)
    ones = tuple(i for i, s in enumerate(x.shape) if s == 1)
    compare("squeeze", lambda ns, a: ((a,), {"axis": ones}), x)


@SETTINGS
@given(x=arrays(NUMERIC), data=st.data())
def test_repeat_tile(x, data):
    repeats = data.draw(st.integers(0, 3))
    axis = data.draw(st.none() | (st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()))
    compare("repeat", lambda ns, a: ((a, repeats), {"axis": axis}), x)
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=4)))
    compare("tile", lambda ns, a: ((a, reps), {}), x)


@SETTINGS
@given(x=arrays(NUMERIC, min_dims=1), data=st.data())
def test_take_and_take_along_axis(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    size = x.shape[axis]
    if size == 0:
        return
    indices = np.array(
        data.draw(st.lists(st.integers(-size, size - 1), max_size=4)), dtype=np.int64
    )
    compare("take", lambda ns, a, i: ((a, i), {"axis": axis}), x, indices)
    along = np.argsort(x.real if x.dtype.kind == "c" else x, axis=axis)
    compare("take_along_axis", lambda ns, a, i: ((a, i), {"axis": axis}), x, along)


# ---------------------------------------------------------------- creation


@SETTINGS
@given(
    start=st.integers(-10, 10),
    stop=st.integers(-10, 10),
    step=st.sampled_from([1, 2, 3, -1, -2]),
    dtype=st.sampled_from([None, "int32", "int64", "float32", "float64"]),
)
def test_arange(start, stop, step, dtype):
    compare("arange", lambda ns: ((start, stop, step), {"dtype": dtype and getattr(ns, dtype)}))


@SETTINGS
@given(
    start=st.floats(-10, 10), stop=st.floats(-10, 10), num=st.integers(0, 6), endpoint=st.booleans()
)
def test_linspace(start, stop, num, endpoint):
    compare("linspace", lambda ns: ((start, stop, num), {"endpoint": endpoint}), default_float=True)


@SETTINGS
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
    dtype=st.sampled_from([None, *ALL]),
    value=st.sampled_from([0, 1, 7]),
)
def test_fill_creation(shape, dtype, value):
    def kw(ns):
        return {"dtype": dtype and getattr(ns, dtype)}

    compare("zeros", lambda ns: ((shape,), kw(ns)), default_float=dtype is None)
    compare("ones", lambda ns: ((shape,), kw(ns)), default_float=dtype is None)
    compare("full", lambda ns: ((shape, value), kw(ns)))
    fill = True if dtype == "bool" else value
    compare("full", lambda ns: ((shape, fill), kw(ns)))
    empty_strict = xps.empty(shape, **kw(xps))
    empty_tocha = xp.empty(shape, **kw(xp))
    assert tuple(empty_tocha.shape) == empty_strict.shape
    expected_dtype = np.asarray(empty_strict).dtype
    assert to_numpy(empty_tocha).dtype == (np.float32 if dtype is None else expected_dtype)


@SETTINGS
@given(x=arrays(ALL), dtype=st.sampled_from([None, *ALL]))
def test_like_creation(x, dtype):
    def kw(ns):
        return {"dtype": dtype and getattr(ns, dtype)}

    compare("zeros_like", lambda ns, a: ((a,), kw(ns)), x)
    compare("ones_like", lambda ns, a: ((a,), kw(ns)), x)
    compare("full_like", lambda ns, a: ((a, 1), kw(ns)), x)
    empty = xp.empty_like(xp.asarray(x), **kw(xp))
    assert to_numpy(empty).shape == x.shape


@SETTINGS
@given(
    n=st.integers(0, 4),
    m=st.none() | st.integers(0, 4),
    k=st.integers(-4, 4),
    dtype=st.sampled_from([None, *ALL]),
)
def test_eye(n, m, k, dtype):
    compare(
        "eye",
        lambda ns: ((n, m), {"k": k, "dtype": dtype and getattr(ns, dtype)}),
        default_float=dtype is None,
    )


@SETTINGS
@given(x=arrays(NUMERIC, min_dims=2), k=st.integers(-3, 3))
def test_tril_triu(x, k):
    compare("tril", lambda ns, a: ((a,), {"k": k}), x)
    compare("triu", lambda ns, a: ((a,), {"k": k}), x)


@SETTINGS
@given(
    vectors=st.lists(
        hnp.arrays(np.float64, st.integers(0, 3), elements=st.floats(-5, 5)), min_size=1, max_size=3
    ),
    indexing=st.sampled_from(["xy", "ij"]),
)
def test_meshgrid(vectors, indexing):
    compare("meshgrid", lambda ns, *a: (a, {"indexing": indexing}), *vectors)


@SETTINGS
@given(x=arrays(ALL))
def test_asarray_and_from_dlpack(x):
    compare("asarray", lambda ns, a: ((a,), {"copy": True}), x)
    compare("asarray", lambda ns, a: ((x.tolist(),), {"dtype": getattr(ns, x.dtype.name)}), x)
    compare("from_dlpack", plain, x)


# ---------------------------------------------------------------- data type functions


@SETTINGS
@given(x=arrays(ALL), dtype=st.sampled_from(ALL))
def test_astype(x, dtype):
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        return  # the standard leaves complex -> real casts unspecified
    if x.dtype.kind == "f" and np.dtype(dtype).kind in "iub":
        x = np.nan_to_num(np.trunc(x), nan=0, posinf=1, neginf=-1).clip(0, 100).astype(x.dtype)
    compare("astype", lambda ns, a: ((a, getattr(ns, dtype)), {}), x)


KIND_ORDER = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


@pytest.mark.parametrize("from_", ALL)
def test_can_cast(from_):
    """Where the standard allows a cast, torch does; torch also allows any cast that keeps
    the kind or goes up (its ``same_kind`` rule: int8 to uint8, float64 to float32), which
    array-api-compat passes on (torch's documented departure: can_cast)."""
    for to in ALL:
        actual = xp.can_cast(tocha_dtype(from_), tocha_dtype(to))
        if xps.can_cast(strict_dtype(from_), strict_dtype(to)):
            assert actual, (from_, to)
        else:
            kinds = KIND_ORDER[np.dtype(from_).kind], KIND_ORDER[np.dtype(to).kind]
            assert actual == (kinds[0] <= kinds[1]), (from_, to)


@pytest.mark.parametrize("first", ALL)
def test_result_type(first):
    for second in ALL:
        try:
            expected = xps.result_type(strict_dtype(first), strict_dtype(second))
        except TypeError:
            continue  # no promotion in the standard (int with uint64 and the like)
        actual = xp.result_type(tocha_dtype(first), tocha_dtype(second))
        assert str(actual).split(".")[-1] == str(expected).split(".")[-1], (first, second)


@pytest.mark.parametrize("name", FLOATS + COMPLEX)
def test_finfo(name):
    expected, actual = xps.finfo(strict_dtype(name)), xp.finfo(tocha_dtype(name))
    for field in ("bits", "eps", "max", "min", "smallest_normal"):
        assert getattr(actual, field) == getattr(expected, field), field
    assert xp.finfo(xp.ones(1, dtype=tocha_dtype(name))).bits == expected.bits


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    expected, actual = xps.iinfo(strict_dtype(name)), xp.iinfo(tocha_dtype(name))
    for field in ("bits", "max", "min"):
        assert getattr(actual, field) == getattr(expected, field), field
    assert xp.iinfo(xp.ones(1, dtype=tocha_dtype(name))).bits == expected.bits


KINDS = [
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
]


@pytest.mark.parametrize("name", ALL)
def test_isdtype(name):
    for kind in [*KINDS, ("integral", "real floating"), strict_dtype(name)]:
        tocha_kind = tocha_dtype(name) if not isinstance(kind, str | tuple) else kind
        assert xp.isdtype(tocha_dtype(name), tocha_kind) == xps.isdtype(strict_dtype(name), kind), (
            kind
        )


def test_constants():
    for name in ("e", "pi", "inf"):
        assert getattr(xp, name) == getattr(xps, name)
    assert math.isnan(xp.nan)
    assert xp.newaxis is None is xps.newaxis
    assert xp.__array_api_version__ in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


def test_namespace_info():
    info = xp.__array_namespace_info__()
    assert info.capabilities()["boolean indexing"] in (True, False)
    dtypes = info.dtypes()
    for name in ("bool", "int64", "float32", "complex64"):
        assert dtypes[name] == tocha_dtype(name)
    assert info.default_dtypes()["real floating"] == xp.float32
    assert info.default_device() in info.devices()


def test_array_namespace_of_a_tocha_tensor():
    """array_api_compat.array_namespace gives its torch namespace for a tocha tensor when
    ``import torch`` is tocha (a program run by ``python -m tocha.run``)."""
    import subprocess

    code = (
        "import tocha.compat; tocha.compat.alias_torch(); import torch, array_api_compat\n"
        "ns = array_api_compat.array_namespace(torch.ones(2))\n"
        "print(ns.__name__, ns.sum(torch.ones(2, 3), axis=0, keepdims=True).shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["array_api_compat.torch", "torch.Size([1,", "3])"]  # aliased


# ---------------------------------------------------------------- linear algebra


@SETTINGS
@given(data=st.data(), dtype=st.sampled_from(FLOATS + COMPLEX + ["int64"]))
def test_matmul_vecdot_tensordot(data, dtype):
    n, m, k = (data.draw(st.integers(0, 3)) for _ in range(3))
    batch = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=2))
    el = elements_for(dtype, lambda dt: st.integers(-5, 5).map(np.dtype(dt).type))
    a = data.draw(hnp.arrays(np.dtype(dtype), (*batch, n, k), elements=el))
    b = data.draw(hnp.arrays(np.dtype(dtype), (k, m), elements=el))
    compare("matmul", plain, a, b)
    compare("matrix_transpose", plain, a)
    c = data.draw(hnp.arrays(np.dtype(dtype), (*batch, n, k), elements=el))
    compare("vecdot", plain, a, c)
    compare("vecdot", lambda ns, x, y: ((x, y), {"axis": -2}), a, c)
    compare("tensordot", lambda ns, x, y: ((x, y), {"axes": 1}), a, b)
    compare("tensordot", lambda ns, x, y: ((x, y), {"axes": ([-1], [0])}), a, b)


def square_matrices(dtypes, spd=False):
    @st.composite
    def draw(draw_):
        dtype = draw_(st.sampled_from(dtypes))
        n = draw_(st.integers(1, 3))
        batch = draw_(hnp.array_shapes(min_dims=0, max_dims=1, min_side=1, max_side=2))
        a = draw_(hnp.arrays(np.float64, (*batch, n, n), elements=st.floats(-3, 3)))
        if spd:
            a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
        else:
            a = a + 4 * n * np.eye(n)
        return a.astype(dtype)

    return draw()


LINALG_ON_MATRICES = [
    "det",
    "inv",
    "matrix_rank",
    "pinv",
    "slogdet",
    "svdvals",
    "trace",
    "diagonal",
    "matrix_norm",
]


@pytest.mark.parametrize("name", LINALG_ON_MATRICES)
def test_linalg_of_a_matrix(name):
    @SETTINGS
    @given(a=square_matrices(FLOATS))
    def check(a):
        tol = (
            {"rtol": 1e-3, "atol": 1e-4} if a.dtype == np.float32 else {"rtol": 1e-7, "atol": 1e-9}
        )
        compare(name, plain, a, namespace="linalg", **tol)

    check()


@SETTINGS
@given(a=square_matrices(FLOATS, spd=True), upper=st.booleans())
def test_linalg_cholesky_eigvalsh_solve(a, upper):
    tol = {"rtol": 1e-3, "atol": 1e-3} if a.dtype == np.float32 else {}
    compare("cholesky", lambda ns, x: ((x,), {"upper": upper}), a, namespace="linalg", **tol)
    compare("eigvalsh", plain, a, namespace="linalg", **tol)
    compare("solve", plain, a, a[..., :1].copy(), namespace="linalg", **tol)
    compare("matrix_power", lambda ns, x: ((x, 2), {}), a, namespace="linalg", **tol)


def reconstructs(name: str, a: np.ndarray) -> None:
    """eigh, qr and svd: the factors (unique only up to signs) give back the matrix."""
    tol = {"rtol": 1e-3, "atol": 1e-3} if a.dtype == np.float32 else {"rtol": 1e-8, "atol": 1e-8}
    parts = to_numpy(getattr(xp.linalg, name)(xp.asarray(a)))
    strict_parts = to_numpy(getattr(xps.linalg, name)(xps.asarray(a)))
    assert [p.shape for p in parts] == [p.shape for p in strict_parts]
    assert [p.dtype for p in parts] == [p.dtype for p in strict_parts]
    if name == "eigh":
        w, v = parts
        back = (v * w[..., None, :]) @ np.swapaxes(v, -1, -2)
    elif name == "qr":
        back = parts[0] @ parts[1]
    else:
        u, s, vh = parts
        back = (u * s[..., None, :]) @ vh
    np.testing.assert_allclose(back, a, **tol)


@pytest.mark.parametrize("name", ["eigh", "qr", "svd"])
def test_linalg_factorizations(name):
    @SETTINGS
    @given(a=square_matrices(FLOATS, spd=name == "eigh"))
    def check(a):
        reconstructs(name, a)

    check()


@SETTINGS
@given(
    x=arrays(FLOATS, max_dims=2),
    data=st.data(),
    keepdims=st.booleans(),
    ord=st.sampled_from([2, 1, math.inf, -math.inf, 0]),
)
def test_linalg_vector_norm(x, data, keepdims, ord):
    axis = data.draw(st.none() | (st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()))
    if x.size == 0 and ord in (math.inf, -math.inf):
        return
    compare(
        "vector_norm",
        lambda ns, a: ((a,), {"axis": axis, "keepdims": keepdims, "ord": ord}),
        x,
        namespace="linalg",
    )


@SETTINGS
@given(
    a=hnp.arrays(np.float64, st.tuples(st.integers(1, 2), st.just(3)), elements=st.floats(-5, 5)),
    b=hnp.arrays(np.float64, 3, elements=st.floats(-5, 5)),
)
def test_linalg_cross_outer_and_aliases(a, b):
    compare("cross", plain, a, b, namespace="linalg")
    compare("outer", plain, b, b, namespace="linalg")
    compare("matmul", plain, a, b, namespace="linalg")
    compare("matrix_transpose", plain, a, namespace="linalg")
    compare("vecdot", plain, a, b, namespace="linalg")
    compare("tensordot", lambda ns, x, y: ((x, y), {"axes": 1}), a, b, namespace="linalg")


# ---------------------------------------------------------------- fft

FFT_COMPLEX = ["fft", "ifft", "fftn", "ifftn"]
FFT_REAL_IN = ["rfft", "rfftn", "ihfft"]
FFT_COMPLEX_TO_REAL = ["irfft", "irfftn", "hfft"]


@pytest.mark.parametrize("name", FFT_COMPLEX + FFT_REAL_IN + FFT_COMPLEX_TO_REAL)
def test_fft(name):
    dtypes = FLOATS if name in FFT_REAL_IN else COMPLEX

    @SETTINGS
    @given(
        x=arrays(dtypes, min_dims=1, elements=lambda dt: st.integers(-4, 4).map(float)),
        norm=st.sampled_from(["backward", "ortho", "forward"]),
    )
    def check(x, norm):
        if 0 in x.shape:
            return
        compare(
            name, lambda ns, a: ((a,), {"norm": norm}), x, namespace="fft", rtol=1e-4, atol=1e-4
        )

    check()


@SETTINGS
@given(x=arrays(FLOATS + COMPLEX, min_dims=1), n=st.integers(1, 6), d=st.sampled_from([1.0, 0.5]))
def test_fft_helpers(x, n, d):
    compare("fftfreq", lambda ns: ((n,), {"d": d}), namespace="fft", default_float=True)
    compare("rfftfreq", lambda ns: ((n,), {"d": d}), namespace="fft", default_float=True)
    compare("fftshift", plain, x, namespace="fft")
    compare("ifftshift", plain, x, namespace="fft")
    compare("fftshift", lambda ns, a: ((a,), {"axes": 0}), x, namespace="fft")


# ---------------------------------------------------------------- coverage

CHECKED_BY = {
    **{name: "test_unary_elementwise" for name in UNARY},
    **{name: "test_binary_elementwise" for name in BINARY},
    "clip": "test_clip",
    **{
        n: f"test_{n}"
        for n in (
            "sum",
            "prod",
            "mean",
            "std",
            "var",
            "max",
            "min",
            "all",
            "any",
            "count_nonzero",
            "cumulative_sum",
            "cumulative_prod",
            "diff",
            "argmax",
            "argmin",
            "nonzero",
            "where",
            "searchsorted",
            "sort",
            "argsort",
            "isin",
            "broadcast_to",
            "arange",
            "linspace",
            "eye",
            "meshgrid",
            "astype",
            "can_cast",
            "result_type",
            "finfo",
            "iinfo",
            "isdtype",
        )
    },
    "unique_values": "test_unique_values_and_counts",
    "unique_counts": "test_unique_values_and_counts",
    "unique_inverse": "test_unique_inverse",
    **{n: "test_broadcast_arrays_and_shapes" for n in ("broadcast_arrays", "broadcast_shapes")},
    **{n: "test_concat_and_stack" for n in ("concat", "stack", "unstack")},
    **{n: "test_expand_dims_flip_roll" for n in ("expand_dims", "flip", "roll")},
    **{
        n: "test_permute_moveaxis_reshape_squeeze"
        for n in ("permute_dims", "moveaxis", "reshape", "squeeze")
    },
    **{n: "test_repeat_tile" for n in ("repeat", "tile")},
    **{n: "test_take_and_take_along_axis" for n in ("take", "take_along_axis")},
    **{n: "test_fill_creation" for n in ("zeros", "ones", "full", "empty")},
    **{n: "test_like_creation" for n in ("zeros_like", "ones_like", "full_like", "empty_like")},
    **{n: "test_tril_triu" for n in ("tril", "triu")},
    **{n: "test_asarray_and_from_dlpack" for n in ("asarray", "from_dlpack")},
    **{
        n: "test_matmul_vecdot_tensordot"
        for n in ("matmul", "matrix_transpose", "vecdot", "tensordot")
    },
    **{n: "test_constants" for n in ("e", "pi", "inf", "nan", "newaxis")},
    **{n: "test_can_cast" for n in ALL},
    "__array_namespace_info__": "test_namespace_info",
    "__array_api_version__": "test_constants",
    "linalg": "test_linalg_*",
    "fft": "test_fft*",
}
LINALG_CHECKED = {
    *LINALG_ON_MATRICES,
    "cholesky",
    "eigvalsh",
    "solve",
    "matrix_power",
    "eigh",
    "qr",
    "svd",
    "vector_norm",
    "cross",
    "outer",
    "matmul",
    "matrix_transpose",
    "vecdot",
    "tensordot",
}
FFT_CHECKED = {
    *FFT_COMPLEX,
    *FFT_REAL_IN,
    *FFT_COMPLEX_TO_REAL,
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
}


def test_every_name_of_the_standard_is_checked_or_listed():
    names = set(xps.__all__)
    assert names - set(CHECKED_BY) - set(NOT_CHECKED) == set()
    assert set(xps.linalg.__all__) - LINALG_CHECKED == set()
    assert set(xps.fft.__all__) - FFT_CHECKED == set()
    for name in sorted(names - set(NOT_CHECKED)):
        assert hasattr(xp, name), f"array_api_compat.torch on tocha lacks {name}"


# ---------------------------------------------------------------- what tocha fixed for it


def test_a_cpu_device_index_names_the_cpu():
    """``cpu:1`` is the CPU, as in PyTorch (array-api-compat's devices() counts on it)."""
    assert tocha.zeros(1, device="cpu:1").device == tocha.device("cpu")
    assert tocha.empty((0,), device=tocha.device("cpu", index=0)).device.index is None
    # PyTorch answers (cpu, meta) too: array-api-compat tries every device type it can make
    assert xp.__array_namespace_info__().devices() == (tocha.device("cpu"), tocha.device("meta"))


def test_numpy_of_a_0d_result_is_an_array_sharing_memory():
    result = tocha.std(tocha.tensor([1.0, 2.0]))
    array = result.numpy()
    assert isinstance(array, np.ndarray) and array.shape == ()
    array[()] = 7.0
    assert result.item() == 7.0


def test_linalg_fft_special_take_axis_and_keepdims():
    x = tocha.arange(6.0).reshape(2, 3)
    assert tocha.linalg.vector_norm(x, axis=1, keepdims=True).shape == (2, 1)
    assert tocha.linalg.matrix_norm(x, keepdims=True).shape == (1, 1)
    assert tocha.fft.fft(x, axis=0).shape == (2, 3)
    assert tocha.special.logsumexp(x, axis=0).shape == (3,)
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        tocha.linalg.vector_norm(x, dim=0, axis=0)


def test_every_name_dir_lists_is_there():
    """array-api-compat copies torch's namespace with ``hasattr`` over ``dir(torch)``: dir(tocha)
    lists only what tocha has with the distributions installed."""
    assert all(hasattr(tocha, name) for name in dir(tocha))
