"""KL divergences between distributions of different families, registered with `register_kl`.

Most are ``-H(p) - E_p[log q(x)]``: p's entropy, and q's log density averaged over p, which
needs only a few of p's expectations (its mean, second moment, mean log, or the Laplace
transform that a Gumbel's density asks for). Where p's support reaches outside q's the
divergence is infinite: of p's batch shape for pairs whose supports never nest, and per
element where the nesting depends on the parameters.
"""

from __future__ import annotations

import math

import tocha

from ._functional import softplus
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import _kl_multivariatenormal_multivariatenormal, register_kl
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler_constant

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _infinite_like(tensor):
    return tocha.full_like(tensor, math.inf)


def _never_nested(p, q):
    """An infinite divergence of p's batch shape: p's support always leaves q's."""
    return _infinite_like(p.mean)


def _infinite_where(outside, result):
    return tocha.where(outside, _infinite_like(result), result)


# -- q's log density averaged over p, from p's expectations ----------------------------------
def _expected_log_normal(q, mean, second_moment):
    squared_distance = second_moment - 2 * q.loc * mean + q.loc.pow(2)
    return -q.scale.log() - _HALF_LOG_2PI - squared_distance / (2 * q.scale.pow(2))


def _expected_log_exponential(q, mean):
    return q.rate.log() - q.rate * mean


def _expected_log_gamma(q, mean, mean_log):
    return (
        q.concentration * q.rate.log()
        - tocha.lgamma(q.concentration)
        + (q.concentration - 1) * mean_log
        - q.rate * mean
    )


def _expected_log_beta(q, mean_log, mean_log1m):
    a, b = q.concentration1, q.concentration0
    log_beta = tocha.lgamma(a) + tocha.lgamma(b) - tocha.lgamma(a + b)
    return (a - 1) * mean_log + (b - 1) * mean_log1m - log_beta


def _expected_log_continuous_bernoulli(q, mean):
    """E[x log(lambda) + (1 - x) log(1 - lambda)] + log C(lambda), through q's logits."""
    logits = q.logits
    return -mean * softplus(-logits) - (1 - mean) * softplus(logits) + q._cont_bern_log_norm()


def _expected_log_gumbel(q, mean, log_laplace):
    """With z = (x - loc) / scale, log q(x) = -log(scale) - z - exp(-z); E[exp(-z)] is
    exp(loc / scale) E[exp(-x / scale)], whose log `log_laplace(1 / scale)` gives."""
    inverse_scale = q.scale.reciprocal()
    expected_exp = tocha.exp(q.loc * inverse_scale + log_laplace(inverse_scale))
    return -q.scale.log() - (mean - q.loc) * inverse_scale - expected_exp


def _from_cross_entropy(p, expected_log_q):
    return -p.entropy() - expected_log_q


def _uniform_mean_log(low, high):
    """E[log x] for x ~ Uniform(low, high), 0 <= low."""
    return (tocha.xlogy(high, high) - high - tocha.xlogy(low, low) + low) / (high - low)


def _beta_mean_log(p):
    """E[log x] and E[log(1 - x)] for x ~ p, a Beta."""
    total = tocha.digamma(p.concentration1 + p.concentration0)
    return tocha.digamma(p.concentration1) - total, tocha.digamma(p.concentration0) - total


# -- to Normal ---------------------------------------------------------------------------
def _kl_to_normal(p, q, mean, second_moment):
    return _from_cross_entropy(p, _expected_log_normal(q, mean, second_moment))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    second = (p.high.pow(3) - p.low.pow(3)) / (3 * (p.high - p.low))
    return _kl_to_normal(p, q, p.mean, second)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return _kl_to_normal(p, q, p.mean, 2 * p.rate.pow(-2))


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    second = p.concentration * (p.concentration + 1) / p.rate.pow(2)
    return _kl_to_normal(p, q, p.mean, second)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return _kl_to_normal(p, q, p.mean, p.variance + p.mean.pow(2))


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    return _kl_to_normal(p, q, p.mean, p.variance + p.mean.pow(2))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return _kl_to_normal(p, q, p.loc, 2 * p.scale.pow(2) + p.loc.pow(2))


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    variance = (math.pi * p.scale).pow(2) / 6
    return _kl_to_normal(p, q, p.mean, variance + p.mean.pow(2))


def _pareto_moments(p, order):
    """Where p's moments up to `order` are finite (alpha > order), and its mean and second
    moment computed there (elsewhere from a stand-in alpha, so that no gradient is nan)."""
    finite = p.alpha > order
    alpha = tocha.where(finite, p.alpha, tocha.full_like(p.alpha, order + 1.0))
    mean = alpha * p.scale / (alpha - 1)
    second = alpha * p.scale.pow(2) / (alpha - 2)
    return finite, mean, second


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    finite, mean, second = _pareto_moments(p, 2)
    return _infinite_where(~finite, _kl_to_normal(p, q, mean, second))


