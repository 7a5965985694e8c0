"""Views and shape ops: values against NumPy; strides, contiguity, view-ness and writes
through views against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_tensor

import tocha

F32 = np.float32

# Inputs, each built afresh per test (from NumPy arrays, so that tocha and torch see the same
# memory layout): contiguous, transposed, sliced with an offset, 0-dim, size-0, size-1 dims.
INPUTS = {
    "c23": lambda: np.arange(6, dtype=F32).reshape(2, 3),
    "t23": lambda: np.arange(6, dtype=F32).reshape(3, 2).T,
    "c234": lambda: np.arange(24, dtype=F32).reshape(2, 3, 4),
    "p234": lambda: np.arange(24, dtype=F32).reshape(4, 2, 3).transpose(1, 2, 0),
    "sl44": lambda: np.arange(48, dtype=F32).reshape(8, 6)[::2, 1:5],
    "s": lambda: np.array(3.5, dtype=F32),
    "v3": lambda: np.arange(3, dtype=F32),
    "e03": lambda: np.zeros((0, 3), dtype=F32),
    "o131": lambda: np.arange(3, dtype=F32).reshape(1, 3, 1),
    "i64": lambda: np.arange(12, dtype=np.int64).reshape(3, 4),
    "b": lambda: np.array([[True, False], [False, True]]),
}

# (id, input, op as f(module, x), NumPy reference as g(array)): each result is a view.
VIEWS = [
    ("view-1", "c23", lambda m, x: x.view(-1), lambda a: a.reshape(-1)),
    ("view32", "c23", lambda m, x: x.view(3, 2), lambda a: a.reshape(3, 2)),
    ("view_tuple", "c234", lambda m, x: x.view((4, -1)), lambda a: a.reshape(4, 6)),
    ("view_size", "c234", lambda m, x: x.view(m.Size([6, 4])), lambda a: a.reshape(6, 4)),
    ("view_1s", "c23", lambda m, x: x.view(1, 2, 1, 3, 1), lambda a: a.reshape(1, 2, 1, 3, 1)),
    ("view_t_ok", "t23", lambda m, x: x.view(1, 2, 3), lambda a: a.reshape(1, 2, 3)),
    ("view_p_split", "p234", lambda m, x: x.view(2, 3, 2, 2), lambda a: a.reshape(2, 3, 2, 2)),
    ("view_sl", "sl44", lambda m, x: x.view(2, 2, 2, 2), lambda a: a.reshape(2, 2, 2, 2)),
    ("view_scalar", "s", lambda m, x: x.view(1, 1), lambda a: a.reshape(1, 1)),
    (
        "view_scalar_back",
        "o131",
        lambda m, x: x[0, :1].view(()) if False else x.view(3),
        lambda a: a.reshape(3),
    ),
    ("view_empty", "e03", lambda m, x: x.view(-1), lambda a: a.reshape(-1)),
    ("view_empty2", "e03", lambda m, x: x.view(3, 0, 1), lambda a: a.reshape(3, 0, 1)),
    ("view_dtype_same", "c23", lambda m, x: x.view(m.int32), lambda a: a.view(np.int32)),
    ("view_dtype_small", "c23", lambda m, x: x.view(m.int16), lambda a: a.view(np.int16)),
    (
        "view_dtype_big",
        "i64",
        lambda m, x: x.view(m.int32).view(m.float64),
        lambda a: a.view(np.float64),
    ),
    ("view_as", "c234", lambda m, x: x.view_as(m.zeros(4, 6)), lambda a: a.reshape(4, 6)),
    ("reshape_view", "c234", lambda m, x: x.reshape(3, 8), lambda a: a.reshape(3, 8)),
    ("reshape_fn", "c234", lambda m, x: m.reshape(x, (-1,)), lambda a: a.reshape(-1)),
    ("reshape_t_view", "t23", lambda m, x: x.reshape(2, 3, 1), lambda a: a.reshape(2, 3, 1)),
    ("reshape_as", "c23", lambda m, x: x.reshape_as(m.zeros(3, 2)), lambda a: a.reshape(3, 2)),
    ("flatten", "c234", lambda m, x: x.flatten(), lambda a: a.reshape(-1)),
    ("flatten_12", "c234", lambda m, x: x.flatten(1), lambda a: a.reshape(2, 12)),
    ("flatten_01", "p234", lambda m, x: m.flatten(x, 0, -2), lambda a: a.reshape(6, 4)),
    ("flatten_scalar", "s", lambda m, x: x.flatten(), lambda a: a.reshape(1)),
    ("reshape_p", "p234", lambda m, x: m.reshape(x, (6, 4)), lambda a: a.reshape(6, 4)),
    ("unflatten", "c234", lambda m, x: x.unflatten(2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    (
        "unflatten_neg",
        "p234",
        lambda m, x: m.unflatten(x, -1, (-1, 2)),
        lambda a: a.reshape(2, 3, 2, 2),
    ),
    ("unflatten_t", "t23", lambda m, x: x.unflatten(0, (2, 1)), lambda a: a.reshape(2, 1, 3)),
    ("squeeze", "o131", lambda m, x: x.squeeze(), lambda a: a.squeeze()),
    ("squeeze_dim", "o131", lambda m, x: x.squeeze(-1), lambda a: a.squeeze(-1)),
    ("squeeze_nonone", "o131", lambda m, x: x.squeeze(1), lambda a: a),
    ("squeeze_tuple", "o131", lambda m, x: m.squeeze(x, (0, 2)), lambda a: a.reshape(3)),
    ("squeeze_scalar", "s", lambda m, x: x.squeeze(0), lambda a: a),
    ("squeeze_none", "c23", lambda m, x: x.squeeze(), lambda a: a),
    ("unsqueeze0", "c23", lambda m, x: x.unsqueeze(0), lambda a: a[None]),
    ("unsqueeze1", "t23", lambda m, x: x.unsqueeze(1), lambda a: a[:, None]),
    ("unsqueeze_neg", "sl44", lambda m, x: m.unsqueeze(x, -1), lambda a: a[..., None]),
    ("unsqueeze_scalar", "s", lambda m, x: x.unsqueeze(0), lambda a: a[None]),
    ("unsqueeze_empty", "e03", lambda m, x: x.unsqueeze(1), lambda a: a[:, None]),
    ("permute", "c234", lambda m, x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("permute_list", "p234", lambda m, x: x.permute([1, -1, 0]), lambda a: a.transpose(1, 2, 0)),
    ("permute_fn", "sl44", lambda m, x: m.permute(x, (1, 0)), lambda a: a.T),
    ("permute_scalar", "s", lambda m, x: x.permute(()), lambda a: a),
    ("transpose", "c234", lambda m, x: x.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("transpose_neg", "p234", lambda m, x: m.transpose(x, -1, 0), lambda a: a.swapaxes(-1, 0)),
    ("swapaxes", "c23", lambda m, x: x.swapaxes(0, 1), lambda a: a.T),
    ("swapdims", "c23", lambda m, x: m.swapdims(x, 1, 0), lambda a: a.T),
    ("t", "t23", lambda m, x: x.t(), lambda a: a.T),
    ("t_1d", "v3", lambda m, x: m.t(x), lambda a: a),
    ("t_scalar", "s", lambda m, x: x.t(), lambda a: a),
    (
        "T",
        "c234",
        lambda m, x: x.T if x.ndim == 2 else x.permute(2, 1, 0),
        lambda a: a.transpose(2, 1, 0),
    ),
    ("mT", "c234", lambda m, x: x.mT, lambda a: a.swapaxes(-1, -2)),
    ("movedim", "c234", lambda m, x: x.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1)),
    (
        "movedim_tuple",
        "p234",
        lambda m, x: m.movedim(x, (0, 1), (2, 0)),
        lambda a: np.moveaxis(a, (0, 1), (2, 0)),
    ),
    ("moveaxis", "c234", lambda m, x: m.moveaxis(x, 2, 0), lambda a: np.moveaxis(a, 2, 0)),
    ("expand", "v3", lambda m, x: x.expand(2, 3), lambda a: np.broadcast_to(a, (2, 3))),
    (
        "expand_-1",
        "o131",
        lambda m, x: x.expand(2, -1, -1, 4),
        lambda a: np.broadcast_to(a, (2, 1, 3, 4)),
    ),
    (
        "expand_t",
        "t23",
        lambda m, x: x.expand(4, 1, 2, 3),
        lambda a: np.broadcast_to(a, (4, 1, 2, 3)),
    ),
    (
        "expand_sl",
        "sl44",
        lambda m, x: x.expand((2, 4, 4)),
        lambda a: np.broadcast_to(a, (2, 4, 4)),
    ),
    ("expand_same", "c23", lambda m, x: x.expand(2, 3), lambda a: a),
    ("expand_scalar", "s", lambda m, x: x.expand(3, 2), lambda a: np.broadcast_to(a, (3, 2))),
    ("expand_scalar1", "s", lambda m, x: x.expand(1), lambda a: a.reshape(1)),
    ("expand_zero", "o131", lambda m, x: x.expand(0, 3, 2), lambda a: np.zeros((0, 3, 2), F32)),
    (
        "expand_as",
        "v3",
        lambda m, x: x.expand_as(m.zeros(4, 3)),
        lambda a: np.broadcast_to(a, (4, 3)),
    ),
    ("narrow", "c234", lambda m, x: x.narrow(1, 1, 2), lambda a: a[:, 1:3]),
    ("narrow_neg", "t23", lambda m, x: m.narrow(x, -1, -2, 2), lambda a: a[:, 1:3]),
    ("narrow_empty", "c23", lambda m, x: x.narrow(0, 2, 0), lambda a: a[2:2]),
    ("narrow_sl", "sl44", lambda m, x: x.narrow(0, 1, 2), lambda a: a[1:3]),
    (
        "as_strided",
        "c234",
        lambda m, x: x.as_strided((3, 3), (1, 3)),
        lambda a: np.lib.stride_tricks.as_strided(a, (3, 3), (4, 12)),
    ),
    (
        "as_strided_offset",
        "c234",
        lambda m, x: m.as_strided(x, (2, 2), (4, 1), 5),
        lambda a: (
            a.reshape(-1)[5:].reshape(2, 1, 1)[:, 0, :]
            if False
            else np.array([[5, 6], [9, 10]], F32)
        ),
    ),
    (
        "as_strided_zero",
        "v3",
        lambda m, x: x.as_strided((2, 3), (0, 1)),
        lambda a: np.broadcast_to(a, (2, 3)),
    ),
    ("detach", "t23", lambda m, x: x.detach(), lambda a: a),
    ("detach_fn", "c23", lambda m, x: m.detach(x), lambda a: a),
]


def _build(lib, name):
    return lib.from_numpy(INPUTS[name]())


def _results(out):
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("case", VIEWS, ids=[c[0] for c in VIEWS])
def test_view_values(case):
    _, name, op, ref = case
    x = _build(tocha, name)
    expected = ref(INPUTS[name]())
    out = op(tocha, x)
    assert_tensor(out, expected)


@pytest.mark.parametrize("case", VIEWS, ids=[c[0] for c in VIEWS])
def test_view_shares_memory(case):
    _, name, op, _ = case
    x = _build(tocha, name)
    out = op(tocha, x)
    if name == "s" and out is x:
        return
    if case[0].startswith(("detach", "view_dtype")):
        assert out._base is None and out._vc is x._vc
    else:
        assert out._base is x and out._vc is x._vc
    if out.numel():
        assert np.shares_memory(out.numpy(), x.numpy())
        before, snapshot = x._version, x.numpy().tobytes()
        out.numpy()[(0,) * out.ndim] = -7
        assert x.numpy().tobytes() != snapshot
        assert x._version == before  # a NumPy write is no tocha in-place op


@pytest.mark.parametrize("case", VIEWS, ids=[c[0] for c in VIEWS])
def test_view_against_torch(case, torch):
    _, name, op, _ = case
    x, xt = _build(tocha, name), _build(torch, name)
    out, expected = op(tocha, x), op(torch, xt)
    assert_tensor(out, expected)
    assert out.is_contiguous() == expected.is_contiguous()
    if expected.numel():
        assert out.stride() == expected.stride()
        assert (
            out.storage_offset() - x.storage_offset()
            == expected.storage_offset() - xt.storage_offset()
        )
    assert (out._base is x) == (expected._base is xt)
    if expected.numel():  # the same element written through the view lands in the same place
        out.numpy()[(0,) * out.ndim] = -7
        expected[(0,) * expected.ndim] = -7
        np.testing.assert_array_equal(x.numpy(), xt.numpy())


# (id, input, op): ops whose result is a copy (or the input itself), checked against torch.
COPIES = [
    ("reshape_copy", "t23", lambda m, x: x.reshape(-1)),
    ("reshape_copy_p", "p234", lambda m, x: m.reshape(x, (2, 12))),
    ("flatten_sl", "sl44", lambda m, x: x.flatten(1)),
    ("flatten_copy", "sl44", lambda m, x: x.flatten()),
    ("flatten_same", "c23", lambda m, x: x.flatten(1, 1)),
    ("flatten_1d", "v3", lambda m, x: x.flatten()),
    ("contiguous_copy", "t23", lambda m, x: x.contiguous()),
    ("contiguous_same", "c23", lambda m, x: x.contiguous()),
    ("contiguous_sl", "sl44", lambda m, x: x.contiguous()),
    ("contiguous_1s", "o131", lambda m, x: x.contiguous()),
    ("contiguous_empty", "e03", lambda m, x: x.contiguous()),
]


@pytest.mark.parametrize("case", COPIES, ids=[c[0] for c in COPIES])
def test_copies_against_torch(case, torch):
    _, name, op = case
    x, xt = _build(tocha, name), _build(torch, name)
    out, expected = op(tocha, x), op(torch, xt)
    assert_tensor(out, expected)
    assert (out is x) == (expected is xt)
    assert (out._base is None) == (expected._base is None)
    assert out.is_contiguous() == expected.is_contiguous()
    if out.numel():
        assert out.stride() == expected.stride()
    if out is not x and out.numel():
        assert not np.shares_memory(out.numpy(), x.numpy())


# (id, input, op as f(module, x), sizes of the NumPy pieces as g(array) -> list of arrays)
PIECES = [
    ("split_int", "c234", lambda m, x: x.split(2, 2), lambda a: [a[..., :2], a[..., 2:]]),
    ("split_uneven", "p234", lambda m, x: m.split(x, 2, 1), lambda a: [a[:, :2], a[:, 2:]]),
    ("split_big", "c23", lambda m, x: x.split(5), lambda a: [a]),
    (
        "split_list",
        "t23",
        lambda m, x: x.split([1, 0, 2], -1),
        lambda a: [a[:, :1], a[:, 1:1], a[:, 1:]],
    ),
    (
        "split_with_sizes",
        "sl44",
        lambda m, x: x.split_with_sizes((3, 1), 0),
        lambda a: [a[:3], a[3:]],
    ),
    ("split_empty", "e03", lambda m, x: x.split(0), lambda a: [a]),
    ("chunk", "c234", lambda m, x: x.chunk(3, 2), lambda a: [a[..., :2], a[..., 2:]]),
    ("chunk_5_3", "i64", lambda m, x: m.chunk(x, 3, 1), lambda a: [a[:, :2], a[:, 2:4]]),
    ("chunk_exact", "c234", lambda m, x: x.chunk(2, -1), lambda a: [a[..., :2], a[..., 2:]]),
    ("chunk_more", "v3", lambda m, x: x.chunk(5), lambda a: [a[:1], a[1:2], a[2:]]),
    ("chunk_empty", "e03", lambda m, x: x.chunk(2), lambda a: [a, a]),
    ("unbind", "c234", lambda m, x: x.unbind(1), lambda a: [a[:, i] for i in range(3)]),
    ("unbind_fn", "t23", lambda m, x: m.unbind(x), lambda a: list(a)),
    ("unbind_neg", "sl44", lambda m, x: x.unbind(-1), lambda a: [a[:, i] for i in range(4)]),
    ("unbind_empty", "e03", lambda m, x: x.unbind(0), lambda a: []),
    ("iter", "c23", lambda m, x: tuple(x), lambda a: list(a)),
]


@pytest.mark.parametrize("case", PIECES, ids=[c[0] for c in PIECES])
def test_pieces(case):
    _, name, op, ref = case
    x = _build(tocha, name)
    out = op(tocha, x)
    expected = ref(INPUTS[name]())
    assert isinstance(out, tuple) and len(out) == len(expected)
    for piece, want in zip(out, expected, strict=True):
        assert_tensor(piece, want)
        assert piece._base is x and piece._vc is x._vc
        if piece.numel():
            assert np.shares_memory(piece.numpy(), x.numpy())


@pytest.mark.parametrize("case", PIECES, ids=[c[0] for c in PIECES])
def test_pieces_against_torch(case, torch):
    _, name, op, _ = case
    x, xt = _build(tocha, name), _build(torch, name)
    out, expected = op(tocha, x), op(torch, xt)
    assert len(out) == len(expected)
    for piece, want in zip(out, expected, strict=True):
        assert_tensor(piece, want)
        assert piece.is_contiguous() == want.is_contiguous()
        if want.numel():
            assert piece.stride() == want.stride()
            assert piece.storage_offset() - x.storage_offset() == want.storage_offset()


def test_expanded_view_is_writeable_and_shared():
    base = tocha.from_numpy(np.arange(3, dtype=F32))
    e = base.expand(2, 3)
    assert e.stride() == (0, 1) and not e.is_contiguous()
    e.numpy()[1, 2] = 9
    assert base.numpy()[2] == 9 and e.numpy()[0, 2] == 9
    assert e.storage_offset() == 0
    sl = tocha.from_numpy(np.arange(6, dtype=F32)).narrow(0, 2, 3)
    assert sl.expand(2, 3).storage_offset() == 2
    assert sl.expand(2, 3).reshape(6).tolist() == [2, 3, 4] * 2


def test_readonly_input_gives_readonly_expand():
    a = np.arange(3, dtype=F32)
    a.flags.writeable = False
    assert not tocha.from_numpy(a).expand(2, 3).numpy().flags.writeable


def test_view_dtype_itemsize_ratio(torch):
    a = np.arange(8, dtype=np.int16).reshape(2, 4)
    for d in ("int8", "int32", "float16", "bool"):
        if d == "bool":
            src = np.zeros((2, 4), np.uint8)
        else:
            src = a
        out = tocha.from_numpy(src).view(getattr(tocha, d))
        expected = torch.from_numpy(src).view(getattr(torch, d))
        assert_tensor(out, expected)
        assert out.stride() == expected.stride()


def test_detach_shares_version_and_leaves_autograd():
    x = tocha.from_numpy(np.arange(3, dtype=F32))
    d = x.detach()
    assert d._ag is None and d._base is None and d._vc is x._vc
    assert d.data_ptr() == x.data_ptr()
    assert tocha.detach_(x) is x and x._ag is None


def test_contiguous_of_expanded_is_a_copy():
    x = tocha.from_numpy(np.arange(3, dtype=F32)).expand(2, 3)
    c = x.contiguous()
    assert c.is_contiguous() and c.stride() == (3, 1) and c._base is None
    np.testing.assert_array_equal(c.numpy(), [[0, 1, 2], [0, 1, 2]])


def test_as_strided_relative_to_storage(torch):
    x = tocha.from_numpy(np.arange(12, dtype=F32)).narrow(0, 4, 4)
    xt = torch.arange(12, dtype=torch.float32).narrow(0, 4, 4)
    for args in (((2, 2), (1, 2)), ((3,), (2,), 1), ((2, 2), (3, 1), 0)):
        out, expected = x.as_strided(*args), xt.as_strided(*args)
        assert_tensor(out, expected)
        assert out.storage_offset() == expected.storage_offset()
        assert out.stride() == expected.stride()


# (id, input, op, exception type, message or the start of it)
ERRORS = [
    (
        "view_stride",
        "t23",
        lambda m, x: x.view(6),
        RuntimeError,
        "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead.",
    ),
    (
        "view_numel",
        "c23",
        lambda m, x: x.view(2, 5),
        RuntimeError,
        "shape '[2, 5]' is invalid for input of size 6",
    ),
    (
        "view_infer",
        "c23",
        lambda m, x: x.view(-1, 4),
        RuntimeError,
        "shape '[-1, 4]' is invalid for input of size 6",
    ),
    (
        "view_two",
        "c23",
        lambda m, x: x.view(-1, -1),
        RuntimeError,
        "only one dimension can be inferred",
    ),
    (
        "view_neg",
        "c23",
        lambda m, x: x.view(-2, 3),
        RuntimeError,
        "invalid shape dimension -2 at index 0 of shape [-2, 3]",
    ),
    (
        "view_ambiguous",
        "e03",
        lambda m, x: x.view(0, -1),
        RuntimeError,
        "cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified "
        "dimension size -1 can be any value and is ambiguous",
    ),
    ("view_float", "c23", lambda m, x: x.view(2.0, 3), TypeError, ""),
    (
        "view_dtype_div",
        "c23",
        lambda m, x: x.view(m.float64),
        RuntimeError,
        "self.size(-1) must be divisible by 2 to view Float as Double (different element sizes), "
        "but got 3",
    ),
    (
        "view_dtype_stride",
        "t23",
        lambda m, x: x.view(m.int16),
        RuntimeError,
        "self.stride(-1) must be 1 to view Float as Short (different element sizes), but got 2",
    ),
    (
        "view_dtype_0d",
        "s",
        lambda m, x: x.view(m.int16),
        RuntimeError,
        "self.dim() cannot be 0 to view Float as Short (different element sizes)",
    ),
    (
        "reshape_numel",
        "t23",
        lambda m, x: x.reshape(4),
        RuntimeError,
        "shape '[4]' is invalid for input of size 6",
    ),
    (
        "flatten_order",
        "c234",
        lambda m, x: x.flatten(2, 1),
        RuntimeError,
        "flatten() has invalid args: start_dim cannot come after end_dim",
    ),
    (
        "flatten_dim",
        "c23",
        lambda m, x: x.flatten(0, 2),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "unflatten_sizes",
        "c23",
        lambda m, x: x.unflatten(1, (2, 2)),
        RuntimeError,
        "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input "
        "tensor",
    ),
    (
        "unflatten_empty",
        "c23",
        lambda m, x: x.unflatten(1, ()),
        RuntimeError,
        "unflatten: sizes must be non-empty",
    ),
    (
        "unflatten_two",
        "c23",
        lambda m, x: x.unflatten(1, (-1, -1)),
        RuntimeError,
        "unflatten got an unexpected error:\nonly one dimension can be inferred",
    ),
    (
        "squeeze_dup",
        "o131",
        lambda m, x: x.squeeze((0, -3)),
        RuntimeError,
        "dim 0 appears multiple times in the list of dims",
    ),
    (
        "squeeze_range",
        "c23",
        lambda m, x: x.squeeze(2),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "unsqueeze_range",
        "c23",
        lambda m, x: x.unsqueeze(3),
        IndexError,
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
    ),
    (
        "permute_len",
        "c23",
        lambda m, x: x.permute(1, 0, 2),
        RuntimeError,
        "permute(sparse_coo): number of dimensions in the tensor input does not match the length "
        "of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to len(dims) = 3",
    ),
    (
        "permute_dup",
        "c23",
        lambda m, x: x.permute(1, -1),
        RuntimeError,
        "permute(): duplicate dims are not allowed.",
    ),
    (
        "permute_range",
        "c23",
        lambda m, x: x.permute(0, 2),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "transpose_range",
        "c23",
        lambda m, x: x.transpose(0, -3),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)",
    ),
    (
        "t_3d",
        "c234",
        lambda m, x: x.t(),
        RuntimeError,
        "t() expects a tensor with <= 2 dimensions, but self is 3D",
    ),
    (
        "movedim_len",
        "c23",
        lambda m, x: x.movedim((0, 1), (1,)),
        RuntimeError,
        "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the "
        "same number of dims as destination ([1] dims)",
    ),
    (
        "movedim_dup",
        "c23",
        lambda m, x: x.movedim((0, 1), (1, 1)),
        RuntimeError,
        "movedim: repeated dim in `destination` ([1, 1])",
    ),
    (
        "expand_size",
        "v3",
        lambda m, x: x.expand(2, 4),
        RuntimeError,
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
        "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]",
    ),
    (
        "expand_lead",
        "c23",
        lambda m, x: x.expand(-1, -1, 3),
        RuntimeError,
        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0",
    ),
    (
        "expand_few",
        "c23",
        lambda m, x: x.expand(3),
        RuntimeError,
        "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be "
        "greater or equal to the number of dimensions in the tensor (2)",
    ),
    (
        "expand_neg",
        "c23",
        lambda m, x: x.expand(2, -2),
        RuntimeError,
        "The expanded size of the tensor (-2) must match the existing size (3) at non-singleton "
        "dimension 1.  Target sizes: [2, -2].  Tensor sizes: [2, 3]",
    ),
    (
        "narrow_end",
        "c23",
        lambda m, x: x.narrow(1, 2, 2),
        RuntimeError,
        "start (2) + length (2) exceeds dimension size (3).",
    ),
    (
        "narrow_start",
        "c23",
        lambda m, x: x.narrow(1, -4, 1),
        IndexError,
        "start out of range (expected to be in range of [-3, 3], but got -4)",
    ),
    (
        "narrow_length",
        "c23",
        lambda m, x: x.narrow(1, 1, -1),
        RuntimeError,
        "narrow(): length must be non-negative.",
    ),
    (
        "narrow_0d",
        "s",
        lambda m, x: x.narrow(0, 0, 1),
        RuntimeError,
        "narrow() cannot be applied to a 0-dim tensor.",
    ),
    (
        "split_sum",
        "c23",
        lambda m, x: x.split([1, 2], 0),
        RuntimeError,
        "split_with_sizes expects split_sizes to sum exactly to 2 (input tensor's size at "
        "dimension 0), but got split_sizes=[1, 2]",
    ),
    (
        "split_negative",
        "c23",
        lambda m, x: x.split([-1, 3], 0),
        RuntimeError,
        "split_with_sizes expects split_sizes have only non-negative entries, but got "
        "split_sizes=[-1, 3]",
    ),
    (
        "split_zero",
        "c23",
        lambda m, x: x.split(0),
        RuntimeError,
        "split_size can only be 0 if dimension size is 0, but got dimension size of 2",
    ),
    (
        "split_neg",
        "c23",
        lambda m, x: x.split(-1),
        RuntimeError,
        "split expects split_size be non-negative, but got split_size=-1",
    ),
    (
        "chunk_zero",
        "c23",
        lambda m, x: x.chunk(0),
        RuntimeError,
        "chunk expects `chunks` to be greater than 0, got: 0",
    ),
    (
        "unbind_0d",
        "s",
        lambda m, x: x.unbind(0),
        IndexError,
        "Dimension specified as 0 but tensor has no dimensions",
    ),
    (
        "unbind_range",
        "c23",
        lambda m, x: x.unbind(2),
        IndexError,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "as_strided_bounds",
        "v3",
        lambda m, x: x.as_strided((2, 3), (3, 1), 1),
        RuntimeError,
        "setStorage: sizes [2, 3], strides [3, 1], storage offset 1, and itemsize 4 requiring a "
        "storage size of 28 are out of bounds for storage of size 12",
    ),
    (
        "as_strided_neg_stride",
        "c23",
        lambda m, x: x.as_strided((2, 2), (1, -1)),
        RuntimeError,
        "as_strided: Negative strides are not supported at the moment, got strides: [1, -1]",
    ),
    (
        "as_strided_offset",
        "c23",
        lambda m, x: x.as_strided((2,), (1,), -1),
        RuntimeError,
        "Tensor: invalid storage offset -1",
    ),
    (
        "as_strided_len",
        "c23",
        lambda m, x: x.as_strided((2,), (3, 1)),
        RuntimeError,
        "mismatch in length of strides and shape",
    ),
]


def _message(lib, text):
    return text.replace("torch.", "tocha.") if lib == "tocha" else text


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(case):
    _, name, op, exc_type, message = case
    x = _build(tocha, name)
    with pytest.raises(exc_type) as info:
        op(tocha, x)
    assert str(info.value).startswith(message.replace("torch.", "tocha."))


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_match_torch(case, torch):
    _, name, op, exc_type, message = case
    with pytest.raises(exc_type) as info:
        op(torch, _build(torch, name))
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (2, 1, 3), (4, 0, 2), (1, 1)])
@pytest.mark.parametrize("new", [(-1,), (1, -1), (-1, 1, 1)])
def test_reshape_shapes_against_numpy(shape, new):
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    x = tocha.from_numpy(a)
    assert_tensor(x.reshape(new), a.reshape(new))
    assert_tensor(x.view(new), a.reshape(new))


@pytest.mark.parametrize("layout", ["transpose", "slice", "permute", "expand"])
def test_view_strides_agree_with_torch_exhaustively(layout, torch):
    """Every shape of 24 elements that a non-contiguous tensor can be viewed as (or not)."""
    size, shape, strides = {
        "transpose": (24, (6, 4), (1, 6)),
        "slice": (48, (4, 6), (12, 2)),
        "permute": (24, (2, 4, 3), (12, 1, 4)),
        "expand": (6, (6, 4), (1, 0)),
    }[layout]
    shapes = [
        (24,),
        (2, 12),
        (12, 2),
        (4, 6),
        (6, 4),
        (2, 3, 4),
        (2, 2, 3, 2),
        (1, 6, 1, 4),
        (3, 2, 2, 2),
        (6, 2, 2),
        (2, 4, 3),
        (8, 3),
        (2, 1, 12),
    ]
    x = tocha.from_numpy(np.arange(size, dtype=F32)).as_strided(shape, strides)
    xt = torch.arange(size, dtype=torch.float32).as_strided(shape, strides)
    for shape in shapes:
        try:
            expected = xt.view(shape)
        except RuntimeError as exc:
            with pytest.raises(RuntimeError, match="view size is not compatible"):
                x.view(shape)
            assert_tensor(x.reshape(shape), xt.reshape(shape))
            assert "view size" in str(exc)
            continue
        out = x.view(shape)
        assert_tensor(out, expected)
        assert out.stride() == expected.stride()
