"""Padding layers, as ``torch.nn.modules.padding``: Constant/Zero/Reflection/Replication/
CircularPad in 1, 2 and 3-D. Each holds ``padding`` as F.pad takes it: (left, right, top,
bottom, front, back)."""

from __future__ import annotations

from tocha import Tensor

from .. import functional as F
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _widths(padding, dims: int) -> tuple:
    """An int as the same width on both sides of every padded dim; a sequence as given."""
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    return tuple(padding)


class _PadNd(Module):
    """A padding layer: `padding` on `_dims` trailing dims in F.pad's `_mode`."""

    _mode = "constant"
    _dims = 0

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _widths(padding, self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Pad with a constant `value`."""

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _CircularPadNd(_PadNd):
    """Pad by wrapping around; the input must be ``(C, *)`` or ``(N, C, *)``."""

    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(
                f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.dim()}D input)"
            )
        return super().forward(input)


class _ReflectionPadNd(_PadNd):
    """Pad with the reflection of the input about its edges (the edge not repeated)."""

    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    """Pad by repeating the edge values."""

    _mode = "replicate"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant value."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with a constant value."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with a constant value."""

    _dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim with the reflection of the input."""

    _dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last 2 dims with the reflection of the input."""

    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last 3 dims with the reflection of the input."""

    _dims = 3


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim with the edge values."""

    _dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last 2 dims with the edge values."""

    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last 3 dims with the edge values."""

    _dims = 3


class CircularPad1d(_CircularPadNd):
    """Pad the last dim circularly (wrapping around)."""

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims circularly (wrapping around)."""

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims circularly (wrapping around)."""

    _dims = 3
