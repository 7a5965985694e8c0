"""PyTorch's pickle dialect: writing tocha objects under PyTorch's global names, and the
restricted unpickler that maps those names back to tocha's rebuild functions.

A checkpoint's ``data.pkl`` names globals such as ``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ``torch.float32``, ``torch.device`` and ``collections.OrderedDict``.
`Pickler` writes them (tocha never imports torch; the names are written as opcodes), and
`Unpickler.find_class` resolves them from one table. Under ``weights_only`` nothing outside
that table, the registered Tensor types and the user's safe globals is ever looked up, so no
opcode of the file can import or call anything else.
"""

from __future__ import annotations

import collections
import pickle

from .. import _dtype
from .._device import device
from .._tensor import Size, Tensor, wrap
from . import _registry
from ._storage import StorageRef, StorageTable, TypedStorage, tensor_from_storage


class TorchName:
    """A global that a checkpoint names and tocha writes without importing it."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):
        raise TypeError(f"{self.module}.{self.name} is a name for pickling, not a function")


REBUILD_TENSOR = TorchName("torch._utils", "_rebuild_tensor_v2")
REBUILD_PARAMETER = TorchName("torch._utils", "_rebuild_parameter")
REBUILD_PARAMETER_STATE = TorchName("torch._utils", "_rebuild_parameter_with_state")
REBUILD_FROM_TYPE = TorchName("torch._tensor", "_rebuild_from_type_v2")
DEVICE = TorchName("torch", "device")
SIZE = TorchName("torch", "Size")
STORAGE_TYPES = {d: TorchName("torch", _dtype.TITLE[d] + "Storage") for d in _dtype.ALL}


class _Discard:
    def write(self, data) -> None:
        pass


class Pickler(pickle._Pickler):
    """Pickles an object tree the way ``torch.save`` does, tensors as persistent storages.

    Run twice: first with ``planning=True`` (the table records which storages the tensors
    use), then to write.
    """

    def __init__(self, file, protocol: int, table: StorageTable, planning: bool):
        super().__init__(_Discard() if planning else file, protocol)
        self._table = table
        self._planning = planning

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, (_dtype.dtype, TorchName)):
            return "global"
        if type(obj) is device:
            return DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index)
        if type(obj) is Size:
            return SIZE, (tuple(obj),)
        return NotImplemented

    def _reduce_tensor(self, t: Tensor):
        cls = type(t)
        if cls is not Tensor:
            plain = self._table.plain(t)
            state = getattr(t, "__dict__", None) or None
            if _registry.name_of_type(cls) == _registry.PARAMETER:
                if state is None:
                    return REBUILD_PARAMETER, (plain, t.requires_grad, collections.OrderedDict())
                return REBUILD_PARAMETER_STATE, (plain, t.requires_grad,
                                                 collections.OrderedDict(), state)
            return REBUILD_FROM_TYPE, (REBUILD_TENSOR, cls, self._tensor_args(t), state)
        return REBUILD_TENSOR, self._tensor_args(t)

    def _tensor_args(self, t: Tensor) -> tuple:
        if self._planning:
            self._table.add(t)
            return ()
        ref, offset, strides = self._table.locate(t)
        return (ref, offset, tuple(t._data.shape), strides, t.requires_grad,
                collections.OrderedDict())

    def persistent_id(self, obj):
        if type(obj) is StorageRef:
            return ("storage", STORAGE_TYPES[obj.dtype], obj.key, str(obj.device), obj.numel)
        return None

    def save_global(self, obj, name=None):
        if isinstance(obj, TorchName):
            module, name = obj.module, obj.name
        elif isinstance(obj, _dtype.dtype):
            module, name = "torch", obj.name
        elif isinstance(obj, type) and _registry.name_of_type(obj) is not None:
            module, _, name = _registry.name_of_type(obj).rpartition(".")
        else:
            super().save_global(obj, name)
            return
        self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
        self.memoize(obj)


# -- loading --------------------------------------------------------------------------------
class StorageType:
    """What ``torch.FloatStorage`` and its kin resolve to: the dtype of a storage."""

    __slots__ = ("dtype",)

    def __init__(self, d: _dtype.dtype):
        self.dtype = d


def _set_state(t, state):
    """Restore a Tensor subclass's attributes, never the slots that hold its data."""
    if not state:
        return t
    setstate = getattr(type(t), "__setstate__", None)
    if setstate is not None:
        t.__setstate__(state)
        return t
    dict_state, slots_state = state if isinstance(state, tuple) else (state, None)
    for items in (dict_state or {}), (slots_state or {}):
        for k, v in items.items():
            if k in Tensor.__slots__:
                raise pickle.UnpicklingError(f"a tensor's state may not set {k!r}")
            setattr(t, k, v)
    return t


