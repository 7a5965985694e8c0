"""Samplers pass statistical tests: Kolmogorov-Smirnov against the CDF for continuous
distributions, frequencies against the mass function for discrete ones, and the sample
moments against mean and variance. The global generator is seeded, so nothing flakes;
the bounds are those of a test at level about 1e-3 (KS: 1.95 / sqrt(n)), or five
standard errors for moments."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tocha

D = tocha.distributions
N = 20000
KS_BOUND = 1.95 / math.sqrt(N)


def f64(*values):
    """A float64 tensor: 0-dimensional for one value."""
    return tocha.tensor(values[0] if len(values) == 1 else values, dtype=tocha.float64)


def _numeric_cdf(dist, lower, upper):
    """The CDF by the trapezoid rule over exp(log_prob) on a fine grid of [lower, upper]."""
    grid = np.linspace(lower, upper, 200001)
    density = np.exp(dist.log_prob(tocha.tensor(grid)).numpy())
    cumulative = np.concatenate(
        [[0.0], np.cumsum((density[1:] + density[:-1]) / 2 * np.diff(grid))]
    )
    return lambda x: np.interp(x, grid, cumulative / cumulative[-1])


CONTINUOUS = {
    "Normal": (lambda: D.Normal(f64(0.7), f64(1.8)), None),
    "LogNormal": (lambda: D.LogNormal(f64(0.2), f64(0.6)), None),
    "HalfNormal": (lambda: D.HalfNormal(f64(1.3)), None),
    "HalfCauchy": (lambda: D.HalfCauchy(f64(0.8)), None),
    "Cauchy": (lambda: D.Cauchy(f64(-1.0), f64(0.5)), None),
    "Laplace": (lambda: D.Laplace(f64(0.5), f64(2.0)), None),
    "Exponential": (lambda: D.Exponential(f64(1.7)), None),
    "Uniform": (lambda: D.Uniform(f64(-1.0), f64(2.5)), None),
    "Gumbel": (lambda: D.Gumbel(f64(1.0), f64(0.7)), None),
    "Weibull": (lambda: D.Weibull(f64(1.5), f64(0.8)), None),
    "Gamma_small": (lambda: D.Gamma(f64(0.3), f64(2.0)), None),
    "Gamma": (lambda: D.Gamma(f64(4.5), f64(1.5)), None),
    "Chi2": (lambda: D.Chi2(f64(3.0)), None),
    "ContinuousBernoulli": (lambda: D.ContinuousBernoulli(f64(0.8)), None),
    "Beta": (lambda: D.Beta(f64(2.5), f64(1.7)), (0.0, 1.0)),
    "StudentT": (lambda: D.StudentT(f64(3.5), f64(0.5), f64(1.2)), (-300.0, 300.0)),
    "VonMises": (lambda: D.VonMises(f64(2.5), f64(1.7)), (-math.pi, math.pi)),
    "VonMises_flat": (lambda: D.VonMises(f64(0.0), f64(0.05)), (-math.pi, math.pi)),
    "RelaxedBernoulli": (lambda: D.RelaxedBernoulli(f64(0.8), f64(0.3)), (1e-9, 1 - 1e-9)),
    "Pareto": (lambda: D.Pareto(f64(1.5), f64(2.5)), None),
    "GeneralizedPareto": (lambda: D.GeneralizedPareto(f64(0.5), f64(1.5), f64(0.3)), None),
    "GeneralizedPareto_bounded": (
        lambda: D.GeneralizedPareto(f64(0.5), f64(1.5), f64(-0.4)),
        None,
    ),
    "InverseGamma": (lambda: D.InverseGamma(f64(2.5), f64(1.5)), None),
    "Kumaraswamy": (lambda: D.Kumaraswamy(f64(2.0), f64(3.5)), None),
    "FisherSnedecor": (lambda: D.FisherSnedecor(f64(5.0), f64(8.0)), (1e-9, 400.0)),
    "MixtureSameFamily": (
        lambda: D.MixtureSameFamily(
            D.Categorical(f64(0.3, 0.7)), D.Normal(f64(-2.0, 1.0), f64(0.5, 1.0))
        ),
        None,
    ),
}


@pytest.mark.parametrize("name", list(CONTINUOUS), ids=list(CONTINUOUS))
def test_continuous_samples_pass_ks(name):
    build, numeric_range = CONTINUOUS[name]
    dist = build()
    tocha.manual_seed(0)
    samples = dist.sample((N,))
    assert samples.shape == (N,) and samples.dtype == tocha.float64
    assert bool(dist.support.check(samples).all())
    xs = np.sort(samples.numpy())
    if numeric_range is None:
        cdf = dist.cdf(tocha.tensor(xs)).numpy()
    else:
        cdf = _numeric_cdf(dist, *numeric_range)(xs)
    steps = np.arange(1, N + 1) / N
    statistic = max(np.max(steps - cdf), np.max(cdf - (steps - 1 / N)))
    assert statistic < KS_BOUND


MOMENTS = {
    "Normal": lambda: D.Normal(f64(0.7, -2.0), f64(1.8, 0.3)),
    "Gamma": lambda: D.Gamma(f64(0.4, 7.0), f64(2.0, 0.5)),
    "Beta": lambda: D.Beta(f64(0.5, 3.0), f64(2.0, 0.8)),
    "StudentT": lambda: D.StudentT(f64(5.0, 9.0), f64(0.5, 0.0), f64(1.2, 2.0)),
    "Dirichlet": lambda: D.Dirichlet(f64(0.6, 2.0, 3.5)),
    "MultivariateNormal": lambda: D.MultivariateNormal(
        f64(1.0, -1.0, 0.5),
        tocha.tensor([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 1.5]], dtype=tocha.float64),
    ),
    "LowRankMultivariateNormal": lambda: D.LowRankMultivariateNormal(
        f64(1.0, -1.0, 0.5),
        tocha.tensor([[1.0, 0.2], [0.5, -0.3], [0.2, 0.8]], dtype=tocha.float64),
        f64(0.5, 1.0, 0.2),
    ),
    "RelaxedOneHotCategorical": lambda: D.RelaxedOneHotCategorical(f64(0.5), f64(0.2, 0.3, 0.5)),
    "Bernoulli": lambda: D.Bernoulli(f64(0.15, 0.6)),
    "Binomial": lambda: D.Binomial(f64(10.0, 40.0), f64(0.3, 0.85)),
    "Binomial_large": lambda: D.Binomial(f64(1000.0, 3e5), f64(0.5, 0.02)),
    "Poisson": lambda: D.Poisson(f64(0.5, 30.0)),
    "Geometric": lambda: D.Geometric(f64(0.25, 0.9)),
    "Multinomial": lambda: D.Multinomial(8, f64(0.2, 0.3, 0.5)),
    "NegativeBinomial": lambda: D.NegativeBinomial(f64(3.0, 0.7), f64(0.4, 0.8)),
    "LogisticNormal": lambda: D.LogisticNormal(f64(0.3, -0.5), f64(0.8, 1.2)),
    "OneHotCategorical": lambda: D.OneHotCategorical(f64(0.2, 0.3, 0.5)),
}


@pytest.mark.parametrize("name", list(MOMENTS), ids=list(MOMENTS))
def test_sample_moments(name):
    dist = MOMENTS[name]()
    tocha.manual_seed(1)
    samples = dist.sample((N,))
    assert tuple(samples.shape) == (N,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    assert bool(dist.support.check(samples).all())
    x = samples.numpy().astype(np.float64)
    if name in ("RelaxedOneHotCategorical", "LogisticNormal"):  # no closed-form moments
        return
    mean, variance = dist.mean.numpy(), dist.variance.numpy()
    standard_error = np.sqrt(variance / N)
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 5 * standard_error + 1e-12)
    fourth = ((x - x.mean(0)) ** 4).mean(0)
    variance_error = np.sqrt(np.maximum(fourth - x.var(0) ** 2, 0) / N)
    np.testing.assert_array_less(np.abs(x.var(0) - variance), 5 * variance_error + 1e-12)
    if name in ("MultivariateNormal", "LowRankMultivariateNormal"):
        np.testing.assert_allclose(
            np.cov(x.T), dist.covariance_matrix.numpy(), atol=0.06, rtol=0.05
        )


DISCRETE = {
    "Categorical": (lambda: D.Categorical(f64(0.1, 0.2, 0.3, 0.4)), 4),
    "Binomial": (lambda: D.Binomial(f64(12.0), f64(0.35)), 13),
    "Binomial_split": (lambda: D.Binomial(f64(300.0), f64(0.4)), 301),
    "Poisson": (lambda: D.Poisson(f64(3.5)), 30),
    "Geometric": (lambda: D.Geometric(f64(0.3)), 60),
}


@pytest.mark.parametrize("name", list(DISCRETE), ids=list(DISCRETE))
def test_discrete_frequencies_match_the_mass_function(name):
    build, support_size = DISCRETE[name]
    dist = build()
    tocha.manual_seed(2)
    samples = dist.sample((N,)).numpy().astype(np.int64)
    counts = np.bincount(samples, minlength=support_size)[:support_size]
    values = tocha.arange(support_size, dtype=tocha.float64)
    if name == "Categorical":
        values = values.long()
    pmf = np.exp(dist.log_prob(values).numpy())
    standard_error = np.sqrt(pmf * (1 - pmf) / N)
    np.testing.assert_array_less(np.abs(counts / N - pmf), 5 * standard_error + 1e-4)


def test_sampling_follows_manual_seed_and_shapes():
    dist = D.Gamma(f64(0.5, 2.0), f64(1.0, 3.0))
    tocha.manual_seed(7)
    first = dist.sample((3, 4))
    tocha.manual_seed(7)
    second = dist.sample((3, 4))
    assert first.shape == (3, 4, 2)
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    assert not first.requires_grad
    assert D.Normal(0.0, 1.0).sample().shape == ()
    assert D.Dirichlet(tocha.ones(2, 3)).rsample((5,)).shape == (5, 2, 3)
    assert D.Categorical(tocha.ones(2, 3)).sample((4,)).dtype == tocha.int64
