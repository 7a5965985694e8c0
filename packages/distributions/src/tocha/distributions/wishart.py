"""The Wishart distribution."""

from __future__ import annotations

import math
import warnings

import tocha

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _scale_tril_of
from .utils import _EMPTY_SHAPE, lazy_property

__all__ = ["Wishart"]


def _mvdigamma(x: tocha.Tensor, p: int) -> tocha.Tensor:
    """The multivariate digamma: ``sum_{i<p} digamma(x - i/2)``."""
    steps = tocha.arange(p, dtype=x.dtype, device=x.device) / 2
    return tocha.digamma(x.unsqueeze(-1) - steps).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None): random
    positive-definite ``(p, p)`` matrices, the scatter matrix of `df` draws of a zero-mean
    normal with that covariance (given as itself, its inverse or its lower Cholesky
    factor). `df` (a number or a tensor) must exceed ``p - 1``; the batch shape is the
    broadcast of df's shape and the matrix's batch shape. Samples come from the Bartlett
    decomposition, with gradients through the chi-squared and normal draws.

    Example:
        >>> Wishart(tocha.tensor(4.0), covariance_matrix=tocha.eye(2)).sample().shape
        tocha.Size([2, 2])
    """

    arg_constraints = {
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
        "df": constraints.greater_than(0),
    }
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(
        self,
        df,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if matrix.dim() < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if not isinstance(df, tocha.Tensor):
            df = tocha.tensor(df, dtype=matrix.dtype, device=matrix.device)
        batch_shape = tocha.broadcast_shapes(matrix.shape[:-2], df.shape)
        event_shape = matrix.shape[-2:]
        full = tuple(batch_shape) + tuple(event_shape)
        self.df = df.expand(batch_shape)
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(full)
        else:
            self.precision_matrix = precision_matrix.expand(full)
        p = event_shape[-1]
        self.arg_constraints = {
            **Wishart.arg_constraints,
            "df": constraints.greater_than(p - 1),
        }
        if self.df.lt(p - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(
            covariance_matrix, precision_matrix, scale_tril
        )
        self._dist_chi2 = Chi2(
            self.df.unsqueeze(-1) - tocha.arange(p, dtype=self.df.dtype, device=self.df.device)
        )

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tocha.Size(batch_shape)
        full = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(full)
        new.df = self.df.expand(batch_shape)
        new.arg_constraints = self.arg_constraints
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(full))
        new._dist_chi2 = self._dist_chi2.expand(tuple(batch_shape) + (self.event_shape[-1],))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._full())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._full())

    @lazy_property
    def precision_matrix(self):
        identity = tocha.eye(
            self._event_shape[-1],
            device=self._unbroadcasted_scale_tril.device,
            dtype=self._unbroadcasted_scale_tril.dtype,
        )
        return tocha.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(self._full())

    @property
    def mean(self):
        """``df * covariance_matrix``."""
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        """``(df - p - 1) * covariance_matrix``; NaN where ``df <= p + 1`` (no mode)."""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = tocha.where(factor > 0, factor, tocha.full_like(factor, math.nan))
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        """Elementwise: ``df * (V_ij^2 + V_ii V_jj)``, V the covariance matrix."""
        v = self.covariance_matrix
        diagonal = v.diagonal(dim1=-2, dim2=-1)
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * (
            v.pow(2) + tocha.einsum("...i,...j->...ij", diagonal, diagonal)
        )

    def _bartlett_sample(self, sample_shape) -> tocha.Tensor:
        """``L A A^T L^T``, A lower triangular with sqrt(chi2(df - i)) on its diagonal and
        standard normals below it."""
        shape = tuple(sample_shape) + self._full()
        noise = tocha.randn(
            shape,
            dtype=self._unbroadcasted_scale_tril.dtype,
            device=self._unbroadcasted_scale_tril.device,
        ).tril(-1)
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        bartlett = noise + tocha.diag_embed(chi)
        factor = self._unbroadcasted_scale_tril @ bartlett
        sample = factor @ factor.mT
        singular = tocha.linalg.cholesky_ex(sample).info.ne(0)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
        return sample

    def rsample(self, sample_shape=_EMPTY_SHAPE):
        """Samples of shape ``sample_shape + batch_shape + (p, p)`` (reparametrised)."""
        return self._bartlett_sample(tocha.Size(sample_shape))

    def log_prob(self, value):
        """``(nu-p-1)/2 log|X| - tr(V^-1 X)/2 - nu p/2 log 2 - nu/2 log|V| - log Gamma_p(nu/2)``."""
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        half_logdet = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = tocha.linalg.solve_triangular(self._unbroadcasted_scale_tril, value, upper=False)
        trace = (
            tocha.linalg.solve_triangular(self._unbroadcasted_scale_tril.mT, trace, upper=True)
            .diagonal(dim1=-2, dim2=-1)
            .sum(-1)
        )
        return (
            -nu * (p * math.log(2) / 2 + half_logdet)
            - tocha.mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * tocha.linalg.slogdet(value).logabsdet
            - trace / 2
        )

    def entropy(self):
        """The differential entropy, of shape `batch_shape`."""
        nu = self.df
        p = self._event_shape[-1]
        half_logdet = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            (p + 1) * (p * math.log(2) / 2 + half_logdet)
            + tocha.mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        half_nu = y + (p + 1) / 2
        return (
            -half_nu * tocha.linalg.slogdet(-2 * x).logabsdet
            + half_nu * p * math.log(2)
            + tocha.mvlgamma(half_nu, p)
        )
