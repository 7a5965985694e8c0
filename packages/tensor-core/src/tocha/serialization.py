"""Saving and loading tensors and containers of them, as `torch.serialization`.

`save` writes PyTorch's checkpoint format (a zip of a pickled ``data.pkl`` and one raw record
per storage), so ``torch.load`` reads tocha's checkpoints and `load` reads PyTorch's, without
PyTorch installed, in that format or the legacy one (PyTorch before 1.6, or
``_use_new_zipfile_serialization=False``). `load` with ``weights_only=True`` (the default)
rebuilds only tensors, dtypes, devices and plain containers: the pickle's globals are looked
up in an allow-list of PyTorch's rebuild functions mapped to tocha's, so nothing in the file
is imported or called.
`save_file` and `load_file` read and write the safetensors format.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from typing import IO, Any

from ._serialization._registry import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    register_tensor_type,
    safe_globals,
)

__all__ = [
    "DEFAULT_PROTOCOL",
    "save",
    "load",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "safe_globals",
    "register_tensor_type",
    "save_file",
    "load_file",
]

DEFAULT_PROTOCOL = 2

FileLike = str | os.PathLike | IO[bytes]


def save(
    obj: object,
    f: FileLike,
    pickle_module: Any = pickle,
    pickle_protocol: int = DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Save `obj` to `f`, as `torch.save`.

    `obj` is any nesting of dicts, lists, tuples, strings, numbers, dtypes, devices and tensors
    (or, for loads with ``weights_only=False``, any picklable object). tocha's classes and
    functions (a whole model or optimizer) are written under PyTorch's names
    (``torch.nn.modules.linear.Linear``), so ``torch.load`` rebuilds them as PyTorch's. Tensors
    that share memory (views, tied weights) are stored once and load sharing it; a tensor that
    views part of a larger one stores only the bytes it covers. A path is written to a temporary
    file in the same folder, synced and renamed over `f`, so an error or a crash never leaves a
    damaged file in its place.

    Args:
        obj: what to save.
        f: a path or a binary file object open for writing.
        pickle_module: the standard `pickle` module (the only one supported).
        pickle_protocol: the pickle protocol of ``data.pkl`` (2, as PyTorch).
        _use_new_zipfile_serialization, _disable_byteorder_record: PyTorch's switches for
            its pre-1.6 container and the byte-order entry, accepted for programs that pass
            them; tocha always writes the zip container, byte order included, which PyTorch
            and tocha load alike.

    Example:
        >>> tocha.save({"w": tocha.ones(2, 3)}, "ckpt.pt")
    """
    if pickle_module is not pickle:
        raise NotImplementedError("tocha.save writes with the standard pickle module only")
    if not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(
            f"pickle_protocol must be in [2, {pickle.HIGHEST_PROTOCOL}], got {pickle_protocol}"
        )
    from ._serialization import _checkpoint

    _checkpoint.save(obj, f, pickle_protocol)


def load(
    f: FileLike,
    map_location=None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args,
) -> Any:
    """Load what `save` (or ``torch.save``) wrote, as `torch.load`.

    Args:
        f: a path or a binary file object open for reading (and seeking), holding a
            checkpoint in PyTorch's zip format or its legacy format. A path ending in
            ``.safetensors`` is read as a safetensors file.
        map_location: where storages go: None (the device they were saved from), a device or
            a string (every storage there), a dict mapping saved locations to new ones
            (``{"cuda:1": "cuda:0"}``), or a callable ``(storage, location)`` returning a
            storage (``storage.cpu()``, ``storage.cuda(1)``) or None for the default.
        pickle_module: the standard `pickle` module, implying ``weights_only=False``.
        weights_only: rebuild only tensors, dtypes, devices, plain containers, registered
            tensor types and the globals allowed with `add_safe_globals` (matched by
            PyTorch's names: ``tocha.nn.MultiheadAttention`` allows the file's
            ``torch.nn.modules.activation.MultiheadAttention``); any other global in the
            file is an UnpicklingError, never imported. Default True unless
            `pickle_module` is given. False unpickles arbitrary objects: only for files you
            trust.
        mmap: map the file into memory instead of reading it: CPU tensors read from the
            file's pages (copy-on-write) and nothing is loaded until it is touched. Needs a
            path.
        pickle_load_args: ``encoding``, ``errors`` or ``fix_imports`` for the unpickler
            (``weights_only=False`` only).

    Example:
        >>> state = tocha.load("ckpt.pt", map_location="cpu")
    """
    if isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(".safetensors"):
        return _load_safetensors(f, map_location)
    from ._serialization import _checkpoint

    weights_only, mmap, pickle_load_args = _checkpoint.resolve_load_args(
        pickle_module, weights_only, mmap, dict(pickle_load_args)
    )
    return _checkpoint.load(f, map_location, weights_only, mmap, pickle_load_args)


def get_unsafe_globals_in_checkpoint(f: FileLike) -> list[str]:
    """The classes and functions a checkpoint names that ``load(f, weights_only=True)`` would
    refuse now (not allowed by default, registered or allowlisted), as
    ``"module.name"`` strings: what to pass to `add_safe_globals` if the file is trusted. The
    pickle is read statically; nothing in it is imported or run. Names are PyTorch's
    (``torch.nn.modules.linear.Linear``), whichever framework saved the file.

    Example:
        >>> tocha.serialization.get_unsafe_globals_in_checkpoint("model.pt")
        ['torch.nn.modules.container.Sequential', 'torch.nn.modules.linear.Linear']
    """
    from ._serialization import _archive, _pickle

    with contextlib.ExitStack() as stack:
        fileobj = stack.enter_context(open(f, "rb")) if _archive.is_path(f) else f
        reader = _archive.ArchiveReader(fileobj, _archive.name_of(f))
        return _pickle.unsafe_globals(reader.read("data.pkl"))


def _load_safetensors(f, map_location):
    if isinstance(map_location, (dict,)) or (
        callable(map_location) and not isinstance(map_location, str)
    ):
        kind = "dict" if isinstance(map_location, dict) else "callable"
        raise RuntimeError(
            f"Loading safetensors file with {kind} map_location is not supported."
            " Use a device string or tocha.device instead."
        )
    return load_file(f, device="cpu" if map_location is None else map_location)


def save_file(tensors: dict, filename: str | os.PathLike, metadata: dict | None = None) -> None:
    """Write a dict of tensors to a safetensors file (atomically), as
    ``safetensors.torch.save_file``.

    Args:
        tensors: names to tensors (dtypes F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL,
            C64). Tensors that share memory are written as separate copies: the format has
            no sharing.
        filename: the path to write.
        metadata: an optional dict of strings, stored as ``__metadata__``.

    Example:
        >>> tocha.serialization.save_file({"w": tocha.ones(2)}, "model.safetensors")
    """
    from ._serialization import _safetensors

    _safetensors.save_file(tensors, filename, metadata)


def load_file(filename: str | os.PathLike, device="cpu") -> dict:
    """Read a safetensors file into a dict of tensors on `device`, as
    ``safetensors.torch.load_file``. A damaged file (header over 100 MB or not JSON, an
    unknown dtype, offsets out of bounds or overlapping) raises RuntimeError naming it.

    Example:
        >>> tensors = tocha.serialization.load_file("model.safetensors")
    """
    from ._serialization import _safetensors

    return _safetensors.load_file(filename, device)
