"""The multivariate normal distribution."""

from __future__ import annotations

import math

import tocha

from . import constraints
from .distribution import Distribution
from .utils import _EMPTY_SHAPE, _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: tocha.Tensor, bvec: tocha.Tensor) -> tocha.Tensor:
    """Matrix-vector products over broadcast batches: `(..., n, m) @ (..., m) -> (..., n)`."""
    return tocha.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: tocha.Tensor, bx: tocha.Tensor) -> tocha.Tensor:
    """The squared Mahalanobis distance x^T (L L^T)^-1 x for lower Cholesky factors `bL`
    `(..., n, n)` and vectors `bx` `(..., n)`, broadcast over their batches."""
    n = bL.shape[-1]
    batch = tuple(tocha.broadcast_shapes(bL.shape[:-2], bx.shape[:-1]))
    column = bx.expand(batch + (n,)).unsqueeze(-1)
    solution = tocha.linalg.solve_triangular(bL.expand(batch + (n, n)), column, upper=False)
    return solution.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision: tocha.Tensor) -> tocha.Tensor:
    """The lower Cholesky factor of the inverse of `precision`, without inverting it:
    flipping rows and columns turns the Cholesky factor of P into an upper one."""
    lf = tocha.linalg.cholesky(tocha.flip(precision, (-2, -1)))
    l_inv = tocha.transpose(tocha.flip(lf, (-2, -1)), -2, -1)
    identity = tocha.eye(precision.shape[-1], dtype=precision.dtype, device=precision.device)
    return tocha.linalg.solve_triangular(l_inv, identity, upper=False)


def _scale_tril_of(covariance_matrix, precision_matrix, scale_tril) -> tocha.Tensor:
    """The lower Cholesky factor of the covariance, from whichever of the three is given."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return tocha.linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


class MultivariateNormal(Distribution):
    """MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None,
    scale_tril=None): `loc` `batch_shape + (n,)`, one of the covariance, its inverse or
    its lower Cholesky factor `(..., n, n)`; events `(n,)`. The batch shape is the
    broadcast of loc's and the matrix's batch shapes."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = (
            (covariance_matrix is not None)
            + (scale_tril is not None)
            + (precision_matrix is not None)
        )
        if given != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if matrix.dim() < 2:
            name = (
                "scale_tril"
                if scale_tril is not None
                else "covariance_matrix"
                if covariance_matrix is not None
                else "precision_matrix"
            )
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional leading "
                "batch dimensions"
            )
        batch_shape = tocha.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(tuple(batch_shape) + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(tuple(batch_shape) + (-1, -1))
        else:
            self.precision_matrix = precision_matrix.expand(tuple(batch_shape) + (-1, -1))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(
            covariance_matrix, precision_matrix, scale_tril
        )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tocha.Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)
        )

    @lazy_property
    def covariance_matrix(self):
        return tocha.matmul(
            self._unbroadcasted_scale_tril, self._unbroadcasted_scale_tril.mT
        ).expand(tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape))

    @lazy_property
    def precision_matrix(self):
        identity = tocha.eye(self._event_shape[-1], device=self.loc.device, dtype=self.loc.dtype)
        inverse_tril = tocha.linalg.solve_triangular(
            self._unbroadcasted_scale_tril, identity, upper=False
        )
        return tocha.matmul(inverse_tril.mT, inverse_tril).expand(
            tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)
        )

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (
            self._unbroadcasted_scale_tril.pow(2)
            .sum(-1)
            .expand(tuple(self._batch_shape) + tuple(self._event_shape))
        )

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return h
        return h.expand(self._batch_shape)
