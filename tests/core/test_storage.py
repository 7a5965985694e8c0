"""Storages and layouts: untyped_storage/storage, data_ptr and storage_offset across views,
UntypedStorage/TypedStorage element access and copies, set_ and is_set_to, tocha.layout,
and the sharing that tocha.save keeps. Values and errors against PyTorch."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import tocha
from tocha import _storage


def _error(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return type(info.value).__name__, str(info.value).replace("torch", "tocha")


def test_views_share_the_storage_of_their_base(torch):
    for lib in (tocha, torch):
        a = lib.arange(12.0).reshape(3, 4)
        views = [a[1], a[:, 2], a.t(), a[1:, 1:3], a.view(-1)[5:]]
        base = a.untyped_storage()
        got = [
            (
                v.storage_offset(),
                v.untyped_storage().nbytes(),
                v.untyped_storage().data_ptr() == base.data_ptr(),
                v.data_ptr() == a.data_ptr() + v.storage_offset() * 4,
            )
            for v in views
        ]
        fresh = a.clone()
        got.append(fresh.untyped_storage().data_ptr() == base.data_ptr())
        if lib is tocha:
            ours = got
    assert ours == got
    assert all(row[2] and row[3] for row in ours[:-1]) and ours[-1] is False


def test_typed_storage_reads_and_writes_like_torch(torch):
    results = []
    for lib in (tocha, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = lib.tensor([[1.5, 2.0, 3.0], [4.0, 5.0, 6.0]])
            s = a[1].storage()
            row = [len(s), s.size(), s.nbytes(), s.element_size(), s[4], s[-1], s.tolist()]
            s[0] = 9.0
            s.fill_(2.5)
            row.append(a.tolist())
            other = lib.tensor([1.0, 2, 3, 4, 5, 6]).storage()
            s.copy_(other)
            row.append(a.tolist())
            row.append(_error(s.copy_, lib.tensor([1, 2, 3, 4, 5, 6]).storage()))
            row.append(str(s.dtype).split(".")[1])
            row.append(lib.TypedStorage([1, 2, 3], dtype=lib.int64).tolist())
            row.append(len(lib.TypedStorage(5, dtype=lib.float64)))
            row.append(_error(s.__getitem__, 6))
        results.append(row)
    assert results[0][:-1] == results[1][:-1]
    assert results[0][-1][0] == results[1][-1][0] == "IndexError"


def test_untyped_storage_is_the_bytes(torch):
    results = []
    for lib in (tocha, torch):
        a = lib.tensor([1.0, -2.0], dtype=lib.float32)
        u = a.untyped_storage()
        row = [len(u), u.nbytes(), u.size(), u.element_size(), u[3], u.tolist()]
        u[0] = 1
        row.append(a.tolist())
        u.fill_(0)
        row.append(a.tolist())
        u.copy_(lib.tensor([3.0, 4.0]).untyped_storage())
        row.append(a.tolist())
        row.append(len(lib.UntypedStorage(4)))
        row.append(lib.UntypedStorage([1, 2, 255]).tolist())
        row.append(str(u.device))
        row.append(_error(u.copy_, lib.UntypedStorage(3))[0])
        results.append(row)
    assert results[0] == results[1]


def test_typed_storage_warns_once_with_torchs_message(torch):
    torch.storage._set_always_warn_typed_storage_removal(True)
    try:
        with pytest.warns(UserWarning) as theirs:
            torch.ones(2).storage()
    finally:
        torch.storage._set_always_warn_typed_storage_removal(False)
    _storage._TYPED_STORAGE_WARNED[0] = False
    with pytest.warns(UserWarning) as ours:
        tocha.ones(2).storage()
    assert str(ours[0].message) == str(theirs[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tocha.ones(2).storage()  # once per process, as PyTorch


def test_set_and_is_set_to(torch):
    results = []
    for lib in (tocha, torch):
        a = lib.arange(6.0).reshape(2, 3)
        row = []
        b = lib.empty(4)
        assert b.set_(a) is b
        row += [b.is_set_to(a), a.is_set_to(b), b.tolist(), b.shape == a.shape]
        c = lib.empty(0).set_(a.untyped_storage(), 1, (2, 2), (3, 1))
        row += [c.tolist(), c.storage_offset(), c.stride(), c.is_set_to(a)]
        c.fill_(-1.0)
        row.append(a.tolist())
        row.append(lib.empty(0).set_(a.untyped_storage()).tolist())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row.append(lib.empty(0).set_(a.storage(), 4, (2,)).tolist())
        d = lib.ones(3)
        d.set_()
        row += [tuple(d.shape), d.tolist()]
        row.append(a.is_set_to(a.clone()))
        row.append(a[0].is_set_to(a[0]))
        row.append(_error(lib.empty(3, dtype=lib.int64).set_, a))
        results.append(row)
    assert results[0] == results[1]


def test_set_beyond_the_storage_raises():
    """PyTorch grows the storage; a NumPy buffer cannot grow under its views, so tocha
    refuses."""
    a = tocha.arange(6.0)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 24"):
        tocha.empty(0).set_(a.untyped_storage(), 4, (2, 2))


def test_set_bumps_the_version():
    a = tocha.zeros(3)
    before = a._version
    a.set_(tocha.ones(2))
    assert a._version > before


def test_layouts(torch):
    a = tocha.ones(2)
    assert a.layout is tocha.strided and isinstance(tocha.strided, tocha.layout)
    assert tocha.sparse_coo is not tocha.strided
    names = [repr(lib.strided) for lib in (tocha, torch)] + [
        repr(lib.sparse_coo) for lib in (tocha, torch)
    ]
    assert names[0].replace("tocha", "torch") == names[1]
    assert names[2].replace("tocha", "torch") == names[3]
    assert repr(torch.ones(2).layout) == "torch.strided"


def test_save_keeps_set_tensors_sharing(tmp_path, torch):
    a = tocha.arange(8.0)
    b = tocha.empty(0).set_(a.untyped_storage(), 2, (2, 2), (2, 1))
    path = tmp_path / "shared.pt"
    tocha.save({"a": a, "b": b}, path)
    for lib in (tocha, torch):
        loaded = lib.load(path)
        x, y = loaded["a"], loaded["b"]
        assert x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()
        assert y.storage_offset() == 2 and y.tolist() == [[2.0, 3.0], [4.0, 5.0]]
        y.fill_(0.0)
        assert x.tolist() == [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 6.0, 7.0]


def test_loaded_views_share_a_storage():
    base = tocha.arange(6.0)
    buffer = io.BytesIO()
    tocha.save([base[1:4], base[2:]], buffer)
    buffer.seek(0)
    x, y = tocha.load(buffer)
    assert x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()
    assert (x.storage_offset(), y.storage_offset()) == (0, 1)
    np.testing.assert_array_equal(y.numpy(), [2, 3, 4, 5])
