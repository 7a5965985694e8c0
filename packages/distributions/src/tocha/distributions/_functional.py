"""Elementwise helpers written in tocha ops (tocha-distributions does not depend on
tocha-nn)."""

from __future__ import annotations

import tocha


def softplus(x: tocha.Tensor) -> tocha.Tensor:
    """log(1 + exp(x)), without overflow; its derivative is sigmoid(x) everywhere."""
    return tocha.logaddexp(x, tocha.zeros_like(x))


def logsigmoid(x: tocha.Tensor) -> tocha.Tensor:
    """log(sigmoid(x)) = -softplus(-x)."""
    return -softplus(-x)


def one_hot(index: tocha.Tensor, num_classes: int, dtype) -> tocha.Tensor:
    """`index` (integers) as one-hot vectors of `num_classes` along a new last dimension."""
    return (index.unsqueeze(-1) == tocha.arange(num_classes, device=index.device)).to(dtype)
