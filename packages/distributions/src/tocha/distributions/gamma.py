"""The gamma distribution and its special case, the chi-squared distribution."""

from __future__ import annotations

from numbers import Number

import tocha

from . import constraints
from ._gamma import gammainc, standard_gamma
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import _EMPTY_SHAPE, broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density rate^a x^(a-1) exp(-rate x) / Gamma(a) for
    concentration a; batch shape of the broadcast parameters. `rsample` is differentiable
    in both parameters (implicit reparameterization in the concentration)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, Number) and isinstance(rate, Number):
            batch_shape = tocha.Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=tocha.finfo(value.dtype).tiny)

    def log_prob(self, value):
        value = tocha.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            tocha.xlogy(self.concentration, self.rate)
            + tocha.xlogy(self.concentration - 1, value)
            - self.rate * value
            - tocha.lgamma(self.concentration)
        )

    def entropy(self):
        return (
            self.concentration
            - tocha.log(self.rate)
            + tocha.lgamma(self.concentration)
            + (1.0 - self.concentration) * tocha.digamma(self.concentration)
        )

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return tocha.lgamma(x + 1) + (x + 1) * tocha.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        concentration, scaled = tocha.broadcast_tensors(self.concentration, self.rate * value)
        return gammainc(concentration, scaled)
