"""Indexing: __getitem__ / __setitem__, index_put, index_select, masked ops, where, nonzero.

Keys are written once with the markers `I` (an index tensor) and `M` (a bool mask) and
turned into tocha, torch and NumPy keys; each case names NumPy's equivalent key where
PyTorch's semantics differ from NumPy's (ints beside index tensors are applied first).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tocha
from tests.core.helpers import assert_tensor


class I:  # noqa: E742
    """An index tensor in a key spec."""

    def __init__(self, values, dtype="int64"):
        self.values = np.asarray(values, dtype=dtype)

    def __repr__(self) -> str:  # test ids: stable, since recorded answers are keyed by them
        return f"{type(self).__name__}({self.values.tolist()})"


class M(I):
    """A bool mask tensor in a key spec."""

    def __init__(self, values):
        super().__init__(values, "bool")


SAME = object()


def convert(spec, lib):
    """The key `spec` for `lib` (tocha, torch, or numpy when lib is np)."""
    if isinstance(spec, tuple):
        return tuple(convert(k, lib) for k in spec)
    if isinstance(spec, I):
        return spec.values.copy() if lib is np else lib.from_numpy(spec.values.copy())
    return spec


def source(lib, shape, dtype="float32"):
    data = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    return data if lib is np else lib.from_numpy(data.copy())


def torch_shares(torch, result, base) -> bool:
    return result.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


# (shape, key spec, NumPy's equivalent key or SAME)
GETITEM = [
    ((5,), 0, SAME),
    ((5,), -1, SAME),
    ((5,), slice(1, 4), SAME),
    ((5,), slice(None, None, 2), SAME),
    ((5,), slice(-3, None), SAME),
    ((5,), slice(10, 20), SAME),
    ((2, 3, 4), 1, SAME),
    ((2, 3, 4), (0, 1), SAME),
    ((2, 3, 4), (0, 1, 2), SAME),
    ((2, 3, 4), (slice(None), 0), SAME),
    ((2, 3, 4), (Ellipsis, 1), SAME),
    ((2, 3, 4), (None, 0, None), SAME),
    ((2, 3, 4), (Ellipsis, None), SAME),
    ((2, 3, 4), (0, Ellipsis, slice(1, 3)), SAME),
    ((2, 3, 4), Ellipsis, SAME),
    ((2, 3, 4), None, SAME),
    ((2, 3, 4), (), SAME),
    ((), None, SAME),
    ((), Ellipsis, SAME),
    ((2, 3, 4), [1, 0], SAME),
    ((2, 3, 4), [], SAME),
    ((2, 3, 4), [[0, 1], [1, 2]], ([0, 1], [1, 2])),
    ((2, 3, 4), [0, slice(None)], (0, slice(None))),
    ((2, 3, 4), I([1, 0, 1]), SAME),
    ((2, 3, 4), I([[0], [1]], "int32"), SAME),
    ((2, 3, 4), I([-1]), SAME),
    ((2, 3, 4), I(1), 1),
    ((2, 3, 4), (slice(None), I([2, 0])), SAME),
    ((2, 3, 4), ([0, 1], slice(None), [1, 2]), SAME),
    ((2, 3, 4), (0, slice(None), [1, 2]), SAME),
    ((2, 3, 4), (slice(None), 0, [1, 2]), SAME),
    ((2, 3, 4), (Ellipsis, [0, 3]), SAME),
    ((2, 3, 4), ([0, 1], Ellipsis, [1, 2]), SAME),
    ((2, 3, 4), (None, [0, 1], None, [1]), SAME),
    ((2, 3, 4), (slice(1, None), I([[0], [1]]), I([0, 1, 2])), SAME),
    ((2, 3, 4), M([True, False]), SAME),
    ((2, 3, 4), (slice(None), M([True, False, True])), SAME),
    ((2, 3, 4), M([[True, False, True], [False, True, True]]), SAME),
    ((2, 3, 4), (M([[True, False, True], [False, True, True]]), [1]), SAME),
    ((2, 3, 4), I([1, 0], "uint8"), np.array([True, False])),
    ((2, 3, 4), [True, False], SAME),
    ((2, 3, 4), True, SAME),
    ((2, 3, 4), False, SAME),
    ((2, 3, 4), (0, True), SAME),
    ((2, 3, 4), ([0, 1], True), SAME),
    ((2, 3, 4), M(True), SAME),
    ((), True, SAME),
    ((), M(False), SAME),
]


def numpy_result(shape, spec, np_key):
    data = source(np, shape)
    if spec == (0, slice(None), [1, 2]):  # PyTorch selects first: the [1, 2] dim stays put
        return data[0][:, [1, 2]]
    key = convert(spec if np_key is SAME else np_key, np)
    return data[key]


def _case_id(case):
    return f"{case[0]}-{case[1]!r}"[:60]


@pytest.mark.parametrize("case", GETITEM, ids=[_case_id(c) for c in GETITEM])
def test_getitem_matches_numpy(case):
    shape, spec, np_key = case
    x = source(tocha, shape)
    result = x[convert(spec, tocha)]
    expected = numpy_result(shape, spec, np_key)
    assert_tensor(result, np.asarray(expected))


@pytest.mark.parametrize("case", GETITEM, ids=[_case_id(c) for c in GETITEM])
def test_getitem_matches_torch_and_views_alike(case, torch):
    shape, spec, _ = case
    x = source(tocha, shape)
    tx = source(torch, shape)
    result = x[convert(spec, tocha)]
    expected = tx[convert(spec, torch)]
    assert_tensor(result, expected)
    if result.numel():
        assert np.shares_memory(result.numpy(), x.numpy()) == torch_shares(torch, expected, tx)
    is_view = result._base is not None
    assert is_view == torch_shares(torch, expected, tx)
    if is_view:
        assert result._base is x and result._vc is x._vc


def test_view_writes_reach_the_base_and_bump_the_shared_version():
    x = tocha.zeros(3, 4)
    row = x[1]
    col = x[:, 2]
    before = x._version
    row[2] = 7.0
    assert x.numpy()[1, 2] == 7.0 and col.numpy()[1] == 7.0
    assert x._version == col._version == before + 1
    x[0] = 1.0
    assert row._version == before + 2


def test_view_of_a_view_has_the_root_base():
    x = tocha.zeros(3, 4)
    v = x[1:][0]
    assert v._base is x


# -- errors --------------------------------------------------------------------------------
# (shape, key spec, exception type, message)
GETITEM_ERRORS = [
    ((3,), 5, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ((3,), -4, IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    ((2, 3, 4), (0, 5), IndexError, "index 5 is out of bounds for dimension 1 with size 3"),
    (
        (2, 3, 4),
        (None, Ellipsis, 5),
        IndexError,
        "index 5 is out of bounds for dimension 2 with size 4",
    ),
    ((3,), [7], IndexError, "index 7 is out of bounds for dimension 0 with size 3"),
    ((3,), I([0, -7]), IndexError, "index -7 is out of bounds for dimension 0 with size 3"),
    (
        (2, 3, 4),
        (slice(None), [7]),
        IndexError,
        "index 7 is out of bounds for dimension 0 with size 3",
    ),
    (
        (2, 3, 4),
        ([0], slice(None), [9]),
        IndexError,
        "index 9 is out of bounds for dimension 1 with size 4",
    ),
    (
        (),
        0,
        IndexError,
        "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
        "in C++ to convert a 0-dim tensor to a number",
    ),
    ((), slice(None), IndexError, "slice() cannot be applied to a 0-dim tensor."),
    ((), (0,), IndexError, "too many indices for tensor of dimension 0"),
    ((2, 3), (0, 0, 0), IndexError, "too many indices for tensor of dimension 2"),
    (
        (4,),
        M([True, False, True]),
        IndexError,
        "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor "
        "[4] at index 0",
    ),
    (
        (2, 3, 4),
        (0, M(np.ones((3, 5), bool))),
        IndexError,
        "The shape of the mask [3, 5] at index 1 does not match the shape of the indexed "
        "tensor [3, 4] at index 1",
    ),
    (
        (3,),
        I([1.0], "float32"),
        IndexError,
        "tensors used as indices must be long, int, byte or bool tensors",
    ),
    (
        (3,),
        I(1.0, "float32"),
        IndexError,
        "tensors used as indices must be long, int, byte or bool tensors",
    ),
    (
        (3,),
        1.5,
        IndexError,
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
        "valid indices (got float)",
    ),
    ((3,), slice(None, None, -1), ValueError, "step must be greater than zero"),
    ((3,), slice(None, None, 0), ValueError, "slice step cannot be zero"),
    (
        (2, 3),
        ([0, 1], [0, 1, 2]),
        IndexError,
        "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]",
    ),
    (
        (2, 3),
        ([0, 1], False),
        IndexError,
        "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [0]",
    ),
]


@pytest.mark.parametrize("case", GETITEM_ERRORS, ids=[_case_id(c) for c in GETITEM_ERRORS])
def test_getitem_errors(case):
    shape, spec, exc, message = case
    x = source(tocha, shape)
    with pytest.raises(exc) as info:
        x[convert(spec, tocha)]
    assert str(info.value) == message


@pytest.mark.parametrize("case", GETITEM_ERRORS, ids=[_case_id(c) for c in GETITEM_ERRORS])
def test_getitem_errors_match_torch(case, torch):
    shape, spec, exc, message = case
    with pytest.raises(exc) as info:
        source(torch, shape)[convert(spec, torch)]
    assert str(info.value) == message


def test_index_tensor_on_another_device_is_refused():
    class Other:  # a stand-in device object: any device but the tensor's
        type = "other"

    x = tocha.zeros(3)
    idx = tocha.tensor([0])
    idx._device = Other()
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same"):
        x[idx]


def test_out_of_bounds_is_checked_where_the_backend_does_not():
    from tocha._ops.indexing import index_op

    kernel = index_op.generic(_WrappingNumpy())
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        kernel(np.zeros(3), np.array([0, 3]), (0,))


class _WrappingNumpy:
    """A NumPy-like namespace whose name is not numpy (as CuPy, which wraps bounds)."""

    __name__ = "fake_xp"

    def __getattr__(self, name):
        return getattr(np, name)


# -- __setitem__ ---------------------------------------------------------------------------
# (shape, dtype, key spec, value: a number, or ("t", values, dtype) for a tensor)
SETITEM = [
    ((5,), "float32", 0, 7.5),
    ((5,), "float32", slice(1, 4), -1),
    ((2, 3, 4), "float32", 1, ("t", [1, 2, 3, 4], "float32")),
    ((2, 3, 4), "float32", (slice(None), 0), ("t", [[9.0]], "float32")),
    ((2, 3, 4), "float32", (0, 0), ("t", [[[1, 2, 3, 4]]], "float32")),
    ((2, 3, 4), "int64", (0, 0), ("t", [1.7, 2.2, 3.9, -4.5], "float64")),
    ((2, 3, 4), "int64", Ellipsis, 2.9),
    ((2, 3, 4), "bool", (0, 1), 5),
    ((2, 3, 4), "float32", (0, slice(None), 0), ("t", 3, "complex64")),
    ((2, 3, 4), "uint8", 0, -1),
    ((2, 3, 4), "float32", [1, 0], ("t", [1, 2, 3, 4], "float32")),
    ((2, 3, 4), "float32", I([0, 0, 1]), 3.0),
    ((5,), "float32", I([0, 0, 1]), ("t", [1, 2, 3], "float32")),
    ((2, 3, 4), "float32", (0, slice(None), [1, 2]), ("t", [[1, 2]] * 3, "float32")),
    ((2, 3, 4), "float32", ([0, 1], slice(None), [1, 2]), ("t", [[1, 2, 3]] * 2, "float32")),
    ((2, 3, 4), "float32", M([True, False]), ("t", 2, "int64")),
    ((2, 3, 4), "int64", M(np.arange(24).reshape(2, 3, 4) % 3 == 0), 0),
    ((2, 3, 4), "float32", (slice(None), M([True, False, True])), ("t", [4, 5, 6, 7], "float32")),
    ((2, 3, 4), "float32", True, 1.0),
    ((), "float32", Ellipsis, 4.0),
    ((), "float32", None, ("t", [4.0], "float32")),
]


def _value(lib, value):
    if isinstance(value, tuple):
        data = np.asarray(value[1], dtype=value[2])
        return data if lib is np else lib.from_numpy(data.copy())
    return value


@pytest.mark.parametrize("case", SETITEM, ids=[_case_id(c[:3]) for c in SETITEM])
def test_setitem_matches_numpy(case):
    shape, dtype, spec, value = case
    x = source(tocha, shape, dtype)
    version = x._version
    x[convert(spec, tocha)] = _value(tocha, value)
    assert x._version == version + 1
    expected = source(np, shape, dtype)
    v = _value(np, value)
    if isinstance(v, np.ndarray) and v.dtype.kind == "c":
        v = v.real
    if isinstance(v, int) and dtype == "uint8" and v < 0:
        v += 256
    if spec == (0, slice(None), [1, 2]):
        expected[0][:, [1, 2]] = v
    else:
        expected[convert(spec, np)] = v
    assert_tensor(x, expected)


@pytest.mark.parametrize("case", SETITEM, ids=[_case_id(c[:3]) for c in SETITEM])
def test_setitem_matches_torch(case, torch):
    shape, dtype, spec, value = case
    x = source(tocha, shape, dtype)
    tx = source(torch, shape, dtype)
    x[convert(spec, tocha)] = _value(tocha, value)
    tx[convert(spec, torch)] = _value(torch, value)
    assert_tensor(x, tx)


def test_setitem_duplicate_indices_last_write_wins():
    x = tocha.zeros(3)
    x[tocha.tensor([0, 0, 0])] = tocha.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [3.0, 0.0, 0.0]


# (shape, dtype, key spec, value, exception type, message)
SETITEM_ERRORS = [
    (
        (2, 3, 4),
        "int64",
        (0, [0, 1]),
        ("t", [1, 1, 1], "int64"),
        RuntimeError,
        "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of "
        "shape [2, 4]",
    ),
    (
        (3,),
        "float32",
        [0, 1],
        ("t", [1, 2, 3], "float32"),
        RuntimeError,
        "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of "
        "shape [2]",
    ),
    (
        (3,),
        "float32",
        slice(None),
        ("t", [1, 2], "float32"),
        RuntimeError,
        "The expanded size of the tensor (3) must match the existing size (2) at non-singleton "
        "dimension 0.  Target sizes: [3].  Tensor sizes: [2]",
    ),
    (
        (3,),
        "float32",
        [0, 2],
        ("t", [1, 2], "int64"),
        RuntimeError,
        "Index put requires the source and destination dtypes match, got Float for the "
        "destination and Long for the source.",
    ),
    (
        (3,),
        "int8",
        0,
        300,
        RuntimeError,
        "value cannot be converted to type int8_t without overflow",
    ),
    (
        (3,),
        "int32",
        0,
        2.9e9,
        RuntimeError,
        "value cannot be converted to type int without overflow",
    ),
    (
        (3,),
        "int64",
        0,
        float("nan"),
        RuntimeError,
        "value cannot be converted to type int64_t without overflow",
    ),
    (
        (3,),
        "float32",
        0,
        1e39,
        RuntimeError,
        "value cannot be converted to type float without overflow",
    ),
    (
        (3,),
        "float64",
        0,
        1j,
        RuntimeError,
        "value cannot be converted to type double without overflow",
    ),
    ((3,), "float32", 0, 2**70, ValueError, "Overflow when unpacking long long"),
    ((3,), "float32", 5, 1.0, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ((3,), "float32", [5], 1.0, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
]


@pytest.mark.parametrize("case", SETITEM_ERRORS, ids=[_case_id(c[:4]) for c in SETITEM_ERRORS])
def test_setitem_errors(case):
    shape, dtype, spec, value, exc, message = case
    x = source(tocha, shape, dtype)
    with pytest.raises(exc) as info:
        x[convert(spec, tocha)] = _value(tocha, value)
    assert str(info.value) == message


@pytest.mark.parametrize("case", SETITEM_ERRORS, ids=[_case_id(c[:4]) for c in SETITEM_ERRORS])
def test_setitem_errors_match_torch(case, torch):
    shape, dtype, spec, value, exc, message = case
    tx = source(torch, shape, dtype)
    with pytest.raises(exc) as info:
        tx[convert(spec, torch)] = _value(torch, value)
    assert str(info.value) == message


def test_setitem_refuses_other_values():
    x = tocha.zeros(3)
    with pytest.raises(TypeError, match="can't assign a list to a tocha.FloatTensor"):
        x[0] = [1]


@pytest.mark.parametrize(
    "dtype,value,expected",
    [
        ("float16", 1e5, np.inf),
        ("uint8", -1, 255),
        ("int64", 3 + 0j, 3),
        ("bool", 0j, False),
        ("int8", 2.7, 2),
        ("float32", float("inf"), np.inf),
        ("complex64", 1 + 2j, 1 + 2j),
    ],
)
def test_setitem_scalar_conversions(dtype, value, expected, torch):
    x = tocha.zeros(2, dtype=getattr(tocha, dtype))
    x[0] = value
    assert x.numpy()[0] == expected
    tx = torch.zeros(2, dtype=getattr(torch, dtype))
    tx[0] = value
    assert tx[0].item() == expected


# -- hypothesis: basic indexing ------------------------------------------------------------
@st.composite
def basic_keys(draw):
    """A shape and a key of ints, positive-step slices, None and at most one Ellipsis."""
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    n = len(shape)
    a = draw(st.integers(0, n))
    ellipsis = draw(st.booleans())
    b = draw(st.integers(a, n)) if ellipsis else n

    def entry(size):
        if size and draw(st.booleans()):
            return draw(st.integers(-size, size - 1))
        bound = st.none() | st.integers(-6, 6)
        return slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3)))

    entries = [entry(s) for s in shape[:a]]
    if ellipsis:
        entries += [Ellipsis] + [entry(s) for s in shape[b:]]
    for _ in range(draw(st.integers(0, 3))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    return shape, tuple(entries)


@settings(max_examples=300, deadline=None)
@given(basic_keys())
def test_basic_indexing_is_numpy_and_a_view(case):
    shape, key = case
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = tocha.from_numpy(data)
    result = x[key]
    expected = data[key]
    assert_tensor(result, np.asarray(expected))
    assert result._base is x
    if result.numel():
        assert np.shares_memory(result.numpy(), data)


# -- index_put -----------------------------------------------------------------------------
def test_index_put_and_accumulate(torch):
    for accumulate in (False, True):
        x = tocha.zeros(3)
        idx = (tocha.tensor([0, 0, 2]),)
        values = tocha.tensor([1.0, 2.0, 3.0])
        result = tocha.index_put(x, idx, values, accumulate=accumulate)
        expected = torch.index_put(
            torch.zeros(3),
            (torch.tensor([0, 0, 2]),),
            torch.tensor([1.0, 2.0, 3.0]),
            accumulate=accumulate,
        )
        assert_tensor(result, expected)
        assert x.tolist() == [0.0, 0.0, 0.0]
        assert x.index_put_(idx, values, accumulate) is x
        assert_tensor(x, expected)


def test_index_put_checks_its_arguments():
    x = tocha.zeros(3)
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        tocha.index_put(x, (tocha.tensor([0]),), 5.0)
    with pytest.raises(RuntimeError, match="dtypes match, got Float for the destination and Long"):
        tocha.index_put(x, (tocha.tensor([0]),), tocha.tensor([1]))
    with pytest.raises(TypeError, match="expected Tensor as element 0 in argument 1"):
        tocha.index_put(x, (None,), tocha.tensor(1.0))


# -- index_select --------------------------------------------------------------------------
INDEX_SELECT = [
    ((2, 3), 1, [2, 0, 2], "int64"),
    ((2, 3), 0, [1], "int32"),
    ((2, 3), -1, [], "int64"),
    ((4,), 0, 3, "int64"),
    ((), 0, [0], "int64"),
]


@pytest.mark.parametrize("shape,dim,index,dtype", INDEX_SELECT)
def test_index_select(shape, dim, index, dtype, torch):
    idx = np.asarray(index, dtype=dtype)
    x = source(tocha, shape)
    result = tocha.index_select(x, dim, tocha.from_numpy(idx.copy()))
    if shape:
        assert_tensor(result, np.take(source(np, shape), idx.reshape(-1), axis=dim))
    assert_tensor(x.index_select(dim, tocha.from_numpy(idx.copy())), result.numpy())
    expected = torch.index_select(source(torch, shape), dim, torch.from_numpy(idx.copy()))
    assert_tensor(result, expected)


@pytest.mark.parametrize(
    "index,exc,message",
    [
        (
            I([1.0], "float32"),
            RuntimeError,
            "index_select(): Expected dtype int32 or int64 for index",
        ),
        (I([[0]]), IndexError, "index_select(): Index is supposed to be a vector"),
        (I([3]), IndexError, "index out of range in self"),
        (I([-1]), IndexError, "index out of range in self"),
    ],
)
def test_index_select_errors(index, exc, message, torch):
    with pytest.raises(exc) as info:
        tocha.index_select(tocha.zeros(3), 0, convert(index, tocha))
    assert str(info.value) == message
    with pytest.raises(exc) as info:
        torch.index_select(torch.zeros(3), 0, convert(index, torch))
    assert str(info.value) == message


# -- masked_fill, masked_select ------------------------------------------------------------
MASKED = [
    ((2, 3), [[True, False, True], [False, False, True]], 5.0, "float32"),
    ((2, 3), [True, False, True], -1, "int64"),
    ((3,), [[True], [False]], 2, "float32"),
    ((), True, 1.5, "float64"),
    ((2, 3), [True, False, True], ("t", 2.5, "float64"), "int64"),
]


@pytest.mark.parametrize("shape,mask,value,dtype", MASKED)
def test_masked_fill_and_select(shape, mask, value, dtype, torch):
    m = np.asarray(mask)
    x = source(tocha, shape, dtype)
    v = _value(tocha, value)
    result = tocha.masked_fill(x, tocha.from_numpy(m.copy()), v)
    nv = np.asarray(_value(np, value)).astype(dtype)
    data = source(np, shape, dtype)
    assert_tensor(result, np.where(m, nv, data))
    tx = source(torch, shape, dtype)
    assert_tensor(result, torch.masked_fill(tx, torch.from_numpy(m.copy()), _value(torch, value)))
    selected = tocha.masked_select(x, tocha.from_numpy(m.copy()))
    shape_b = np.broadcast_shapes(data.shape, m.shape)
    assert_tensor(selected, np.broadcast_to(data, shape_b)[np.broadcast_to(m, shape_b)])
    assert_tensor(selected, torch.masked_select(tx, torch.from_numpy(m.copy())))
    if shape_b == data.shape:
        version = x._version
        assert x.masked_fill_(tocha.from_numpy(m.copy()), v) is x
        assert x._version == version + 1
        assert_tensor(x, np.where(m, nv, data))


def test_masked_errors(torch):
    cases = [
        (
            lambda lib: lib.masked_fill(lib.zeros(3), lib.tensor([1.0, 0, 1]), 2),
            RuntimeError,
            "masked_fill_ only supports boolean masks, but got mask with dtype float",
        ),
        (
            lambda lib: lib.masked_fill(lib.zeros(3), lib.tensor([1, 0, 1]), 2),
            RuntimeError,
            "masked_fill_ only supports boolean masks, but got mask with dtype long int",
        ),
        (
            lambda lib: lib.masked_fill(lib.zeros(3), lib.tensor([True, False]), 1),
            RuntimeError,
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
            "dimension 0",
        ),
        (
            lambda lib: lib.masked_fill(lib.zeros(3), lib.tensor([True] * 3), lib.tensor([2.0])),
            RuntimeError,
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
            "with 1 dimension(s).",
        ),
        (
            lambda lib: lib.zeros(3).masked_fill_(lib.tensor([[True], [False]]), 2),
            RuntimeError,
            "output with shape [3] doesn't match the broadcast shape [2, 3]",
        ),
        (
            lambda lib: lib.masked_fill(lib.zeros(3, dtype=lib.int8), lib.tensor([True] * 3), 300),
            RuntimeError,
            "value cannot be converted to type int8_t without overflow",
        ),
        (
            lambda lib: lib.masked_select(lib.zeros(3), lib.tensor([1, 0, 1])),
            RuntimeError,
            "masked_select: expected BoolTensor for mask",
        ),
        (
            lambda lib: lib.masked_select(lib.zeros(3), lib.tensor([True, False])),
            RuntimeError,
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
            "dimension 0",
        ),
    ]
    for fn, exc, message in cases:
        for lib in (tocha, torch):
            with pytest.raises(exc) as info:
                fn(lib)
            assert str(info.value) == message


# -- where, nonzero, argwhere --------------------------------------------------------------
WHERE = [
    ([True, False, True], ("t", [1, 2, 3], "int32"), 2.5),
    ([True, False, True], ("t", [1, 2, 3], "int32"), 7),
    ([True, False], 1, 0),
    ([True, False], 1.0, 0),
    ([[True], [False]], ("t", [1.0, 2.0], "float32"), ("t", 3.0, "float64")),
    ([True, False], True, False),
    (True, 1j, 2),
    ([1, 0], ("t", [1, 2], "int64"), ("t", [5, 6], "int64")),
]


@pytest.mark.parametrize("cond,a,b", WHERE)
def test_where(cond, a, b, torch):
    c = np.asarray(
        cond,
        dtype="uint8" if isinstance(cond, list) and cond[0] == 1 and cond[0] is not True else bool,
    )
    result = tocha.where(tocha.from_numpy(c.copy()), _value(tocha, a), _value(tocha, b))
    expected = torch.where(torch.from_numpy(c.copy()), _value(torch, a), _value(torch, b))
    assert_tensor(result, expected)
    np_expected = np.where(c.astype(bool), _value(np, a), _value(np, b))
    assert_tensor(result, np_expected.astype(result.dtype.np), check_dtype=False)


def test_where_method_and_errors(torch):
    x = tocha.tensor([1.0, 2.0])
    assert_tensor(x.where(tocha.tensor([True, False]), 0.0), np.array([1.0, 0.0], np.float32))
    for lib in (tocha, torch):
        with pytest.raises(RuntimeError) as info:
            lib.where(lib.tensor([1.0, 0.0]), 1, 0)
        assert str(info.value) == (
            "where expected condition to be a boolean tensor, but got a tensor with dtype Float"
        )
        with pytest.raises(RuntimeError) as info:
            lib.where(lib.tensor([True, False]), lib.tensor([1, 2]), lib.tensor([1, 2, 3]))
        assert "must match the size of tensor b (3)" in str(info.value)


@pytest.mark.parametrize(
    "data",
    [[[0, 1], [2, 0]], [0.0, 1.5, 0.0, -2.0], 3.0, 0.0, [[False, True, True]], []],
)
def test_nonzero_argwhere_and_where_of_one(data, torch):
    a = np.asarray(data)
    x = tocha.tensor(data)
    tx = torch.tensor(data)
    assert_tensor(tocha.nonzero(x), np.argwhere(a).astype(np.int64))
    assert_tensor(x.nonzero(), torch.nonzero(tx))
    assert_tensor(tocha.argwhere(x), torch.argwhere(tx))
    assert_tensor(x.argwhere(), np.argwhere(a).astype(np.int64))
    for got, want in (
        (tocha.nonzero(x, as_tuple=True), torch.nonzero(tx, as_tuple=True)),
        (tocha.where(x), torch.where(tx)),
    ):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_tensor(g, w)
    if a.ndim:
        for g, w in zip(tocha.nonzero(x, as_tuple=True), np.nonzero(a)):
            assert_tensor(g, w.astype(np.int64))


def test_ops_are_declared():
    from tocha._dispatch import REGISTRY

    assert REGISTRY["getitem"].differentiable
    assert REGISTRY["index"].differentiable
    assert REGISTRY["index_put"].differentiable
    assert not REGISTRY["nonzero"].differentiable
