"""nn.PairwiseDistance and nn.CosineSimilarity: the module forms of F.pairwise_distance and
F.cosine_similarity, and TripletMarginWithDistanceLoss's default distance."""

from __future__ import annotations

import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F


def test_pairwise_distance():
    x1, x2 = tocha.randn(4, 3), tocha.randn(4, 3)
    module = nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True)
    assert tocha.equal(module(x1, x2), F.pairwise_distance(x1, x2, 1.0, 0.0, True))
    assert nn.PairwiseDistance()(tocha.zeros(1, 2), tocha.tensor([[3.0, 4.0]])).item() == (
        pytest.approx(5.0)
    )


def test_cosine_similarity():
    x1, x2 = tocha.randn(4, 3), tocha.randn(4, 3)
    assert tocha.equal(nn.CosineSimilarity(dim=0)(x1, x2), F.cosine_similarity(x1, x2, 0))


def test_triplet_loss_default_distance():
    loss = nn.TripletMarginWithDistanceLoss(margin=1.0)
    assert isinstance(loss.distance_function, nn.PairwiseDistance)
    anchor = tocha.zeros(2, 2)
    positive, negative = anchor + 0.1, anchor + 3.0
    assert loss(anchor, positive, negative).item() == 0.0
