"""Student's t distribution."""

from __future__ import annotations

import math

import tocha

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution, _expand_params
from .utils import _EMPTY_SHAPE, _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """StudentT(df, loc=0, scale=1): loc + scale * T for T Student-t with `df` degrees of
    freedom; batch shape of the broadcast parameters. rsample divides a normal by the
    root of a Chi2 rsample, so it is differentiable in df too."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return tocha.where(self.df > 1, self.loc, tocha.full_like(self.loc, math.nan))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        safe = tocha.where(df > 2, df, tocha.full_like(df, 3.0))
        finite = self.scale.pow(2) * safe / (safe - 2)
        result = tocha.where(df > 2, finite, tocha.full_like(finite, math.inf))
        return tocha.where(df > 1, result, tocha.full_like(result, math.nan))

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_params(self, StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        y = x * tocha.rsqrt(z / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + tocha.lgamma(0.5 * self.df)
            - tocha.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * tocha.log1p(y**2.0 / self.df) - z

    def entropy(self):
        lbeta = tocha.lgamma(0.5 * self.df) + math.lgamma(0.5) - tocha.lgamma(0.5 * (self.df + 1))
        return (
            self.scale.log()
            + 0.5
            * (self.df + 1)
            * (tocha.digamma(0.5 * (self.df + 1)) - tocha.digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )
