"""Reductions against NumPy references and PyTorch: values, dtypes, shapes, errors."""

from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
import pytest
from helpers import assert_tensor

import tocha
from tocha import return_types

NAN, INF = float("nan"), float("inf")
_rng = np.random.default_rng(0)
# The references (and torch) warn on empty slices and on corrections beyond the sample size.
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(empty slice|Degrees of freedom|degrees of freedom|discards the imaginary):Warning"
)

# Named inputs: float, non-contiguous, 3-d, NaN, integer with ties, small ints, bool, 0-dim,
# empty, half, complex.
INPUTS = {
    "f": _rng.standard_normal((3, 4)).astype(np.float32),
    "fT": _rng.standard_normal((4, 3)).astype(np.float32).T,
    "f3": _rng.standard_normal((2, 3, 4)),
    "nan": np.array(
        [[1.0, NAN, 3.0, -2.0], [4.0, 0.5, 4.0, 0.0], [NAN, NAN, 1.0, 2.0]], dtype=np.float32
    ),
    "i": np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 0]]),
    "i32": np.array([[7, -2, 7], [0, 1, 1]], dtype=np.int32),
    "u8": np.array([[200, 3, 0], [1, 1, 9]], dtype=np.uint8),
    "b": np.array([[True, False, True], [True, True, True]]),
    "s": np.array(2.5, dtype=np.float32),
    "e": np.zeros((0, 3), dtype=np.float32),
    "h": _rng.standard_normal((3, 5)).astype(np.float16),
    "c": (_rng.standard_normal((2, 3)) + 1j * _rng.standard_normal((2, 3))).astype(np.complex64),
}
FLOATS = ("f", "fT", "f3", "nan", "s", "h")
INTS = ("i", "i32", "u8", "b")


def _axis(dim):
    return tuple(dim) if isinstance(dim, list) else dim


def _all_if_empty(dim):
    """PyTorch's sum, mean and amax reduce every dim for an empty dim list; NumPy none."""
    return None if dim == () or dim == [] else _axis(dim)


def _sum_dtype(a):
    return np.int64 if a.dtype.kind in "biu" else (np.float32 if a.dtype == np.float16 else None)


def _round(result, a):
    """A reference computed in a wider dtype, rounded back to the input's (as PyTorch's half)."""
    return np.asarray(result).astype(a.dtype) if a.dtype == np.float16 else np.asarray(result)


def _with_index(values_fn, index_fn):
    """Reference of a (values, indices) op along one dim, from per-row functions."""

    def ref(a, dim=-1, keepdim=False):
        if a.ndim == 0:
            return a.copy(), np.array(0)
        moved = np.moveaxis(a, dim, -1)
        rows = moved.reshape(-1, moved.shape[-1])
        values = np.array([values_fn(r) for r in rows], dtype=a.dtype).reshape(moved.shape[:-1])
        index = np.array([index_fn(r) for r in rows], dtype=np.int64).reshape(moved.shape[:-1])
        if keepdim:
            values, index = np.expand_dims(values, dim), np.expand_dims(index, dim)
        return values, index

    return ref