def _as_type(t: Tensor, cls: type, requires_grad: bool):
    """`t` as an instance of the Tensor subclass `cls`, by its registered rebuild if any."""
    if cls is not Tensor:
        name = _registry.name_of_type(cls)
        entry = _registry.tensor_type(name) if name is not None else None
        if entry is not None:
            return entry[1](t, requires_grad)
        t = _registry.default_rebuild(cls)(t, False)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    if not isinstance(storage, TypedStorage):
        raise pickle.UnpicklingError("_rebuild_tensor_v2 expects a storage as its first argument")
    t = tensor_from_storage(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return _rebuild_parameter_with_state(data, requires_grad, backward_hooks, None)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    if type(data) is not Tensor:
        raise pickle.UnpicklingError("_rebuild_parameter expects a tensor")
    entry = _registry.tensor_type(_registry.PARAMETER)
    requires_grad = bool(requires_grad)
    param = entry[1](data, requires_grad) if entry else _as_type(data, Tensor, requires_grad)
    return _set_state(param, state)


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in _REBUILD_FUNCTIONS or not (isinstance(new_type, type)
                                              and issubclass(new_type, Tensor)):
        raise pickle.UnpicklingError("_rebuild_from_type_v2 expects a tensor rebuild function "
                                     "and a Tensor type")
    t = func(*args)
    if type(t) is not new_type:
        requires_grad = t.requires_grad
        t = _as_type(wrap(t._data, t._device), new_type, requires_grad)
    return _set_state(t, state)


def _encode(obj, encoding="utf-8"):
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"_codecs.encode with encoding {encoding!r} is not allowed")
    return obj.encode("latin1")


def _torch_device(type, index=None):  # noqa: A002 - PyTorch's argument name
    return device(type, index)


_REBUILD_FUNCTIONS = (_rebuild_tensor_v2, _rebuild_parameter, _rebuild_parameter_with_state)

ALLOWED: dict[str, object] = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.set": set,
    "builtins.frozenset": frozenset,
    "builtins.bytearray": bytearray,
    "builtins.bytes": bytes,
    "builtins.complex": complex,
    "_codecs.encode": _encode,
    "torch.device": _torch_device,
    "torch.Size": Size,
    "torch.Tensor": Tensor,
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    **{f"torch.{d.name}": d for d in _dtype.ALL},
    **{f"{n.module}.{n.name}": StorageType(d) for d, n in STORAGE_TYPES.items()},
}


class Unpickler(pickle.Unpickler):
    """Unpickles ``data.pkl``: PyTorch's names become tocha's, storages come from
    `load_storage(dtype, key, location, numel)`. With `weights_only`, any other global is an
    UnpicklingError before it is imported."""

    def __init__(self, file, *, weights_only: bool, load_storage, **kwargs):
        super().__init__(file, **kwargs)
        self._weights_only = weights_only
        self._load_storage = load_storage

    def find_class(self, module, name):
        if module == "__builtin__":
            module = "builtins"
        full = f"{module}.{name}"
        found = ALLOWED.get(full)
        if found is not None:
            return found
        entry = _registry.tensor_type(full)
        if entry is not None:
            return entry[0]
        if not self._weights_only:
            return super().find_class(module, name)
        found = _registry.safe_globals_by_name().get(full)
        if found is not None:
            return found
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please "
            f"use `tocha.serialization.add_safe_globals([{full}])` or the "
            f"`tocha.serialization.safe_globals([{full}])` context manager to allowlist this "
            "global if you trust this class/function."
        )

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}: expected "
                                         "('storage', storage_type, key, location, numel)")
        _, storage_type, key, location, numel = pid
        if not (isinstance(storage_type, StorageType) and isinstance(key, str)
                and isinstance(location, str) and isinstance(numel, int) and numel >= 0):
            raise pickle.UnpicklingError(f"invalid storage record {pid!r}")
        return self._load_storage(storage_type.dtype, key, location, numel)
