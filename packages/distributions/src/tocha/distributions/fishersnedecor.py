"""The Fisher-Snedecor (F) distribution."""

from __future__ import annotations

import math
from numbers import Number

import tocha

from . import constraints
from .distribution import Distribution, _expand_params
from .gamma import Gamma
from .utils import _EMPTY_SHAPE, broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """FisherSnedecor(df1, df2): the ratio (X1 / df1) / (X2 / df2) of chi-squared variables;
    batch shape of the broadcast parameters; reparameterized through the Gammas."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        if isinstance(df1, Number) and isinstance(df2, Number):
            batch_shape = tocha.Size()
        else:
            batch_shape = self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_params(self, FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = self.df2
        return tocha.where(df2 > 2, df2 / (df2 - 2), tocha.full_like(df2, math.nan))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return tocha.where(self.df1 > 2, mode, tocha.full_like(mode, math.nan))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        result = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return tocha.where(df2 > 4, result, tocha.full_like(result, math.nan))

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape)
        tiny = tocha.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * tocha.log(value)
        t3 = (ct1 + ct2) * tocha.log1p(ct3 * value)
        return t1 + t2 - t3
