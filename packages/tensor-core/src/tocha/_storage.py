"""Storages and layouts: ``tocha.UntypedStorage``, ``tocha.TypedStorage``, the legacy
storage classes (``tocha.FloatStorage``...), ``tocha.layout`` (``tocha.strided``,
``tocha.sparse_coo``), ``tocha.from_file``, ``tocha.is_storage``, and the Tensor methods that
reach them (`untyped_storage`, `storage`, `storage_type`, `set_`, `is_set_to`, `layout`).

A tensor's storage is the memory its array views: the array at the end of the array's
``.base`` chain (the one that owns the memory), seen as bytes. Views of one tensor, tensors
that `set_` put on a storage, and tensors that `tocha.load` rebuilt from one saved storage all
end in the same array, so they report the same storage (`data_ptr`, `nbytes`) and
`tocha.save` writes it once. Each call makes a new storage object over that memory, as in
PyTorch, so storages are compared by `data_ptr`, not identity. `resize_` replaces a storage's
memory only when nothing else holds it (a NumPy buffer cannot move under its views).
"""

from __future__ import annotations

import builtins
import functools
import numbers
import operator
import sys
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _dtype
from ._api import export
from ._backend import backend_of, resolve_device
from ._device import CPU
from ._dispatch import bump_version
from ._stack import user_stacklevel
from ._storage_sources import buffer_values, element_count, file_bytes, mapped_file
from ._tensor import Tensor, _contiguous_strides, row_major_memory, wrap

__all__ = [
    "TypedStorage",
    "UntypedStorage",
    "from_file",
    "layout",
    "sparse_bsc",
    "sparse_bsr",
    "sparse_coo",
    "sparse_csc",
    "sparse_csr",
    "strided",
]

_U8 = np.dtype(np.uint8)


class layout:
    """A tensor's memory layout, as ``torch.layout``: `tocha.strided` (dense), `tocha.sparse_coo`
    or a compressed sparse one (`tocha.sparse_csr`, `sparse_csc`, `sparse_bsr`, `sparse_bsc`)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{_dtype.SHOWN_MODULE}.{self.name}"

    def __reduce__(self):
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")


def _root(array, array_type: type):
    """The last array of `array_type` in the ``.base`` chain of `array`: its memory's owner."""
    root, node = array, array.base
    while node is not None:
        if isinstance(node, array_type):
            root = node
        node = getattr(node, "base", None)
    return root


def _references(data, array_type: type) -> tuple[bool, int, int]:
    """Whether `data` owns its memory, and how many references `data` and its memory's
    owner have (counted the same way for every storage, to compare with `_sole_counts`)."""
    root = _root(data, array_type)
    return data is root, sys.getrefcount(data), sys.getrefcount(root)


@functools.cache
def _sole_counts(owns: bool) -> tuple[bool, int, int]:
    """`_references` of a storage's bytes that nothing else holds: an array that owns its
    memory, or a view of an array that only the view holds."""
    if owns:
        return UntypedStorage._over(np.zeros(1, _U8), CPU)._references()
    return UntypedStorage._over(np.zeros(1, np.float32).view(_U8), CPU)._references()


def _bytes_of(array, dev):
    """The memory `array` views, as a flat uint8 backend array (a view, not a copy)."""
    root = _root(array, backend_of(dev).array_type)
    memory = row_major_memory(root)
    if memory is None:
        memory = backend_of(dev).xp.ascontiguousarray(root)
    return memory.reshape(-1).view(_U8)


def _converted(array, dev, d) -> TypedStorage:
    """A new storage of dtype `d` holding the values of `array` (on device `dev`)."""
    xp = backend_of(dev).xp
    return TypedStorage._over(
        UntypedStorage._over(xp.asarray(array).astype(d.np).view(_U8).reshape(-1), dev), d
    )


