"""The generalized Pareto distribution."""

from __future__ import annotations

import math
from numbers import Number

import tocha

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import _EMPTY_SHAPE, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration): with z = (x - loc) / scale and shape
    xi = concentration, CDF 1 - (1 + xi z) ** (-1 / xi) (1 - exp(-z) at xi = 0), on
    [loc, inf) for xi >= 0 and [loc, loc - scale / xi] for xi < 0; batch shape of the
    broadcast parameters. rsample inverts the CDF of a uniform draw. As in PyTorch, the mean
    is NaN for xi >= 1 and the variance NaN for xi >= 1/2 (where they are infinite)."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = tocha.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(
            self, GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration")
        )

    def _is_zero(self):
        return self.concentration == 0

    def _safe_concentration(self):
        """The concentration with zeros replaced by one, for the branches that divide."""
        return tocha.where(self._is_zero(), tocha.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        u = tocha.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        xi = self._safe_concentration()
        general = -(1 + 1 / xi) * tocha.log1p(xi * z)
        return -self.scale.log() + tocha.where(self._is_zero(), -z, general)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        xi = self._safe_concentration()
        general = -tocha.log1p(xi * z) / xi
        return -tocha.expm1(tocha.where(self._is_zero(), -z, general))

    def icdf(self, value):
        xi = self._safe_concentration()
        log_survival = tocha.log1p(-value)
        general = tocha.expm1(-xi * log_survival) / xi
        return self.loc + self.scale * tocha.where(self._is_zero(), -log_survival, general)

    @property
    def mean(self):
        xi = self.concentration
        finite = self.loc + self.scale / (1 - tocha.where(xi < 1, xi, tocha.zeros_like(xi)))
        return tocha.where(xi < 1, finite, tocha.full_like(finite, math.nan))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        xi = self.concentration
        safe = tocha.where(xi < 0.5, xi, tocha.zeros_like(xi))
        finite = self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe))
        return tocha.where(xi < 0.5, finite, tocha.full_like(finite, math.nan))

    def entropy(self):
        return tocha.log(self.scale) + self.concentration + 1

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        xi = self._safe_concentration()
        upper = tocha.where(
            self.concentration < 0, self.loc - self.scale / xi, tocha.full_like(self.loc, math.inf)
        )
        return constraints.interval(self.loc, upper)
