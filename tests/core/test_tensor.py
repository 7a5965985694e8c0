"""Tensor attributes and Python protocols against PyTorch: metadata, strides, NumPy and DLPack
interchange, pickling, conversion to Python numbers, finfo/iinfo and the default dtype."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor
from tests.core.opdb import ALL_DTYPES


def _pair(torch, array):
    return tocha.from_numpy(array), torch.from_numpy(array)


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4), (2, 3, 4)])
def test_metadata(shape, torch):
    t, r = tocha.zeros(shape), torch.zeros(shape)
    assert t.shape == r.shape and tuple(t.size()) == tuple(r.size())
    assert t.dim() == t.ndim == r.dim() and t.numel() == r.numel()
    assert t.stride() == r.stride() and t.is_contiguous() == r.is_contiguous()
    assert t.dtype == tocha.float32 and t.device == tocha.device("cpu")
    assert t.element_size() == r.element_size() and t.nbytes == r.nbytes
    if shape:
        assert t.size(-1) == r.size(-1) and t.stride(0) == r.stride(0)


def test_size_dim_out_of_range(torch):
    with pytest.raises(IndexError) as want:
        torch.zeros(2, 3).size(2)
    with pytest.raises(IndexError) as got:
        tocha.zeros(2, 3).size(2)
    assert str(got.value) == str(want.value)


def test_transposed_strides_and_offset(torch):
    base = np.arange(24.0).reshape(4, 6)
    r_base = torch.arange(24.0).reshape(4, 6)
    views = [
        (base.T, r_base.T),
        (base[1:, 2:], r_base[1:, 2:]),
        (base[:, ::2], r_base[:, ::2]),
        (base[2], r_base[2]),
    ]
    for view, r in views:
        t = tocha.from_numpy(view)
        assert t.stride() == r.stride(), view.strides
        assert t.storage_offset() == r.storage_offset()
        assert t.is_contiguous() == r.is_contiguous()


def test_data_ptr_tracks_numpy():
    array = np.arange(10.0)
    t = tocha.from_numpy(array[3:])
    assert t.data_ptr() == array[3:].__array_interface__["data"][0]


@pytest.mark.parametrize("name", [n for n in ALL_DTYPES if n != "bfloat16"])
def test_item_and_tolist(name, torch):
    array = np.array([[1, 0], [3, 1]]).astype(name)
    t, r = _pair(torch, array)
    assert t.tolist() == r.tolist()
    assert t.numpy()[0, 0].item() == r[0, 0].item()
    one = tocha.from_numpy(array[:1, :1].copy())
    assert one.item() == r[0, 0].item() and type(one.item()) is type(r[0, 0].item())


def test_item_of_many_elements():
    with pytest.raises(
        RuntimeError, match="a Tensor with 4 elements cannot be converted to Scalar"
    ):
        tocha.zeros(4).item()


def test_numpy_shares_memory():
    t = tocha.zeros(3)
    t.numpy()[1] = 5
    assert t.tolist() == [0, 5, 0]


def test_numpy_of_bfloat16_refused(torch):
    with pytest.raises(TypeError) as want:
        torch.zeros(2, dtype=torch.bfloat16).numpy()
    with pytest.raises(TypeError) as got:
        tocha.zeros(2, dtype=tocha.bfloat16).numpy()
    assert str(got.value) == str(want.value)


def test_array_protocol():
    t = tocha.from_numpy(np.arange(3, dtype=np.int32))
    assert np.asarray(t).dtype == np.int32
    assert np.shares_memory(np.asarray(t), t.numpy())
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    copy = np.array(t, copy=True)
    assert not np.shares_memory(copy, t.numpy())
    with pytest.raises(ValueError):
        np.array(t, dtype=np.float64, copy=False)


def test_dlpack_round_trips(torch):
    t = tocha.from_numpy(np.arange(6.0).reshape(2, 3))
    back = tocha.from_dlpack(t.numpy())
    assert np.shares_memory(back.numpy(), t.numpy())
    through_numpy = np.from_dlpack(t)
    assert np.shares_memory(through_numpy, t.numpy())
    from_torch = tocha.from_dlpack(torch.arange(4))
    assert_tensor(from_torch, np.arange(4))
    to_torch = torch.from_dlpack(t)
    assert to_torch.tolist() == t.tolist()


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_pickle_round_trip(name):
    if name == "bfloat16":
        pytest.importorskip("ml_dtypes", reason="bfloat16 needs ml_dtypes: tocha-core[bfloat16]")
    t = tocha.ones(2, 3, dtype=getattr(tocha, name))
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype == t.dtype and back.shape == t.shape and back.device == t.device
    assert back.tolist() == t.tolist()
    assert pickle.loads(pickle.dumps(tocha.float16)) is tocha.float16
    assert pickle.loads(pickle.dumps(tocha.device("cpu"))) == tocha.device("cpu")


def test_len_and_iter(torch):
    t, r = _pair(torch, np.arange(6).reshape(3, 2))
    assert len(t) == len(r) == 3
    assert [row.tolist() for row in t] == [row.tolist() for row in r]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(tocha.tensor(1))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(tocha.tensor(1))


@pytest.mark.parametrize("convert", [bool, float, int, complex])
@pytest.mark.parametrize("shape", [(), (1, 1), (2,), (0,)])
def test_python_number_conversions(convert, shape, torch):
    array = np.full(shape, 3, dtype=np.int64)
    t, r = _pair(torch, array)
    try:
        want = convert(r)
    except Exception as exc:  # the oracle decides whether raising is right
        with pytest.raises(type(exc)) as got:
            convert(t)
        assert str(got.value) == str(exc)
    else:
        assert convert(t) == want and type(convert(t)) is type(want)


def test_index_protocol(torch):
    assert [10, 20, 30][tocha.tensor(1)] == 20
    for bad in (tocha.tensor(1.0), tocha.tensor([1, 2])):
        with pytest.raises(
            TypeError, match="only integer tensors of a single element can be converted to an index"
        ):
            [1, 2][bad]


@pytest.mark.parametrize(
    "name", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
)
def test_finfo(name, torch):
    got, want = tocha.finfo(getattr(tocha, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(got, attr) == getattr(want, attr), attr
    assert got.dtype == want.dtype


def test_finfo_default_and_errors(torch):
    assert tocha.finfo().eps == torch.finfo().eps
    with pytest.raises(TypeError):
        tocha.finfo(tocha.int32)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name, torch):
    got, want = tocha.iinfo(getattr(tocha, name)), torch.iinfo(getattr(torch, name))
    assert (got.bits, got.min, got.max, got.dtype) == (want.bits, want.min, want.max, want.dtype)


def test_iinfo_refuses_floats():
    with pytest.raises(TypeError):
        tocha.iinfo(tocha.float32)


@pytest.mark.parametrize("name", ["float64", "float16", "bfloat16"])
def test_set_default_dtype(name, torch):
    previous = tocha.get_default_dtype()
    try:
        tocha.set_default_dtype(getattr(tocha, name))
        assert tocha.get_default_dtype() == getattr(tocha, name)
        assert tocha.tensor([1.5]).dtype == getattr(tocha, name)
        assert tocha.zeros(1).dtype == getattr(tocha, name)
        assert tocha.arange(0.0, 1.0, 0.5).dtype == getattr(tocha, name)
        complex_name = "complex128" if name == "float64" else "complex64"
        assert tocha.tensor([1j]).dtype == getattr(tocha, complex_name)
    finally:
        tocha.set_default_dtype(previous)
    assert tocha.get_default_dtype() == tocha.float32


def test_set_default_dtype_refuses_integers(torch):
    with pytest.raises(TypeError) as want:
        torch.set_default_dtype(torch.int64)
    with pytest.raises(TypeError) as got:
        tocha.set_default_dtype(tocha.int64)
    assert str(got.value) == str(want.value).replace("torch.", "tocha.")


def test_data_is_a_detached_alias_and_assignable():
    x = tocha.ones(3, requires_grad=True) if _has_autograd() else tocha.ones(3)
    alias = x.data
    assert not alias.requires_grad
    alias.mul_(2)
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 2.0, 2.0])
    x.data = tocha.zeros(2)
    assert tuple(x.shape) == (2,)


def _has_autograd() -> bool:
    import importlib.util

    return importlib.util.find_spec("tocha.autograd") is not None
