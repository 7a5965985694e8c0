"""PyTorch's pickle dialect: writing tocha objects under PyTorch's global names, and the
restricted unpickler that maps those names back to tocha's rebuild functions.

A checkpoint's ``data.pkl`` names globals such as ``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ``torch.float32``, ``torch.device`` and ``collections.OrderedDict``;
a sparse COO tensor is ``torch._utils._rebuild_sparse_tensor`` of its layout (named by
``torch.serialization._get_layout``) and of its indices, values, size and coalesced flag.
`Pickler` writes them (tocha never imports torch; the names are written as opcodes), and
`find_class` resolves them from one table. tocha's own classes and functions (a whole
module's) are written and read under PyTorch's names too (`_names`). Under ``weights_only``,
`WeightsUnpickler` reads the file opcode by opcode (as PyTorch's weights-only unpickler
does): nothing outside that table, the registered Tensor types and the user's safe globals
is ever looked up, only the table's constructors and rebuild functions are ever called
(``bytes`` and ``bytearray`` never with a size), only OrderedDicts and the user's types take
state (BUILD), and a length the file declares is never allocated before its bytes are read.
"""

from __future__ import annotations

import collections
import pickle
import pickletools
import struct
import types

from .. import _dtype
from .._device import device
from .._meta import META, MetaArray
from .._storage import (
    layout,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from .._tensor import Size, Tensor, wrap
from . import _names, _registry
from ._storage import MAX_DIMS, StorageRef, StorageTable, TypedStorage, tensor_from_storage


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
REBUILD_META = TorchName("torch._utils", "_rebuild_meta_tensor_no_storage")
REBUILD_SPARSE = TorchName("torch._utils", "_rebuild_sparse_tensor")
GET_LAYOUT = TorchName("torch.serialization", "_get_layout")
DEVICE = TorchName("torch", "device")
SIZE = TorchName("torch", "Size")
STORAGE_TYPES = {d: TorchName("torch", _dtype.TITLE[d] + "Storage") for d in _dtype.ALL}


_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType)


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
        if isinstance(obj, _FUNCTIONS) and _names.torch_name(obj) is not None:
            return "global"  # by `save_global`, under PyTorch's name
        if type(obj) is device:
            return DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index)
        if type(obj) is Size:
            return SIZE, (tuple(obj),)
        if type(obj) is layout:
            return GET_LAYOUT, (f"torch.{obj.name}",)
        return NotImplemented

    def _reduce_tensor(self, t: Tensor):
        data = t._data
        if getattr(data, "is_sparse", False):
            # PyTorch's record keeps no requires_grad: its values are saved detached
            kind, parts = data.record()
            parts = tuple(
                self._table.plain(p)
                if isinstance(p, Tensor)
                else Size(p)
                if type(p) is tuple
                else p
                for p in parts
            )
            return REBUILD_SPARSE, (kind, parts)
        cls = type(t)
        if cls is not Tensor:
            plain = self._table.plain(t)
            state = getattr(t, "__dict__", None) or None
            if _registry.name_of_type(cls) == _registry.PARAMETER:
                if state is None:
                    return REBUILD_PARAMETER, (plain, t.requires_grad, collections.OrderedDict())
                return REBUILD_PARAMETER_STATE, (
                    plain,
                    t.requires_grad,
                    collections.OrderedDict(),
                    state,
                )
            func, args = self._rebuild_plain(t)
            return REBUILD_FROM_TYPE, (func, cls, args, state)
        return self._rebuild_plain(t)

    def _rebuild_plain(self, t: Tensor) -> tuple:
        """(rebuild function, its arguments) for the data of `t`: a meta tensor has no
        storage, so its record is only its dtype, shape and strides, as in PyTorch."""
        if t._device is META:
            strides = tuple(s // t._data.itemsize for s in t._data.strides)
            return REBUILD_META, (t.dtype, tuple(t._data.shape), strides, t.requires_grad)
        return REBUILD_TENSOR, self._tensor_args(t)

    def _tensor_args(self, t: Tensor) -> tuple:
        if self._planning:
            self._table.add(t)
            return ()
        ref, offset, strides = self._table.locate(t)
        return (
            ref,
            offset,
            tuple(t._data.shape),
            strides,
            t.requires_grad,
            collections.OrderedDict(),
        )

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
        elif _names.torch_name(obj) is not None:
            module, _, name = _names.torch_name(obj).rpartition(".")
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
    """Restore a Tensor subclass's own attributes: by its ``__setstate__`` if it has one, else
    into its instance ``__dict__`` (so never through a property) and its own slots; a dunder
    name or a slot of Tensor is an UnpicklingError."""
    if not state:
        return t
    setstate = getattr(type(t), "__setstate__", None)
    if setstate is not None:
        t.__setstate__(state)
        return t
    dict_state, slots_state = state if isinstance(state, tuple) else (state, None)
    own_slots = {
        name
        for cls in type(t).__mro__[: type(t).__mro__.index(Tensor)]
        for name in cls.__dict__.get("__slots__", ())
    }
    for items, into_slots in ((dict_state or {}), False), ((slots_state or {}), True):
        for k, v in items.items():
            if (
                not isinstance(k, str)
                or k.startswith("__")
                or k in Tensor.__slots__
                or (into_slots and k not in own_slots)
            ):
                raise pickle.UnpicklingError(f"a tensor's state may not set {k!r}")
            if into_slots:
                setattr(t, k, v)
            elif hasattr(t, "__dict__"):
                t.__dict__[k] = v
            else:
                raise pickle.UnpicklingError(f"{type(t).__name__} has no attribute {k!r}")
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


def _rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
):
    if not isinstance(storage, TypedStorage):
        raise pickle.UnpicklingError("_rebuild_tensor_v2 expects a storage as its first argument")
    t = tensor_from_storage(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    if not (
        isinstance(dtype, _dtype.dtype)
        and isinstance(size, tuple)
        and isinstance(stride, tuple)
        and len(size) == len(stride) <= MAX_DIMS
        and all(type(v) is int and 0 <= v < 2**63 for v in size + stride)
    ):
        raise pickle.UnpicklingError(
            "_rebuild_meta_tensor_no_storage expects a dtype, a size and strides"
        )
    byte_strides = tuple(s * dtype.itemsize for s in stride)
    t = wrap(MetaArray(size, dtype.np, byte_strides), META)
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
    if func not in _REBUILD_FUNCTIONS or not (
        isinstance(new_type, type) and issubclass(new_type, Tensor)
    ):
        raise pickle.UnpicklingError(
            "_rebuild_from_type_v2 expects a tensor rebuild function and a Tensor type"
        )
    t = func(*args)
    if type(t) is not new_type:
        requires_grad = t.requires_grad
        t = _as_type(wrap(t._data, t._device), new_type, requires_grad)
    return _set_state(t, state)


_LAYOUTS = {
    f"torch.{kind.name}": kind
    for kind in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
}


def _get_layout(name):
    found = _LAYOUTS.get(name) if isinstance(name, str) else None
    if found is None:
        raise pickle.UnpicklingError(
            f"unsupported layout {name!r}: tocha has torch.strided and the sparse layouts only"
        )
    return found


def _rebuild_sparse_tensor(kind, data):
    """A sparse tensor from its layout and, for COO, ``(indices, values, size[,
    is_coalesced])``, for a compressed layout ``(compressed_indices, plain_indices, values,
    size)``; checked as ``check_invariants=True`` checks (indices within the size, a true
    coalesced flag), since a malformed record would otherwise give wrong answers later."""
    if kind is not sparse_coo:
        return _rebuild_compressed(kind, data)
    if not (isinstance(data, tuple) and len(data) in (3, 4)):
        raise pickle.UnpicklingError(
            "_rebuild_sparse_tensor expects (indices, values, size[, is_coalesced])"
        )
    indices, values, size = data[:3]
    coalesced = data[3] if len(data) == 4 else None
    if not (
        type(indices) is Tensor
        and type(values) is Tensor
        and isinstance(size, tuple)
        and all(type(n) is int for n in size)
        and (coalesced is None or type(coalesced) is bool)
    ):
        raise pickle.UnpicklingError(f"invalid sparse tensor record {data!r}")
    from ..sparse import sparse_coo_tensor

    return sparse_coo_tensor(indices, values, size, check_invariants=True, is_coalesced=coalesced)


def _rebuild_compressed(kind, data):
    if kind not in (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc):
        raise pickle.UnpicklingError(f"unsupported sparse layout {kind!r}")
    if not (
        isinstance(data, tuple)
        and len(data) == 4
        and all(type(p) is Tensor for p in data[:3])
        and isinstance(data[3], tuple)
        and all(type(n) is int for n in data[3])
    ):
        raise pickle.UnpicklingError(
            f"invalid torch.{kind.name} tensor record {data!r}: expected (compressed_indices, "
            "plain_indices, values, size)"
        )
    from ..sparse._compressed import sparse_compressed_tensor

    return sparse_compressed_tensor(*data, layout=kind, check_invariants=True)


def _encode(obj, encoding="utf-8"):
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"_codecs.encode with encoding {encoding!r} is not allowed")
    return obj.encode("latin1")


