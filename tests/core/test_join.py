"""Joining tensors: cat, stack, hstack, vstack, tile, repeat against NumPy and PyTorch."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from helpers import assert_tensor

import tocha

F32 = np.float32


def _arrays():
    """Named NumPy inputs, built afresh: contiguous, transposed, sliced, 0-dim, empty."""
    return {
        "a23": np.arange(6, dtype=F32).reshape(2, 3),
        "b23": np.arange(6, 12, dtype=F32).reshape(2, 3),
        "t23": np.arange(6, dtype=F32).reshape(3, 2).T,
        "a24": np.arange(8, dtype=F32).reshape(2, 4),
        "a13": np.arange(3, dtype=F32).reshape(1, 3),
        "a03": np.zeros((0, 3), dtype=F32),
        "sl23": np.arange(24, dtype=F32).reshape(4, 6)[::2, 1:4],
        "d23": np.arange(6, dtype=np.float64).reshape(2, 3),
        "i23": np.arange(6, dtype=np.int64).reshape(2, 3),
        "u23": np.arange(6, dtype=np.uint8).reshape(2, 3),
        "b2x3": np.ones((2, 3), dtype=bool),
        "v3": np.arange(3, dtype=F32),
        "v2": np.arange(2, dtype=F32),
        "s": np.array(5.0, dtype=F32),
        "e": np.zeros((0,), dtype=F32),
        "ed": np.zeros((0,), dtype=np.float64),
        "c234": np.arange(24, dtype=F32).reshape(2, 3, 4),
    }


def _promote(names):
    """NumPy arrays cast to the dtype PyTorch promotes them to (for these inputs)."""
    arrays = [_arrays()[n] for n in names]
    target = functools.reduce(tocha.promote_types, [tocha.from_numpy(a).dtype for a in arrays])
    return [a.astype(target.name) for a in arrays]


def _cat_ref(names, dim):
    arrays = _promote(names)
    kept = [a for a in arrays if a.shape != (0,)] or arrays[:1]
    return np.concatenate(kept, axis=dim)


# (id, op as f(module, tensors), input names, NumPy reference as g(names))
CASES = [
    ("cat0", lambda m, ts: m.cat(ts), ["a23", "b23"], lambda n: _cat_ref(n, 0)),
    ("cat1", lambda m, ts: m.cat(ts, 1), ["a23", "a24"], lambda n: _cat_ref(n, 1)),
    ("cat_neg", lambda m, ts: m.cat(ts, dim=-1), ["t23", "sl23", "a24"], lambda n: _cat_ref(n, -1)),
    ("cat_one", lambda m, ts: m.cat(ts), ["t23"], lambda n: _cat_ref(n, 0)),
    ("cat_empty_rows", lambda m, ts: m.cat(ts), ["a03", "a13", "a23"], lambda n: _cat_ref(n, 0)),
    (
        "cat_legacy_empty",
        lambda m, ts: m.cat(ts, 1),
        ["e", "a23", "e", "b23"],
        lambda n: _cat_ref(n, 1),
    ),
    ("cat_legacy_promotes", lambda m, ts: m.cat(ts), ["ed", "a23"], lambda n: _cat_ref(n, 0)),
    ("cat_all_legacy", lambda m, ts: m.cat(ts), ["e", "ed"], lambda n: _cat_ref(n, 0)),
    ("cat_promote_f64", lambda m, ts: m.cat(ts), ["a23", "d23"], lambda n: _cat_ref(n, 0)),
    ("cat_promote_int_float", lambda m, ts: m.cat(ts, 1), ["i23", "a23"], lambda n: _cat_ref(n, 1)),
    ("cat_promote_bool", lambda m, ts: m.cat(ts), ["b2x3", "u23"], lambda n: _cat_ref(n, 0)),
    ("cat_tuple", lambda m, ts: m.cat(tuple(ts), 0), ["v3", "v2"], lambda n: _cat_ref(n, 0)),
    ("concat", lambda m, ts: m.concat(ts, 1), ["a23", "b23"], lambda n: _cat_ref(n, 1)),
    (
        "concatenate",
        lambda m, ts: m.concatenate(ts, axis=1),
        ["a23", "b23"],
        lambda n: _cat_ref(n, 1),
    ),
    ("cat3d", lambda m, ts: m.cat(ts, 2), ["c234", "c234"], lambda n: _cat_ref(n, 2)),
    ("stack0", lambda m, ts: m.stack(ts), ["a23", "b23", "t23"], lambda n: np.stack(_promote(n))),
    (
        "stack_last",
        lambda m, ts: m.stack(ts, -1),
        ["a23", "sl23"],
        lambda n: np.stack(_promote(n), -1),
    ),
    (
        "stack_mid",
        lambda m, ts: m.stack(ts, dim=1),
        ["a23", "b23"],
        lambda n: np.stack(_promote(n), 1),
    ),
    ("stack_scalars", lambda m, ts: m.stack(ts), ["s", "s", "s"], lambda n: np.stack(_promote(n))),
    (
        "stack_empty",
        lambda m, ts: m.stack(ts, 1),
        ["a03", "a03"],
        lambda n: np.stack(_promote(n), 1),
    ),
    ("stack_promote", lambda m, ts: m.stack(ts), ["i23", "d23"], lambda n: np.stack(_promote(n))),
    ("hstack_1d", lambda m, ts: m.hstack(ts), ["v3", "v2", "s"], lambda n: np.hstack(_promote(n))),
    (
        "hstack_2d",
        lambda m, ts: m.hstack(ts),
        ["a23", "t23", "a24"],
        lambda n: np.hstack(_promote(n)),
    ),
    ("vstack_1d", lambda m, ts: m.vstack(ts), ["v3", "a13"], lambda n: np.vstack(_promote(n))),
    (
        "vstack_2d",
        lambda m, ts: m.vstack(ts),
        ["a23", "a03", "sl23"],
        lambda n: np.vstack(_promote(n)),
    ),
    ("vstack_scalar", lambda m, ts: m.row_stack(ts), ["s", "s"], lambda n: np.vstack(_promote(n))),
    ("vstack_3d", lambda m, ts: m.vstack(ts), ["c234", "c234"], lambda n: np.vstack(_promote(n))),
    (
        "repeat",
        lambda m, ts: ts[0].repeat(2, 3),
        ["a23"],
        lambda n: np.tile(_promote(n)[0], (2, 3)),
    ),
    (
        "repeat_more",
        lambda m, ts: ts[0].repeat((2, 1, 2)),
        ["t23"],
        lambda n: np.tile(_promote(n)[0], (2, 1, 2)),
    ),
    ("repeat_ones", lambda m, ts: ts[0].repeat(1, 1), ["t23"], lambda n: _promote(n)[0]),
    (
        "repeat_zero",
        lambda m, ts: ts[0].repeat(0, 2),
        ["sl23"],
        lambda n: np.tile(_promote(n)[0], (0, 2)),
    ),
    ("repeat_scalar", lambda m, ts: ts[0].repeat(3), ["s"], lambda n: np.tile(_promote(n)[0], 3)),
    ("repeat_scalar_none", lambda m, ts: ts[0].repeat(()), ["s"], lambda n: _promote(n)[0]),
    (
        "repeat_int",
        lambda m, ts: ts[0].repeat(1, 2),
        ["i23"],
        lambda n: np.tile(_promote(n)[0], (1, 2)),
    ),
    ("tile", lambda m, ts: m.tile(ts[0], (2,)), ["a23"], lambda n: np.tile(_promote(n)[0], 2)),
    (
        "tile_more",
        lambda m, ts: ts[0].tile((2, 1, 1)),
        ["t23"],
        lambda n: np.tile(_promote(n)[0], (2, 1, 1)),
    ),
    ("tile_empty_dims", lambda m, ts: ts[0].tile(()), ["a23"], lambda n: _promote(n)[0]),
]


def _inputs(lib, names):
    arrays = _arrays()
    return [lib.from_numpy(arrays[n]) for n in names]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_against_numpy(case):
    _, op, names, ref = case
    inputs = _inputs(tocha, names)
    out = op(tocha, inputs)
    assert_tensor(out, ref(names))
    assert out.is_contiguous() and out._base is None
    for x in inputs:
        if out.numel() and x.numel():
            assert not np.shares_memory(out.numpy(), x.numpy())


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_against_torch(case, torch):
    _, op, names, _ = case
    out, expected = op(tocha, _inputs(tocha, names)), op(torch, _inputs(torch, names))
    assert_tensor(out, expected)
    assert out.stride() == expected.stride()


def test_cat_out():
    a = tocha.from_numpy(np.ones((2, 2), F32))
    out = tocha.from_numpy(np.zeros((2, 4), F32))
    assert tocha.cat([a, a], 1, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 4)))


# (id, op as f(module), exception type, message; "torch." reads "tocha." in tocha's)
ERRORS = [
    (
        "cat_sizes",
        lambda m: m.cat([m.ones(2, 2), m.ones(3, 3)], 1),
        RuntimeError,
        "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for "
        "tensor number 1 in the list.",
    ),
    (
        "cat_sizes_skip",
        lambda m: m.cat([m.ones(0), m.ones(2, 2), m.ones(3, 3)], 1),
        RuntimeError,
        "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for "
        "tensor number 2 in the list.",
    ),
    (
        "cat_empty",
        lambda m: m.cat([]),
        ValueError,
        "torch.cat(): expected a non-empty list of Tensors",
    ),
    (
        "cat_ndim",
        lambda m: m.cat([m.ones(2, 2), m.ones(3)]),
        RuntimeError,
        "Tensors must have same number of dimensions: got 2 and 1",
    ),
    (
        "cat_0d",
        lambda m: m.cat([m.ones(2), m.ones(())]),
        RuntimeError,
        "zero-dimensional tensor (at position 1) cannot be concatenated",
    ),
    (
        "cat_dim",
        lambda m: m.cat([m.ones(2, 2), m.ones(2, 2)], 2),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "cat_tensor",
        lambda m: m.cat(m.ones(2, 2)),
        TypeError,
        "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor",
    ),
    (
        "cat_element",
        lambda m: m.cat([m.ones(2), 3]),
        TypeError,
        "expected Tensor as element 1 in argument 0, but got int",
    ),
    (
        "stack_sizes",
        lambda m: m.stack([m.ones(2), m.ones(3)]),
        RuntimeError,
        "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1",
    ),
    ("stack_empty", lambda m: m.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (
        "stack_dim",
        lambda m: m.stack([m.ones(2), m.ones(2)], 2),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    ("hstack_empty", lambda m: m.hstack([]), RuntimeError, "hstack expects a non-empty TensorList"),
    ("vstack_empty", lambda m: m.vstack([]), RuntimeError, "vstack expects a non-empty TensorList"),
    (
        "repeat_few",
        lambda m: m.ones(2, 3).repeat(2),
        RuntimeError,
        "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
        "tensor",
    ),
    (
        "repeat_negative",
        lambda m: m.ones(2, 3).repeat(2, -1),
        RuntimeError,
        "Trying to create tensor with negative dimension -3: [4, -3]",
    ),
    (
        "tile_negative",
        lambda m: m.ones(2, 3).tile(-1),
        RuntimeError,
        "Trying to create tensor with negative dimension -3: [2, -3]",
    ),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(case):
    _, op, exc_type, message = case
    with pytest.raises(exc_type) as info:
        op(tocha)
    assert str(info.value) == message.replace("torch.", "tocha.")


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_match_torch(case, torch):
    _, op, exc_type, message = case
    with pytest.raises(exc_type) as info:
        op(torch)
    assert str(info.value) == message
