"""Distances between rows, as ``torch.nn.modules.distance``."""

from __future__ import annotations

from tocha import Tensor

from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class PairwiseDistance(Module):
    """The p-norm distance ``||x1 - x2 + eps||_p`` along the last dim (see
    `F.pairwise_distance`); the default distance of `TripletMarginWithDistanceLoss`.

    Example:
        >>> nn.PairwiseDistance()(tocha.zeros(1, 2), tocha.tensor([[3.0, 4.0]]))
        tensor([5.0000])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine of the angle between `x1` and `x2` along `dim` (see `F.cosine_similarity`).

    Example:
        >>> nn.CosineSimilarity(dim=0)(tocha.tensor([1.0, 0.0]), tocha.tensor([1.0, 1.0]))
        tensor(0.7071)
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
