"""The von Mises distribution on the circle."""

from __future__ import annotations

import math

import tocha

from . import constraints
from .distribution import Distribution, _expand_params
from .utils import _EMPTY_SHAPE, broadcast_all

__all__ = ["VonMises"]


def _best_fisher(loc: tocha.Tensor, concentration: tocha.Tensor, shape) -> tocha.Tensor:
    """Von Mises variates in [-pi, pi) by Best and Fisher's (1979) rejection sampler, in
    float64 (no gradient)."""
    kappa = concentration.to(tocha.float64).expand(shape)
    mu = loc.to(tocha.float64).expand(shape)
    tau = 1 + (1 + 4 * kappa**2).sqrt()
    rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
    # For tiny concentrations rho underflows; then r = 1 / kappa + kappa (to first order).
    r_exact = (1 + rho**2) / (2 * rho)
    r = tocha.where(kappa < 1e-5, 1 / kappa + kappa, r_exact)
    result = tocha.zeros(tuple(shape), dtype=tocha.float64, device=loc.device)
    pending = tocha.ones(tuple(shape), dtype=tocha.bool, device=loc.device)
    while bool(pending.any()):
        u = tocha.rand((3,) + tuple(shape), dtype=tocha.float64, device=loc.device)
        z = tocha.cos(math.pi * u[0])
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        accept = ((c * (2 - c) - u[1]) > 0) | ((c / u[1]).log() + 1 - c >= 0)
        theta = (u[2] - 0.5).sign() * f.clamp(-1, 1).acos()
        take = accept & pending
        result = tocha.where(take, theta, result)
        pending = pending & ~take
    return ((result + mu + math.pi) % (2 * math.pi)) - math.pi


class VonMises(Distribution):
    """VonMises(loc, concentration): density exp(k cos(x - loc)) / (2 pi I0(k)) on
    [-pi, pi); batch shape of the broadcast parameters. Samples have no gradient."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, tocha.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * tocha.cos(value - self.loc)
        return (
            log_prob
            - math.log(2 * math.pi)
            - (tocha.special.i0e(self.concentration).log() + self.concentration)
        )

    def sample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        with tocha.no_grad():
            return _best_fisher(self.loc, self.concentration, shape).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, VonMises, batch_shape, _instance, ("loc", "concentration"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        k = self.concentration
        return 1 - tocha.special.i1e(k) / tocha.special.i0e(k)
