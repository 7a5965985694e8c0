"""The LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math

import tocha

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _EMPTY_SHAPE, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration=1.0): lower Cholesky factors L of ``dim x dim``
    correlation matrices ``M = L L^T``, with density proportional to ``det(M)^(eta - 1)``
    (eta the `concentration`; eta = 1 is uniform over correlation matrices). Samples come
    from the onion method: row i is ``sqrt(y) u``, y ~ Beta(i/2, eta + (dim - 1 - i)/2) and
    u uniform on the unit sphere, with ``L_ii = sqrt(1 - y)``; log_prob is that
    construction's density of the rows' free entries.

    Example:
        >>> LKJCholesky(3, 0.5).sample().shape
        tocha.Size([3, 3])
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.shape
        event_shape = tocha.Size((dim, dim))
        rows = tocha.arange(
            1, dim, dtype=self.concentration.dtype, device=self.concentration.device
        )
        eta = self.concentration.unsqueeze(-1)
        self._beta = Beta(rows / 2 + tocha.zeros_like(eta), eta + (dim - 1 - rows) / 2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tocha.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim - 1,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=_EMPTY_SHAPE):
        """Samples of shape ``sample_shape + batch_shape + (dim, dim)``."""
        with tocha.no_grad():
            y = self._beta.sample(sample_shape)
            y = tocha.cat([tocha.zeros_like(y[..., :1]), y], -1).unsqueeze(-1)
            normal = tocha.randn(
                tuple(y.shape[:-2]) + (self.dim, self.dim),
                dtype=y.dtype,
                device=y.device,
            ).tril(-1)
            norms = normal.norm(dim=-1, keepdim=True)
            sphere = normal / tocha.where(norms > 0, norms, tocha.ones_like(norms))
            w = y.sqrt() * sphere
            tiny = tocha.finfo(w.dtype).tiny
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + tocha.diag_embed(diagonal)

    def log_prob(self, value):
        """``sum_i (dim - i + 2 eta - 2) log L_ii`` (i from 2) plus the normaliser."""
        if self._validate_args:
            self._validate_sample(value)
        dim = self.dim
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = tocha.arange(2, dim + 1, dtype=value.dtype, device=value.device)
        exponent = 2 * (self.concentration - 1).unsqueeze(-1) + dim - order
        unnormalized = (exponent * diagonal.log()).sum(-1)
        eta = self.concentration
        steps = tocha.arange(1, dim, dtype=eta.dtype, device=eta.device)
        normalizer = (
            (dim - 1) * tocha.lgamma(eta + (dim - 1) / 2)
            - tocha.lgamma(eta.unsqueeze(-1) + (dim - 1 - steps) / 2).sum(-1)
            - dim * (dim - 1) / 4 * math.log(math.pi)
        )
        return unnormalized + normalizer
