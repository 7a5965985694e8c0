"""The protocol buffer messages of TensorBoard's event files, encoded by hand (no protobuf
dependency): ``Event``, ``Summary`` and its ``Value`` kinds (scalar, histogram, image, text
as a string tensor).

Field numbers follow ``tensorflow/core/util/event.proto`` and
``tensorflow/core/framework/summary.proto``. A message is bytes; a field is its key (field
number and wire type as a varint) followed by its value.
"""

from __future__ import annotations

import struct

__all__ = ["event", "scalar_value", "histogram_value", "image_value", "text_value", "summary"]

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, value: int) -> bytes:
    return _key(field, _VARINT) + _varint(value)


def _double(field: int, value: float) -> bytes:
    return _key(field, _FIXED64) + struct.pack("<d", value)


def _float(field: int, value: float) -> bytes:
    return _key(field, _FIXED32) + struct.pack("<f", value)


def _bytes(field: int, value: bytes | str) -> bytes:
    if isinstance(value, str):
        value = value.encode("utf-8")
    return _key(field, _BYTES) + _varint(len(value)) + value


def _packed_doubles(field: int, values) -> bytes:
    return _bytes(field, struct.pack(f"<{len(values)}d", *values))


def event(
    wall_time: float,
    step: int = 0,
    *,
    file_version: str | None = None,
    summary: bytes | None = None,
) -> bytes:
    """An ``Event``: wall_time (1), step (2), then file_version (3) or summary (5)."""
    out = _double(1, wall_time) + _int(2, step)
    if file_version is not None:
        out += _bytes(3, file_version)
    if summary is not None:
        out += _bytes(5, summary)
    return out


def summary(*values: bytes) -> bytes:
    """A ``Summary`` of ``Value`` messages (repeated field 1)."""
    return b"".join(_bytes(1, v) for v in values)


def scalar_value(tag: str, value: float) -> bytes:
    """A ``Summary.Value`` with tag (1) and simple_value (2)."""
    return _bytes(1, tag) + _float(2, value)


def histogram_value(
    tag: str,
    minimum: float,
    maximum: float,
    num: int,
    total: float,
    sum_squares: float,
    bucket_limit,
    bucket,
) -> bytes:
    """A ``Summary.Value`` with a ``HistogramProto`` (histo, 5): min, max, num, sum,
    sum_squares, then the buckets' right edges and counts (packed doubles)."""
    histo = (
        _double(1, minimum)
        + _double(2, maximum)
        + _double(3, num)
        + _double(4, total)
        + _double(5, sum_squares)
        + _packed_doubles(6, bucket_limit)
        + _packed_doubles(7, bucket)
    )
    return _bytes(1, tag) + _bytes(5, histo)


def image_value(tag: str, height: int, width: int, colorspace: int, png: bytes) -> bytes:
    """A ``Summary.Value`` with a ``Summary.Image`` (image, 4) holding a PNG."""
    image = _int(1, height) + _int(2, width) + _int(3, colorspace) + _bytes(4, png)
    return _bytes(1, tag) + _bytes(4, image)


def text_value(tag: str, text: str) -> bytes:
    """A ``Summary.Value`` for TensorBoard's text plugin: metadata (9) naming the plugin
    ``text``, and a one-element ``DT_STRING`` tensor (8) holding `text`."""
    metadata = _bytes(1, _bytes(1, "text"))
    shape = _bytes(2, _int(1, 1))
    tensor = _int(1, 7) + _bytes(2, shape) + _bytes(8, text)
    return _bytes(1, tag) + _bytes(9, metadata) + _bytes(8, tensor)
