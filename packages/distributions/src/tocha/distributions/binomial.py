"""The binomial distribution."""

from __future__ import annotations

import tocha

from . import constraints
from ._gamma import sample_standard_gamma
from ._probs import BinaryParameters
from .distribution import Distribution, _expand_params
from .utils import _EMPTY_SHAPE, broadcast_all

__all__ = ["Binomial"]


_DIRECT = 64  # counts up to this are drawn by waiting times; larger ones are split first


def _waiting_times(count: tocha.Tensor, p: tocha.Tensor) -> tocha.Tensor:
    """Binomial(count, p) variates as the number of geometric waiting times between
    successes that fit in `count` trials; the rarer outcome is counted, so it takes about
    count * min(p, 1 - p) rounds of one uniform draw per element."""
    flip = p > 0.5
    q = tocha.where(flip, 1 - p, p)
    successes = tocha.zeros_like(q)
    position = tocha.zeros_like(q)  # trials used so far
    active = (q > 0) & (count > 0)
    log_fail = tocha.log1p(-q.clamp(max=1 - 1e-16))
    while bool(active.any()):
        u = tocha.rand(tuple(q.shape), dtype=tocha.float64, device=q.device).clamp(min=1e-300)
        wait = (u.log() / log_fail.clamp(max=-1e-300)).floor() + 1
        position = tocha.where(active, position + wait, position)
        hit = active & (position <= count)
        successes = tocha.where(hit, successes + 1, successes)
        active = hit
    return tocha.where(flip, count - successes, successes)


def _sample_binomial(count: tocha.Tensor, probs: tocha.Tensor) -> tocha.Tensor:
    """Exact Binomial(count, probs) variates of the broadcast shape (no gradient).

    Large counts are halved first through the order statistics of uniforms: the i-th
    smallest of n uniforms, i = (n + 1) // 2, is X ~ Beta(i, n + 1 - i); if X <= p, i
    successes are certain and the n - i uniforms above X are uniform on (X, 1), so the rest
    is Binomial(n - i, (p - X) / (1 - X)); otherwise Binomial(i - 1, p / X). After about
    log2(count / 64) such steps, the waiting-time method finishes."""
    count = count.to(tocha.float64)
    p = probs.to(tocha.float64)
    result = tocha.zeros_like(p)
    ones = tocha.ones_like(p)
    tiny = tocha.finfo(tocha.float64).tiny
    while True:
        big = count > _DIRECT
        if not bool(big.any()):
            break
        i = tocha.where(big, ((count + 1) / 2).floor(), ones)
        rest = tocha.where(big, count + 1 - i, ones)
        first, second = sample_standard_gamma(i), sample_standard_gamma(rest)
        x = first / (first + second)
        below = x <= p
        result = tocha.where(big & below, result + i, result)
        new_count = tocha.where(below, count - i, i - 1)
        new_p = tocha.where(below, (p - x) / (1 - x).clamp(min=tiny), p / x.clamp(min=tiny))
        count = tocha.where(big, new_count, count)
        p = tocha.where(big, new_p.clamp(0, 1), p)
    return result + _waiting_times(count, p)


class Binomial(BinaryParameters, Distribution):
    """Binomial(total_count=1, probs=None, logits=None): the number of successes in
    `total_count` Bernoulli(probs) trials; batch shape of the broadcast parameters."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expand_params(
            self, Binomial, batch_shape, _instance, ("total_count", "probs", "logits")
        )
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        with tocha.no_grad():
            count = self.total_count.expand(shape)
            return _sample_binomial(count, self.probs.expand(shape)).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = tocha.lgamma(self.total_count + 1)
        log_factorial_k = tocha.lgamma(value + 1)
        log_factorial_nmk = tocha.lgamma(self.total_count - value + 1)
        # k log p + (n - k) log(1 - p), written with the logits without overflow
        normalize_term = (
            self.total_count * _clamp_by_zero(self.logits)
            + self.total_count * tocha.log1p(tocha.exp(-tocha.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - normalize_term - log_factorial_k - log_factorial_nmk

    def entropy(self):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(tocha.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = tocha.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


def _clamp_by_zero(x):
    """max(x, 0), with a gradient of 1/2 at 0."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2