class _Conversions:
    """The dtype conversions of both storage classes (``float()``, ``long()``...): a new
    TypedStorage of the values (of each byte, for an UntypedStorage) in that dtype."""

    __slots__ = ()
    if TYPE_CHECKING:
        device: Any

        def to(self, *, device: Any = None) -> Any: ...

    def _values(self):
        raise NotImplementedError

    def _to_dtype(self, d) -> TypedStorage:
        return _converted(self._values(), self.device, d)

    def bool(self) -> TypedStorage:
        return self._to_dtype(_dtype.bool)

    def byte(self) -> TypedStorage:
        return self._to_dtype(_dtype.uint8)

    def char(self) -> TypedStorage:
        return self._to_dtype(_dtype.int8)

    def short(self) -> TypedStorage:
        return self._to_dtype(_dtype.int16)

    def int(self) -> TypedStorage:
        return self._to_dtype(_dtype.int32)

    def long(self) -> TypedStorage:
        return self._to_dtype(_dtype.int64)

    def half(self) -> TypedStorage:
        return self._to_dtype(_dtype.float16)

    def bfloat16(self) -> TypedStorage:
        return self._to_dtype(_dtype.bfloat16)

    def float(self) -> TypedStorage:
        return self._to_dtype(_dtype.float32)

    def double(self) -> TypedStorage:
        return self._to_dtype(_dtype.float64)

    def complex_float(self) -> TypedStorage:
        return self._to_dtype(_dtype.complex64)

    def complex_double(self) -> TypedStorage:
        return self._to_dtype(_dtype.complex128)

    def get_device(self):
        """The device's index: None on the CPU (as PyTorch's storages answer)."""
        return self.device.index

    def is_pinned(self, device: Any = "cuda") -> builtins.bool:
        """Whether the memory is page-locked: never in tocha."""
        return False

    def cuda(self, device: Any = None, non_blocking: builtins.bool = False) -> Any:
        """A copy on a CUDA device (this storage if it is there already)."""
        if device is None or isinstance(device, numbers.Integral):
            device = "cuda" if device is None else f"cuda:{device}"
        return self.to(device=device)


