"""The multinomial distribution."""

from __future__ import annotations

import tocha

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import _EMPTY_SHAPE, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Multinomial(total_count=1, probs=None, logits=None): counts of `total_count` draws
    from a Categorical over K outcomes; parameters `batch_shape + (K,)`, events `(K,)`.
    `sample` needs one int total_count; `log_prob` accepts any counts."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = tocha.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=_EMPTY_SHAPE):
        sample_shape = tocha.Size(sample_shape)
        with tocha.no_grad():
            draws = self._categorical.sample(tocha.Size((self.total_count,)) + sample_shape)
            counts = (draws.unsqueeze(-1) == tocha.arange(self._categorical._num_events)).sum(0)
            return counts.to(self.probs.dtype)

    def entropy(self):
        n = tocha.tensor(self.total_count)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - tocha.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = tocha.exp(self._binomial.log_prob(support))
        weights = tocha.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = tocha.lgamma(value.sum(-1) + 1)
        log_factorial_xs = tocha.lgamma(value + 1).sum(-1)
        logits = tocha.where(
            (value == 0) & (logits == -float("inf")), tocha.zeros_like(logits), logits
        )
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
