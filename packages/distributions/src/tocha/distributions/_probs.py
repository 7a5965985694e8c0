"""The shared set-up of distributions given by either `probs` or `logits`."""

from __future__ import annotations

from numbers import Number

import tocha

from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


def probs_or_logits(self, probs, logits, is_binary: bool):
    """Stores `probs` or `logits` (exactly one must be given) on `self` and returns the
    given one, as a tensor; the other is computed lazily. Numbers make a batch shape ()."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        if is_binary:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = False
            self.probs = probs
        return self.probs, is_scalar
    if is_binary:
        is_scalar = isinstance(logits, Number)
        (self.logits,) = broadcast_all(logits)
    else:
        is_scalar = False
        self.logits = logits
    return self.logits, is_scalar


def param_shape(param, is_scalar: bool):
    return tocha.Size() if is_scalar else param.size()


class BinaryParameters:
    """`probs` and `logits` of a two-outcome parameter (one given, stored as `_param`), each
    computed lazily from the other, and `param_shape`."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()
