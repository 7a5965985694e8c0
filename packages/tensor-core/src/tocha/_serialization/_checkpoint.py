"""Saving and loading checkpoints in PyTorch's zip format (the work of `tocha.save` and
`tocha.load`)."""

from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import secrets
import sys
import warnings

import numpy as np

from .. import _dtype
from .._backend import backend_of
from .._device import CPU, device
from .._tensor import Size, Tensor
from . import _archive, _legacy
from ._pickle import Pickler, Unpickler, WeightsUnpickler
from ._storage import StorageTable, TypedStorage, UntypedStorage, restorer

_UNSAFE = (
    "Re-running `tocha.load` with `weights_only` set to `False` will likely succeed, but it "
    "can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source."
)


def save(obj, f, protocol: int) -> None:
    """Write `obj` to `f` (a path, replaced atomically, or a binary file object)."""
    table = StorageTable()
    if not _plan(obj, table):
        Pickler(None, protocol, table, planning=True).dump(obj)
    table.finish()
    manifest = io.BytesIO()
    Pickler(manifest, protocol, table, planning=False).dump(obj)
    if _archive.is_path(f):
        with _archive.atomic_writer(f) as out:
            _write_archive(out, manifest.getvalue(), table)
    else:
        _write_archive(f, manifest.getvalue(), table)
        if hasattr(f, "flush"):
            f.flush()


_LEAVES = frozenset(
    {str, bytes, bytearray, int, float, complex, bool, type(None), _dtype.dtype, device}
)
_MAPPINGS = frozenset({dict, collections.OrderedDict, collections.Counter})
_SEQUENCES = frozenset({list, tuple, set, frozenset, Size})


def _plan(obj, table: StorageTable) -> bool:
    """`add` the tensors of a tree of plain containers to `table` without pickling it; False
    (the planning pass must pickle) when the tree holds anything else."""
    stack, seen = [obj], set()
    while stack:
        x = stack.pop()
        t = type(x)
        if t in _LEAVES:
            continue
        if t is Tensor:
            table.add(x)
        elif t in _MAPPINGS or t in _SEQUENCES:
            if id(x) not in seen:
                seen.add(id(x))
                if t in _MAPPINGS:
                    stack.extend(x.keys())
                    stack.extend(x.values())
                else:
                    stack.extend(x)
        else:
            return False
    return True


def _write_archive(fileobj, manifest: bytes, table: StorageTable) -> None:
    with _archive.ArchiveWriter(fileobj) as writer:
        writer.write("data.pkl", manifest)
        writer.write(".format_version", b"1")
        writer.write(".storage_alignment", str(_archive.ALIGNMENT).encode())
        writer.write("byteorder", sys.byteorder.encode())
        for ref in table.storages:
            to_host = None if ref.device is CPU else backend_of(ref.device).to_host
            writer.write(f"data/{ref.key}", ref.payload(), to_host)
        writer.write("version", b"3\n")
        writer.write(".data/serialization_id", str(secrets.randbits(128)).zfill(40).encode())


def load(f, map_location, weights_only: bool, mmap: bool, pickle_load_args: dict):
    """Read a checkpoint from `f` (a path or a binary file object)."""
    name = _archive.name_of(f)
    with contextlib.ExitStack() as stack:
        fileobj = stack.enter_context(open(f, "rb")) if _archive.is_path(f) else f
        start = fileobj.tell() if hasattr(fileobj, "tell") else 0
        magic = fileobj.read(4)
        if not magic:
            raise EOFError  # an empty file, as PyTorch's unpickler meets it
        is_zip = magic == b"PK\x03\x04"
        fileobj.seek(start)
        if not is_zip:
            if mmap:
                raise RuntimeError(
                    "mmap can only be used with files saved with "
                    "`tocha.save` or a recent `torch.save` (zip format)"
                )
            return _guarded(
                weights_only,
                _load_not_zip,
                fileobj,
                name,
                map_location,
                weights_only,
                pickle_load_args,
            )
        mapped = None
        if mmap:
            if not _archive.is_path(f):
                raise ValueError("f must be a file path in order to use the mmap argument")
            if os.path.getsize(f):
                mapped = np.memmap(f, np.uint8, mode="c")
        reader = _archive.ArchiveReader(fileobj, name)
        return _guarded(
            weights_only, _load_zip, reader, mapped, map_location, weights_only, pickle_load_args
        )


