"""Exponential families: distributions with density
``p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))``, whose entropy and KL divergence
follow from the log normalizer F by automatic differentiation (Bregman divergences)."""

from __future__ import annotations

import tocha

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution in an exponential family. Subclasses give `_natural_params` (a tuple
    of tensors), `_log_normalizer(*natural_params)` and `_mean_carrier_measure` (the
    expectation of k(x))."""

    @property
    def _natural_params(self) -> tuple[tocha.Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: tocha.Tensor) -> tocha.Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float | tocha.Tensor:
        raise NotImplementedError

    def entropy(self) -> tocha.Tensor:
        """The entropy through the Bregman divergence of the log normalizer:
        ``F(theta) - <theta, grad F(theta)> - E[k(x)]``, of shape `batch_shape`."""
        result = -self._mean_carrier_measure
        natural_params = [p.detach().requires_grad_() for p in self._natural_params]
        with tocha.enable_grad():
            lg_normal = self._log_normalizer(*natural_params)
        gradients = tocha.autograd.grad(lg_normal.sum(), natural_params, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(natural_params, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