def _lower_median(row):
    if not row.size or np.isnan(row).any():
        return np.nan
    return np.sort(row, kind="stable")[(len(row) - 1) // 2]


def _median_index(row):
    if np.isnan(row).any():
        return int(np.argmax(np.isnan(row)))
    return int(np.argsort(row, kind="stable")[(len(row) - 1) // 2])


def _nan_median_index(row):
    valid = np.flatnonzero(~np.isnan(row))
    if not len(valid):
        return 0
    order = valid[np.argsort(row[valid], kind="stable")]
    return int(order[(len(valid) - 1) // 2])


def _mode_value(row):
    counts = Counter(row.tolist())
    best = max(counts.values())
    return min(v for v, c in counts.items() if c == best)


def _mode_index(row):
    return int(np.flatnonzero(row == _mode_value(row))[-1])


def _cum_extreme(better):
    def ref(a, dim):
        if a.ndim == 0:
            return a.copy(), np.array(0)
        moved = np.moveaxis(a, dim, -1)
        values, index = np.empty_like(moved), np.zeros(moved.shape, np.int64)
        for pos in np.ndindex(moved.shape[:-1]):
            row = moved[pos]
            for j, v in enumerate(row):
                prev = values[pos][j - 1] if j else None
                if j == 0 or np.isnan(v) or (not np.isnan(prev) and better(v, prev)):
                    values[pos][j], index[pos][j] = v, j
                else:
                    values[pos][j], index[pos][j] = prev, index[pos][j - 1]
        return np.moveaxis(values, -1, dim), np.moveaxis(index, -1, dim)

    return ref


def _vector_norm(a, p=2, dim=None, keepdim=False):
    p = 2 if p == "fro" else p
    result = np.linalg.vector_norm(
        a.astype(np.float32) if a.dtype == np.float16 else a,
        ord=p,
        axis=_axis(dim),
        keepdims=keepdim,
    )
    return _round(result, a)


def _logsumexp(a, dim, keepdim=False):
    a = a.astype(np.float32) if a.dtype.kind in "biu" else a
    if a.size == 0:
        return np.full(np.sum(a, axis=_axis(dim), keepdims=keepdim).shape, -INF, a.dtype)
    m = np.max(a, axis=_axis(dim), keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    total = np.sum(np.exp(a - m), axis=_axis(dim), keepdims=True)
    result = np.log(total) + m
    return result if keepdim else np.squeeze(result, _axis(dim))


def _moment(fn):
    def ref(a, dim=None, unbiased=True, keepdim=False, correction=None):
        correction = int(unbiased) if correction is None else correction
        wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        n = a.size // max(1, np.sum(a, axis=_axis(dim), keepdims=keepdim).size)
        if n - correction <= 0:
            return np.full(
                np.sum(a.real, axis=_axis(dim), keepdims=keepdim).shape, NAN, a.real.dtype
            )
        return fn(wide, axis=_axis(dim), ddof=correction, keepdims=keepdim).astype(a.real.dtype)

    return ref


REF = {
    "sum": lambda a, dim=None, keepdim=False: _round(
        np.sum(a, axis=_all_if_empty(dim), keepdims=keepdim, dtype=_sum_dtype(a)), a
    ),
    "nansum": lambda a, dim=None, keepdim=False: _round(
        np.nansum(a, axis=_axis(dim), keepdims=keepdim, dtype=_sum_dtype(a)), a
    ),
    "prod": lambda a, dim=None, keepdim=False: _round(
        np.prod(a, axis=dim, keepdims=keepdim, dtype=_sum_dtype(a)), a
    ),
    "mean": lambda a, dim=None, keepdim=False: _round(
        np.mean(a, axis=_axis(dim), keepdims=keepdim, dtype=_sum_dtype(a)), a
    ),
    "nanmean": lambda a, dim=None, keepdim=False: np.nanmean(a, axis=_axis(dim), keepdims=keepdim),
    "amax": lambda a, dim=(), keepdim=False: np.max(a, axis=_all_if_empty(dim), keepdims=keepdim),
    "amin": lambda a, dim=(), keepdim=False: np.min(a, axis=_all_if_empty(dim), keepdims=keepdim),
    "max": lambda a, dim=None, keepdim=False: (
        np.max(a)
        if dim is None
        else (np.max(a, axis=dim, keepdims=keepdim), np.argmax(a, axis=dim, keepdims=keepdim))
    ),
    "min": lambda a, dim=None, keepdim=False: (
        np.min(a)
        if dim is None
        else (np.min(a, axis=dim, keepdims=keepdim), np.argmin(a, axis=dim, keepdims=keepdim))
    ),
    "aminmax": lambda a, dim=None, keepdim=False: (
        np.min(a, axis=dim, keepdims=keepdim),
        np.max(a, axis=dim, keepdims=keepdim),
    ),
    "argmax": lambda a, dim=None, keepdim=False: np.argmax(a, axis=dim, keepdims=keepdim),
    "argmin": lambda a, dim=None, keepdim=False: np.argmin(a, axis=dim, keepdims=keepdim),
    "var": _moment(np.var),
    "std": _moment(np.std),
    "all": lambda a, dim=None, keepdim=False: np.all(a, axis=_axis(dim), keepdims=keepdim).astype(
        np.uint8 if a.dtype == np.uint8 else bool
    ),
    "any": lambda a, dim=None, keepdim=False: np.any(a, axis=_axis(dim), keepdims=keepdim).astype(
        np.uint8 if a.dtype == np.uint8 else bool
    ),
    "count_nonzero": lambda a, dim=None: np.asarray(np.count_nonzero(a, axis=_axis(dim)), np.int64),
    "norm": _vector_norm,
    "logsumexp": _logsumexp,
    "cumsum": lambda a, dim: _round(
        np.cumsum(a, axis=dim, dtype=_sum_dtype(a))
        if a.ndim
        else a.astype(_sum_dtype(a) or a.dtype),
        a,
    ),
    "cumprod": lambda a, dim: _round(
        np.cumprod(a, axis=dim, dtype=_sum_dtype(a))
        if a.ndim
        else a.astype(_sum_dtype(a) or a.dtype),
        a,
    ),
    "cummax": _cum_extreme(lambda v, prev: v >= prev),
    "cummin": _cum_extreme(lambda v, prev: v <= prev),
    "median": lambda a, dim=None, keepdim=False: (
        np.asarray(_lower_median(a.ravel()), a.dtype)
        if dim is None
        else _with_index(_lower_median, _median_index)(a, dim, keepdim)
    ),
    "nanmedian": lambda a, dim=None, keepdim=False: (
        np.asarray(
            _lower_median(a.ravel()[~np.isnan(a.ravel())]) if (~np.isnan(a)).any() else NAN, a.dtype
        )
        if dim is None
        else _with_index(
            lambda r: _lower_median(r[~np.isnan(r)]) if (~np.isnan(r)).any() else NAN,
            _nan_median_index,
        )(a, dim, keepdim)
    ),
    "mode": _with_index(_mode_value, _mode_index),
}

# (op, input name, positional args, keyword args)
CASES = [
    *[("sum", x, (), {}) for x in (*FLOATS, *INTS, "e", "c")],
    ("sum", "f", (0,), {}),
    ("sum", "fT", (-1, True), {}),
    ("sum", "f3", ((0, 2),), {}),
    ("sum", "f3", ([-1, 0], True), {}),
    ("sum", "e", (0,), {}),
    ("sum", "e", (1,), {}),
    ("sum", "s", (0,), {}),
    ("sum", "s", (-1, True), {}),
    ("sum", "f", ((),), {}),
    ("sum", "u8", (1,), {}),
    ("sum", "b", (0,), {}),
    ("sum", "f", (), {"dim": None, "keepdim": True}),
    ("nansum", "nan", (), {}),
    ("nansum", "nan", (1,), {}),
    ("nansum", "i", (0,), {}),
    ("nansum", "h", (), {}),
    ("prod", "f", (), {}),
    ("prod", "i32", (), {}),
    ("prod", "u8", (1,), {}),
    ("prod", "b", (), {}),
    ("prod", "e", (0,), {}),
    ("prod", "fT", (0, True), {}),
    ("prod", "s", (0,), {}),
    ("prod", "h", (1,), {}),
    ("mean", "f", (), {}),
    ("mean", "fT", (1,), {}),
    ("mean", "f3", ((0, -1), True), {}),
    ("mean", "e", (), {}),
    ("mean", "e", (0,), {}),
    ("mean", "h", (), {}),
    ("mean", "c", (), {}),
    ("mean", "s", (), {}),
    ("mean", "nan", (0,), {}),
    ("nanmean", "nan", (), {}),
    ("nanmean", "nan", (1, True), {}),
    ("nanmean", "f", (0,), {}),
    *[("max", x, (), {}) for x in ("f", "fT", "nan", "i", "u8", "b", "s", "h")],
    ("max", "f", (0,), {}),
    ("max", "fT", (-1, True), {}),
    ("max", "nan", (1,), {}),
    ("max", "i", (0,), {}),
    ("max", "i", (1,), {}),
    ("max", "b", (1,), {}),
    ("max", "s", (0,), {}),
    ("max", "e", (1,), {}),
    ("max", "f3", (1,), {"keepdim": True}),
    ("min", "f", (), {}),
    ("min", "nan", (), {}),
    ("min", "i", (0,), {}),
    ("min", "nan", (0,), {}),
    ("min", "fT", (1,), {}),
    ("min", "s", (-1, True), {}),
    ("amax", "f", (), {}),
    ("amax", "f3", ((0, 2),), {}),
    ("amax", "nan", (1, True), {}),
    ("amax", "e", (1,), {}),
    ("amax", "u8", (), {}),
    ("amax", "b", (0,), {}),
    ("amin", "fT", (-1,), {}),
    ("amin", "i", ((), True), {}),
    ("amin", "s", (0,), {}),
    ("aminmax", "f", (), {}),
    ("aminmax", "nan", (), {"dim": 1}),
    ("aminmax", "b", (), {}),
    ("aminmax", "i", (), {"dim": 0, "keepdim": True}),
    ("aminmax", "e", (), {"dim": 1}),
    ("argmax", "f", (), {}),
    ("argmax", "fT", (0,), {}),
    ("argmax", "nan", (1,), {}),
    ("argmax", "i", (), {}),
    ("argmax", "i", (1, True), {}),
    ("argmax", "f3", (), {"keepdim": True}),
    ("argmax", "s", (), {}),
    ("argmax", "s", (0, True), {}),
    ("argmax", "h", (1,), {}),
    ("argmin", "i", (0,), {}),
    ("argmin", "nan", (), {}),
    ("argmin", "u8", (1,), {}),
    ("var", "f", (), {}),
    ("var", "fT", (1,), {}),
    ("var", "f3", ((0, 2), True), {}),
    ("var", "f", (0,), {"correction": 0}),
    ("var", "f", (), {"correction": 2.5}),
    ("var", "c", (), {}),
    ("var", "e", (0,), {}),
    ("var", "s", (), {}),
    ("var", "h", (1,), {}),
    ("std", "f", (), {}),
    ("std", "f3", (-1,), {"keepdim": True}),
    ("std", "c", (1,), {}),
    ("std", "nan", (1,), {}),
    ("std", "f", (1,), {"correction": 0}),
    *[(op, x, (), {}) for op in ("all", "any") for x in ("f", "i", "u8", "b", "e", "s", "c")],
    ("all", "b", (1,), {}),
    ("any", "u8", (0, True), {}),
    ("all", "i", ((0, 1),), {}),
    ("any", "e", (0,), {}),
    ("all", "f", (), {"keepdim": True}),
    ("count_nonzero", "i", (), {}),
    ("count_nonzero", "nan", (1,), {}),
    ("count_nonzero", "f3", ((0, 2),), {}),
    ("count_nonzero", "b", (0,), {}),
    ("count_nonzero", "c", (), {}),
    ("count_nonzero", "s", (0,), {}),
    ("norm", "f", (), {}),
    ("norm", "fT", (1,), {}),
    ("norm", "f", (INF,), {}),
    ("norm", "f", (-INF, 1), {}),
    ("norm", "f3", (0,), {}),
    ("norm", "f3", (3.5, (0, 2), True), {}),
    ("norm", "f", (-1,), {}),
    ("norm", "c", (), {}),
    ("norm", "c", (1, 0), {}),
    ("norm", "h", (), {}),
    ("norm", "e", (), {}),
    ("norm", "e", (INF, 1), {}),
    ("norm", "f", ("fro", 0, True), {}),
    ("norm", "s", (), {}),
    ("logsumexp", "f", (1,), {}),
    ("logsumexp", "fT", (0, True), {}),
    ("logsumexp", "f3", ((0, 2),), {}),
    ("logsumexp", "i", (0,), {}),
    ("logsumexp", "b", (1,), {}),
    ("logsumexp", "e", (0,), {}),
    ("logsumexp", "s", (0,), {}),
    ("logsumexp", "nan", (1,), {}),
    ("cumsum", "f", (1,), {}),
    ("cumsum", "fT", (0,), {}),
    ("cumsum", "i32", (1,), {}),
    ("cumsum", "u8", (0,), {}),
    ("cumsum", "b", (1,), {}),
    ("cumsum", "s", (0,), {}),
    ("cumsum", "e", (0,), {}),
    ("cumsum", "h", (-1,), {}),
    ("cumsum", "nan", (1,), {}),
    ("cumprod", "f", (0,), {}),
    ("cumprod", "i", (-1,), {}),
    ("cumprod", "u8", (1,), {}),
    ("cummax", "nan", (1,), {}),
    ("cummax", "i", (0,), {}),
    ("cummax", "fT", (1,), {}),
    ("cummax", "b", (1,), {}),
    ("cummax", "s", (0,), {}),
    ("cummax", "e", (0,), {}),
    ("cummin", "nan", (1,), {}),
    ("cummin", "i", (1,), {}),
    ("cummin", "f3", (-1,), {}),
    ("median", "f", (), {}),
    ("median", "i", (), {}),
    ("median", "nan", (), {}),
    ("median", "fT", (1,), {}),
    ("median", "i", (1,), {}),
    ("median", "nan", (1, True), {}),
    ("median", "s", (), {}),
    ("median", "s", (0,), {}),
    ("median", "e", (), {}),
    ("median", "e", (1,), {}),
    ("median", "f3", (0,), {}),
    ("nanmedian", "nan", (), {}),
    ("nanmedian", "nan", (1,), {}),
    ("nanmedian", "i", (0,), {}),
    ("nanmedian", "f", (0, True), {}),
    ("mode", "i", (), {}),
    ("mode", "i", (0,), {}),
    ("mode", "i32", (1, True), {}),
    ("mode", "b", (1,), {}),
    ("mode", "s", (), {}),
    ("mode", "f", (0,), {}),
    ("mode", "e", (1,), {}),
]
CASES += [
    (op, x, args, kw)
    for op, x, args, kw in [
        ("mode", "u8", (0,), {}),
        ("median", "i32", (0,), {}),
        ("nanmedian", "fT", (), {}),
    ]
]


def _case_id(case):
    op, x, args, kw = case
    return f"{op}-{x}-{args}-{kw}".replace(" ", "")


def _lib_call(lib, op, x, args, kwargs):
    fn = getattr(lib, op)
    return fn(x, *args, **kwargs)


def _check(actual, expected, **tol):
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_tensor(a, e, **tol)
    else:
        assert_tensor(actual, expected, **tol)


def _tol(x):
    return {"rtol": 2e-3, "atol": 2e-3} if x == "h" else {"rtol": 1e-5, "atol": 1e-5}


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_against_numpy(case):
    op, x, args, kwargs = case
    a = INPUTS[x]
    got = _lib_call(tocha, op, tocha.from_numpy(a.copy()), args, kwargs)
    names = {
        "norm": ("p", "dim", "keepdim"),
        "var": ("dim", "unbiased", "keepdim"),
        "std": ("dim", "unbiased", "keepdim"),
    }.get(op, ("dim", "keepdim"))
    ref_kwargs = dict(zip(names, args), **kwargs)
    with np.errstate(all="ignore"):  # NumPy warns where PyTorch is silent
        expected = REF[op](a, **ref_kwargs)
    if isinstance(expected, tuple):
        expected = tuple(np.asarray(e) for e in expected)
    _check(got, expected, **_tol(x))


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_against_torch(case, torch):
    op, x, args, kwargs = case
    a = INPUTS[x]
    got = _lib_call(tocha, op, tocha.from_numpy(a.copy()), args, kwargs)
    expected = _lib_call(torch, op, torch.from_numpy(a.copy()), args, kwargs)
    _check(got, tuple(expected) if isinstance(expected, tuple) else expected, **_tol(x))


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_method_matches_function(case):
    op, x, args, kwargs = case
    t = tocha.from_numpy(INPUTS[x].copy())
    method, function = getattr(t, op)(*args, **kwargs), _lib_call(tocha, op, t, args, kwargs)
    assert type(method) is type(function)
    pairs = zip(method, function) if isinstance(function, tuple) else [(method, function)]
    for m, f in pairs:
        assert_tensor(m, f.numpy())


# -- dtype= and legacy signatures, against torch ---------------------------------------------
# (expression over `lib` and `x`, input name)
EXPRESSIONS = [
    ("lib.sum(x, dtype=lib.float64)", "f"),
    ("lib.sum(x, 0, dtype=lib.int32)", "f"),
    ("x.sum(dtype=lib.float16)", "i"),
    ("x.sum(dtype=lib.float32)", "c"),
    ("x.sum(dtype=lib.uint8)", "u8"),
    ("x.prod(dtype=lib.int64)", "f"),
    ("lib.prod(x, 1, True, dtype=lib.float64)", "i"),
    ("x.mean(dtype=lib.float64)", "i"),
    ("x.mean(1, dtype=lib.complex64)", "f"),
    ("x.nansum(dtype=lib.float32)", "i"),
    ("x.cumsum(0, dtype=lib.int32)", "f"),
    ("x.cumprod(1, dtype=lib.float64)", "i"),
    ("x.var(False)", "f"),
    ("x.var(True)", "f"),
    ("x.std(0, False)", "f"),
    ("x.std(1, True, True)", "f"),
    ("x.var(None, False)", "f"),
    ("x.var(0, unbiased=False)", "f"),
    ("lib.var_mean(x)", "f"),
    ("lib.std_mean(x, 1)", "f"),
    ("lib.var_mean(x, (0, 1), True)", "f3"),
    ("lib.std_mean(x, 0, correction=0, keepdim=True)", "fT"),
    ("lib.std_mean(x)", "c"),
    ("lib.norm(x, dtype=lib.float64)", "f"),
    ("x.norm('nuc')", "f"),
    ("x.norm('nuc', keepdim=True)", "fT"),
    ("x.norm('nuc', dim=(2, 0))", "f3"),
    ("x.norm(p=None)", "f"),
    ("x.norm(0, 1)", "nan"),
    ("x.norm('fro', (0, 1))", "f"),
    ("lib.max(x, lib.ones_like(x))", "f"),
    ("lib.min(x, lib.zeros_like(x))", "f"),
    ("x.logsumexp(0)", "h"),
    ("x.logsumexp(1)", "c"),
    ("x.amax(dim=(-1,))", "f"),
    ("x.mode(1).values", "nan"),
]


@pytest.mark.parametrize("expr, x", EXPRESSIONS)
def test_expressions_against_torch(expr, x, torch):
    a = INPUTS[x]
    got = eval(expr, {"lib": tocha, "x": tocha.from_numpy(a.copy())})
    expected = eval(expr, {"lib": torch, "x": torch.from_numpy(a.copy())})
    _check(got, tuple(expected) if isinstance(expected, tuple) else expected, **_tol(x))


SPECIAL = {
    "inf": np.array([-INF, -INF], dtype=np.float32),
    "pinf": np.array([INF, 1.0, -INF]),
    "ties": np.array([2.0, 5.0, 5.0, 1.0, 1.0]),
    "dup": np.array([2.0, 1.0, 1.0, 1.0, 2.0]),
    "modes": np.array([3, 1, 1, 2, 2, 3]),
    "nanfirst": np.array([NAN, 1.0, NAN]),
}


@pytest.mark.parametrize(
    "expr, x",
    [
        ("x.logsumexp(0)", "inf"),
        ("x.logsumexp(0)", "pinf"),
        ("x.max(0)", "ties"),
        ("x.min(0)", "ties"),
        ("x.argmax()", "ties"),
        ("x.argmin()", "ties"),
        ("x.median(0)", "dup"),
        ("x.mode()", "modes"),
        ("x.median(0)", "nanfirst"),
        ("x.nanmedian(0)", "nanfirst"),
        ("x.cummax(0)", "ties"),
        ("x.cummin(0)", "ties"),
        ("x.median()", "dup"),
    ],
)
def test_special_values_against_torch(expr, x, torch):
    a = SPECIAL[x]
    got = eval(expr, {"x": tocha.from_numpy(a.copy())})
    expected = eval(expr, {"x": torch.from_numpy(a.copy())})
    _check(got, tuple(expected) if isinstance(expected, tuple) else expected)


# -- errors: type and message as PyTorch's -----------------------------------------------------
ERRORS = [
    (
        "x.sum(2)",
        "f",
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "x.sum(1)",
        "s",
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
    ),
    ("x.sum((0, -2))", "f", RuntimeError, "dim 0 appears multiple times in the list of dims"),
    ("x.amax((0, 0))", "f", RuntimeError, "dim 0 appears multiple times in the list of dims"),
    ("x.std((1, 1))", "f", RuntimeError, "dim 1 appears multiple times in the list of dims"),
    (
        "x.mean()",
        "i",
        RuntimeError,
        "mean(): could not infer output dtype. Input dtype must be "
        "either a floating point or complex dtype. Got: Long",
    ),
    (
        "x.mean()",
        "b",
        RuntimeError,
        "mean(): could not infer output dtype. Input dtype must be "
        "either a floating point or complex dtype. Got: Bool",
    ),
    (
        "x.mean(dtype=lib.int64)",
        "f",
        RuntimeError,
        "mean(): could not infer output dtype. "
        "Optional dtype must be either a floating point or complex dtype. Got: Long",
    ),
    (
        "x.nanmean()",
        "i",
        RuntimeError,
        "nanmean(): expected input to have floating point or complex dtype but got Long",
    ),
    ("x.nansum()", "c", RuntimeError, "nansum on CPU does not support complex inputs"),
    ("x.std()", "i", RuntimeError, "std and var only support floating point and complex dtypes"),
    ("x.var()", "u8", RuntimeError, "std and var only support floating point and complex dtypes"),
    (
        "lib.std_mean(x)",
        "i",
        RuntimeError,
        "std_mean only support floating point and complex dtypes",
    ),
    (
        "x.max()",
        "e",
        RuntimeError,
        "max(): Expected reduction dim to be specified for "
        "input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
    ),
    (
        "x.min()",
        "e",
        RuntimeError,
        "min(): Expected reduction dim to be specified for "
        "input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
    ),
    (
        "x.amax()",
        "e",
        RuntimeError,
        "amax(): Expected reduction dim to be specified for "
        "input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
    ),
    ("x.max(0)", "e", IndexError, "max(): Expected reduction dim 0 to have non-zero size."),
    ("x.amin(0)", "e", IndexError, "amin(): Expected reduction dim 0 to have non-zero size."),
    (
        "x.argmax()",
        "e",
        IndexError,
        "argmax(): Expected reduction dim to be specified for input.numel() == 0.",
    ),
    ("x.argmax(-2)", "e", IndexError, "argmax(): Expected reduction dim 0 to have non-zero size."),
    ("x.median(0)", "e", IndexError, "median(): Expected reduction dim 0 to have non-zero size."),
    ("x.mode(0)", "e", IndexError, "mode(): Expected reduction dim 0 to have non-zero size."),
    (
        "x.aminmax()",
        "e",
        RuntimeError,
        "aminmax(): cannot compute aminmax over an empty "
        "dimension as the operation has no identity.",
    ),
    (
        "x.aminmax(dim=0)",
        "e",
        IndexError,
        "aminmax: Expected reduction dim 0 to have non-zero size.",
    ),
    ("x.max()", "c", NotImplementedError, "\"max_all\" not implemented for 'ComplexFloat'"),
    ("x.amin()", "c", NotImplementedError, "\"min_values_cpu\" not implemented for 'ComplexFloat'"),
    ("x.max(0)", "c", RuntimeError, "max(): does not support complex input"),
    ("x.argmax()", "c", RuntimeError, "argmax(): does not support complex input"),
    ("x.argmin(0)", "b", RuntimeError, "argmin(): does not support bool input"),
    ("x.median()", "b", NotImplementedError, "\"median_cpu\" not implemented for 'Bool'"),
    ("x.median(0)", "c", NotImplementedError, "\"median_out\" not implemented for 'ComplexFloat'"),
    ("x.mode()", "c", NotImplementedError, "\"mode_cpu\" not implemented for 'ComplexFloat'"),
    ("x.cummax(0)", "c", NotImplementedError, "\"cummax_cpu\" not implemented for 'ComplexFloat'"),
    (
        "x.norm()",
        "i",
        RuntimeError,
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
    ),
    (
        "x.norm(dtype=lib.int64)",
        "f",
        RuntimeError,
        "linalg.vector_norm: dtype should be floating point or complex, but got Long",
    ),
    (
        "x.norm(dtype=lib.float32)",
        "c",
        RuntimeError,
        "linalg.vector_norm: dtype should be complex for complex inputs, but got Float",
    ),
    ("x.norm('abc')", "f3", RuntimeError, "linalg.matrix_norm: Order abc not supported."),
    ("x.norm('nuc')", "f3", RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"),
    (
        "x.norm('nuc', dim=(1, 1))",
        "f",
        RuntimeError,
        "linalg.matrix_norm: dims must be different. Got (1, 1)",
    ),
    (
        "x.norm(float('inf'))",
        "e",
        RuntimeError,
        "linalg.vector_norm cannot compute the inf norm "
        "on an empty tensor because the operation does not have an identity",
    ),
    (
        "x.norm(-1, 0)",
        "e",
        RuntimeError,
        "linalg.vector_norm cannot compute the -1 norm on the "
        "dimension 0because this dimension is empty and the operation does not have an identity",
    ),
    (
        "x.cumsum(2)",
        "f",
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "x.argmax(2)",
        "f",
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "x.median(2)",
        "f",
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "x.logsumexp(())",
        "f",
        RuntimeError,
        "output with shape [] doesn't match the broadcast shape [1, 1]",
    ),
    (
        "lib.sum([1, 2])",
        "f",
        TypeError,
        "sum(): argument 'input' (position 1) must be Tensor, not list",
    ),
    ("x.sum(0.5)", "f", TypeError, None),
    ("x.sum(True)", "f", TypeError, None),
    ("x.cumsum(dim=(0,))", "f", TypeError, None),
    ("x.argmax((0, 1))", "f", TypeError, None),
]


@pytest.mark.parametrize("expr, x, exc, message", ERRORS)
def test_errors(expr, x, exc, message):
    with pytest.raises(exc) as info:
        eval(expr, {"lib": tocha, "x": tocha.from_numpy(INPUTS[x].copy())})
    if message is not None:
        assert str(info.value).strip("'\"") == message.strip("'\"") or str(info.value) == message


@pytest.mark.parametrize("expr, x, exc, message", ERRORS)
def test_errors_match_torch(expr, x, exc, message, torch):
    with pytest.raises(exc) as info:
        eval(expr, {"lib": torch, "x": torch.from_numpy(INPUTS[x].copy())})
    if message is not None:
        assert str(info.value).split("\n")[0] == message


# -- out=, return types ---------------------------------------------------------------------
def test_out_arguments():
    x = tocha.from_numpy(INPUTS["f"].copy())
    out = tocha.empty(0)
    assert tocha.sum(x, 0, out=out) is out
    assert_tensor(out, INPUTS["f"].sum(0))
    values, indices = tocha.empty(0), tocha.empty(0, dtype=tocha.int64)
    result = tocha.max(x, 1, out=(values, indices))
    assert result.values is values and result.indices is indices
    assert_tensor(indices, INPUTS["f"].argmax(1))
    cum = tocha.cummax(x, 0, out=(tocha.empty(0), tocha.empty(0, dtype=tocha.int64)))
    assert_tensor(cum.values, np.maximum.accumulate(INPUTS["f"], 0))
    with pytest.raises(TypeError):
        tocha.max(x, 1, out=values)


def test_return_types():
    x = tocha.from_numpy(INPUTS["i"].copy())
    result = x.max(0)
    assert isinstance(result, tuple) and type(result) is return_types.max
    values, indices = result
    assert values is result.values is result[0] and indices is result.indices is result[1]
    assert type(tocha.aminmax(x)).__name__ == "aminmax"
    assert tocha.aminmax(x).min.item() == 0 and tocha.aminmax(x).max.item() == 9
    restored = pickle.loads(pickle.dumps(return_types.mode((1, 2))))
    assert type(restored) is return_types.mode and restored == (1, 2)
    with pytest.raises(TypeError, match="takes a 2-sequence"):
        return_types.max((1, 2, 3))
    expected = "tocha.return_types.max(\nvalues='v',\nindices='i')"
    assert repr(return_types.max(("v", "i"))) == expected
    assert tocha.return_types is return_types


def test_std_mean_returns_a_plain_tuple():
    result = tocha.std_mean(tocha.from_numpy(INPUTS["f"].copy()))
    assert type(result) is tuple and len(result) == 2


def test_results_do_not_alias_the_input():
    for fn in (lambda t: t.cumsum(0), lambda t: t.sum(0, keepdim=True), lambda t: t.amax(())):
        a = INPUTS["s"].copy()
        result = fn(tocha.from_numpy(a))
        result.numpy()[...] = 99
        assert a == INPUTS["s"]