class UntypedStorage(_Conversions):
    """Bytes on a device, as ``torch.UntypedStorage``: ``UntypedStorage(n)`` (zeroed),
    ``UntypedStorage([bytes...])``, or ``tensor.untyped_storage()``, which views the tensor's
    memory (writes through it are seen by the tensor)."""

    __slots__ = ("_bytes", "_device")
    is_sparse = False
    is_sparse_csr = False

    def __init__(self, *args: Any, device: Any = None) -> None:
        dev = CPU if device is None else resolve_device(device)
        if len(args) > 1:
            raise TypeError("UntypedStorage(): expected at most one argument (a size or a list)")
        arg = args[0] if args else 0
        if isinstance(arg, (list, tuple)):
            host = np.asarray(arg, dtype=np.int64)
            if host.ndim != 1 or ((host < 0) | (host > 255)).any():
                raise RuntimeError("Overflow when unpacking long")
            host = host.astype(_U8)
        else:
            host = np.zeros(operator.index(arg), _U8)
        self._bytes = host if dev is CPU else backend_of(dev).from_host(host, dev)
        self._device = dev

    @classmethod
    def _over(cls, data, dev) -> UntypedStorage:
        s = object.__new__(cls)
        s._bytes, s._device = data, dev
        return s

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    def nbytes(self) -> int:
        return int(self._bytes.size)

    size = nbytes
    __len__ = nbytes

    def element_size(self) -> int:
        return 1

    def _values(self):
        return self._bytes

    @classmethod
    def from_buffer(
        cls,
        buffer: Any,
        byte_order: str | None = None,
        count: int = -1,
        offset: int = 0,
        *,
        dtype: Any = None,
    ) -> UntypedStorage:
        """The bytes of a Python buffer (``bytes``, ``bytearray``...): `count` values of
        `dtype` (all by default) from byte `offset`, read in `byte_order` (``"native"``,
        ``"little"`` or ``"big"``) and stored in native order."""
        if dtype is None:
            raise RuntimeError("argument 'dtype' cannot be None")
        array, _ = buffer_values(buffer, byte_order, count, offset, dtype)
        return cls._over(array.view(_U8).reshape(-1), CPU)

    @classmethod
    def from_file(cls, filename: Any, shared: Any = False, nbytes: int = 0) -> UntypedStorage:
        """`nbytes` bytes of a file: mapped when `shared` (writes reach the file, which is
        created or extended as needed), else read into memory."""
        return cls._over(file_bytes(filename, shared, nbytes), CPU)

    @property
    def filename(self) -> str | None:
        """The file this storage maps (``from_file(..., shared=True)``), else None."""
        return mapped_file(self._bytes) if self._device is CPU else None

    def byteswap(self, dtype: Any) -> None:
        """Reverse the bytes of each `dtype` element in place."""
        item = dtype.itemsize
        if self.nbytes() % item:
            raise RuntimeError(f"the length of data is not a multiple of {item}")
        if item > 1:
            self._bytes[...] = self._bytes.reshape(-1, item)[:, ::-1].reshape(-1)

    def new(self) -> UntypedStorage:
        """An empty storage on the same device."""
        return UntypedStorage(0, device=self._device)

    def type(self, dtype: Any = None, non_blocking: bool = False) -> str:
        """The storage's type name (tocha has no legacy storage classes to convert to: use
        ``float()``, ``long()``... instead)."""
        if dtype is not None:
            raise TypeError(
                "tocha has no legacy storage classes to convert to: use float(), double(), "
                "long()... or to(device=...)"
            )
        return "tocha.storage.UntypedStorage"

    def _references(self) -> tuple[bool, int, int]:
        return _references(self._bytes, backend_of(self._device).array_type)

    def resizable(self) -> bool:
        """Whether `resize_` can replace this storage's memory: nothing else (a tensor, a
        view, another storage) holds it, since a NumPy buffer cannot move under its views."""
        found = self._references()
        return found == _sole_counts(found[0])

    def resize_(self, size: int) -> UntypedStorage:
        """Resize to `size` bytes in place: the first bytes are kept, new bytes are
        uninitialised (zeros here). RuntimeError when tensors or other storages view this
        memory (PyTorch moves them to the new memory; NumPy cannot)."""
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            raise RuntimeError(f"resize_ expects an int, but got {type(size).__name__}")
        size = int(size)
        if size < 0:
            raise RuntimeError(f"Trying to resize storage to a negative size {size}")
        if size == self.nbytes():
            return self
        if not self.resizable():
            raise RuntimeError(
                "tocha cannot resize a storage whose memory tensors or other storages view: a "
                "NumPy buffer cannot move under its views (PyTorch moves them). Resize a "
                "storage nothing else views (UntypedStorage(n), or one whose tensors are gone)."
            )
        old = self._bytes
        new = backend_of(self._device).xp.zeros(size, _U8)
        keep = min(size, old.size)
        new[:keep] = old[:keep]
        self._bytes = new
        return self

    def data_ptr(self) -> int:
        return backend_of(self._device).data_ptr(self._bytes)

    def _host(self) -> np.ndarray:
        return backend_of(self._device).to_host(self._bytes)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return UntypedStorage._over(self._bytes[index], self._device)
        return int(self._bytes[_check_index(index, self.nbytes())])

    def __setitem__(self, index, value) -> None:
        if not isinstance(index, slice):
            index = _check_index(index, self.nbytes())
        self._bytes[index] = value

    def tolist(self) -> list:
        return self._host().tolist()

    def fill_(self, value) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def copy_(self, source, non_blocking: bool = False) -> UntypedStorage:
        """Copy the bytes of `source` (a storage of the same size) into this storage."""
        src = source._untyped() if isinstance(source, TypedStorage) else source
        if src.nbytes() != self.nbytes():
            raise RuntimeError(
                f"size does not match, self was {self.nbytes()} bytes but src was "
                f"{src.nbytes()} bytes"
            )
        data = src._bytes
        if src._device is not self._device:
            data = backend_of(self._device).from_host(src._host(), self._device)
        self._bytes[...] = data
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage._over(self._bytes.copy(), self._device)

    def to(self, device=None) -> UntypedStorage:
        dev = resolve_device(device)
        if dev is self._device:
            return self
        host = self._host()
        return UntypedStorage._over(
            host.copy() if dev is CPU else backend_of(dev).from_host(host, dev), dev
        )

    def cpu(self) -> UntypedStorage:
        return self.to(CPU)

    def untyped(self) -> UntypedStorage:
        return self

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = "".join(f" {v}\n" for v in self.tolist())
        return (
            f"{body}[tocha.storage.UntypedStorage(device={self._device}) of size {self.nbytes()}]"
        )


