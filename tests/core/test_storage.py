"""Storages and layouts: untyped_storage/storage, data_ptr and storage_offset across views,
UntypedStorage/TypedStorage element access and copies, set_ and is_set_to, tocha.layout,
and the sharing that tocha.save keeps. Values and errors against PyTorch."""

from __future__ import annotations

import io
import re
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


# -- resize_ and the other storage methods ----------------------------------------------------
def test_resize_keeps_the_first_bytes_like_torch(torch):
    got = []
    for lib in (tocha, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.UntypedStorage([1, 2, 3, 4, 5])
            row = [s.resizable(), s.resize_(8) is s, s.nbytes(), s[0:5].tolist()]
            s.resize_(2)
            row += [s.nbytes(), s.tolist(), s.resize_(2).tolist()]
            s.resize_(0)
            row.append(s.nbytes())
            typed = lib.TypedStorage([1.5, -2.0, 3.0], dtype=lib.float32)
            row += [typed.resizable(), typed.resize_(5), typed.size(), typed.nbytes()]
            row.append([typed[i] for i in range(3)])
            typed.resize_(1)
            row.append(typed.tolist())
            for bad in (2.5, "a"):
                row.append(_error(s.resize_, bad))
                row.append(_error(typed.resize_, bad))
        got.append(row)
    assert got[0] == got[1]


def test_resize_replaces_a_storage_once_its_tensors_are_gone():
    a = tocha.arange(4.0)
    s = a.untyped_storage()
    assert not s.resizable()
    with pytest.raises(RuntimeError, match="NumPy buffer cannot move under its views"):
        s.resize_(32)
    assert s.nbytes() == 16 and a.tolist() == [0.0, 1.0, 2.0, 3.0]
    other = a.untyped_storage()
    del a
    assert not s.resizable()  # `other` views the memory too
    del other
    assert s.resizable() and s.resize_(24).nbytes() == 24
    np.testing.assert_array_equal(s._host()[:16].view(np.float32), [0.0, 1.0, 2.0, 3.0])
    b = tocha.empty(0).set_(s, 0, (2,), (1,))
    assert not s.resizable() and b.untyped_storage().data_ptr() == s.data_ptr()
    whole = tocha.UntypedStorage(4)
    piece = whole[1:3]
    assert not piece.resizable() and not whole.resizable()
    del whole
    assert piece.resizable()
    with pytest.raises(RuntimeError, match="Trying to resize storage to a negative size -1"):
        tocha.UntypedStorage(2).resize_(-1)


def test_storage_conversions_like_torch(torch):
    got = []
    names = ["bool", "byte", "char", "short", "int", "long", "half", "bfloat16", "float"]
    names += ["double", "complex_float", "complex_double"]
    for lib in (tocha, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            untyped = lib.UntypedStorage([1, 2, 255, 0])
            typed = lib.TypedStorage([1.5, -2.0, 3.0, 0.0], dtype=lib.float32)
            row = []
            for storage in (untyped, typed):
                for name in names:
                    if name == "bfloat16" and lib is tocha and tocha.bfloat16 not in _dtypes():
                        continue
                    converted = getattr(storage, name)()
                    row.append(
                        (
                            isinstance(converted, lib.TypedStorage),
                            str(converted.dtype).split(".")[1],
                            converted.tolist(),
                            converted.data_ptr() != storage.data_ptr(),
                        )
                    )
            row += [untyped.type().split(".", 1)[1], typed.type().split(".", 1)[1]]
            row += [typed.pickle_storage_type(), untyped.get_device(), typed.get_device()]
            row += [untyped.is_sparse, untyped.is_sparse_csr, typed.is_sparse]
            row += [untyped.is_pinned(), typed.is_pinned()]
            row += [isinstance(untyped.new(), lib.UntypedStorage), untyped.new().nbytes()]
            copy = typed.clone()
            row += [isinstance(copy, lib.TypedStorage), copy.tolist()]
            row.append(copy.data_ptr() != typed.data_ptr())
            moved = typed.to(device="cpu")
            row += [moved is typed, moved.tolist(), moved.data_ptr() != typed.data_ptr()]
        got.append(row)
    assert got[0] == got[1]


def _dtypes() -> list:
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        return []
    return [tocha.bfloat16]


FROM_BUFFER = [
    ("untyped-bytes", "UntypedStorage", (b"\x01\x02\x03\x04",), {"dtype": "uint8"}),
    ("untyped-no-dtype", "UntypedStorage", (b"\x01\x02\x03\x04",), {}),
    ("untyped-int16", "UntypedStorage", (b"\x01\x02\x03\x04", "little"), {"dtype": "int16"}),
    ("typed-little", "TypedStorage", (b"\x01\x02\x03\x04", "little"), {"dtype": "int16"}),
    ("typed-big", "TypedStorage", (b"\x01\x02\x03\x04", "big"), {"dtype": "int16"}),
    ("typed-float", "TypedStorage", (np.float32([1.5, 2.0]).tobytes(), "native"), {}),
    ("count-offset", "TypedStorage", (b"\x01\x02\x03\x04\x05", "little", 2, 1), {"dtype": "int16"}),
    ("odd-size", "UntypedStorage", (b"\x01\x02\x03", "little"), {"dtype": "int16"}),
]


@pytest.mark.parametrize("case", FROM_BUFFER, ids=[c[0] for c in FROM_BUFFER])
def test_from_buffer_like_torch(torch, case):
    _, cls, args, kwargs = case
    got = []
    for lib in (tocha, torch):
        options = {k: getattr(lib, v) for k, v in kwargs.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                s = getattr(lib, cls).from_buffer(*args, **options)
            except Exception as exc:  # noqa: BLE001 - the error itself is compared
                got.append((type(exc).__name__, str(exc)))
                continue
            kind = isinstance(s, lib.TypedStorage), isinstance(s, lib.UntypedStorage)
            got.append((kind, s.tolist(), str(getattr(s, "dtype", "")).split(".")[-1]))
    assert got[0] == got[1]


def test_byteswap_like_torch(torch):
    got = []
    for lib in (tocha, torch):
        row = []
        for d in ("int16", "int32", "float64"):
            s = lib.UntypedStorage(list(range(1, 9)))
            row += [s.byteswap(getattr(lib, d)), s.tolist()]
        row.append(_error(lib.UntypedStorage([1, 2, 3]).byteswap, lib.int16))
        got.append(row)
    assert got[0] == got[1]


def test_legacy_storage_classes_like_torch(torch):
    got = []
    for lib in (tocha, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            made = [lib.FloatStorage(3), lib.LongStorage([1, 2]), lib.DoubleStorage()]
            wrapped = lib.IntStorage(wrap_storage=lib.UntypedStorage(8))
            row = [(str(s.dtype).split(".")[1], s.size()) for s in [*made, wrapped]]
            row.append(made[1].tolist())
            row += [isinstance(s, lib.TypedStorage) for s in made]
            floats = lib.ones(2).storage()
            row += [isinstance(floats, lib.FloatStorage), isinstance(floats, lib.DoubleStorage)]
            row.append(isinstance(lib.UntypedStorage(4), lib.FloatStorage))
            row += [str(lib.HalfStorage.dtype).split(".")[1], lib.BoolStorage.__name__]
            row.append(lib.ones(2, dtype=lib.long).storage_type() is lib.LongStorage)
            row.append(lib.ones(2).storage_type().__name__)
            row += [lib.is_storage(floats), lib.is_storage(lib.UntypedStorage(1))]
            row += [lib.is_storage(lib.ones(1)), lib.is_storage([1])]
            with pytest.raises(RuntimeError, match="Keyword argument 'dtype' cannot be specified"):
                lib.FloatStorage(2, dtype=lib.float64)
        got.append(row)
    assert got[0] == got[1]


def _file_error(fn, *args):
    """`_error` with the folders left out of the file names in the message."""
    kind, message = _error(fn, *args)
    return kind, re.sub(r"<[^<>]*/", "<", message)


def test_from_file_like_torch(tmp_path, torch):
    got = []
    for lib in (tocha, torch):
        path = tmp_path / "data.bin"
        np.arange(6, dtype=np.float32).tofile(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row = [
                np.asarray(lib.from_file(str(path), size=4, dtype=lib.float32)).tolist(),
                np.asarray(lib.from_file(str(path), False, 3)).tolist(),
                tuple(lib.from_file(str(path)).shape),
                np.asarray(lib.from_file(str(path), size=2, dtype=lib.float64)).tolist(),
                lib.UntypedStorage.from_file(str(path), False, 8).tolist(),
                lib.UntypedStorage.from_file(str(path), False, 8).filename,
                lib.FloatStorage.from_file(str(path), False, 2).tolist(),
                lib.UntypedStorage.from_file(str(path), True, 4).filename.endswith(path.name),
                lib.from_file(str(path), True, 2).untyped_storage().filename.endswith(path.name),
                lib.UntypedStorage(2).filename,
                _file_error(lib.from_file, str(path), False, 10),
                _file_error(lib.from_file, str(tmp_path / "missing.bin"), False, 2),
                _error(lib.TypedStorage.from_file, str(path), False, 2),
            ]
        got.append(row)
    assert got[0] == got[1]


def test_from_file_shared_maps_the_file(tmp_path):
    path = tmp_path / "mapped.bin"
    np.arange(4, dtype=np.float32).tofile(path)
    copy = tocha.from_file(path, False, 4)
    copy[0] = 50.0
    assert np.fromfile(path, np.float32).tolist() == [0.0, 1.0, 2.0, 3.0]
    mapped = tocha.from_file(path, True, 6)  # extends the file
    assert mapped.tolist() == [0.0, 1.0, 2.0, 3.0, 0.0, 0.0]
    mapped[1] = 7.0
    assert np.fromfile(path, np.float32).tolist() == [0.0, 7.0, 2.0, 3.0, 0.0, 0.0]
    fresh = tocha.from_file(tmp_path / "new.bin", True, 3, dtype=tocha.int32)
    assert fresh.tolist() == [0, 0, 0] and (tmp_path / "new.bin").stat().st_size == 12
    with pytest.raises(RuntimeError, match="the size must not be negative, got -1"):
        tocha.from_file(path, False, -1)
