"""Images for TensorBoard: an image tensor or array in any of PyTorch's data formats to an
HWC uint8 array, and that array to PNG bytes (zlib and the PNG chunk layout, by hand)."""

from __future__ import annotations

import struct
import zlib

import numpy as np

__all__ = ["to_hwc_uint8", "png"]

_COLOR_TYPES = {1: 0, 3: 2, 4: 6}  # channels -> PNG colour type (grey, RGB, RGBA)


def to_hwc_uint8(image: np.ndarray, dataformats: str) -> np.ndarray:
    """`image` laid out as `dataformats` (``CHW``, ``HWC``, ``HW``...) as HWC uint8: floats
    are taken as [0, 1] and scaled by 255, as ``torch.utils.tensorboard`` does."""
    dataformats = dataformats.upper()
    if len(set(dataformats)) != len(dataformats) or image.ndim != len(dataformats):
        raise ValueError(
            f"size of input tensor and input format are different. tensor shape: "
            f"{image.shape}, input_format: {dataformats}"
        )
    if "N" in dataformats:
        raise ValueError(
            "add_image takes one image: use a format without N (add one image at a time)"
        )
    if "C" not in dataformats:
        image, dataformats = image[..., None], dataformats + "C"
    hwc = np.transpose(image, [dataformats.index(c) for c in "HWC"])
    if hwc.shape[2] not in _COLOR_TYPES:
        raise ValueError(f"an image needs 1, 3 or 4 channels, got {hwc.shape[2]}")
    if hwc.dtype != np.uint8:
        hwc = np.clip(hwc.astype(np.float64) * 255.0, 0, 255).round()
    return np.ascontiguousarray(hwc, dtype=np.uint8)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data))
        + kind
        + data
        + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def png(hwc: np.ndarray) -> bytes:
    """PNG bytes of an HWC uint8 array with 1, 3 or 4 channels (8 bits, no filtering)."""
    height, width, channels = hwc.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    rows = np.concatenate([np.zeros((height, 1), np.uint8), hwc.reshape(height, -1)], axis=1)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.tobytes()))
        + _chunk(b"IEND", b"")
    )
