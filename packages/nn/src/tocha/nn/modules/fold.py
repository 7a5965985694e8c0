"""Sliding-block layers, as ``torch.nn.modules.fold``: Fold and Unfold."""

from __future__ import annotations

from tocha import Tensor

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sums sliding blocks ``(N, C * prod(kernel_size), L)`` into ``(N, C, *output_size)``
    (the adjoint of `Unfold`).

    Example:
        >>> nn.Fold((4, 4), 2)(tocha.ones(1, 8, 9)).shape
        torch.Size([1, 2, 4, 4])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """Extracts sliding blocks: ``(N, C, H, W)`` -> ``(N, C * prod(kernel_size), L)``.

    Example:
        >>> nn.Unfold(2)(tocha.randn(1, 2, 4, 4)).shape
        torch.Size([1, 8, 9])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
