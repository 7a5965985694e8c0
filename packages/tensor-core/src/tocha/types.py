"""``tocha.types``: the type aliases PyTorch programs annotate with, as ``torch.types``."""

from __future__ import annotations

import builtins
import os
from collections.abc import Sequence
from typing import IO, Union

from ._device import device as _device_type
from ._dtype import dtype as _dtype_type
from ._tensor import Size, Tensor

__all__ = [
    "Number",
    "Device",
    "FileLike",
    "Storage",
    "_TensorOrTensors",
    "_int",
    "_float",
    "_bool",
    "_complex",
    "_dtype",
    "_device",
    "_size",
]

_int = builtins.int
_float = builtins.float
_bool = builtins.bool
_complex = builtins.complex
_dtype = _dtype_type
_device = _device_type
_size = Union[Size, list[builtins.int], tuple[builtins.int, ...]]  # noqa: UP007
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]  # noqa: UP007
Number = Union[builtins.int, builtins.float, builtins.bool]  # noqa: UP007
Device = Union[_device_type, builtins.str, builtins.int, None]  # noqa: UP007
FileLike = Union[builtins.str, os.PathLike, IO[bytes]]  # noqa: UP007
Storage = object