def _torch_device(type, index=None):  # noqa: A002 - PyTorch's argument name
    return device(type, index)


_REBUILD_FUNCTIONS = (
    _rebuild_tensor_v2,
    _rebuild_meta_tensor_no_storage,
    _rebuild_parameter,
    _rebuild_parameter_with_state,
)

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
    "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
    "torch.serialization._get_layout": _get_layout,
    **{f"torch.{d.name}": d for d in _dtype.ALL},
    **{f"{n.module}.{n.name}": StorageType(d) for d, n in STORAGE_TYPES.items()},
}


def _find_class(module: str, name: str, weights_only: bool):
    """What the global ``module.name`` of a checkpoint is: PyTorch's names from `ALLOWED`,
    the registered Tensor types, then (``weights_only``) the user's safe globals, matched by
    PyTorch's names (`_names`); else (not ``weights_only``) tocha's object for a ``torch.``
    name (a whole module PyTorch saved loads as tocha's), or None to import it."""
    if module == "__builtin__":
        module = "builtins"
    full = f"{module}.{name}"
    found = ALLOWED.get(full)
    if found is not None:
        return found
    entry = _registry.tensor_type(full)
    if entry is not None:
        return entry[0]
    if weights_only:
        allowed = _registry.safe_globals_by_name()
        for alias in _names.torch_aliases(full):
            if alias in allowed:
                return allowed[alias]
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please "
            f"use `tocha.serialization.add_safe_globals([{full}])` or the "
            f"`tocha.serialization.safe_globals([{full}])` context manager to allowlist this "
            "global if you trust this class/function."
        )
    if module.split(".")[0] == "torch":
        return _names.tocha_object(full)
    return None


