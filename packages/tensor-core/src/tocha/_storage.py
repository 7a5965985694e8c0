"""Storages and layouts: ``tocha.UntypedStorage``, ``tocha.TypedStorage``, ``tocha.layout``
(``tocha.strided``, ``tocha.sparse_coo``), and the Tensor methods that reach them
(`untyped_storage`, `storage`, `set_`, `is_set_to`, `layout`).

A tensor's storage is the memory its array views: the array at the end of the array's
``.base`` chain (the one that owns the memory), seen as bytes. Views of one tensor, tensors
that `set_` put on a storage, and tensors that `tocha.load` rebuilt from one saved storage all
end in the same array, so they report the same storage (`data_ptr`, `nbytes`) and
`tocha.save` writes it once. Each call makes a new storage object over that memory, as in
PyTorch, so storages are compared by `data_ptr`, not identity.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from . import _dtype
from ._api import export
from ._backend import backend_of, resolve_device
from ._device import CPU
from ._dispatch import bump_version
from ._tensor import Tensor, _contiguous_strides

__all__ = ["TypedStorage", "UntypedStorage", "layout", "sparse_coo", "strided"]

_U8 = np.dtype(np.uint8)


class layout:
    """A tensor's memory layout, as ``torch.layout``: `tocha.strided` (dense) or
    `tocha.sparse_coo`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return "tocha." + self.name

    def __reduce__(self):
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")


def _root(array, array_type: type):
    """The last array of `array_type` in the ``.base`` chain of `array`: its memory's owner."""
    root, node = array, array.base
    while node is not None:
        if isinstance(node, array_type):
            root = node
        node = getattr(node, "base", None)
    return root


def _bytes_of(array, dev):
    """The memory `array` views, as a flat uint8 backend array (a view, not a copy)."""
    root = _root(array, backend_of(dev).array_type)
    if not root.flags.c_contiguous:
        root = backend_of(dev).xp.ascontiguousarray(root)
    return root.reshape(-1).view(_U8)


class UntypedStorage:
    """Bytes on a device, as ``torch.UntypedStorage``: ``UntypedStorage(n)`` (zeroed),
    ``UntypedStorage([bytes...])``, or ``tensor.untyped_storage()``, which views the tensor's
    memory (writes through it are seen by the tensor)."""

    __slots__ = ("_bytes", "_device")

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


class TypedStorage:
    """A storage read as one dtype, as ``torch.TypedStorage`` (deprecated in PyTorch, which
    warns once when `Tensor.storage()` makes one): ``TypedStorage(n, dtype=...)``,
    ``TypedStorage([values...], dtype=...)`` or ``tensor.storage()``."""

    __slots__ = ("_storage", "dtype")

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
        stacklevel=3,
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


for _fn in (untyped_storage, storage, is_set_to, set_):
    export(_fn, method=True, function=False)
Tensor.layout = property(_layout, doc="The tensor's memory layout: `tocha.strided` for dense.")
for _name, _value in (
    ("UntypedStorage", UntypedStorage),
    ("TypedStorage", TypedStorage),
    ("layout", layout),
    ("strided", strided),
    ("sparse_coo", sparse_coo),
):
    export(_value, _name)
