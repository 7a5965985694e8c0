"""`LinearCrossEntropyLoss`: a linear head and the cross entropy of its logits in one module,
with PyTorch's chunking settings (`LinearCrossEntropyOptions`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from tocha import Tensor

from .. import functional as F
from .linear import Linear
from .module import Module

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


@dataclass
class LinearCrossEntropyOptions:
    """How PyTorch's chunked ``linear_cross_entropy`` splits its work. tocha accepts the
    settings and computes the logits whole, so they change no result."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: object = None


class LinearCrossEntropyLoss(Module):
    """The cross entropy of ``linear(input)`` against `target`
    (`F.linear_cross_entropy`), the linear layer held as ``self.linear``.

    Args:
        in_features: size of each input sample.
        num_classes: number of classes C.
        out_features: ``(d1, ..., dK)`` for a K-dimensional loss. Default: ``()``.
        bias: whether the linear layer adds a bias. Default: False.
        reduction, weight, ignore_index, label_smoothing: as in `CrossEntropyLoss`
            (``ignore_index=None`` means -100).
        options: a `LinearCrossEntropyOptions`, or None.

    The linear weight is stored flat, ``(C * d1 * ... * dK, in_features)``, and viewed as
    ``(C, d1, ..., dK, in_features)`` when called.
    """

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device=None,
        dtype=None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        super().__init__()
        self.reduction = reduction
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.options = options
        self.register_buffer("weight", weight)
        self.linear = Linear(
            in_features,
            num_classes * math.prod(self.out_features),
            bias=bias,
            device=device,
            dtype=dtype,
        )

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        classes = (self.num_classes, *self.out_features)
        linear_weight = self.linear.weight.view(*classes, self.linear.in_features)
        bias = self.linear.bias
        return F.linear_cross_entropy(
            input,
            linear_weight,
            target,
            linear_bias=None if bias is None else bias.view(classes),
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
