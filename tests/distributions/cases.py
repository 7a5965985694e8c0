"""The distributions the tests build, each in either library (`lib` is tocha or the torch
fixture), from fixed float64 parameters, with points of its support to evaluate."""

from __future__ import annotations

import numpy as np

LOC = np.array([[0.3, -1.2, 2.0], [0.0, 0.7, -0.4]])
SCALE = np.array([[0.5, 1.3, 2.1], [0.9, 1.7, 0.6]])
SHAPE_A = np.array([[0.4, 1.0, 2.5], [3.7, 0.8, 6.0]])
SHAPE_B = np.array([[1.5, 0.6, 2.0], [0.9, 4.0, 1.2]])
PROBS = np.array([[0.2, 0.55, 0.9], [0.35, 0.05, 0.7]])
SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
COV = np.array([[[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 1.5]]])
FACTOR = np.array([[1.0, 0.2], [0.5, -0.3], [0.2, 0.8]])

REALS = np.array([[[0.1, -2.0, 1.5], [3.0, 0.2, -0.7]], [[-0.3, 0.9, 2.2], [0.0, -1.1, 0.4]]])
POSITIVES = np.abs(REALS) + 0.15
UNITS = np.array([[[0.1, 0.45, 0.8], [0.3, 0.95, 0.6]], [[0.55, 0.02, 0.25], [0.7, 0.4, 0.99]]])
COUNTS = np.array([[[0.0, 3.0, 1.0], [2.0, 5.0, 0.0]], [[4.0, 1.0, 2.0], [1.0, 0.0, 3.0]]])
BITS = np.array([[[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
INDICES = np.array([[0, 2], [1, 1], [2, 0]])
ANGLES = np.array([[[0.1, -2.0, 1.5], [3.0, 0.2, -0.7]], [[-3.1, 0.9, 2.2], [0.0, -1.1, 0.4]]])


def t(lib, array):
    return lib.tensor(np.array(array, dtype=np.float64))


def _simplex_points():
    raw = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25], [0.3, 0.3, 0.4], [0.05, 0.9, 0.05]])
    return raw.reshape(2, 2, 3)


def _mvn_points():
    return np.array([[0.1, -0.5, 1.0], [2.0, 0.3, -1.2], [0.0, 0.0, 0.0], [-1.0, 1.5, 0.4]])


# name -> (builder(lib) -> distribution, points of its support (numpy))
CASES = {
    "Normal": (lambda lib: lib.distributions.Normal(t(lib, LOC), t(lib, SCALE)), REALS),
    "LogNormal": (lambda lib: lib.distributions.LogNormal(t(lib, LOC), t(lib, SCALE)), POSITIVES),
    "HalfNormal": (lambda lib: lib.distributions.HalfNormal(t(lib, SCALE)), POSITIVES),
    "HalfCauchy": (lambda lib: lib.distributions.HalfCauchy(t(lib, SCALE)), POSITIVES),
    "Cauchy": (lambda lib: lib.distributions.Cauchy(t(lib, LOC), t(lib, SCALE)), REALS),
    "Laplace": (lambda lib: lib.distributions.Laplace(t(lib, LOC), t(lib, SCALE)), REALS),
    "Exponential": (lambda lib: lib.distributions.Exponential(t(lib, SCALE)), POSITIVES),
    "Uniform": (
        lambda lib: lib.distributions.Uniform(t(lib, LOC - 3.5), t(lib, LOC + SCALE + 3.5)),
        REALS,
    ),
    "Gumbel": (lambda lib: lib.distributions.Gumbel(t(lib, LOC), t(lib, SCALE)), REALS),
    "Weibull": (lambda lib: lib.distributions.Weibull(t(lib, SCALE), t(lib, SHAPE_A)), POSITIVES),
    "Gamma": (lambda lib: lib.distributions.Gamma(t(lib, SHAPE_A), t(lib, SHAPE_B)), POSITIVES),
    "Chi2": (lambda lib: lib.distributions.Chi2(t(lib, SHAPE_A * 2)), POSITIVES),
    "Beta": (lambda lib: lib.distributions.Beta(t(lib, SHAPE_A), t(lib, SHAPE_B)), UNITS),
    "Dirichlet": (lambda lib: lib.distributions.Dirichlet(t(lib, SHAPE_A)), _simplex_points()),
    "StudentT": (
        lambda lib: lib.distributions.StudentT(t(lib, SHAPE_A * 2), t(lib, LOC), t(lib, SCALE)),
        REALS,
    ),
    "VonMises": (lambda lib: lib.distributions.VonMises(t(lib, LOC), t(lib, SHAPE_A)), ANGLES),
    "ContinuousBernoulli": (
        lambda lib: lib.distributions.ContinuousBernoulli(
            t(lib, [[0.2, 0.4995, 0.9], [0.35, 0.05, 0.5004]])
        ),
        UNITS,
    ),
    "Bernoulli": (lambda lib: lib.distributions.Bernoulli(t(lib, PROBS)), BITS),
    "Bernoulli_logits": (lambda lib: lib.distributions.Bernoulli(logits=t(lib, LOC)), BITS),
    "Categorical": (lambda lib: lib.distributions.Categorical(t(lib, SIMPLEX * 3)), INDICES),
    "Categorical_logits": (
        lambda lib: lib.distributions.Categorical(logits=t(lib, LOC)),
        INDICES,
    ),
    "OneHotCategorical": (
        lambda lib: lib.distributions.OneHotCategorical(t(lib, SIMPLEX)),
        np.eye(3)[INDICES],
    ),
    "Binomial": (
        lambda lib: lib.distributions.Binomial(t(lib, [[5, 7, 9], [6, 5, 8]]), t(lib, PROBS)),
        COUNTS,
    ),
    "Binomial_logits": (
        lambda lib: lib.distributions.Binomial(5, logits=t(lib, LOC)),
        COUNTS,
    ),
    "Multinomial": (
        lambda lib: lib.distributions.Multinomial(6, t(lib, SIMPLEX)),
        np.array([[[1.0, 2.0, 3.0], [0.0, 6.0, 0.0]], [[2.0, 2.0, 2.0], [4.0, 1.0, 1.0]]]),
    ),
    "Poisson": (lambda lib: lib.distributions.Poisson(t(lib, SHAPE_A)), COUNTS),
    "Geometric": (lambda lib: lib.distributions.Geometric(t(lib, PROBS)), COUNTS),
    "MultivariateNormal": (
        lambda lib: lib.distributions.MultivariateNormal(t(lib, LOC[:, None, :]), t(lib, COV)),
        _mvn_points(),
    ),
    "MultivariateNormal_precision": (
        lambda lib: lib.distributions.MultivariateNormal(
            t(lib, LOC[0]), precision_matrix=t(lib, COV)
        ),
        _mvn_points(),
    ),
    "MultivariateNormal_tril": (
        lambda lib: lib.distributions.MultivariateNormal(
            t(lib, LOC[0]), scale_tril=t(lib, np.linalg.cholesky(COV[0]))
        ),
        _mvn_points(),
    ),
    "LowRankMultivariateNormal": (
        lambda lib: lib.distributions.LowRankMultivariateNormal(
            t(lib, LOC), t(lib, FACTOR), t(lib, SCALE)
        ),
        _mvn_points()[:, None, :],
    ),
    "Independent": (
        lambda lib: lib.distributions.Independent(
            lib.distributions.Normal(t(lib, LOC), t(lib, SCALE)), 1
        ),
        REALS,
    ),
    "MixtureSameFamily": (
        lambda lib: lib.distributions.MixtureSameFamily(
            lib.distributions.Categorical(t(lib, SIMPLEX)),
            lib.distributions.Normal(t(lib, LOC), t(lib, SCALE)),
        ),
        REALS[..., 0],
    ),
    "MixtureSameFamily_mvn": (
        lambda lib: lib.distributions.MixtureSameFamily(
            lib.distributions.Categorical(t(lib, SIMPLEX[0, :2])),
            lib.distributions.MultivariateNormal(
                t(lib, LOC), scale_tril=t(lib, np.linalg.cholesky(COV))
            ),
        ),
        _mvn_points(),
    ),
    "RelaxedBernoulli": (
        lambda lib: lib.distributions.RelaxedBernoulli(t(lib, 0.7), t(lib, PROBS)),
        UNITS,
    ),
    "RelaxedOneHotCategorical": (
        lambda lib: lib.distributions.RelaxedOneHotCategorical(t(lib, 0.6), t(lib, SIMPLEX)),
        _simplex_points(),
    ),
    "Pareto": (lambda lib: lib.distributions.Pareto(t(lib, SCALE), t(lib, SHAPE_A)), POSITIVES + 2),
    "InverseGamma": (
        lambda lib: lib.distributions.InverseGamma(t(lib, SHAPE_A), t(lib, SHAPE_B)),
        POSITIVES,
    ),
    "NegativeBinomial": (
        lambda lib: lib.distributions.NegativeBinomial(t(lib, SHAPE_A), t(lib, PROBS)),
        COUNTS,
    ),
    "NegativeBinomial_logits": (
        lambda lib: lib.distributions.NegativeBinomial(3.0, logits=t(lib, LOC)),
        COUNTS,
    ),
    "FisherSnedecor": (
        lambda lib: lib.distributions.FisherSnedecor(t(lib, SHAPE_A * 2), t(lib, SHAPE_B * 4)),
        POSITIVES,
    ),
    "Kumaraswamy": (
        lambda lib: lib.distributions.Kumaraswamy(t(lib, SHAPE_A), t(lib, SHAPE_B)),
        UNITS,
    ),
    "LogisticNormal": (
        lambda lib: lib.distributions.LogisticNormal(t(lib, LOC[:, :2]), t(lib, SCALE[:, :2])),
        _simplex_points(),
    ),
    # float32: torch 2.13's GeneralizedPareto fails on float64 ("Double did not match Float")
    "GeneralizedPareto": (
        lambda lib: lib.distributions.GeneralizedPareto(
            *(t(lib, p).float() for p in (LOC - 0.5, SCALE, [[0.3, 0.0, 0.7], [-0.1, 1.2, 0.55]]))
        ),
        (POSITIVES + 1.8).astype(np.float32),
    ),
    "Normal_scalar": (lambda lib: lib.distributions.Normal(0.5, 2.0), REALS),
    "Gamma_scalar": (lambda lib: lib.distributions.Gamma(2.0, 1.5), POSITIVES),
    "Bernoulli_scalar": (lambda lib: lib.distributions.Bernoulli(0.3), BITS),
    "Uniform_scalar": (lambda lib: lib.distributions.Uniform(-4.0, 4.0), REALS),
    "Beta_scalar": (lambda lib: lib.distributions.Beta(2.0, 3.0), UNITS),
    "TransformedDistribution": (
        lambda lib: lib.distributions.TransformedDistribution(
            lib.distributions.Normal(t(lib, LOC), t(lib, SCALE)),
            [
                lib.distributions.transforms.AffineTransform(t(lib, LOC), t(lib, SCALE)),
                lib.distributions.transforms.SigmoidTransform(),
            ],
        ),
        UNITS,
    ),
}
