"""Linear layers, as ``torch.nn.modules.linear``: Identity, Linear, LazyLinear, Bilinear."""

from __future__ import annotations

import math

import tocha
from tocha import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: whether to learn an additive bias.

    Shape:
        ``(*, in_features)`` -> ``(*, out_features)``. weight and bias start from
        ``U(-1/sqrt(in_features), 1/sqrt(in_features))``.

    Example:
        >>> nn.Linear(20, 30)(tocha.randn(128, 20)).shape
        torch.Size([128, 30])
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(
            tocha.empty((out_features, in_features), device=device, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(tocha.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming-uniform weight (``a = sqrt(5)``), uniform bias, as PyTorch."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """A `Linear` whose `in_features` is inferred from the last dim of its first input;
    it then becomes a `Linear`.

    Example:
        >>> m = nn.LazyLinear(30)
        >>> m(tocha.randn(128, 20)).shape, type(m).__name__, m.in_features
        (torch.Size([128, 30]), 'Linear', 20)
    """

    cls_to_become = Linear
    weight: UninitializedParameter
    bias: UninitializedParameter | None

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """As `Linear`'s, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Take `in_features` from ``input.shape[-1]`` and materialize the parameters (or,
        when a loaded state dict materialized them, take it from the weight)."""
        if self.has_uninitialized_params():
            with tocha.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        elif self.in_features == 0:
            inferred, loaded = input.shape[-1], self.weight.shape[1]
            if inferred != loaded:
                raise AssertionError(
                    f"The in_features inferred from input: {inferred} is not equal to "
                    f"in_features from self.weight: {loaded}"
                )
            self.in_features = loaded


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of MultiheadAttention: a Linear under its own name (PyTorch's
    quantization tools treat it apart). It lives here, as in PyTorch, so that checkpoints and
    ``safe_globals`` lists naming ``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``
    find it."""


class Bilinear(Module):
    """``y = x1 @ weight[k] @ x2 + bias_k`` for each output feature k.

    Shape:
        ``(*, in1_features)`` and ``(*, in2_features)`` -> ``(*, out_features)``.
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(
            tocha.empty((out_features, in1_features, in2_features), device=device, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(tocha.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight and bias from ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))``."""
        if self.in1_features <= 0:
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})"
            )
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
