"""Distributions of |X| for X symmetric about zero (HalfNormal, HalfCauchy)."""

from __future__ import annotations

import math

import tocha

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class FoldedAtZero(TransformedDistribution):
    """|X| for X from `base_dist`, a distribution symmetric about zero with a `scale`: the
    density doubles on [0, inf), the CDF is 2 F(x) - 1 and the entropy loses log 2."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, base_dist, validate_args=None):
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return tocha.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = tocha.as_tensor(value, dtype=self.scale.dtype)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return tocha.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