class TypedStorage(_Conversions):
    """A storage read as one dtype, as ``torch.TypedStorage`` (deprecated in PyTorch, which
    warns once when `Tensor.storage()` makes one): ``TypedStorage(n, dtype=...)``,
    ``TypedStorage([values...], dtype=...)`` or ``tensor.storage()``."""

    __slots__ = ("_storage", "dtype")
    is_sparse = False

    def __init__(self, *args: Any, dtype: Any = None, device: Any = None) -> None:
        _warn_typed_storage_removal()
        d = _dtype.get_default_dtype() if dtype is None else dtype
        arg = args[0] if args else 0
        if isinstance(arg, (list, tuple)):
            host = np.asarray(arg, dtype=d.np).view(_U8)
            untyped = UntypedStorage._over(host, CPU).to(CPU if device is None else device)
        else:
            untyped = UntypedStorage(operator.index(arg) * d.itemsize, device=device)
        self._storage, self.dtype = untyped, d

    @classmethod
    def _over(cls, untyped: UntypedStorage, d) -> TypedStorage:
        s = object.__new__(cls)
        s._storage, s.dtype = untyped, d
        return s

    def _untyped(self) -> UntypedStorage:
        return self._storage

    def untyped(self) -> UntypedStorage:
        _warn_typed_storage_removal()
        return self._storage

    @property
    def _array(self):
        data = self._storage._bytes
        usable = data.size - data.size % self.dtype.itemsize
        return data[:usable].view(self.dtype.np)

    @property
    def device(self):
        return self._storage.device

    @property
    def is_cuda(self) -> bool:
        return self._storage.is_cuda

    def size(self) -> int:
        return self._storage.nbytes() // self.dtype.itemsize

    __len__ = size

    def nbytes(self) -> int:
        return self._storage.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def _values(self):
        return self._array

    @classmethod
    def from_buffer(
        cls,
        buffer: Any,
        byte_order: str | None = None,
        count: int = -1,
        offset: int = 0,
        *,
        dtype: Any = None,
    ) -> TypedStorage:
        """The values of a Python buffer (``bytes``, ``bytearray``...): `count` values of
        `dtype` (the default dtype by default; all by default) from byte `offset`, read in
        `byte_order` (``"native"``, ``"little"`` or ``"big"``)."""
        _warn_typed_storage_removal()
        d = _dtype.get_default_dtype() if dtype is None else dtype
        array, d = buffer_values(buffer, byte_order, count, offset, d)
        return cls._over(UntypedStorage._over(array.view(_U8).reshape(-1), CPU), d)

    @classmethod
    def from_file(cls, filename: Any, shared: Any = False, size: int = 0) -> TypedStorage:
        """`size` elements of a file (on a legacy class: ``tocha.FloatStorage.from_file``),
        mapped when `shared`, else read into memory."""
        d = LEGACY_DTYPES.get(cls)
        if d is None:
            raise RuntimeError("from_file can only be called on derived classes")
        untyped = UntypedStorage.from_file(filename, shared, element_count(size) * d.itemsize)
        return TypedStorage._over(untyped, d)

    @property
    def filename(self) -> str | None:
        """The file this storage maps (``from_file(..., shared=True)``), else None."""
        return self._storage.filename

    def resizable(self) -> bool:
        """Whether `resize_` can replace this storage's memory (see UntypedStorage's)."""
        return self._storage.resizable()

    def resize_(self, size: int) -> None:
        """Resize to `size` elements in place (see UntypedStorage's `resize_`)."""
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            raise RuntimeError(f"resize_ expects an int, but got {type(size).__name__}")
        self._storage.resize_(int(size) * self.dtype.itemsize)

    def clone(self) -> TypedStorage:
        """A copy of the storage."""
        return TypedStorage._over(self._storage.clone(), self.dtype)

    def to(self, *, device: Any = None, non_blocking: bool = False) -> TypedStorage:
        """This storage's memory on `device` (a copy when it is elsewhere)."""
        dev = self.device if device is None else resolve_device(device)
        return TypedStorage._over(self._storage.to(dev), self.dtype)

    def pickle_storage_type(self) -> str:
        """The legacy storage class name that checkpoints write (``"FloatStorage"``...)."""
        return _dtype.TITLE[self.dtype] + "Storage"

    def type(self, dtype: Any = None, non_blocking: bool = False) -> str:
        """The storage's legacy type name (``"tocha.FloatStorage"``...); tocha has no legacy
        storage classes to convert to: use ``float()``, ``long()``... instead."""
        if dtype is not None:
            raise TypeError(
                "tocha has no legacy storage classes to convert to: use float(), double(), "
                "long()... or to(device=...)"
            )
        return f"{_dtype.SHOWN_MODULE}.{self.pickle_storage_type()}"

    def data_ptr(self) -> int:
        return self._storage.data_ptr()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return TypedStorage._over(
                UntypedStorage._over(self._array[index].view(_U8), self.device), self.dtype
            )
        value = self._array[_check_index(index, self.size())]
        return value.item() if hasattr(value, "item") else value

    def __setitem__(self, index, value) -> None:
        if not isinstance(index, slice):
            index = _check_index(index, self.size())
        self._array[index] = value._data if isinstance(value, Tensor) else value

    def tolist(self) -> list:
        arr = backend_of(self.device).to_host(self._array)
        if arr.dtype.name == "bfloat16":
            arr = arr.astype(np.float32)
        return arr.tolist()

    def fill_(self, value) -> TypedStorage:
        self._array[...] = value
        return self

    def copy_(self, source, non_blocking: bool = False) -> TypedStorage:
        """Copy the bytes of `source` (a storage of as many bytes) into this storage."""
        self._storage.copy_(source, non_blocking)
        return self

    def cpu(self) -> TypedStorage:
        return TypedStorage._over(self._storage.cpu(), self.dtype)

    def _new_wrapped_storage(self, untyped: UntypedStorage) -> TypedStorage:
        return TypedStorage._over(untyped, self.dtype)

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = "".join(f" {v}\n" for v in self.tolist())
        return (
            f"{body}[tocha.storage.TypedStorage(dtype={self.dtype}, device={self.device}) "
            f"of size {self.size()}]"
        )


