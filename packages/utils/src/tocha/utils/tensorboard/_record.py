"""TFRecord framing, the container of TensorBoard's event files: each record is its length
(uint64, little-endian), the masked CRC32C of those 8 bytes, the data, and the data's masked
CRC32C (both uint32)."""

from __future__ import annotations

import struct

__all__ = ["crc32c", "masked_crc32c", "frame"]


def _table() -> list[int]:
    """The byte table of CRC-32C (Castagnoli, reflected polynomial 0x82F63B78)."""
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def crc32c(data: bytes) -> int:
    """The CRC-32C of `data`."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """The CRC-32C of `data`, rotated right by 15 bits plus a constant, as TFRecord stores
    it (so that a CRC of data holding CRCs stays well spread)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """One TFRecord holding `data`."""
    header = struct.pack("<Q", len(data))
    return (
        header
        + struct.pack("<I", masked_crc32c(header))
        + data
        + struct.pack("<I", masked_crc32c(data))
    )
