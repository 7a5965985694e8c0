"""Reading checkpoints in PyTorch's legacy format (``torch.save`` before 1.6, or with
``_use_new_zipfile_serialization=False``): one stream of pickles, not a zip.

The stream holds, in order: the magic number, the protocol version (1001), a dict describing
the writer (byte order, C type sizes), the object itself (its storages are persistent ids
``('storage', storage_type, key, location, numel, view)``), the list of storage keys, and then
each storage's elements: an 8-byte little-endian count followed by the raw bytes.

A storage's bytes come after the object that uses them, and how many there are depends on the
storage's dtype, which only the object's pickle says. So the object is first unpickled *dry*
(every global a stand-in, nothing of the file's run) to learn each key's dtype, the bytes are
read, and then the object is unpickled for real.
"""

from __future__ import annotations

import pickle

import numpy as np

from .._device import CPU
from ._pickle import ALLOWED, StorageType
from ._storage import TypedStorage, UntypedStorage, restorer

MAGIC = 0x1950A86A20F9469CFC6C
PROTOCOL = 1001


def load(fileobj, name: str, unpickler: type, map_location, pickle_load_args: dict):
    """The object of the legacy checkpoint `fileobj`, positioned after the magic number;
    `unpickler` is the class that unpickles it (weights-only or not)."""

    def no_storage(*pid):
        raise pickle.UnpicklingError("a storage outside the checkpoint's object")

    def plain():
        return unpickler(fileobj, load_storage=no_storage, **pickle_load_args).load()

    protocol = plain()
    if protocol != PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    about = plain()
    if not isinstance(about, dict) or not about.get("little_endian", True):
        raise RuntimeError(f"{name} was written on a big-endian machine, which tocha does not read")
    start = fileobj.tell()
    dry = _DryUnpickler(fileobj, **pickle_load_args)
    dry.load()
    keys = plain()
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise pickle.UnpicklingError(f"invalid storage keys in {name}")
    stored: dict[str, UntypedStorage] = {}
    for key in keys:
        dtype = dry.dtypes.get(key)
        if dtype is None:
            raise pickle.UnpicklingError(f"storage {key} of {name} is used by no tensor")
        stored[key] = _read_storage(fileobj, name, key, dtype.itemsize)
    end = fileobj.tell()
    restore = restorer(map_location)
    restored: dict[str, UntypedStorage] = {}

    def load_storage(dtype, key, location, numel, view=None):
        storage = restored.get(key)
        if storage is None:
            if key not in stored:
                raise pickle.UnpicklingError(f"storage {key} is missing from {name}")
            storage = restored[key] = restore(stored[key], location)
        if view is not None:
            _, offset, numel = view
            storage = storage[offset * dtype.itemsize : (offset + numel) * dtype.itemsize]
        return TypedStorage(storage, dtype)

    fileobj.seek(start)
    obj = unpickler(fileobj, load_storage=load_storage, **pickle_load_args).load()
    fileobj.seek(end)
    return obj


def _read_storage(fileobj, name: str, key: str, itemsize: int) -> UntypedStorage:
    head = fileobj.read(8)
    if len(head) != 8:
        raise RuntimeError(f"{name} ends before the data of storage {key}")
    nbytes = int.from_bytes(head, "little") * itemsize
    here = fileobj.tell()
    left = fileobj.seek(0, 2) - here
    fileobj.seek(here)
    if nbytes > left:  # checked before reading: a count is no reason to allocate
        raise RuntimeError(f"{name} ends inside the data of storage {key}")
    data = fileobj.read(nbytes)
    return UntypedStorage(np.frombuffer(bytearray(data), np.uint8), CPU)


class _StandIn:
    """Whatever a dry unpickling builds: takes any arguments, state and items."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _StandIn()

    def __setstate__(self, state):
        pass

    def __setitem__(self, key, value):
        pass

    def append(self, value):
        pass

    def extend(self, values):
        pass


class _DryUnpickler(pickle.Unpickler):
    """Reads a pickle without running any of it, noting the dtype of each storage key."""

    def __init__(self, file, **kwargs):
        super().__init__(file, **kwargs)
        self.dtypes: dict = {}

    def find_class(self, module, name):
        found = ALLOWED.get(f"{module}.{name}")
        return found if isinstance(found, StorageType) else _StandIn

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) >= 5 and isinstance(pid[1], StorageType):
            self.dtypes.setdefault(pid[2], pid[1].dtype)
        return _StandIn  # a class: a saved module's id stands for its class
