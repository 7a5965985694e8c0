"""The negative binomial distribution."""

from __future__ import annotations

import tocha

from . import constraints
from ._functional import logsigmoid
from ._probs import BinaryParameters
from .distribution import Distribution, _expand_params
from .gamma import Gamma
from .utils import _EMPTY_SHAPE, broadcast_all

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryParameters, Distribution):
    """NegativeBinomial(total_count, probs=None, logits=None): the number of successes
    (each with probability `probs`) before `total_count` failures; batch shape of the
    broadcast parameters. Samples are Poisson draws of Gamma-distributed rates."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_params(
            self, NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits")
        )
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @property
    def mean(self):
        return self.total_count * tocha.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / tocha.sigmoid(-self.logits)

    def sample(self, sample_shape=_EMPTY_SHAPE):
        with tocha.no_grad():
            gamma = Gamma(
                concentration=self.total_count, rate=tocha.exp(-self.logits), validate_args=False
            )
            return tocha.poisson(gamma.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(
            self.logits
        )
        log_normalization = (
            -tocha.lgamma(self.total_count + value)
            + tocha.lgamma(1.0 + value)
            + tocha.lgamma(self.total_count)
        )
        log_normalization = tocha.where(
            self.total_count + value == 0, tocha.zeros_like(log_normalization), log_normalization
        )
        return log_unnormalized_prob - log_normalization
