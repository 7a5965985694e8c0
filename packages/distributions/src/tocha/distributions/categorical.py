"""The categorical distribution."""

from __future__ import annotations

import math

import tocha

from . import constraints
from ._probs import probs_or_logits
from .distribution import Distribution, _expand_params
from .utils import _EMPTY_SHAPE, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Categorical(probs=None, logits=None) over {0, ..., K - 1}: `probs` (nonnegative,
    normalized over the last dimension) or `logits` (unnormalized log-probabilities) have
    shape `batch_shape + (K,)`; events are scalars (integer indices)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        param, _ = probs_or_logits(self, probs, logits, is_binary=False)
        if param.dim() < 1:
            name = "probs" if probs is not None else "logits"
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if probs is not None:
            self.probs = param / param.sum(-1, keepdim=True)
        else:
            self.logits = param - param.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else tocha.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_params(
            self, Categorical, batch_shape, _instance, ("probs", "logits"), ("_num_events",)
        )
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    def _full_nan(self):
        return tocha.full(
            tuple(self._extended_shape()),
            math.nan,
            dtype=self.probs.dtype,
            device=self.probs.device,
        )

    @property
    def mean(self):
        return self._full_nan()

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return self._full_nan()

    def sample(self, sample_shape=_EMPTY_SHAPE):
        if not isinstance(sample_shape, tocha.Size):
            sample_shape = tocha.Size(sample_shape)
        with tocha.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = tocha.multinomial(probs_2d, sample_shape.numel(), True).T
            return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = tocha.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = tocha.finfo(self.logits.dtype).min
        logits = tocha.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        num_events = self._num_events
        values = tocha.arange(num_events, dtype=tocha.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
