"""sort, argsort, msort, topk, kthvalue, unique, unique_consecutive, searchsorted, bucketize,
histc, histogram, bincount: values, dtypes and shapes against PyTorch and NumPy, errors. Their
gradients need tocha-autograd: tests/autograd/test_sorting_grad.py."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

NAN = float("nan")
_rng = np.random.default_rng(0)
INPUTS = {
    "f32": _rng.standard_normal((3, 5)).astype(np.float32),
    "f64": _rng.standard_normal((2, 3, 4)),
    "nan": np.array([[3.0, NAN, 1.0, -0.0, 0.0, 3.0], [NAN, -1.0, NAN, 2.0, 2.0, -np.inf]]),
    "f16": _rng.standard_normal((2, 6)).astype(np.float16),
    "i64": _rng.integers(-3, 3, (3, 7)),
    "i32": _rng.integers(-(2**31), 2**31 - 1, (4, 5)).astype(np.int32),
    "i8": _rng.integers(-128, 127, (3, 5)).astype(np.int8),
    "u8": _rng.integers(0, 4, (2, 9)).astype(np.uint8),
    "b": _rng.random((3, 4)) < 0.5,
    "s": np.array(2.5),
    "e": np.zeros((0, 3), np.float32),
}
NON_BOOL = [k for k in INPUTS if k != "b"]


def t(lib, a):
    return lib.from_numpy(np.array(a))


def tT(lib, a):
    """A non-contiguous tensor holding `a`."""
    return lib.from_numpy(np.ascontiguousarray(np.array(a).T)).T


def _compare(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _compare(g, w)
    else:
        assert_tensor(got, want)


def _ndim(name):
    return INPUTS[name].ndim


# -- sort ----------------------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_sort_against_torch(name, dim, descending, torch):
    for make in (t, tT):
        got = make(tocha, INPUTS[name]).sort(dim, descending, stable=True)
        want = make(torch, INPUTS[name]).sort(dim=dim, descending=descending, stable=True)
        assert type(got).__name__ == "sort"
        _compare(tuple(got), tuple(want))


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_sort_against_numpy(name):
    a = INPUTS[name]
    got = tocha.sort(t(tocha, a))
    if a.ndim == 0:
        assert_tensor(got.values, a)
        return
    assert_tensor(got.values, np.sort(a, axis=-1, kind="stable"))
    assert_tensor(got.indices, np.argsort(a, axis=-1, kind="stable"))


def test_sort_large_and_wide_dtypes(torch):
    for a in (
        _rng.standard_normal(5000),
        _rng.integers(-5, 5, 5000),
        _rng.integers(0, 9, (3, 3000)).astype(np.uint8),
    ):
        for descending in (False, True):
            got = tocha.sort(t(tocha, a), descending=descending)
            want = torch.sort(t(torch, a), descending=descending, stable=True)
            _compare(tuple(got), tuple(want))


@pytest.mark.parametrize("name", ["f32", "nan", "i64", "b", "s"])
def test_argsort_msort(name, torch):
    a = INPUTS[name]
    assert_tensor(
        tocha.argsort(t(tocha, a), descending=True, stable=True),
        torch.argsort(t(torch, a), descending=True, stable=True),
    )
    assert_tensor(t(tocha, a).argsort(0), torch.argsort(t(torch, a), dim=0, stable=True))
    if a.ndim:
        assert_tensor(tocha.msort(t(tocha, a)), torch.msort(t(torch, a)))


# -- topk and kthvalue ---------------------------------------------------------------------
TOPK = [
    ("f32", 3, -1),
    ("f32", 0, 0),
    ("f32", 5, 1),
    ("f64", 2, 1),
    ("nan", 4, -1),
    ("i32", 2, 0),
    ("i8", 1, -1),
    ("s", 1, 0),
    ("e", 2, 1),
]


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("name,k,dim", TOPK)
def test_topk_against_torch(name, k, dim, largest, torch):
    got = tocha.topk(tT(tocha, INPUTS[name]), k, dim, largest)
    want = torch.topk(tT(torch, INPUTS[name]), k, dim, largest)
    assert type(got).__name__ == "topk"
    _compare_selection(got, want, INPUTS[name], dim)


def _compare_selection(got, want, a, dim, keepdim=True):
    """Values as torch's; indices as torch's where the values hold no ties (their order among
    ties is unspecified), else indices that pick the values."""
    assert_tensor(got.values, want.values)
    if len(np.unique(a)) == a.size and not np.isnan(a).any():
        assert_tensor(got.indices, want.indices)
    elif a.ndim:
        values, indices = got.values.numpy(), got.indices.numpy()
        if not keepdim:
            values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
        np.testing.assert_array_equal(np.take_along_axis(a, indices, dim), values)


def test_topk_ties_give_earlier_indices_first():
    got = tocha.tensor([1, 3, 3, 2, 3]).topk(2)
    assert got.values.tolist() == [3, 3] and set(got.indices.tolist()) <= {1, 2, 4}
    full = tocha.tensor([1, 3, 3, 2, 3]).topk(5)
    assert full.indices.tolist() == [1, 2, 4, 3, 0]


KTH = [
    ("f32", 2, -1, False),
    ("f32", 3, 0, True),
    ("f64", 4, 2, False),
    ("nan", 6, 1, False),
    ("nan", 2, 0, True),
    ("i32", 1, 1, False),
    ("s", 1, 0, False),
]


@pytest.mark.parametrize("name,k,dim,keepdim", KTH)
def test_kthvalue_against_torch(name, k, dim, keepdim, torch):
    got = tocha.kthvalue(tT(tocha, INPUTS[name]), k, dim, keepdim)
    want = torch.kthvalue(tT(torch, INPUTS[name]), k, dim, keepdim)
    assert type(got).__name__ == "kthvalue"
    _compare_selection(got, want, INPUTS[name], dim, keepdim)


def test_kthvalue_ties_index_a_matching_value():
    x = tocha.tensor([[3, 1, 3, 1, 3]])
    values, indices = x.kthvalue(3, 1)
    assert values.tolist() == [3] and x[0, indices[0]].item() == 3


# -- unique --------------------------------------------------------------------------------
UNIQUE = [
    ("i64", None),
    ("f32", None),
    ("nan", None),
    ("b", None),
    ("s", None),
    ("e", None),
    ("u8", None),
    ("i64", 0),
    ("i64", 1),
    ("b", -1),
    ("f64", 2),
    ("e", 0),
]


@pytest.mark.parametrize("name,dim", UNIQUE)
def test_unique_against_torch(name, dim, torch):
    for inverse in (False, True):
        for counts in (False, True):
            kwargs = dict(return_inverse=inverse, return_counts=counts, dim=dim)
            _compare(
                tocha.unique(tT(tocha, INPUTS[name]), **kwargs),
                torch.unique(tT(torch, INPUTS[name]), **kwargs),
            )
            if not (name == "nan" or dim is not None and INPUTS[name].size == 0):
                _compare(
                    tocha.unique_consecutive(tT(tocha, INPUTS[name]), **kwargs),
                    torch.unique_consecutive(tT(torch, INPUTS[name]), **kwargs),
                )


def test_unique_consecutive_runs(torch):
    a = np.array([[1, 1], [1, 1], [0, 5], [1, 1]])
    for dim in (None, 0, 1):
        kwargs = dict(return_inverse=True, return_counts=True, dim=dim)
        _compare(
            tocha.unique_consecutive(t(tocha, a), **kwargs),
            torch.unique_consecutive(t(torch, a), **kwargs),
        )
    a = np.array([NAN, NAN, 1.0, 1.0])
    _compare(
        t(tocha, a).unique_consecutive(return_counts=True),
        t(torch, a).unique_consecutive(return_counts=True),
    )


def test_unique_against_numpy():
    a = INPUTS["i64"]
    values, inverse, counts = tocha.unique(t(tocha, a), return_inverse=True, return_counts=True)
    want, want_inverse, want_counts = np.unique(a, return_inverse=True, return_counts=True)
    assert_tensor(values, want)
    assert_tensor(inverse, want_inverse.reshape(a.shape))
    assert_tensor(counts, want_counts)


# -- searchsorted and bucketize ------------------------------------------------------------
SEQ = np.array([1.0, 3.0, 3.0, 5.0, 7.0])
SEQ2 = np.sort(_rng.integers(0, 10, (2, 3, 6)), axis=-1)
VALS2 = _rng.integers(-1, 11, (2, 3, 4))
SEARCH = {
    "1d": lambda lib, **kw: lib.searchsorted(t(lib, SEQ), t(lib, [[0.0, 3.0], [7.0, 9.0]]), **kw),
    "scalar": lambda lib, **kw: lib.searchsorted(t(lib, SEQ), 3, **kw),
    "int_float": lambda lib, **kw: lib.searchsorted(t(lib, [1, 3, 5]), t(lib, [3.5, 1.0]), **kw),
    "batched": lambda lib, **kw: lib.searchsorted(t(lib, SEQ2), t(lib, VALS2), **kw),
    "batched_noncontig": lambda lib, **kw: lib.searchsorted(
        tT(lib, SEQ2[0]), tT(lib, VALS2[0]), **kw
    ),
    "sorter": lambda lib, **kw: lib.searchsorted(
        t(lib, [5, 1, 3]), t(lib, [3, 6]), sorter=t(lib, [1, 2, 0]), **kw
    ),
    "empty": lambda lib, **kw: lib.searchsorted(t(lib, SEQ), t(lib, np.zeros(0)), **kw),
    "bucketize": lambda lib, **kw: lib.bucketize(
        t(lib, [[0.0, 3.0], [7.0, 9.0]]), t(lib, SEQ), **kw
    ),
}
SEARCH_KW = [{}, {"right": True}, {"side": "right"}, {"out_int32": True}]


@pytest.mark.parametrize("kw", SEARCH_KW, ids=str)
@pytest.mark.parametrize("name", sorted(SEARCH))
def test_searchsorted_against_torch(name, kw, torch):
    if name == "bucketize" and "side" in kw:
        return
    _compare(SEARCH[name](tocha, **kw), SEARCH[name](torch, **kw))


def test_batched_searchsorted_against_numpy():
    got = tocha.searchsorted(t(tocha, SEQ2), t(tocha, VALS2), right=True)
    want = np.stack(
        [
            np.searchsorted(s, v, side="right")
            for s, v in zip(SEQ2.reshape(-1, 6), VALS2.reshape(-1, 4))
        ]
    )
    assert_tensor(got, want.reshape(VALS2.shape))


# -- histograms ----------------------------------------------------------------------------
H = _rng.standard_normal(50).astype(np.float32)
HIST = {
    "histc": lambda lib: lib.histc(t(lib, H), 7),
    "histc_range": lambda lib: t(lib, H).histc(4, min=-1, max=1),
    "histc_same": lambda lib: lib.histc(t(lib, [1.0, 1.0]), 3),
    "histc_f64": lambda lib: lib.histc(t(lib, H.astype(np.float64)), 5, -3, 2),
    "histogram": lambda lib: tuple(lib.histogram(t(lib, H), 5)),
    "histogram_range": lambda lib: tuple(t(lib, H).histogram(4, range=(-1.0, 1.0), density=True)),
    "histogram_edges": lambda lib: tuple(
        lib.histogram(
            t(lib, [1.0, 2, 5]), t(lib, [0.0, 2, 4]), weight=t(lib, [1.0, 2, 3]), density=True
        )
    ),
    "histogram_same": lambda lib: tuple(lib.histogram(t(lib, [1.0, 1.0]), 3)),
    "bincount": lambda lib: lib.bincount(t(lib, [1, 1, 3])),
    "bincount_minlength": lambda lib: t(lib, [1, 1, 3]).bincount(minlength=6),
    "bincount_weights32": lambda lib: lib.bincount(
        t(lib, [1, 1, 3]), t(lib, np.float32([1, 2, 3]))
    ),
    "bincount_weights_int": lambda lib: lib.bincount(t(lib, [1, 1, 3]), t(lib, [1, 2, 3])),
    "bincount_int32": lambda lib: lib.bincount(t(lib, np.int32([0, 4]))),
    "bincount_empty": lambda lib: lib.bincount(t(lib, np.zeros(0, np.int64))),
}


@pytest.mark.parametrize("name", sorted(HIST))
def test_histograms_against_torch(name, torch):
    _compare(HIST[name](tocha), HIST[name](torch))


def test_histogram_return_type():
    result = tocha.histogram(tocha.tensor([1.0, 2.0]), 2)
    assert type(result).__name__ == "histogram"
    assert result.hist.tolist() == [1.0, 1.0] and result.bin_edges.tolist() == [1.0, 1.5, 2.0]


# -- errors --------------------------------------------------------------------------------
ERRORS = {
    "unique_zero_size": lambda lib: lib.unique(t(lib, INPUTS["e"]), dim=1),
    "sort_complex": lambda lib: lib.sort(t(lib, [1 + 1j])),
    "sort_dim": lambda lib: lib.sort(t(lib, [1.0]), 1),
    "topk_k": lambda lib: lib.topk(t(lib, [1, 2, 3]), 4),
    "topk_bool": lambda lib: lib.topk(t(lib, [True]), 1),
    "topk_complex": lambda lib: lib.topk(t(lib, [1j]), 1),
    "kthvalue_k": lambda lib: lib.kthvalue(t(lib, [1, 2, 3]), 4),
    "kthvalue_zero": lambda lib: lib.kthvalue(t(lib, [1, 2, 3]), 0),
    "kthvalue_bool": lambda lib: lib.kthvalue(t(lib, [True]), 1),
    "searchsorted_side": lambda lib: lib.searchsorted(t(lib, SEQ), t(lib, [1.0]), side="foo"),
    "searchsorted_opposite": lambda lib: lib.searchsorted(
        t(lib, SEQ), t(lib, [1.0]), side="left", right=True
    ),
    "searchsorted_shapes": lambda lib: lib.searchsorted(t(lib, SEQ2), t(lib, [[3, 6]])),
    "bucketize_2d": lambda lib: lib.bucketize(t(lib, [3, 6]), t(lib, [[1, 3, 5]])),
    "histc_int": lambda lib: lib.histc(t(lib, [1, 1]), 3),
    "histc_range": lambda lib: lib.histc(t(lib, [1.0]), 4, min=3, max=2),
    "histogram_int": lambda lib: lib.histogram(t(lib, [1, 2]), 3),
    "bincount_negative": lambda lib: lib.bincount(t(lib, [1, -1, 3])),
    "bincount_float": lambda lib: lib.bincount(t(lib, [1.0, 2.0])),
    "bincount_2d": lambda lib: lib.bincount(t(lib, [[1, 2]])),
    "bincount_minlength": lambda lib: lib.bincount(t(lib, [1]), minlength=-1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name, torch):
    with pytest.raises(Exception) as expected:
        ERRORS[name](torch)
    with pytest.raises(type(expected.value)) as got:
        ERRORS[name](tocha)
    assert str(got.value) == str(expected.value)


# The sample of the gradient tests (tests/autograd/test_sorting_grad.py), drawn here, last.
G = _rng.permutation(24).reshape(2, 3, 4) / 7.0  # distinct values: no ties
