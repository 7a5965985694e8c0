"""gather, the scatter family, index_*, take, put, masked_scatter and the *_scatter embeddings:
values, dtypes and shapes against PyTorch (and NumPy), errors, in-place forms. Their gradients
need tocha-autograd: tests/autograd/test_scatter_grad.py (it uses the samples defined here)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

_rng = np.random.default_rng(0)
F = _rng.standard_normal((3, 4))
F32 = F.astype(np.float32)
INTS = _rng.integers(-5, 5, (3, 4))
B = _rng.random((3, 4)) < 0.5
IDX0 = np.array([[0, 2, 1, 0], [2, 2, 0, 1]])  # along dim 0 of a (3, 4)
IDX1 = np.array([[3, 0], [1, 1], [0, 2]])  # along dim 1
SRC = _rng.standard_normal((3, 4))


def t(lib, a, dtype=None):
    """`a` as a tensor of `lib` (a copy, so in-place ops leave the sample alone)."""
    x = lib.from_numpy(np.array(a))
    return x if dtype is None else x.to(getattr(lib, dtype))


def tT(lib, a):
    """A non-contiguous (transposed) tensor holding `a`."""
    return lib.from_numpy(np.ascontiguousarray(np.array(a).T)).T


# Each case: lib -> result (a tensor or a tuple of tensors), run on tocha and torch.
CASES = {
    "gather0": lambda lib: t(lib, F32).gather(0, t(lib, IDX0)),
    "gather1": lambda lib: lib.gather(t(lib, F32), 1, t(lib, IDX1)),
    "gather_neg_dim": lambda lib: t(lib, INTS).gather(-1, t(lib, IDX1)),
    "gather_int32": lambda lib: t(lib, F).gather(1, t(lib, IDX1, "int32")),
    "gather_small": lambda lib: t(lib, F).gather(0, t(lib, IDX0[:1, :2])),
    "gather_noncontig": lambda lib: tT(lib, F).gather(1, t(lib, [[0, 1, 2], [2, 2, 2]])),
    "gather_bool": lambda lib: t(lib, B).gather(1, t(lib, IDX1)),
    "gather_0dim": lambda lib: t(lib, 2.5).gather(0, t(lib, [0, 0])),
    "gather_0dim_index": lambda lib: t(lib, 2.5).gather(0, t(lib, 0)),
    "gather_empty": lambda lib: t(lib, F).gather(1, t(lib, np.zeros((3, 0), np.int64))),
    "scatter_src": lambda lib: t(lib, F).scatter(1, t(lib, IDX1), t(lib, SRC)),
    "scatter_value": lambda lib: t(lib, F).scatter(0, t(lib, IDX0), 1.5),
    "scatter_value_kw": lambda lib: lib.scatter(t(lib, INTS), 0, t(lib, IDX0), value=7),
    "scatter_add_reduce": lambda lib: t(lib, F).scatter(1, t(lib, IDX1), t(lib, SRC), reduce="add"),
    "scatter_mul_reduce": lambda lib: t(lib, INTS).scatter(0, t(lib, IDX0), 3, reduce="multiply"),
    "scatter_noncontig": lambda lib: tT(lib, F).scatter(0, t(lib, [[1, 0, 2]]), 0.0),
    "scatter_0dim": lambda lib: t(lib, 5.0).scatter(0, t(lib, 0), 3.0),
    "scatter_bool": lambda lib: t(lib, B).scatter(1, t(lib, IDX1), True),
    "scatter_add": lambda lib: t(lib, F).scatter_add(0, t(lib, IDX0), t(lib, SRC)),
    "scatter_add_int": lambda lib: lib.scatter_add(t(lib, INTS), 1, t(lib, IDX1), t(lib, INTS)),
    "scatter_add_int32_index": lambda lib: t(lib, F).scatter_add(
        1, t(lib, IDX1, "int32"), t(lib, SRC)
    ),
    "scatter_add_0dim": lambda lib: t(lib, 5.0).scatter_add(0, t(lib, [0, 0]), t(lib, [1.0, 2])),
    "scatter_add_empty": lambda lib: t(lib, F).scatter_add(
        1, t(lib, np.zeros(0, np.int64)), t(lib, np.zeros(0))
    ),
    "index_add": lambda lib: t(lib, F).index_add(1, t(lib, [0, 3, 0]), t(lib, SRC[:, :3])),
    "index_add_alpha": lambda lib: lib.index_add(
        t(lib, F), 0, t(lib, [2, 2]), t(lib, SRC[:2]), alpha=-0.5
    ),
    "index_add_int": lambda lib: t(lib, INTS).index_add(0, t(lib, [1]), t(lib, INTS[:1]), alpha=2),
    "index_add_int32": lambda lib: t(lib, F).index_add(
        -1, t(lib, [1, 2], "int32"), t(lib, SRC[:, :2])
    ),
    "index_add_0dim": lambda lib: t(lib, 5.0).index_add(0, t(lib, 0), t(lib, 2.0)),
    "index_add_bool": lambda lib: t(lib, B).index_add(0, t(lib, [0]), t(lib, B[1:2])),
    "index_copy": lambda lib: t(lib, F).index_copy(1, t(lib, [3, 0]), t(lib, SRC[:, :2])),
    "index_copy_noncontig": lambda lib: tT(lib, F).index_copy(0, t(lib, [1]), t(lib, SRC[:1])),
    "index_fill": lambda lib: t(lib, F).index_fill(1, t(lib, [3, 0, 3]), -1.0),
    "index_fill_tensor": lambda lib: lib.index_fill(t(lib, INTS), 0, t(lib, [2]), t(lib, 4)),
    "index_fill_neg_dim": lambda lib: t(lib, B).index_fill(-2, t(lib, [0]), False),
    "index_fill_0dim": lambda lib: t(lib, 5.0).index_fill(0, t(lib, 0), 2.0),
    "take": lambda lib: t(lib, F).take(t(lib, [[0, -1], [11, 5]])),
    "take_noncontig": lambda lib: lib.take(tT(lib, F), t(lib, [1, 2, 3])),
    "take_0dim": lambda lib: t(lib, 2.0).take(t(lib, [[0, 0]])),
    "take_empty": lambda lib: t(lib, F).take(t(lib, np.zeros(0, np.int64))),
    "take_along_dim": lambda lib: lib.take_along_dim(t(lib, F), t(lib, IDX1), 1),
    "take_along_dim_none": lambda lib: lib.take_along_dim(t(lib, F), t(lib, [0, 11, 3])),
    "take_along_dim_bcast": lambda lib: lib.take_along_dim(t(lib, F), t(lib, [[0], [2]]), 0),
    "take_along_dim_bcast2": lambda lib: lib.take_along_dim(t(lib, F[:1]), t(lib, IDX1), 1),
    "put": lambda lib: lib.put(t(lib, F), t(lib, [0, -1, 5]), t(lib, [1.0, 2, 3])),
    "put_accumulate": lambda lib: t(lib, INTS).put(t(lib, [1, 1, 5]), t(lib, [1, 2, 3]), True),
    "masked_scatter": lambda lib: t(lib, F).masked_scatter(t(lib, B), t(lib, SRC)),
    "masked_scatter_bcast": lambda lib: lib.masked_scatter(
        t(lib, F[:1]), t(lib, B[:, :1]), t(lib, SRC)
    ),
    "masked_scatter_int": lambda lib: t(lib, INTS).masked_scatter(t(lib, B[0]), t(lib, INTS)),
    "select_scatter": lambda lib: lib.select_scatter(t(lib, F), t(lib, SRC[0]), 0, -1),
    "select_scatter_dim1": lambda lib: t(lib, F).select_scatter(t(lib, SRC[:, 0]), 1, 2),
    "slice_scatter": lambda lib: lib.slice_scatter(t(lib, F), t(lib, SRC[:, :2]), 1, 1, 4, 2),
    "slice_scatter_default": lambda lib: t(lib, INTS).slice_scatter(t(lib, INTS)),
    "diagonal_scatter": lambda lib: lib.diagonal_scatter(t(lib, F), t(lib, SRC[0, :3])),
    "diagonal_scatter_offset": lambda lib: t(lib, F).diagonal_scatter(t(lib, SRC[0, :2]), 2),
    "diagonal_scatter_neg": lambda lib: t(lib, F).diagonal_scatter(t(lib, SRC[0, :2]), -1),
    "diagonal_scatter_3d": lambda lib: lib.diagonal_scatter(
        t(lib, np.zeros((2, 3, 4))), t(lib, SRC[:, :2]), 1, 0, 2
    ),
}
REDUCE_CASES = {
    f"scatter_reduce_{reduce}_{include}_{kind}": (reduce, include, kind)
    for reduce in ("sum", "prod", "mean", "amax", "amin")
    for include in (True, False)
    for kind in ("float", "int")
}


def _compare(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _compare(g, w)
        return
    assert_tensor(got, want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name, torch):
    _compare(CASES[name](tocha), CASES[name](torch))


def _reduce_case(lib, reduce, include, kind):
    if kind == "float":
        x, src = t(lib, F), t(lib, SRC)
    else:
        x, src = t(lib, INTS), t(lib, (SRC * 4).astype(np.int64))
    return x.scatter_reduce(0, t(lib, IDX0), src, reduce, include_self=include)


@pytest.mark.parametrize("name", sorted(REDUCE_CASES))
def test_scatter_reduce_against_torch(name, torch):
    args = REDUCE_CASES[name]
    _compare(_reduce_case(tocha, *args), _reduce_case(torch, *args))


def test_scatter_reduce_nan_propagates(torch):
    for lib in (tocha, torch):
        x = t(lib, [1.0, 2.0, 3.0])
        out = x.scatter_reduce(0, t(lib, [0, 0]), t(lib, [np.nan, 1.0]), "amax")
        assert np.isnan(out[0].item()) and out[1].item() == 2.0


def test_against_numpy():
    """The defining loops of gather and scatter_add, written out in NumPy."""
    x = tocha.from_numpy(F.copy())
    want = np.empty(IDX0.shape)
    added = F.copy()
    for i, j in np.ndindex(IDX0.shape):
        want[i, j] = F[IDX0[i, j], j]
        added[IDX0[i, j], j] += SRC[i, j]
    assert_tensor(x.gather(0, tocha.from_numpy(IDX0)), want)
    assert_tensor(x.scatter_add(0, tocha.from_numpy(IDX0), tocha.from_numpy(SRC)), added)
    assert_tensor(x.take(tocha.tensor([5, -1])), F.reshape(-1)[[5, -1]])


# -- in-place forms ------------------------------------------------------------------------
INPLACE = {
    "scatter_": lambda x, lib: x.scatter_(1, t(lib, IDX1), t(lib, SRC)),
    "scatter_value": lambda x, lib: x.scatter_(0, t(lib, IDX0), 2.0, reduce="add"),
    "scatter_add_": lambda x, lib: x.scatter_add_(0, t(lib, IDX0), t(lib, SRC)),
    "scatter_reduce_": lambda x, lib: x.scatter_reduce_(
        0, t(lib, IDX0), t(lib, SRC), "amin", include_self=False
    ),
    "index_add_": lambda x, lib: x.index_add_(1, t(lib, [0, 0]), t(lib, SRC[:, :2]), alpha=3),
    "index_copy_": lambda x, lib: x.index_copy_(0, t(lib, [2]), t(lib, SRC[:1])),
    "index_fill_": lambda x, lib: x.index_fill_(1, t(lib, [1]), 9.0),
    "put_": lambda x, lib: x.put_(t(lib, [3, 3]), t(lib, [1.0, 2.0]), accumulate=True),
    "masked_scatter_": lambda x, lib: x.masked_scatter_(t(lib, B), t(lib, SRC)),
}


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace(name, contiguous, torch):
    results = []
    for lib in (tocha, torch):
        x = t(lib, F) if contiguous else tT(lib, F)
        version = x._version
        out = INPLACE[name](x, lib)
        assert out is x and x._version > version
        results.append(x)
    _compare(results[0], results[1])


def test_inplace_shares_memory_with_views():
    x = tocha.zeros(2, 3)
    row = x[1]
    x.index_fill_(1, tocha.tensor([0]), 1.0)
    assert row.tolist() == [1.0, 0.0, 0.0]


# -- errors --------------------------------------------------------------------------------
X = np.arange(6.0).reshape(2, 3)
ERRORS = {
    "gather_float_index": lambda lib: t(lib, X).gather(1, t(lib, [[0.0], [1.0]])),
    "gather_int16_index": lambda lib: t(lib, X).gather(1, t(lib, [[0], [1]], "int16")),
    "gather_out_of_range": lambda lib: t(lib, X).gather(1, t(lib, [[0], [3]])),
    "gather_negative": lambda lib: t(lib, X).gather(1, t(lib, [[0], [-1]])),
    "gather_ndim": lambda lib: t(lib, X).gather(1, t(lib, [0])),
    "gather_too_large": lambda lib: t(lib, X).gather(0, t(lib, [[0, 1, 1, 0]])),
    "gather_dim": lambda lib: t(lib, X).gather(2, t(lib, [[0]])),
    "scatter_out_of_range": lambda lib: t(lib, X).scatter(1, t(lib, [[0], [3]]), 1.0),
    "scatter_negative": lambda lib: t(lib, X).scatter(1, t(lib, [[0], [-1]]), 1.0),
    "scatter_src_small": lambda lib: t(lib, X).scatter(1, t(lib, [[0], [1]]), t(lib, [[1.0]])),
    "scatter_dtype": lambda lib: t(lib, X).scatter(1, t(lib, [[0], [1]]), t(lib, [[1], [2]])),
    "scatter_float_index": lambda lib: t(lib, X).scatter(1, t(lib, [[0.0], [1.0]]), 1.0),
    "scatter_bad_reduce": lambda lib: t(lib, X).scatter(1, t(lib, [[0], [1]]), 2.0, reduce="max"),
    "scatter_add_dtype": lambda lib: t(lib, X).scatter_add(
        1, t(lib, [[0], [1]]), t(lib, [[1], [2]])
    ),
    "scatter_reduce_bad": lambda lib: t(lib, X).scatter_reduce(
        1, t(lib, [[0], [1]]), t(lib, [[1.0], [2.0]]), "foo"
    ),
    "scatter_reduce_complex": lambda lib: t(lib, [1 + 1j, 2]).scatter_reduce(
        0, t(lib, [0, 1]), t(lib, [2 + 0j, 3]), "amax"
    ),
    "index_add_out_of_range": lambda lib: t(lib, X).index_add(
        1, t(lib, [0, 5]), t(lib, np.ones((2, 2)))
    ),
    "index_add_negative": lambda lib: t(lib, X).index_add(
        1, t(lib, [0, -1]), t(lib, np.ones((2, 2)))
    ),
    "index_add_count": lambda lib: t(lib, X).index_add(1, t(lib, [0, 1]), t(lib, np.ones((2, 3)))),
    "index_add_float_index": lambda lib: t(lib, X).index_add(
        1, t(lib, [0.0, 1.0]), t(lib, np.ones((2, 2)))
    ),
    "index_add_shape": lambda lib: t(lib, 5.0).index_add(0, t(lib, [0, 0]), t(lib, [1.0, 1])),
    "index_copy_out_of_range": lambda lib: t(lib, X).index_copy(
        1, t(lib, [0, 5]), t(lib, np.ones((2, 2)))
    ),
    "index_copy_int32": lambda lib: t(lib, X).index_copy(
        1, t(lib, [0, 1], "int32"), t(lib, np.ones((2, 2)))
    ),
    "index_copy_count": lambda lib: t(lib, X).index_copy(
        1, t(lib, [0, 1]), t(lib, np.ones((2, 3)))
    ),
    "index_fill_out_of_range": lambda lib: t(lib, X).index_fill(1, t(lib, [0, 5]), 2),
    "index_fill_int32": lambda lib: t(lib, X).index_fill(1, t(lib, [0, 1], "int32"), 2),
    "take_out_of_range": lambda lib: t(lib, X).take(t(lib, [0, 6])),
    "take_negative": lambda lib: t(lib, X).take(t(lib, [0, -7])),
    "take_int32": lambda lib: t(lib, X).take(t(lib, [0, 1], "int32")),
    "take_along_dim_int32": lambda lib: lib.take_along_dim(t(lib, X), t(lib, [[0]], "int32"), 1),
    "put_out_of_range": lambda lib: t(lib, X).put_(t(lib, [0, 6]), t(lib, [1.0, 2.0])),
    "put_count": lambda lib: t(lib, X).put_(t(lib, [0, 1]), t(lib, [1.0, 2.0, 3.0])),
    "put_int32": lambda lib: t(lib, X).put_(t(lib, [0, 1], "int32"), t(lib, [1.0, 2.0])),
    "masked_scatter_few": lambda lib: t(lib, X).masked_scatter(
        t(lib, [True, False, True]), t(lib, [1.0, 2.0, 3.0])
    ),
    "masked_scatter_mask": lambda lib: t(lib, X).masked_scatter(
        t(lib, [1, 0, 1]), t(lib, np.ones(10))
    ),
    "masked_scatter_dtype": lambda lib: t(lib, X).masked_scatter(
        t(lib, [True, False, True]), t(lib, np.ones(10, np.float32))
    ),
    "select_scatter_shape": lambda lib: lib.select_scatter(t(lib, X), t(lib, np.ones(3)), 1, 0),
    "select_scatter_index": lambda lib: lib.select_scatter(t(lib, X), t(lib, np.ones(2)), 1, 5),
    "slice_scatter_shape": lambda lib: lib.slice_scatter(
        t(lib, X), t(lib, np.ones((2, 3))), 1, 0, 2
    ),
    "diagonal_scatter_shape": lambda lib: lib.diagonal_scatter(t(lib, X), t(lib, np.ones(3))),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name, torch):
    with pytest.raises(Exception) as expected:
        ERRORS[name](torch)
    with pytest.raises(type(expected.value)) as got:
        ERRORS[name](tocha)
    assert str(got.value) == str(expected.value)