class _LegacyStorageType(type):
    """The type of the legacy storage classes: ``tocha.FloatStorage.dtype`` is float32, and
    any TypedStorage of that dtype is an instance."""

    @property
    def dtype(cls) -> _dtype.dtype:
        return LEGACY_DTYPES[cls]

    def __instancecheck__(cls, obj) -> builtins.bool:
        return type(obj) is TypedStorage and obj.dtype is LEGACY_DTYPES.get(cls)


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageType):
    """PyTorch's legacy storage classes (``tocha.FloatStorage(3)``,
    ``tocha.LongStorage([1, 2])``): each makes a TypedStorage of its dtype."""

    __slots__ = ()

    def __new__(cls, *args: Any, wrap_storage: UntypedStorage | None = None, **kwargs: Any):
        if kwargs or len(args) > 1 or (wrap_storage is not None and args):
            raise RuntimeError(
                f"{cls}.__new__ received an invalid combination of arguments. Expected one of:\n"
                " * no arguments\n * (int size)\n * (Sequence data)\n"
                " * (*, UntypedStorage wrap_storage)\n"
                + "".join(f"Keyword argument '{k}' cannot be specified" for k in list(kwargs)[:1])
            )
        if wrap_storage is not None:
            _warn_typed_storage_removal()
            return TypedStorage._over(wrap_storage, LEGACY_DTYPES[cls])
        return TypedStorage(*args, dtype=LEGACY_DTYPES[cls])


