"""The Bernoulli distribution."""

from __future__ import annotations

import tocha

from . import constraints
from ._functional import softplus
from ._probs import BinaryParameters, param_shape, probs_or_logits
from .distribution import _expand_params
from .exp_family import ExponentialFamily
from .utils import _EMPTY_SHAPE

__all__ = ["Bernoulli"]


class Bernoulli(BinaryParameters, ExponentialFamily):
    """Bernoulli(probs=None, logits=None): 1 with probability `probs` (or sigmoid(logits)),
    else 0. Exactly one of the two is given; batch shape of that one."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        param, is_scalar = probs_or_logits(self, probs, logits, is_binary=True)
        self._param = param
        super().__init__(param_shape(param, is_scalar), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_params(self, Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return tocha.where(self.probs == 0.5, tocha.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        with tocha.no_grad():
            return tocha.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = tocha.broadcast_tensors(self.logits, value)
        return -(softplus(logits) - logits * value)

    def entropy(self):
        return softplus(self.logits) - self.logits * self.probs

    def enumerate_support(self, expand=True):
        values = tocha.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (tocha.logit(self.probs),)

    def _log_normalizer(self, x):
        return tocha.log1p(tocha.exp(x))