def unsafe_globals(manifest: bytes) -> list[str]:
    """The globals a pickle names (read statically, opcode by opcode, nothing run) that a
    ``weights_only`` load would refuse now, in the order they first appear. A STACK_GLOBAL's
    names are the last two strings pushed, directly or from the memo."""
    found: list[str] = []
    strings: list[str] = []
    memo: dict[int, str | None] = {}
    top: str | None = None  # the string on top of the stack, if the top is one
    for opcode, arg, _ in pickletools.genops(manifest):
        kind = opcode.name
        name = None
        if kind == "GLOBAL":
            name = arg.replace(" ", ".")
        elif kind == "STACK_GLOBAL" and len(strings) >= 2:
            name = f"{strings[-2]}.{strings[-1]}"
        if kind in ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"):
            memo[len(memo) if kind == "MEMOIZE" else arg] = top
            continue
        top = None
        if isinstance(arg, str) and "UNICODE" in kind:
            top = arg
        elif kind in ("GET", "BINGET", "LONG_BINGET"):
            top = memo.get(arg)
        if top is not None:
            strings.append(top)
        if name is None or name in found:
            continue
        try:
            _find_class(*name.rsplit(".", 1), weights_only=True)
        except pickle.UnpicklingError:
            found.append(name)
    return found


