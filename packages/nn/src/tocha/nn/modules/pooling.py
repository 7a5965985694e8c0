"""Pooling layers, as ``torch.nn.modules.pooling``: max, average, adaptive, fractional max and
power-average pooling, and max unpooling, in 1, 2 and 3-D."""

from __future__ import annotations

from tocha import Tensor

from .. import functional as F
from .module import Module
from .utils import _ntuple

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


class _MaxPoolNd(Module):
    """Max pooling: the maximum of each (dilated) window; `return_indices` also returns the
    argmax positions (for MaxUnpool)."""

    _pool = None

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor):
        return type(self)._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``; see `MaxPool2d`."""

    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Shape:
        ``H_out = (H + 2 * padding - dilation * (kH - 1) - 1) / stride + 1``, rounded down
        (or up with `ceil_mode`).

    Example:
        >>> nn.MaxPool2d(2)(tocha.randn(1, 3, 8, 8)).shape
        torch.Size([1, 3, 4, 4])
    """

    _pool = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; see `MaxPool2d`."""

    _pool = staticmethod(F.max_pool3d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class _MaxUnpoolNd(Module):
    """The partial inverse of max pooling: values go back to their argmax, zeros elsewhere."""

    _dims = 0
    _unpool = None

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        n = self._dims
        self.kernel_size = _ntuple(n)(kernel_size)
        self.stride = _ntuple(n)(stride if stride is not None else kernel_size)
        self.padding = _ntuple(n)(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return type(self)._unpool(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Inverse of `MaxPool1d`; see `MaxUnpool2d`."""

    _dims = 1
    _unpool = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Inverse of `MaxPool2d`: ``forward(input, indices, output_size=None)``.

    Example:
        >>> pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
        >>> out, idx = pool(tocha.randn(1, 1, 4, 4))
        >>> unpool(out, idx).shape
        torch.Size([1, 1, 4, 4])
    """

    _dims = 2
    _unpool = staticmethod(F.max_unpool2d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class MaxUnpool3d(_MaxUnpoolNd):
    """Inverse of `MaxPool3d`; see `MaxUnpool2d`."""

    _dims = 3
    _unpool = staticmethod(F.max_unpool3d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class AvgPool1d(Module):
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``; see `AvgPool2d`."""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _ntuple(1)(kernel_size)
        self.stride = _ntuple(1)(stride if stride is not None else kernel_size)
        self.padding = _ntuple(1)(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    """Average pooling with PyTorch's divisor rules (`count_include_pad`,
    `divisor_override`)."""

    _pool = None

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Example:
        >>> nn.AvgPool2d(2)(tocha.ones(1, 1, 4, 4)).shape
        torch.Size([1, 1, 2, 2])
    """

    _pool = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; see `AvgPool2d`."""

    _pool = staticmethod(F.avg_pool3d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class _AdaptivePoolNd(Module):
    """Pooling to a fixed `output_size` (an int or one per dim; None keeps the input's)."""

    _pool = None

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """Adaptive average pooling over ``(N, C, L)`` or ``(C, L)``."""

    _pool = staticmethod(F.adaptive_avg_pool1d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Adaptive average pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Example:
        >>> nn.AdaptiveAvgPool2d(1)(tocha.randn(2, 8, 7, 7)).shape
        torch.Size([2, 8, 1, 1])
    """

    _pool = staticmethod(F.adaptive_avg_pool2d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    """Adaptive average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""

    _pool = staticmethod(F.adaptive_avg_pool3d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    """Adaptive max pooling; `return_indices` also returns the argmax positions."""

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor):
        return type(self)._pool(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling over ``(N, C, L)`` or ``(C, L)``."""

    _pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""

    _pool = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""

    _pool = staticmethod(F.adaptive_max_pool3d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class _LPPoolNd(Module):
    """Power-average pooling: ``(sum over the window of x^p)^(1/p)``."""

    _pool = None

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling over ``(N, C, L)`` or ``(C, L)``."""

    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""

    _pool = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""

    _pool = staticmethod(F.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    """Fractional max pooling (Graham): windows of `kernel_size` at pseudo-random starts
    giving `output_size`, or the input size times `output_ratio` (each in (0, 1));
    `_random_samples` (a buffer; ``(N, C, dims)`` in [0, 1)) fixes the starts."""

    _dims = 0
    _pool = None

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        _random_samples=None,
    ) -> None:
        super().__init__()
        n = self._dims
        self.kernel_size = _ntuple(n)(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(n)(output_size) if output_size is not None else None
        self.output_ratio = (
            (output_ratio,) * n
            if isinstance(output_ratio, (int, float))
            else (tuple(output_ratio) if output_ratio is not None else None)
        )
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{type(self).__name__} requires specifying either an output size, or a "
                "pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio[:n]):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        return type(self)._pool(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Example:
        >>> nn.FractionalMaxPool2d(3, output_ratio=0.5)(tocha.randn(20, 16, 50, 32)).shape
        torch.Size([20, 16, 25, 16])
    """

    _dims = 2
    _pool = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""

    _dims = 3
    _pool = staticmethod(F.fractional_max_pool3d)