LEGACY_STORAGES = {
    d: _LegacyStorageType(_dtype.TITLE[d] + "Storage", (_LegacyStorage,), {"__slots__": ()})
    for d in _dtype.ALL
}
LEGACY_DTYPES = {cls: d for d, cls in LEGACY_STORAGES.items()}
for _legacy in LEGACY_STORAGES.values():
    _legacy.__module__ = "tocha"


def from_file(
    filename: Any,
    shared: Any = None,
    size: int = 0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """A 1-D tensor of `size` elements of `dtype` (the default dtype) read from a file, as
    ``torch.from_file``: with `shared`, the tensor maps the file (writes reach it; the file is
    created or extended as needed), else it holds a copy. Shape ``(size,)``."""
    d = _dtype.get_default_dtype() if dtype is None else dtype
    data = file_bytes(filename, shared, element_count(size) * d.itemsize)
    t = wrap(data.view(d.np), CPU)
    return t if device is None else t.to(device)


def is_storage(obj: Any) -> builtins.bool:
    """Whether `obj` is a storage (an UntypedStorage or a TypedStorage)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


def _check_index(index, size: int) -> int:
    i = operator.index(index)
    if not -size <= i < size:
        raise IndexError(f"index {i} out of range for storage of size {size}")
    return i % size if size else i


_TYPED_STORAGE_WARNED = [False]


def _warn_typed_storage_removal() -> None:
    """PyTorch's warning that TypedStorage is deprecated: once per process."""
    if _TYPED_STORAGE_WARNED[0]:
        return
    _TYPED_STORAGE_WARNED[0] = True
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
        "be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
        "of tensor.storage()",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


# -- Tensor methods --------------------------------------------------------------------------
def untyped_storage(self: Tensor) -> UntypedStorage:
    """The memory this tensor views, as bytes (shared with the tensor and its views)."""
    return UntypedStorage._over(_bytes_of(self._data, self._device), self._device)


def storage(self: Tensor) -> TypedStorage:
    """The memory this tensor views, read as its dtype (PyTorch's deprecated TypedStorage:
    warns once)."""
    _warn_typed_storage_removal()
    return TypedStorage._over(untyped_storage(self), self.dtype)


def storage_type(self: Tensor) -> type:
    """The legacy storage class of this tensor's dtype (``tocha.FloatStorage``...); warns,
    once, that TypedStorage is deprecated, as PyTorch."""
    _warn_typed_storage_removal()
    return LEGACY_STORAGES[self.dtype]


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors view the same memory with the same offset, sizes and strides."""
    a, b = self._data, tensor._data
    if self._device is not tensor._device or a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.size == 0:
        return a.size == b.size
    backend = backend_of(self._device)
    return (
        backend.data_ptr(a) == backend.data_ptr(b)
        and self.stride() == tensor.stride()
        and backend.data_ptr(_bytes_of(a, self._device))
        == backend.data_ptr(_bytes_of(b, tensor._device))
    )


def set_(
    self: Tensor,
    source: Any = None,
    storage_offset: int = 0,
    size: Any = None,
    stride: Any = None,
) -> Tensor:
    """Make this tensor view `source`: another tensor (its memory, offset, sizes and strides),
    a storage (from `storage_offset`, with `size` and `stride` in elements; by default all of
    it as one dimension), or nothing (an empty tensor)."""
    if source is None:
        data = backend_of(self._device).xp.empty((0,), self._data.dtype)
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(
                f"Could not set tensor of type {_CTYPE_NAME[source.dtype]} to a tensor of type "
                f"{_CTYPE_NAME[self.dtype]}"
            )
        data = source._data
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        data = _view_storage(self, source, storage_offset, size, stride)
    else:
        raise TypeError(
            f"set_() received an invalid combination of arguments - got "
            f"({type(source).__name__}), but expected a Tensor or a Storage"
        )
    self._data = data
    self._device = source._device if isinstance(source, Tensor) else self._device
    bump_version(self)
    return self


_CTYPE_NAME = {
    _dtype.float32: "float",
    _dtype.float64: "double",
    _dtype.float16: "c10::Half",
    _dtype.bfloat16: "c10::BFloat16",
    _dtype.int64: "long int",
    _dtype.int32: "int",
    _dtype.int16: "short int",
    _dtype.int8: "signed char",
    _dtype.uint8: "unsigned char",
    _dtype.bool: "bool",
    _dtype.complex64: "c10::complex<float>",
    _dtype.complex128: "c10::complex<double>",
}


def _view_storage(self: Tensor, source, storage_offset, size, stride):
    if isinstance(source, TypedStorage):
        if source.dtype is not self.dtype:
            raise RuntimeError(
                f"Expected a Storage of type {self.dtype} but got type {source.dtype} for "
                "argument 1 'storage'"
            )
        source = source._untyped()
    item = self._data.itemsize
    offset = operator.index(storage_offset)
    size = (source.nbytes() // item,) if size is None else tuple(map(operator.index, size))
    stride = _contiguous_strides(size) if stride is None else tuple(map(operator.index, stride))
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    numel = int(np.prod(size))
    needed = 0 if numel == 0 else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed * item > source.nbytes():
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {item} requiring a storage size of {needed * item} are out of bounds "
            f"for storage of size {source.nbytes()}"
        )
    if source._device is not self._device:
        raise RuntimeError(
            f'Attempted to set the storage of a tensor on device "{self._device}" to a '
            f'storage on different device "{source._device}".  This is no longer allowed; the '
            "devices must match."
        )
    data = source._bytes
    np_dtype = self._data.dtype
    if numel == 0:
        return data[:0].view(np_dtype).reshape(size)
    byte_strides = tuple(s * item for s in stride)
    if source._device is CPU:  # the view's .base is the storage's array: offsets stay visible
        return np.ndarray(size, np_dtype, buffer=data, offset=offset * item, strides=byte_strides)
    window = data[offset * item : needed * item].view(np_dtype)
    return backend_of(source._device).xp.lib.stride_tricks.as_strided(window, size, byte_strides)


def _layout(self: Tensor) -> layout:
    return getattr(self._data, "layout", strided)


for _fn in (untyped_storage, storage, storage_type, is_set_to, set_):
    export(_fn, method=True, function=False)
export(is_storage)
export(from_file)
Tensor.layout = property(_layout, doc="The tensor's memory layout: `tocha.strided` for dense.")
for _name, _value in (
    ("UntypedStorage", UntypedStorage),
    ("TypedStorage", TypedStorage),
    ("layout", layout),
    ("strided", strided),
    ("sparse_coo", sparse_coo),
    ("sparse_csr", sparse_csr),
    ("sparse_csc", sparse_csc),
    ("sparse_bsr", sparse_bsr),
    ("sparse_bsc", sparse_bsc),
    *((cls.__name__, cls) for cls in LEGACY_STORAGES.values()),
):
    export(_value, _name)
