"""The continuous Bernoulli distribution (Loaiza-Ganem and Cunningham, 2019)."""

from __future__ import annotations

import math
from numbers import Number

import tocha

from . import constraints
from ._functional import softplus
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import (
    _EMPTY_SHAPE,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501)) on [0, 1]:
    density C(p) p^x (1 - p)^(1 - x). Near p = 1/2 (inside `lims`) the normalizer, mean
    and variance use Taylor expansions, where the closed forms lose precision."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None:
                if not self.arg_constraints["probs"].check(self.probs).all():
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = tocha.Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_params(
            self, ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"), ("_lims",)
        )
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _outside_unstable_region(self):
        return tocha.max(tocha.le(self.probs, self._lims[0]), tocha.gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return tocha.where(
            self._outside_unstable_region(),
            self.probs,
            self._lims[0] * tocha.ones_like(self.probs),
        )

    def _cont_bern_log_norm(self):
        """log C(p), C(p) = 2 atanh(1 - 2p) / (1 - 2p) (2 at p = 1/2)."""
        cut_probs = self._cut_probs()
        below = tocha.where(cut_probs <= 0.5, cut_probs, tocha.zeros_like(cut_probs))
        above = tocha.where(cut_probs >= 0.5, cut_probs, tocha.ones_like(cut_probs))
        log_norm = tocha.log(
            tocha.abs(tocha.log1p(-cut_probs) - tocha.log(cut_probs))
        ) - tocha.where(
            cut_probs <= 0.5,
            tocha.log1p(-2.0 * below),
            tocha.log(2.0 * above - 1.0),
        )
        x = tocha.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return tocha.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (
            tocha.log1p(-cut_probs) - tocha.log(cut_probs)
        )
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * tocha.pow(x, 2)) * x
        return tocha.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return tocha.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vars_ = cut_probs * (cut_probs - 1.0) / tocha.pow(
            1.0 - 2.0 * cut_probs, 2
        ) + 1.0 / tocha.pow(tocha.log1p(-cut_probs) - tocha.log(cut_probs), 2)
        x = tocha.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return tocha.where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=_EMPTY_SHAPE):
        with tocha.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        u = tocha.rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -(softplus(logits) - logits * value) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (
            tocha.pow(cut_probs, value) * tocha.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0
        ) / (2.0 * cut_probs - 1.0)
        unbounded_cdfs = tocha.where(self._outside_unstable_region(), cdfs, value)
        return tocha.where(
            tocha.le(value, 0.0),
            tocha.zeros_like(value),
            tocha.where(tocha.ge(value, 1.0), tocha.ones_like(value), unbounded_cdfs),
        )

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return tocha.where(
            self._outside_unstable_region(),
            (tocha.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - tocha.log1p(-cut_probs))
            / (tocha.log(cut_probs) - tocha.log1p(-cut_probs)),
            value,
        )

    def entropy(self):
        log_probs0 = tocha.log1p(-self.probs)
        log_probs1 = tocha.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log of int exp(x y) dy over [0, 1]: log((exp(x) - 1) / x)."""
        out_unst_reg = tocha.max(tocha.le(x, -1e-2), tocha.gt(x, 1e-2))
        cut_nat_params = tocha.where(out_unst_reg, x, -1e-2 * tocha.ones_like(x))
        log_norm = tocha.log(tocha.abs(tocha.exp(cut_nat_params) - 1.0)) - tocha.log(
            tocha.abs(cut_nat_params)
        )
        taylor = 0.5 * x + tocha.pow(x, 2) / 24.0 - tocha.pow(x, 4) / 2880.0
        return tocha.where(out_unst_reg, log_norm, taylor)
