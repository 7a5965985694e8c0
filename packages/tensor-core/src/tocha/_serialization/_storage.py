"""Storages: which saved tensors share memory and which bytes of it to write (saving), and
the storage objects, device placement and views a load rebuilds.

A storage is found from a tensor's backend array by following ``.base`` to the root array
that owns the memory; tensors with one root share a storage. Only the byte range that the
saved tensors cover is written, and each tensor is recorded as (storage, offset, shape,
strides) in elements, as PyTorch records it.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._backend import backend_of, get_backend, resolve_device
from .._device import CPU, device
from .._meta import META
from .._tensor import Tensor, wrap

_U8 = np.dtype(np.uint8)


def _root(array, array_type: type):
    """The last array in the ``.base`` chain of `array`: the one that owns its memory."""
    root, node = array, array.base
    while node is not None:
        if isinstance(node, array_type):
            root = node
        node = getattr(node, "base", None)
    return root


class StorageRef:
    """One storage to write: the bytes ``[lo, hi)`` of a root array, holding `dtype`."""

    __slots__ = ("key", "root", "dtype", "device", "lo", "hi")

    def __init__(self, key: str, root, dtype: _dtype.dtype, dev: device, lo: int, hi: int):
        self.key, self.root, self.dtype, self.device = key, root, dtype, dev
        self.lo, self.hi = lo, hi

    @property
    def numel(self) -> int:
        return (self.hi - self.lo) // self.dtype.itemsize

    def payload(self):
        """The bytes to write, as a 1-D uint8 backend array."""
        flat = self.root.reshape(-1)
        return flat.view(_U8)[self.lo : self.hi]


class StorageTable:
    """The storages of one save. `add` every tensor first (the planning pass), then
    `locate` gives each tensor its storage and its place in it (the writing pass)."""

    def __init__(self):
        self._groups: dict[tuple, StorageRef] = {}
        self._dtype_of_root: dict[int, _dtype.dtype] = {}
        self._placed: dict[int, tuple] = {}  # id(tensor) -> (group key, byte offset, strides)
        self._plain: dict[int, Tensor] = {}
        self.storages: list[StorageRef] = []
        self._keep: list = []

    def add(self, t: Tensor) -> None:
        if id(t) in self._placed or t._device is META:  # a meta tensor is saved without one
            return
        self._keep.append(t)
        a = t._data
        item = a.itemsize
        backend = backend_of(t._device)
        root = _root(a, backend.array_type)
        ok = (
            a.size > 0
            and root.flags.c_contiguous
            and all(s >= 0 and s % item == 0 for s in a.strides)
        )
        if ok:
            off = backend.data_ptr(a) - backend.data_ptr(root)
            hi = off + item + sum((n - 1) * s for n, s in zip(a.shape, a.strides))
            ok = 0 <= off and hi <= root.nbytes
        if not ok:  # empty, negative strides or memory tocha cannot see: a storage of its own
            key = ("copy", id(t))
            root = backend.xp.ascontiguousarray(a) if a.size else backend.xp.empty(0, a.dtype)
            self._groups[key] = StorageRef("", root, t.dtype, t._device, 0, root.nbytes)
            self._placed[id(t)] = (key, 0, _contiguous_byte_strides(a.shape, item))
            return
        seen = self._dtype_of_root.setdefault(id(root), t.dtype)
        if seen is not t.dtype:
            raise RuntimeError(
                "Cannot save multiple tensors or storages that view the same "
                "data as different types"
            )
        key = (id(root), off % item)
        group = self._groups.get(key)
        if group is None:
            self._groups[key] = StorageRef("", root, t.dtype, t._device, off, hi)
        else:
            group.lo, group.hi = min(group.lo, off), max(group.hi, hi)
        self._placed[id(t)] = (key, off, a.strides)

    def plain(self, t: Tensor) -> Tensor:
        """A plain Tensor on the data of the Tensor subclass instance `t`, the same object
        in both passes."""
        found = self._plain.get(id(t))
        if found is None:
            self._keep.append(t)
            found = self._plain[id(t)] = wrap(t._data, t._device)
        return found

    def finish(self) -> None:
        """Number the storages in the order they were first met."""
        for i, ref in enumerate(self._groups.values()):
            ref.key = str(i)
            self.storages.append(ref)

    def locate(self, t: Tensor) -> tuple:
        """(storage, offset in elements, strides in elements) of a tensor `add` saw."""
        key, off, strides = self._placed[id(t)]
        ref = self._groups[key]
        item = t._data.itemsize
        return ref, (off - ref.lo) // item, tuple(s // item for s in strides)


def _contiguous_byte_strides(shape, item: int) -> tuple:
    strides, acc = [], item
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


class UntypedStorage:
    """The bytes of one loaded storage on a device: what a ``map_location`` callable gets
    and returns, as PyTorch's ``UntypedStorage`` (``cpu()``, ``cuda()``, ``to()``)."""

    __slots__ = ("_data", "device")

    def __init__(self, data, dev: device):
        self._data = data
        self.device = dev

    def nbytes(self) -> int:
        return self._data.size

    size = nbytes
    __len__ = nbytes

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def to(self, device=None) -> UntypedStorage:
        """This storage on `device` (itself if it is there already)."""
        dev = resolve_device(device)
        if dev is self.device:
            return self
        host = backend_of(self.device).to_host(self._data)
        data = host if dev is CPU else backend_of(dev).from_host(host, dev)
        return UntypedStorage(data, dev)

    def cpu(self) -> UntypedStorage:
        return self.to(CPU)

    def cuda(self, device=None, non_blocking: bool = False) -> UntypedStorage:
        if device is None or isinstance(device, int):
            return self.to("cuda" if device is None else f"cuda:{device}")
        return self.to(device)

    def __repr__(self) -> str:
        return f"tocha UntypedStorage of {self.nbytes()} bytes on {self.device}"


