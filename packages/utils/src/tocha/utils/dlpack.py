"""DLPack exchange, as ``torch.utils.dlpack``: `to_dlpack` hands a tensor's memory to another
library as a DLPack capsule; `from_dlpack` takes a capsule, or any object implementing the
DLPack protocol (a NumPy or CuPy array, another library's tensor), as a tensor sharing its
memory."""

from __future__ import annotations

import enum

import tocha
from tocha import Tensor

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]

from_dlpack = tocha.from_dlpack


class DLDeviceType(enum.IntEnum):
    """DLPack's device types, as ``__dlpack_device__`` reports them."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLExtDev = 12
    kDLOneAPI = 14


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of `tensor`'s memory (the legacy, unversioned form PyTorch's gives),
    to be consumed once by another library's ``from_dlpack``."""
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"to_dlpack(): argument 'tensor' must be Tensor, not {type(tensor).__name__}"
        )
    return tensor.__dlpack__()
