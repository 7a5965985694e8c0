"""kl_divergence against torch for the registered pairs, and the registry's dispatch."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.distributions.cases import LOC, PROBS, SCALE, SHAPE_A, SHAPE_B, SIMPLEX, t

COV_P = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 1.5]])
COV_Q = np.array([[1.0, -0.2, 0.0], [-0.2, 2.0, 0.4], [0.0, 0.4, 0.8]])
FACTOR = np.array([[1.0, 0.2], [0.5, -0.3], [0.2, 0.8]])


def _pair(name, lib):
    D = lib.distributions
    pairs = {
        "Normal": lambda: (D.Normal(t(lib, LOC), t(lib, SCALE)), D.Normal(t(lib, -LOC), 1.5)),
        "Bernoulli": lambda: (D.Bernoulli(t(lib, PROBS)), D.Bernoulli(t(lib, PROBS[::-1]))),
        "Categorical": lambda: (
            D.Categorical(t(lib, SIMPLEX)),
            D.Categorical(logits=t(lib, LOC)),
        ),
        "OneHotCategorical": lambda: (
            D.OneHotCategorical(t(lib, SIMPLEX)),
            D.OneHotCategorical(t(lib, SIMPLEX[::-1])),
        ),
        "Beta": lambda: (
            D.Beta(t(lib, SHAPE_A), t(lib, SHAPE_B)),
            D.Beta(t(lib, SHAPE_B), t(lib, SHAPE_A)),
        ),
        "Gamma": lambda: (
            D.Gamma(t(lib, SHAPE_A), t(lib, SHAPE_B)),
            D.Gamma(t(lib, SHAPE_B), t(lib, SCALE)),
        ),
        "Chi2_Gamma": lambda: (D.Chi2(t(lib, SHAPE_A)), D.Gamma(t(lib, SHAPE_B), t(lib, SCALE))),
        "Dirichlet": lambda: (D.Dirichlet(t(lib, SHAPE_A)), D.Dirichlet(t(lib, SHAPE_B))),
        "MultivariateNormal": lambda: (
            D.MultivariateNormal(t(lib, LOC), t(lib, COV_P)),
            D.MultivariateNormal(t(lib, LOC[0]), scale_tril=t(lib, np.linalg.cholesky(COV_Q))),
        ),
        "LowRankMultivariateNormal": lambda: (
            D.LowRankMultivariateNormal(t(lib, LOC), t(lib, FACTOR), t(lib, SCALE)),
            D.LowRankMultivariateNormal(t(lib, LOC[0]), t(lib, -FACTOR), t(lib, SHAPE_A[0])),
        ),
        "Uniform": lambda: (
            D.Uniform(t(lib, LOC), t(lib, LOC + SCALE)),
            D.Uniform(t(lib, LOC - 1), t(lib, LOC + SCALE * [[2, 0.5, 2], [2, 2, 0.5]])),
        ),
        "Exponential": lambda: (D.Exponential(t(lib, SCALE)), D.Exponential(t(lib, SHAPE_A))),
        "Laplace": lambda: (
            D.Laplace(t(lib, LOC), t(lib, SCALE)),
            D.Laplace(t(lib, -LOC), t(lib, SHAPE_A)),
        ),
        "Cauchy": lambda: (
            D.Cauchy(t(lib, LOC), t(lib, SCALE)),
            D.Cauchy(t(lib, -LOC), t(lib, SHAPE_A)),
        ),
        "Poisson": lambda: (D.Poisson(t(lib, SHAPE_A)), D.Poisson(t(lib, SHAPE_B))),
        "Geometric": lambda: (D.Geometric(t(lib, PROBS)), D.Geometric(t(lib, PROBS[::-1]))),
        "Binomial": lambda: (
            D.Binomial(t(lib, [[5, 7, 9], [6, 5, 8]]), t(lib, PROBS)),
            D.Binomial(t(lib, [[5, 6, 9], [6, 5, 8]]), t(lib, PROBS[::-1])),
        ),
        "HalfNormal": lambda: (D.HalfNormal(t(lib, SCALE)), D.HalfNormal(t(lib, SHAPE_A))),
        "LogNormal": lambda: (
            D.LogNormal(t(lib, LOC), t(lib, SCALE)),
            D.LogNormal(t(lib, -LOC), t(lib, SHAPE_A)),
        ),
        "Independent": lambda: (
            D.Independent(D.Normal(t(lib, LOC), t(lib, SCALE)), 1),
            D.Independent(D.Normal(t(lib, -LOC), t(lib, SHAPE_A)), 1),
        ),
        "Uniform_Normal": lambda: (
            D.Uniform(t(lib, LOC), t(lib, LOC + SCALE)),
            D.Normal(t(lib, -LOC), t(lib, SHAPE_A)),
        ),
        "Exponential_Normal": lambda: (D.Exponential(t(lib, SCALE)), D.Normal(t(lib, LOC), 1.5)),
        "Gamma_Normal": lambda: (
            D.Gamma(t(lib, SHAPE_A), t(lib, SHAPE_B)),
            D.Normal(t(lib, LOC), t(lib, SCALE)),
        ),
        "Beta_Normal": lambda: (
            D.Beta(t(lib, SHAPE_A), t(lib, SHAPE_B)),
            D.Normal(t(lib, LOC), t(lib, SCALE)),
        ),
        "Laplace_Normal": lambda: (
            D.Laplace(t(lib, LOC), t(lib, SCALE)),
            D.Normal(t(lib, -LOC), t(lib, SHAPE_A)),
        ),
        "Normal_Laplace": lambda: (
            D.Normal(t(lib, LOC), t(lib, SCALE)),
            D.Laplace(t(lib, -LOC), t(lib, SHAPE_A)),
        ),
        "Exponential_Gamma": lambda: (
            D.Exponential(t(lib, SCALE)),
            D.Gamma(t(lib, SHAPE_A), t(lib, SHAPE_B)),
        ),
        "Gamma_Exponential": lambda: (
            D.Gamma(t(lib, SHAPE_A), t(lib, SHAPE_B)),
            D.Exponential(t(lib, SCALE)),
        ),
        "Bernoulli_Poisson": lambda: (D.Bernoulli(t(lib, PROBS)), D.Poisson(t(lib, SHAPE_A))),
        "LowRank_MultivariateNormal": lambda: (
            D.LowRankMultivariateNormal(t(lib, LOC), t(lib, FACTOR), t(lib, SCALE)),
            D.MultivariateNormal(t(lib, -LOC), t(lib, np.stack([COV_Q, COV_P]))),
        ),
        "MultivariateNormal_LowRank": lambda: (
            D.MultivariateNormal(t(lib, LOC), t(lib, COV_P)),
            D.LowRankMultivariateNormal(t(lib, LOC[0]), t(lib, -FACTOR), t(lib, SHAPE_A[0])),
        ),
        "ContinuousBernoulli_expfamily": lambda: (
            D.ContinuousBernoulli(t(lib, PROBS)),
            D.ContinuousBernoulli(t(lib, PROBS[::-1])),
        ),
    }
    return pairs[name]()


NAMES = [
    "Normal",
    "Bernoulli",
    "Categorical",
    "OneHotCategorical",
    "Beta",
    "Gamma",
    "Chi2_Gamma",
    "Dirichlet",
    "MultivariateNormal",
    "LowRankMultivariateNormal",
    "Uniform",
    "Exponential",
    "Laplace",
    "Cauchy",
    "Poisson",
    "Geometric",
    "Binomial",
    "HalfNormal",
    "LogNormal",
    "Independent",
    "ContinuousBernoulli_expfamily",
    "Uniform_Normal",
    "Exponential_Normal",
    "Gamma_Normal",
    "Beta_Normal",
    "Laplace_Normal",
    "Normal_Laplace",
    "Exponential_Gamma",
    "Gamma_Exponential",
    "Bernoulli_Poisson",
    "LowRank_MultivariateNormal",
    "MultivariateNormal_LowRank",
]


@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_kl_matches_torch(torch, name):
    results = []
    for lib in (tocha, torch):
        p, q = _pair(name, lib)
        results.append(np.asarray(lib.distributions.kl_divergence(p, q)))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-7, atol=1e-10)


ERRORS = {
    "unregistered": lambda D, lib: D.kl_divergence(D.VonMises(0.0, 1.0), D.Normal(0.0, 1.0)),
    "mvn_event_shapes": lambda D, lib: D.kl_divergence(
        D.MultivariateNormal(lib.zeros(2), lib.eye(2)),
        D.MultivariateNormal(lib.zeros(3), lib.eye(3)),
    ),
    "lowrank_event_shapes": lambda D, lib: D.kl_divergence(
        D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), lib.ones(2)),
        D.LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(3)),
    ),
    "mixed_rank_event_shapes": lambda D, lib: D.kl_divergence(
        D.MultivariateNormal(lib.zeros(2), lib.eye(2)),
        D.LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(3)),
    ),
    "cross_exponential_families": lambda D, lib: D.kl_divergence(D.Beta(2.0, 3.0), D.Poisson(1.0)),
    "binomial_counts": lambda D, lib: D.kl_divergence(
        D.Binomial(3, lib.tensor([0.5])), D.Binomial(5, lib.tensor([0.5]))
    ),
    "register_not_a_type": lambda D, lib: D.register_kl(1, D.Normal),
}


@pytest.mark.parametrize("name", list(ERRORS), ids=list(ERRORS))
def test_kl_errors_match_torch(torch, name):
    def error(lib):
        with pytest.raises(Exception) as info:
            ERRORS[name](lib.distributions, lib)
        return type(info.value).__name__, str(info.value).replace("torch.", "tocha.")

    assert error(tocha) == error(torch)


def test_register_kl_dispatches_to_the_most_specific_pair():
    D = tocha.distributions

    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    inherited = float(D.kl_divergence(D.Normal(0.0, 1.0), q))
    assert float(D.kl_divergence(p, q)) == pytest.approx(inherited)

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return tocha.tensor(42.0)

    assert float(D.kl_divergence(p, q)) == 42.0
    assert float(D.kl_divergence(q, p)) != 42.0


def test_kl_gradients_flow():
    loc = tocha.tensor([0.3, -0.2], dtype=tocha.float64, requires_grad=True)
    scale = tocha.tensor([1.2, 0.7], dtype=tocha.float64, requires_grad=True)

    def kl(loc, scale):
        D = tocha.distributions
        return D.kl_divergence(D.Normal(loc, scale), D.Normal(0.0, 1.0))

    assert tocha.autograd.gradcheck(kl, (loc, scale))
