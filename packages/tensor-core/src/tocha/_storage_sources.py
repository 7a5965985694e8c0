"""Storage memory from outside tocha: the values of a Python buffer (``from_buffer``) and the
bytes of a file, read into memory or mapped (``from_file``), and which file a mapping shows."""

from __future__ import annotations

import mmap
import operator
import os
import weakref
from typing import Any

import numpy as np

_U8 = np.dtype(np.uint8)

# the files that `from_file(shared=True)` mapped, by their mapping
_MAPPED_FILES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def file_bytes(filename: Any, shared: Any, nbytes: int) -> np.ndarray:
    """`nbytes` bytes of a file as a flat uint8 array: mapped (writes reach the file, which is
    created or extended as needed) when `shared`, else read into memory."""
    path = os.fspath(filename)
    nbytes = element_count(nbytes)
    if not shared:
        try:
            with open(path, "rb") as file:
                size = os.fstat(file.fileno()).st_size
                if size < nbytes:
                    raise RuntimeError(
                        f"file <{path}> size <{size}> is smaller than the required mapping size "
                        f"<{nbytes}>"
                    )
                return np.frombuffer(file.read(nbytes), _U8).copy()
        except OSError as exc:
            raise RuntimeError(
                f"unable to open file <{path}> in read-only mode: {exc.strerror} ({exc.errno})"
            ) from None
    try:
        with open(path, "a+b") as file:
            if os.fstat(file.fileno()).st_size < nbytes:
                file.truncate(nbytes)
            if nbytes == 0:
                return np.empty(0, _U8)
            mapping = mmap.mmap(file.fileno(), nbytes)
    except OSError as exc:
        raise RuntimeError(
            f"unable to open file <{path}> in read-write mode: {exc.strerror} ({exc.errno})"
        ) from None
    _MAPPED_FILES[mapping] = path
    return np.frombuffer(mapping, _U8, nbytes)


def element_count(size: Any) -> int:
    n = operator.index(size)
    if n < 0:
        raise RuntimeError(f"from_file: the size must not be negative, got {n}")
    return n


def mapped_file(array) -> str | None:
    """The file that `array`'s memory maps (`from_file` with ``shared=True``), if any."""
    node = array
    while isinstance(getattr(node, "base", None), np.ndarray):
        node = node.base
    owner = getattr(node.base, "obj", None)
    return _MAPPED_FILES.get(owner) if isinstance(owner, mmap.mmap) else None


_BYTE_ORDERS = {"native": "=", "little": "<", "big": ">"}


def buffer_values(buffer, byte_order, count: int, offset: int, d) -> tuple:
    """The values of dtype `d` in a Python buffer, in native order: ``(array, d)``."""
    raw = memoryview(buffer).cast("B")
    item = d.itemsize
    if byte_order is None and item > 1:
        raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
    order = _BYTE_ORDERS.get(byte_order or "native")
    if order is None:
        raise ValueError(f"byte_order must be 'native', 'little' or 'big', but got {byte_order!r}")
    if not 0 <= offset <= len(raw):
        raise ValueError(
            f"offset must be non-negative and no greater than buffer length "
            f"({len(raw)}), but got {offset}"
        )
    available = len(raw) - offset
    if count < 0:
        if available % item:
            raise ValueError(
                f"buffer size ({available}) must be a multiple of element size ({item})"
            )
        count = available // item
    if count * item > available:
        raise ValueError(
            f"buffer has only {available} bytes after offset {offset}, but specified a size of "
            f"{count} elements of {item} bytes"
        )
    array = np.frombuffer(raw, d.np.newbyteorder(order) if item > 1 else d.np, count, offset)
    return array.astype(d.np), d
