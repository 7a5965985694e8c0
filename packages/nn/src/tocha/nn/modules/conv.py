"""Convolution layers, as ``torch.nn.modules.conv``: Conv1d/2d/3d, ConvTranspose1d/2d/3d and
their lazy forms."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import tocha
from tocha import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _ntuple

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What every convolution layer shares: settings, parameters, initialisation, repr."""

    _dims = 0

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed: bool,
        output_padding,
        groups: int,
        bias: bool,
        padding_mode: str,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string '{padding}', should be one of {{'same', 'valid'}}"
                )
            if padding == "same" and any(s != 1 for s in _ntuple(n)(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                "padding_mode must be one of {'zeros', 'circular', 'replicate', "
                f"'reflect'}}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(n)(kernel_size)
        self.stride = _ntuple(n)(stride)
        self.padding = padding if isinstance(padding, str) else _ntuple(n)(padding)
        self.dilation = _ntuple(n)(dilation)
        self.transposed = transposed
        self.output_padding = _ntuple(n)(output_padding)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._mode_padding()
        shape = (
            (in_channels, out_channels // groups)
            if transposed
            else (out_channels, in_channels // groups)
        )
        self.weight = Parameter(tocha.empty(shape + self.kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tocha.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _mode_padding(self) -> list[int] | tuple[int, ...]:
        """F.pad's padding for the padding modes: (low, high) per dim, last dim first (a list
        for string paddings, a tuple otherwise, as PyTorch)."""
        if self.padding == "valid":
            return [0, 0] * self._dims
        if self.padding != "same":
            return tuple(p for p in reversed(self.padding) for _ in range(2))
        pads = []
        for i in reversed(range(self._dims)):
            total = self.dilation[i] * (self.kernel_size[i] - 1)
            pads += [total // 2, total - total // 2]
        return pads

    def reset_parameters(self) -> None:
        """Kaiming-uniform weight (``a = sqrt(5)``) and ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``
        bias, as PyTorch."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    """A convolution layer: `forward` pads in the padding mode, then convolves."""

    _conv = None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            False,
            0,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return type(self)._conv(
                padded, weight, bias, self.stride, 0, self.dilation, self.groups
            )
        return type(self)._conv(
            input, weight, bias, self.stride, self.padding, self.dilation, self.groups
        )

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)`` or ``(C_in, L)``; see `Conv2d`."""

    _dims = 1
    _conv = staticmethod(F.conv1d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class Conv2d(_Conv):
    """2-D convolution (cross-correlation) with learnt weight ``(C_out, C_in / groups, kH, kW)``
    and bias.

    Args:
        in_channels, out_channels: channels of input and output.
        kernel_size, stride, dilation: an int or one per spatial dim.
        padding: an int, one per dim, ``"valid"`` or ``"same"``.
        groups: channel groups convolved independently.
        bias: whether to learn a bias.
        padding_mode: ``"zeros"``, ``"reflect"``, ``"replicate"`` or ``"circular"``.

    Shape:
        ``(N, C_in, H, W)`` -> ``(N, C_out, H_out, W_out)`` (see `F.conv2d`).

    Example:
        >>> nn.Conv2d(3, 16, 3, padding=1)(tocha.randn(8, 3, 32, 32)).shape
        torch.Size([8, 16, 32, 32])
    """

    _dims = 2
    _conv = staticmethod(F.conv2d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``; see `Conv2d`."""

    _dims = 3
    _conv = staticmethod(F.conv3d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution layer; `forward` may ask for an `output_size`."""

    _conv = None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            True,
            output_padding,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(
        self,
        input: Tensor,
        output_size,
        stride,
        padding,
        kernel_size,
        num_spatial_dims: int,
        dilation=None,
    ) -> tuple:
        """The output padding that gives `output_size` (PyTorch's rule and messages)."""
        if output_size is None:
            return self.output_padding
        batched = input.dim() == num_spatial_dims + 2
        lead = 2 if batched else 1
        if len(output_size) == lead + num_spatial_dims:
            output_size = output_size[lead:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                f"have {num_spatial_dims} or {lead + num_spatial_dims} elements (got "
                f"{len(output_size)})"
            )
        min_sizes, max_sizes = [], []
        for i in range(num_spatial_dims):
            size = (
                (input.size(i + lead) - 1) * stride[i]
                - 2 * padding[i]
                + (dilation[i] if dilation is not None else 1) * (kernel_size[i] - 1)
                + 1
            )
            min_sizes.append(size)
            max_sizes.append(size + stride[i] - 1)
        for size, low, high in zip(output_size, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})"
                )
        return tuple(size - low for size, low in zip(output_size, min_sizes))

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        output_padding = self._output_padding(
            input,
            output_size,
            self.stride,
            self.padding,
            self.kernel_size,
            self._dims,
            self.dilation,
        )
        return type(self)._conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over ``(N, C_in, L)`` or ``(C_in, L)``; see
    `ConvTranspose2d`."""

    _dims = 1
    _conv = staticmethod(F.conv_transpose1d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution (the gradient of `Conv2d` in its input), weight
    ``(C_in, C_out / groups, kH, kW)``.

    Shape:
        ``H_out = (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1``;
        ``forward(input, output_size)`` picks the output padding that gives `output_size`.

    Example:
        >>> nn.ConvTranspose2d(16, 3, 3, stride=2)(tocha.randn(1, 16, 5, 5)).shape
        torch.Size([1, 3, 11, 11])
    """

    _dims = 2
    _conv = staticmethod(F.conv_transpose2d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over ``(N, C_in, D, H, W)``; see `ConvTranspose2d`."""

    _dims = 3
    _conv = staticmethod(F.conv_transpose3d)  # type: ignore[has-type]  # decorated for autocast, in an import cycle


# Type checkers see the mixin as the convolution it is mixed into.
if TYPE_CHECKING:
    _LazyConvBase = _ConvNd
else:
    _LazyConvBase = object


class _LazyConvXdMixin(LazyModuleMixin, _LazyConvBase):
    """A convolution whose `in_channels` is inferred from its first input (dim 1, or dim 0
    unbatched); it then becomes its non-lazy class."""

    weight: UninitializedParameter
    bias: UninitializedParameter | None

    def _make_lazy(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """As the non-lazy class's, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """Take `in_channels` from `input` and materialize the parameters."""
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        with tocha.no_grad():
            self.weight.materialize(shape + self.kernel_size)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: "
                f"torch.Size([{', '.join(map(str, input.shape))}])"
            )
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class _LazyConv(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._make_lazy(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
        )
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A `Conv1d` whose `in_channels` is inferred from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A `Conv2d` whose `in_channels` is inferred from its first input.

    Example:
        >>> m = nn.LazyConv2d(16, 3)
        >>> m(tocha.randn(8, 3, 32, 32)).shape, m
        (torch.Size([8, 16, 30, 30]), Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1)))
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A `Conv3d` whose `in_channels` is inferred from its first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A `ConvTranspose1d` whose `in_channels` is inferred from its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A `ConvTranspose2d` whose `in_channels` is inferred from its first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A `ConvTranspose3d` whose `in_channels` is inferred from its first input."""

    cls_to_become = ConvTranspose3d
