"""The Dirichlet distribution."""

from __future__ import annotations

import tocha

from . import constraints
from ._functional import one_hot
from ._gamma import standard_gamma
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import _EMPTY_SHAPE

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration) on the simplex: `concentration` has shape
    `batch_shape + (K,)`, events shape `(K,)`. `rsample` normalizes Gamma variates, so
    its gradient is the implicit one of the Gamma's."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        gammas = standard_gamma(self.concentration.expand(shape))
        return gammas / gammas.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            tocha.xlogy(self.concentration - 1.0, value).sum(-1)
            + tocha.lgamma(self.concentration.sum(-1))
            - tocha.lgamma(self.concentration).sum(-1)
        )

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        excess = (self.concentration - 1).clamp(min=0.0)
        mode = excess / excess.sum(-1, True)
        peak = one_hot(
            self.concentration.argmax(-1), self.concentration.shape[-1], self.concentration.dtype
        )
        return tocha.where((self.concentration < 1).all(-1, keepdim=True), peak, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (
            tocha.lgamma(self.concentration).sum(-1)
            - tocha.lgamma(a0)
            - (k - a0) * tocha.digamma(a0)
            - ((self.concentration - 1.0) * tocha.digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - tocha.lgamma(x.sum(-1))