def _persistent_load(pid, load_storage):
    """The storage a persistent id names: ``('storage', storage_type, key, location, numel)``,
    with a sixth item in the legacy format (None, or a view's ``(key, offset, numel)``); or,
    in the legacy format, a whole saved module's class: ``('module', class, file, source)``."""
    if isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "module":
        if not isinstance(pid[1], type):
            raise pickle.UnpicklingError(f"invalid module record {pid[:2]!r}")
        return pid[1]
    if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == "storage"):
        raise pickle.UnpicklingError(
            f"unsupported persistent id {pid!r}: expected "
            "('storage', storage_type, key, location, numel)"
        )
    _, storage_type, key, location, numel, *view = pid
    if not (
        isinstance(storage_type, StorageType)
        and isinstance(key, str)
        and isinstance(location, str)
        and type(numel) is int
        and 0 <= numel < 2**63
    ):
        raise pickle.UnpicklingError(f"invalid storage record {pid!r}")
    if not view or view[0] is None:
        return load_storage(storage_type.dtype, key, location, numel)
    view = view[0]
    if not (
        isinstance(view, tuple)
        and len(view) == 3
        and isinstance(view[0], str)
        and all(type(n) is int and 0 <= n < 2**63 for n in view[1:])
    ):
        raise pickle.UnpicklingError(f"invalid storage view {view!r}")
    return load_storage(storage_type.dtype, key, location, numel, view)


class Unpickler(pickle.Unpickler):
    """Unpickles ``data.pkl`` with ``weights_only=False``: PyTorch's names become tocha's,
    storages come from `load_storage(dtype, key, location, numel)`, any other global is
    imported. For files you trust only."""

    def __init__(self, file, *, load_storage, **kwargs):
        super().__init__(file, **kwargs)
        self._load_storage = load_storage

    def find_class(self, module, name):
        found = _find_class(module, name, weights_only=False)
        return super().find_class(module, name) if found is None else found

    def persistent_load(self, pid):
        return _persistent_load(pid, self._load_storage)


_CALLABLE = frozenset(
    {
        collections.OrderedDict,
        collections.Counter,
        set,
        frozenset,
        bytearray,
        bytes,
        complex,
        _encode,
        _torch_device,
        Size,
        *_REBUILD_FUNCTIONS,
        _rebuild_from_type_v2,
        _rebuild_sparse_tensor,
        _get_layout,
    }
)
# Constructors that would iterate a tensor argument, or read it as a size.
_NO_TENSOR_ARGUMENTS = frozenset(
    {collections.OrderedDict, collections.Counter, set, frozenset, bytearray, bytes, complex, Size}
)
_CHUNK = 1 << 20
# A malformed pickle makes the pure-Python unpickler raise these; they become UnpicklingError.
_MALFORMED = (
    EOFError,
    IndexError,
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    OverflowError,
    struct.error,
    UnicodeDecodeError,
)


class _ChunkedReader:
    """A file's ``read`` and ``readline`` that never allocate a length the pickle declares
    before the bytes are there: a long read grows chunk by chunk and stops at the end."""

    def __init__(self, file):
        self._read = file.read
        self.readline = file.readline

    def read(self, n: int) -> bytes:
        if n <= _CHUNK:
            return self._read(n)
        parts = []
        while n > 0:
            part = self._read(min(n, _CHUNK))
            if not part:
                break
            parts.append(part)
            n -= len(part)
        return b"".join(parts)


def _refuse(self):
    raise pickle.UnpicklingError(
        "an opcode that weights_only loads do not support (INST, OBJ, EXT or out-of-band buffers)"
    )


def _into(kind: type, depth: int, load):
    """The opcode `load`, run only when the container it adds to (at `depth` in the stack,
    0 for the one below the mark) is a `kind`."""

    def checked(self):
        target = self.metastack[-1][-1] if depth == 0 else self.stack[-depth]
        if not isinstance(target, kind):
            raise pickle.UnpicklingError(f"cannot add items to a {type(target).__name__}")
        load(self)

    return checked