# -- to Laplace, Exponential, Gamma ---------------------------------------------------------
@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    """-H(p) + log(2 b) + E|x - m| / b, where for x ~ Normal(mu, s) and d = mu - m,
    E|x - m| = s sqrt(2 / pi) exp(-d^2 / (2 s^2)) + d erf(d / (s sqrt 2))."""
    d = p.loc - q.loc
    expected_abs = p.scale * math.sqrt(2 / math.pi) * tocha.exp(
        -d.pow(2) / (2 * p.scale.pow(2))
    ) + d * tocha.erf(d / (p.scale * math.sqrt(2)))
    return -p.entropy() + tocha.log(2 * q.scale) + expected_abs / q.scale


@register_kl(Beta, Exponential)
@register_kl(ContinuousBernoulli, Exponential)
@register_kl(Gamma, Exponential)
def _kl_to_exponential(p, q):
    return _from_cross_entropy(p, _expected_log_exponential(q, p.mean))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = _from_cross_entropy(p, _expected_log_exponential(q, p.mean))
    return _infinite_where(p.low < 0, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    finite, mean, _ = _pareto_moments(p, 1)
    return _infinite_where(~finite, _from_cross_entropy(p, _expected_log_exponential(q, mean)))


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    mean_log = -euler_constant - p.rate.log()
    return _from_cross_entropy(p, _expected_log_gamma(q, p.mean, mean_log))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    mean_log = _beta_mean_log(p)[0]
    return _from_cross_entropy(p, _expected_log_gamma(q, p.mean, mean_log))


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    mean_log = _uniform_mean_log(p.low, p.high)
    result = _from_cross_entropy(p, _expected_log_gamma(q, p.mean, mean_log))
    return _infinite_where(p.low < 0, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    finite, mean, _ = _pareto_moments(p, 1)
    mean_log = p.scale.log() + p.alpha.reciprocal()
    result = _from_cross_entropy(p, _expected_log_gamma(q, mean, mean_log))
    return _infinite_where(~finite, result)


# -- to Gumbel -----------------------------------------------------------------------------
@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    def log_laplace(s):
        return p.rate.log() - (p.rate + s).log()

    return _from_cross_entropy(p, _expected_log_gumbel(q, p.mean, log_laplace))


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    def log_laplace(s):
        return p.concentration * (p.rate.log() - (p.rate + s).log())

    return _from_cross_entropy(p, _expected_log_gumbel(q, p.mean, log_laplace))


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    def log_laplace(s):
        return -p.loc * s + (p.scale * s).pow(2) / 2

    return _from_cross_entropy(p, _expected_log_gumbel(q, p.mean, log_laplace))


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    def log_laplace(s):
        return -p.loc * s + tocha.lgamma(1 + p.scale * s)

    return _from_cross_entropy(p, _expected_log_gumbel(q, p.mean, log_laplace))


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    def log_laplace(s):
        width = p.high - p.low
        return -p.low * s + tocha.log(-tocha.expm1(-width * s) / (width * s))

    return _from_cross_entropy(p, _expected_log_gumbel(q, p.mean, log_laplace))


# -- to Beta, ContinuousBernoulli, Uniform, Pareto -----------------------------------------
@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    mean_log = _uniform_mean_log(p.low, p.high)
    mean_log1m = _uniform_mean_log(1 - p.high, 1 - p.low)
    result = _from_cross_entropy(p, _expected_log_beta(q, mean_log, mean_log1m))
    return _infinite_where((p.low < 0) | (p.high > 1), result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = _from_cross_entropy(p, _expected_log_continuous_bernoulli(q, p.mean))
    return _infinite_where((p.low <= 0) | (p.high >= 1), result)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _from_cross_entropy(p, _expected_log_continuous_bernoulli(q, p.mean))


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    return _from_cross_entropy(p, _expected_log_continuous_bernoulli(q, p.mean))


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _infinite_where((q.low > 0) | (q.high < 1), result)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _infinite_where((q.low >= 0) | (q.high <= 1), result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    mean_log = _uniform_mean_log(p.low, p.high)
    expected_log_q = q.alpha.log() + q.alpha * q.scale.log() - (q.alpha + 1) * mean_log
    return _infinite_where(p.low < q.scale, _from_cross_entropy(p, expected_log_q))


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    mean_log = p.scale.log() + p.alpha.reciprocal()
    expected_log_q = q.alpha.log() + q.alpha * q.scale.log() - (q.alpha + 1) * mean_log
    return _infinite_where(q.scale > p.scale, _from_cross_entropy(p, expected_log_q))


for _p, _qs in (
    (Beta, (Pareto,)),
    (ContinuousBernoulli, (Pareto,)),
    (Exponential, (Beta, ContinuousBernoulli, Pareto, Uniform)),
    (Gamma, (Beta, ContinuousBernoulli, Pareto, Uniform)),
    (Gumbel, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    (Laplace, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    (Normal, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
    (Pareto, (Beta, ContinuousBernoulli, Uniform)),
    (Poisson, (Bernoulli, Binomial)),
):
    for _q in _qs:
        register_kl(_p, _q)(_never_nested)


# -- discrete ------------------------------------------------------------------------------
@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


# -- multivariate normals, one of them of low rank -------------------------------------------
def _as_full_rank(d):
    if isinstance(d, LowRankMultivariateNormal):
        return MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix)
    return d


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mixed_rank_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two (Low Rank) Multivariate Normals with"
            "                          different event shapes cannot be computed"
        )
    return _kl_multivariatenormal_multivariatenormal(_as_full_rank(p), _as_full_rank(q))
