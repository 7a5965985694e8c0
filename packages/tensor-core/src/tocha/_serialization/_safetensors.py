"""The safetensors format: an 8-byte little-endian header length, a JSON header naming each
tensor's dtype, shape and ``data_offsets`` (begin, end) in the data that follows, an optional
``__metadata__`` dict of strings, then the raw little-endian bytes."""

from __future__ import annotations

import json
import os
import struct
import sys

import numpy as np

from .. import _dtype
from .._backend import backend_of, resolve_device
from .._device import CPU
from .._tensor import Tensor, wrap
from . import _archive
from ._storage import MAX_DIMS, span_bytes

MAX_HEADER = 100_000_000
CODES = {
    _dtype.float64: "F64",
    _dtype.float32: "F32",
    _dtype.float16: "F16",
    _dtype.bfloat16: "BF16",
    _dtype.int64: "I64",
    _dtype.int32: "I32",
    _dtype.int16: "I16",
    _dtype.int8: "I8",
    _dtype.uint8: "U8",
    _dtype.bool: "BOOL",
    _dtype.complex64: "C64",
}
DTYPES = {code: d for d, code in CODES.items()}


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    """Write a dict of tensors to `filename` in the safetensors format, atomically."""
    if not isinstance(tensors, dict):
        raise TypeError(f"expected a dict of tensors, got {type(tensors).__name__}")
    if metadata is not None and not (
        isinstance(metadata, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise TypeError("metadata must be a dict of str to str")
    for name, t in tensors.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"invalid tensor name {name!r}")
        if not isinstance(t, Tensor):
            raise TypeError(f"{name!r} is a {type(t).__name__}, not a tensor")
        if t.dtype not in CODES:
            raise TypeError(f"safetensors has no dtype for {t.dtype} (tensor {name!r})")
    order = sorted(tensors, key=lambda n: (-tensors[n].dtype.itemsize, n))
    header, offset = {}, 0
    for name in order:
        t = tensors[name]
        header[name] = {
            "dtype": CODES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + t.nbytes],
        }
        offset += t.nbytes
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with _archive.atomic_writer(filename) as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for name in order:
            out.write(memoryview(_little_endian_bytes(tensors[name])))


def _little_endian_bytes(t: Tensor) -> np.ndarray:
    host = np.ascontiguousarray(backend_of(t._device).to_host(t._data)).reshape(-1)
    if sys.byteorder == "big" and host.itemsize > 1:
        host = host.byteswap()
    return host.view(np.uint8)


def load_file(filename, device="cpu") -> dict:
    """Read a safetensors file into a dict of tensors on `device`; RuntimeError naming the
    file when it is damaged (header too large or not JSON, unknown dtype, offsets out of
    bounds or overlapping)."""
    name = _archive.name_of(filename)
    dev = resolve_device(device)
    with open(filename, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        entries, start, _ = read_header(f, size, name)
        out = {}
        for key, (d, shape, begin, end) in entries.items():
            array = np.empty(shape, d.np)
            if end > begin:
                f.seek(start + begin)
                if f.readinto(array.reshape(-1).view(np.uint8)) != end - begin:
                    raise RuntimeError(f"{name}: the data of {key!r} is truncated")
            if sys.byteorder == "big" and array.itemsize > 1:
                array = array.byteswap()
            data = array if dev is CPU else backend_of(dev).from_host(array, dev)
            out[key] = wrap(data, dev)
    return out


def read_header(f, size: int, name: str):
    """({name: (dtype, shape, begin, end)}, data start, metadata) of a safetensors file,
    every field checked."""

    def bad(why: str):
        return RuntimeError(f"{name} is not a valid safetensors file: {why}")

    head = f.read(8)
    if len(head) != 8:
        raise bad("shorter than its 8-byte header length")
    n = struct.unpack("<Q", head)[0]
    if n > MAX_HEADER:
        raise bad(f"its header length {n} exceeds the limit of {MAX_HEADER} bytes")
    if 8 + n > size:
        raise bad(f"its header length {n} is larger than the file")
    try:
        header = json.loads(f.read(n).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise bad(f"its header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (
        isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())
    ):
        raise bad("__metadata__ must map strings to strings")
    data_size = size - 8 - n
    entries = {}
    for key, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise bad(f"entry {key!r} must have exactly dtype, shape and data_offsets")
        d = DTYPES.get(info["dtype"])
        if d is None:
            raise bad(f"entry {key!r} has an unsupported dtype {info['dtype']!r}")
        shape, offsets = info["shape"], info["data_offsets"]
        if not (
            isinstance(shape, list)
            and len(shape) <= MAX_DIMS
            and all(map(_is_count, shape))
            and span_bytes(shape, d.itemsize) < 2**63
        ):
            raise bad(f"entry {key!r} has an invalid shape {shape!r}")
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(map(_is_count, offsets))
            and offsets[0] <= offsets[1] <= data_size
        ):
            raise bad(
                f"entry {key!r} has data_offsets {offsets!r} outside the {data_size} bytes of data"
            )
        numel = 1
        for s in shape:
            numel *= s
        if offsets[1] - offsets[0] != numel * d.itemsize:
            raise bad(
                f"entry {key!r} has {offsets[1] - offsets[0]} bytes for shape {shape} "
                f"of {info['dtype']}"
            )
        entries[key] = (d, tuple(shape), offsets[0], offsets[1])
    spans = sorted((b, e, k) for k, (_, _, b, e) in entries.items() if e > b)
    for (_, end, first), (begin, _, second) in zip(spans, spans[1:]):
        if begin < end:
            raise bad(f"the data of {first!r} and {second!r} overlap")
    return entries, 8 + n, metadata


def _is_count(v) -> bool:
    return type(v) is int and 0 <= v < 2**63