class WeightsUnpickler(pickle._Unpickler):
    """The ``weights_only`` unpickler: the pure-Python unpickler with every opcode that could
    reach code checked (see the module docstring); a malformed pickle is an UnpicklingError.
    It keeps no recursion, so no nesting depth overflows it."""

    D = pickle._Unpickler.dispatch
    dispatch = dict(D)
    for op in (
        pickle.INST,
        pickle.OBJ,
        pickle.EXT1,
        pickle.EXT2,
        pickle.EXT4,
        pickle.NEXT_BUFFER,
        pickle.READONLY_BUFFER,
    ):
        dispatch[op[0]] = _refuse
    dispatch[pickle.APPEND[0]] = _into(list, 2, D[pickle.APPEND[0]])
    dispatch[pickle.APPENDS[0]] = _into(list, 0, D[pickle.APPENDS[0]])
    dispatch[pickle.SETITEM[0]] = _into(dict, 3, D[pickle.SETITEM[0]])
    dispatch[pickle.SETITEMS[0]] = _into(dict, 0, D[pickle.SETITEMS[0]])
    dispatch[pickle.ADDITEMS[0]] = _into(set, 0, D[pickle.ADDITEMS[0]])
    del D, op

    def __init__(self, file, *, load_storage, **kwargs):
        super().__init__(_ChunkedReader(file), **kwargs)
        self._load_storage = load_storage
        self._user = tuple(_registry.safe_globals_by_name().values())

    def load(self):
        try:
            return super().load()
        except pickle.UnpicklingError:
            raise
        except _MALFORMED as exc:
            raise pickle.UnpicklingError(
                f"malformed pickle ({type(exc).__name__}: {exc})"
            ) from None

    def find_class(self, module, name):
        return _find_class(module, name, weights_only=True)

    def persistent_load(self, pid):
        return _persistent_load(pid, self._load_storage)

    def _user_type(self, obj) -> bool:
        return isinstance(obj, type) and any(obj is g for g in self._user)

    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if not (func in _CALLABLE or any(func is g for g in self._user)):
            raise pickle.UnpicklingError(f"weights_only loads do not call {func!r}")
        if not isinstance(args, tuple) or (
            func in (bytes, bytearray) and args and isinstance(args[0], int)
        ):
            raise pickle.UnpicklingError(f"invalid arguments for {func!r}")
        if func in _NO_TENSOR_ARGUMENTS and any(isinstance(a, Tensor) for a in args):
            # set(t) makes one object per row of a (maybe stride-0, so tiny in the file)
            # tensor; bytearray(t) allocates t's value in bytes: memory bombs.
            raise pickle.UnpicklingError(
                f"weights_only loads do not build {func.__name__} objects from tensors"
            )
        self.stack[-1] = func(*args)

    def load_newobj(self):
        args = self.stack.pop()
        self._new(self.stack.pop(), args, {})

    def load_newobj_ex(self):
        kwargs, args = self.stack.pop(), self.stack.pop()
        self._new(self.stack.pop(), args, kwargs)

    def _new(self, cls, args, kwargs):
        if not self._user_type(cls):
            raise pickle.UnpicklingError(
                f"weights_only loads do not create {cls!r} objects "
                "(NEWOBJ): allow its type with add_safe_globals"
            )
        self.append(cls.__new__(cls, *args, **kwargs))

    def load_build(self):
        inst = self.stack[-2]
        if type(inst) is collections.OrderedDict:
            state = self.stack.pop()
            if not (isinstance(state, dict) and all(isinstance(k, str) for k in state)):
                raise pickle.UnpicklingError("an OrderedDict's state must be a dict of names")
            inst.__dict__.update(state)
        elif self._user_type(type(inst)):
            super().load_build()
        else:
            raise pickle.UnpicklingError(
                f"weights_only loads set the state (BUILD) of OrderedDicts and of types "
                f"allowed with add_safe_globals only, not of {type(inst).__name__}"
            )

    def load_bytearray8(self):
        n = struct.unpack("<Q", self.read(8))[0]
        self.append(bytearray(self.read(n)))

    dispatch[pickle.BYTEARRAY8[0]] = load_bytearray8
    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.NEWOBJ[0]] = load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex
    dispatch[pickle.BUILD[0]] = load_build