class TypedStorage:
    """A loaded storage with the dtype its tensors read it as."""

    __slots__ = ("untyped", "dtype")

    def __init__(self, untyped: UntypedStorage, dtype: _dtype.dtype):
        self.untyped, self.dtype = untyped, dtype


def restore_location(storage: UntypedStorage, location: str) -> UntypedStorage:
    """Place a CPU storage on the device a checkpoint names, as PyTorch's default does."""
    dev = device(location)
    if dev.type == "cpu":
        return storage.to(CPU)
    if dev.type == "cuda":
        from .. import cuda

        if not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but "
                "tocha.cuda.is_available() is False. If you are running on a CPU-only machine, "
                "please use tocha.load with map_location=tocha.device('cpu') to map your "
                "storages to the CPU."
            )
        count = cuda.device_count()
        if (dev.index or 0) >= count:
            raise RuntimeError(
                f"Attempting to deserialize object on CUDA device {dev.index or 0} but "
                f"tocha.cuda.device_count() is {count}. Please use tocha.load with map_location "
                "to map your storages to an existing device."
            )
    else:
        get_backend(dev.type)
    return storage.to(dev)


def restorer(map_location):
    """The function (storage, location) -> storage that `map_location` asks for."""
    if map_location is None:
        return restore_location
    if isinstance(map_location, dict):
        return lambda storage, loc: restore_location(storage, map_location.get(loc, loc))
    if isinstance(map_location, bytes):
        map_location = map_location.decode("utf-8")
    if isinstance(map_location, (str, device)):
        target = str(map_location)
        return lambda storage, loc: restore_location(storage, target)
    if callable(map_location):

        def restore(storage, loc):
            result = map_location(storage, loc)
            if result is None:
                return restore_location(storage, loc)
            if not isinstance(result, UntypedStorage):
                raise TypeError(
                    f"map_location returned {type(result).__name__}; expected the "
                    "storage it was given or a copy made with .cpu(), .cuda() or "
                    ".to()"
                )
            return result

        return restore
    raise TypeError(
        f"map_location should be a device, a string, a dict or a callable, got "
        f"{type(map_location).__name__}"
    )


MAX_DIMS = 64


def span_bytes(shape, item: int) -> int:
    """The bytes of a contiguous array of `shape` with its zero sizes taken as one: what NumPy
    refuses to make when it reaches 2**63, even for an empty array."""
    total = item
    for n in shape:
        total *= max(n, 1)
    return total


def tensor_from_storage(storage: TypedStorage, offset: int, size, stride) -> Tensor:
    """A tensor viewing `storage` at `offset` with `size` and `stride` (in elements);
    RuntimeError as PyTorch's when they reach outside the storage."""
    d = storage.dtype
    untyped = storage.untyped
    item = d.itemsize
    size, stride = tuple(size), tuple(stride)
    bad = (
        len(size) != len(stride)
        or len(size) > MAX_DIMS
        or any(type(v) is not int or not 0 <= v < 2**63 for v in (offset,) + size + stride)
    )
    if bad or span_bytes(size, item) >= 2**63:
        raise RuntimeError(
            f"invalid tensor record: size {list(size)}, stride {list(stride)}, "
            f"storage offset {offset}"
        )
    numel = 1
    for n in size:
        numel *= n
    needed = 0 if numel == 0 else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed * item > untyped.nbytes():
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {item} requiring a storage size of {needed * item} are out of bounds "
            f"for storage of size {untyped.nbytes()}"
        )
    data = untyped._data
    byte_strides = tuple(s * item for s in stride)
    if untyped.device is CPU:
        if numel == 0:
            array = np.empty(size, d.np)
        else:
            array = np.ndarray(size, d.np, buffer=data, offset=offset * item, strides=byte_strides)
    else:
        xp = backend_of(untyped.device).xp
        if numel == 0:
            array = xp.empty(size, d.np)
        else:
            window = data[offset * item : needed * item].view(d.np)
            array = xp.lib.stride_tricks.as_strided(window, size, byte_strides)
    return wrap(array, untyped.device)
