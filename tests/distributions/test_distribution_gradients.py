"""Gradients: log_prob, entropy and cdf pass gradcheck in float64; rsample of the
location-scale and transformed families passes gradcheck with a fixed seed; the implicit
reparameterization gradients of Gamma (and Beta, Dirichlet, Chi2, StudentT through it)
equal torch's and are unbiased for the derivative of the mean."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.autograd import gradcheck

D = tocha.distributions


def f64(values, grad=True):
    return tocha.tensor(values, dtype=tocha.float64, requires_grad=grad)


VALUE = tocha.tensor([0.3, 1.4], dtype=tocha.float64)
UNIT = tocha.tensor([0.2, 0.85], dtype=tocha.float64)
SIMPLEX = tocha.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], dtype=tocha.float64)

# name -> (build(*params), params, the value to score)
LOG_PROB = {
    "Normal": (D.Normal, ([0.1, -0.5], [1.2, 0.7]), VALUE),
    "LogNormal": (D.LogNormal, ([0.1, -0.5], [1.2, 0.7]), VALUE),
    "HalfNormal": (D.HalfNormal, ([1.2, 0.7],), VALUE),
    "Laplace": (D.Laplace, ([0.1, -0.5], [1.2, 0.7]), VALUE),
    "Cauchy": (D.Cauchy, ([0.1, -0.5], [1.2, 0.7]), VALUE),
    "Gumbel": (D.Gumbel, ([0.1, -0.5], [1.2, 0.7]), VALUE),
    "Weibull": (D.Weibull, ([1.2, 0.7], [0.8, 2.1]), VALUE),
    "Exponential": (D.Exponential, ([1.2, 0.7],), VALUE),
    "Gamma": (D.Gamma, ([1.2, 0.7], [0.8, 2.1]), VALUE),
    "Chi2": (D.Chi2, ([1.2, 3.7],), VALUE),
    "Beta": (D.Beta, ([1.2, 0.7], [0.8, 2.1]), UNIT),
    "Dirichlet": (D.Dirichlet, ([[1.2, 0.7, 2.0], [0.5, 3.0, 1.1]],), SIMPLEX),
    "StudentT": (D.StudentT, ([3.2, 1.7], [0.1, -0.5], [1.2, 0.7]), VALUE),
    "VonMises": (D.VonMises, ([0.1, -0.5], [1.2, 0.7]), VALUE),
    "ContinuousBernoulli": (lambda p: D.ContinuousBernoulli(p), ([0.3, 0.8],), UNIT),
    "Bernoulli_logits": (lambda logits: D.Bernoulli(logits=logits), ([0.3, -1.8],), VALUE.round()),
    "Binomial_logits": (
        lambda logits: D.Binomial(4, logits=logits),
        ([0.3, -1.8],),
        VALUE.round() + 1,
    ),
    "Categorical_logits": (
        lambda logits: D.Categorical(logits=logits),
        ([[0.3, -1.8, 0.5], [1.0, 0.0, 2.0]],),
        tocha.tensor([2, 0]),
    ),
    "Poisson": (D.Poisson, ([1.2, 0.7],), VALUE.round()),
    "Geometric": (D.Geometric, ([0.2, 0.7],), VALUE.round()),
    "MultivariateNormal": (
        lambda loc, tril: D.MultivariateNormal(loc, scale_tril=tril.tril()),
        ([0.1, -0.5], [[1.2, 0.0], [0.3, 0.7]]),
        tocha.tensor([[0.3, 1.4], [-0.2, 0.1]], dtype=tocha.float64),
    ),
    "LowRankMultivariateNormal": (
        D.LowRankMultivariateNormal,
        ([0.1, -0.5], [[1.2], [0.3]], [0.5, 0.7]),
        tocha.tensor([[0.3, 1.4], [-0.2, 0.1]], dtype=tocha.float64),
    ),
    "RelaxedBernoulli": (
        lambda t, p: D.RelaxedBernoulli(t, p),
        (0.7, [0.3, 0.8]),
        UNIT,
    ),
    "RelaxedOneHotCategorical": (
        lambda t, p: D.RelaxedOneHotCategorical(t, p),
        (0.7, [[0.3, 0.2, 0.5], [0.1, 0.6, 0.3]]),
        SIMPLEX,
    ),
    "MixtureSameFamily": (
        lambda w, loc, scale: D.MixtureSameFamily(D.Categorical(logits=w), D.Normal(loc, scale)),
        ([0.3, -0.2], [0.1, -0.5], [1.2, 0.7]),
        VALUE,
    ),
}


@pytest.mark.parametrize("name", list(LOG_PROB), ids=list(LOG_PROB))
def test_log_prob_gradcheck(name):
    build, params, value = LOG_PROB[name]
    inputs = tuple(f64(p) for p in params)
    assert gradcheck(lambda *ps: build(*ps).log_prob(value), inputs)


ENTROPY = [
    "Normal",
    "Gamma",
    "Beta",
    "Dirichlet",
    "StudentT",
    "Laplace",
    "Gumbel",
    "Weibull",
    "MultivariateNormal",
    "LowRankMultivariateNormal",
    "ContinuousBernoulli",
    "Categorical_logits",
    "Bernoulli_logits",
    "Binomial_logits",
]


@pytest.mark.parametrize("name", ENTROPY, ids=ENTROPY)
def test_entropy_gradcheck(name):
    build, params, _ = LOG_PROB[name]
    inputs = tuple(f64(p) for p in params)
    assert gradcheck(lambda *ps: build(*ps).entropy(), inputs)


def test_gamma_cdf_gradcheck():
    """Gamma.cdf is differentiable in the value (the density) and in both parameters (the
    derivative of the incomplete gamma function in its shape, computed numerically)."""
    concentration = f64([0.4, 2.5, 30.0])
    rate = f64([1.5, 0.7, 1.0])
    value = f64([0.2, 4.0, 27.0])
    assert gradcheck(lambda c, r, v: D.Gamma(c, r).cdf(v), (concentration, rate, value))


RSAMPLE = {
    "Normal": (D.Normal, ([0.1, -0.5], [1.2, 0.7])),
    "LogNormal": (D.LogNormal, ([0.1, -0.5], [1.2, 0.7])),
    "HalfNormal": (D.HalfNormal, ([1.2, 0.7],)),
    "Laplace": (D.Laplace, ([0.1, -0.5], [1.2, 0.7])),
    "Cauchy": (D.Cauchy, ([0.1, -0.5], [1.2, 0.7])),
    "Exponential": (D.Exponential, ([1.2, 0.7],)),
    "Uniform": (D.Uniform, ([0.1, -0.5], [1.2, 0.7])),
    "Gumbel": (D.Gumbel, ([0.1, -0.5], [1.2, 0.7])),
    "Weibull": (D.Weibull, ([1.2, 0.7], [0.8, 2.1])),
    "ContinuousBernoulli": (lambda p: D.ContinuousBernoulli(p), ([0.3, 0.8],)),
    "MultivariateNormal": (
        lambda loc, tril: D.MultivariateNormal(loc, scale_tril=tril.tril()),
        ([0.1, -0.5], [[1.2, 0.0], [0.3, 0.7]]),
    ),
    "LowRankMultivariateNormal": (
        D.LowRankMultivariateNormal,
        ([0.1, -0.5], [[1.2], [0.3]], [0.5, 0.7]),
    ),
    "RelaxedBernoulli": (lambda t, p: D.RelaxedBernoulli(t, p), (0.7, [0.3, 0.8])),
    "RelaxedOneHotCategorical": (
        lambda t, p: D.RelaxedOneHotCategorical(t, p),
        (0.7, [[0.3, 0.2, 0.5], [0.1, 0.6, 0.3]]),
    ),
}


@pytest.mark.parametrize("name", list(RSAMPLE), ids=list(RSAMPLE))
def test_rsample_gradcheck(name):
    build, params = RSAMPLE[name]
    inputs = tuple(f64(p) for p in params)

    def draw(*ps):
        tocha.manual_seed(3)
        return build(*ps).rsample((4,))

    assert gradcheck(draw, inputs)


def test_standard_gamma_grad_matches_torch(torch):
    """The implicit derivative dx/dalpha of Gamma(alpha, 1) samples, at fixed (alpha, x)."""
    from tocha.distributions._gamma import gamma_sample_grad

    alpha = np.array([0.05, 0.3, 0.3, 1.0, 2.5, 2.5, 10.0, 80.0, 500.0, 2e4])
    x = np.array([1e-8, 0.01, 2.0, 1.0, 0.4, 6.0, 12.5, 75.0, 520.0, 2.01e4])
    ours = gamma_sample_grad(tocha.tensor(alpha), tocha.tensor(x)).numpy()
    theirs = np.asarray(torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)))
    np.testing.assert_allclose(ours, theirs, rtol=2e-3)


IMPLICIT = {
    # name -> (build(param), param, the derivative of the mean in the param)
    "Gamma": (lambda a: D.Gamma(a, 2.0), [0.3, 4.0], lambda a: np.full_like(a, 0.5)),
    "Chi2": (lambda k: D.Chi2(k), [0.8, 5.0], lambda k: np.ones_like(k)),
    "Beta": (
        lambda a: D.Beta(a, tocha.tensor([1.5, 0.6], dtype=tocha.float64)),
        [0.4, 3.0],
        lambda a: np.array([1.5, 0.6]) / (a + np.array([1.5, 0.6])) ** 2,
    ),
    "Dirichlet": (
        lambda a: D.Dirichlet(tocha.stack([a, tocha.ones_like(a)], -1)),
        [0.4, 3.0],
        lambda a: 1.0 / (a + 1.0) ** 2,
    ),
}


@pytest.mark.parametrize("name", list(IMPLICIT), ids=list(IMPLICIT))
def test_implicit_reparameterization_is_unbiased(name):
    """The average of d(sample)/d(param) over many samples is d(mean)/d(param)."""
    build, param, derivative = IMPLICIT[name]
    n = 20000
    a = f64(np.tile(param, (n, 1)))  # one parameter copy per sample: per-sample gradients
    tocha.manual_seed(4)
    samples = build(a).rsample()
    first = samples if samples.dim() == 2 else samples[..., 0]
    (grad,) = tocha.autograd.grad(first.sum(), a)
    per_sample = grad.numpy()
    error = np.abs(per_sample.mean(0) - derivative(np.array(param)))
    np.testing.assert_array_less(error, 5 * per_sample.std(0) / np.sqrt(n))


def test_studentt_rsample_is_differentiable_in_df():
    df = f64([3.0, 8.0])
    tocha.manual_seed(5)
    sample = D.StudentT(df, 0.0, 1.0).rsample((100,))
    (grad,) = tocha.autograd.grad(sample.abs().sum(), df)
    assert np.all(np.isfinite(grad.numpy())) and np.all(grad.numpy() != 0)