def _load_zip(reader, mapped, map_location, weights_only: bool, pickle_load_args: dict):
    swap = reader.has("byteorder") and reader.read("byteorder").decode() != sys.byteorder
    restore = restorer(map_location)
    untyped: dict[str, UntypedStorage] = {}

    def load_storage(dtype, key, location, numel):
        storage = untyped.get(key)
        if storage is None:
            data = reader.read_storage(f"data/{key}", mapped)
            if swap and dtype.itemsize > 1:
                data = data.view(dtype.np).byteswap().view(np.uint8)
            storage = untyped[key] = restore(UntypedStorage(data, CPU), location)
        if storage.nbytes() < numel * dtype.itemsize:
            raise RuntimeError(
                f"storage data/{key} of {reader.name} holds {storage.nbytes()} "
                f"bytes, fewer than its {numel} elements of {dtype} need"
            )
        return TypedStorage(storage, dtype)

    manifest = io.BytesIO(reader.read("data.pkl"))
    return _unpickler(weights_only)(manifest, load_storage=load_storage, **pickle_load_args).load()


def _load_not_zip(fileobj, name: str, map_location, weights_only: bool, pickle_load_args: dict):
    def no_storage(*pid):
        raise pickle.UnpicklingError("a storage outside a zip checkpoint")

    unpickler = _unpickler(weights_only)
    magic = unpickler(fileobj, load_storage=no_storage, **pickle_load_args).load()
    if magic != _legacy.MAGIC:
        raise RuntimeError(f"Invalid magic number; corrupt file? {name} is not a checkpoint")
    return _legacy.load(fileobj, name, unpickler, map_location, pickle_load_args)


def _unpickler(weights_only: bool) -> type:
    return WeightsUnpickler if weights_only else Unpickler


def _guarded(weights_only: bool, fn, *args):
    """Run a load; with `weights_only`, an unpickling failure becomes PyTorch's message."""
    if not weights_only:
        return fn(*args)
    try:
        return fn(*args)
    except pickle.UnpicklingError as exc:
        raise pickle.UnpicklingError(_weights_only_message(str(exc))) from None


# PyTorch's note on its change of default, which its weights-only errors begin with.
_DEFAULT_CHANGED = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. "
)
_SEE_DOCS = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def _weights_only_message(message: str) -> str:
    """PyTorch's words around the unpickler's `message`."""
    if "was not an allowed global by default" in message:
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the "
            f"checkpoint\033[0m. \n\t(1) {_DEFAULT_CHANGED}{_UNSAFE}\n\t(2) Alternatively, "
            "to load with `weights_only=True` please check the recommended steps in the "
            f"following error message.\n\tWeightsUnpickler error: {message}{_SEE_DOCS}"
        )
    return (
        f"Weights only load failed. {_DEFAULT_CHANGED}{_UNSAFE}\nPlease file an issue with the "
        "following so that we can make `weights_only=True` compatible with your use case: "
        f"WeightsUnpickler error: \n\n{message}{_SEE_DOCS}"
    )


def resolve_load_args(pickle_module, weights_only, mmap, pickle_load_args: dict):
    """PyTorch's defaults: weights_only unless a pickle module is given; utf-8 strings."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module not in (None, pickle):
        raise NotImplementedError("tocha.load reads with the standard pickle module only")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=3)
        pickle_load_args = {}
    pickle_load_args.setdefault("encoding", "utf-8")
    unknown = set(pickle_load_args) - {"encoding", "errors", "fix_imports"}
    if unknown:
        raise TypeError(f"load() got unexpected keyword arguments {sorted(unknown)}")
    return bool(weights_only), bool(mmap), pickle_load_args
