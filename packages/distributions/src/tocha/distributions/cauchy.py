"""The Cauchy distribution."""

from __future__ import annotations

import math
from numbers import Number

import tocha

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import _EMPTY_SHAPE, broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy(loc, scale): density 1 / (pi scale (1 + ((x - loc) / scale)^2)); batch shape
    of the broadcast parameters. Its mean is undefined (NaN) and its variance infinite."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = tocha.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    def _full(self, fill):
        return tocha.full(
            tuple(self._extended_shape()), fill, dtype=self.loc.dtype, device=self.loc.device
        )

    @property
    def mean(self):
        return self._full(math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._full(math.inf)

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new_empty(tuple(shape)).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return tocha.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tocha.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
