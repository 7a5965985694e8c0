"""The Kumaraswamy distribution."""

from __future__ import annotations

import math

import tocha

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moment(a, b, n):
    """E[X^n] = b * B(1 + n / a, b) for X ~ Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    return b * tocha.exp(tocha.lgamma(arg1) + tocha.lgamma(b) - tocha.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0) on (0, 1): density
    a b x^(a-1) (1 - x^a)^(b-1) for a = concentration1, b = concentration0, drawn as
    (1 - U^(1/b))^(1/a); batch shape of the broadcast parameters."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            tocha.full_like(self.concentration0, 0),
            tocha.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)) ** a.reciprocal()
        return tocha.where((a < 1) | (b < 1), tocha.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _moment(a, b, 2) - _moment(a, b, 1).pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = tocha.digamma(b + 1) + euler_constant
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic_b - tocha.log(a * b)
