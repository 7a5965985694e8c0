"""Each distribution class lives in the submodule PyTorch's does, so that programs importing
it from there (``from torch.distributions.chi2 import Chi2``) run on tocha."""

from __future__ import annotations

import importlib
import inspect

import pytest

import tocha.distributions as D

# PyTorch's submodule of each class (torch.distributions.<module>), read from PyTorch 2.13.
MODULES = {
    "bernoulli": ["Bernoulli"],
    "beta": ["Beta"],
    "binomial": ["Binomial"],
    "categorical": ["Categorical"],
    "cauchy": ["Cauchy"],
    "chi2": ["Chi2"],
    "continuous_bernoulli": ["ContinuousBernoulli"],
    "dirichlet": ["Dirichlet"],
    "exp_family": ["ExponentialFamily"],
    "exponential": ["Exponential"],
    "fishersnedecor": ["FisherSnedecor"],
    "gamma": ["Gamma"],
    "generalized_pareto": ["GeneralizedPareto"],
    "geometric": ["Geometric"],
    "gumbel": ["Gumbel"],
    "half_cauchy": ["HalfCauchy"],
    "half_normal": ["HalfNormal"],
    "independent": ["Independent"],
    "inverse_gamma": ["InverseGamma"],
    "kumaraswamy": ["Kumaraswamy"],
    "laplace": ["Laplace"],
    "lkj_cholesky": ["LKJCholesky"],
    "log_normal": ["LogNormal"],
    "logistic_normal": ["LogisticNormal"],
    "lowrank_multivariate_normal": ["LowRankMultivariateNormal"],
    "mixture_same_family": ["MixtureSameFamily"],
    "multinomial": ["Multinomial"],
    "multivariate_normal": ["MultivariateNormal"],
    "negative_binomial": ["NegativeBinomial"],
    "normal": ["Normal"],
    "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"],
    "pareto": ["Pareto"],
    "poisson": ["Poisson"],
    "relaxed_bernoulli": ["RelaxedBernoulli"],
    "relaxed_categorical": ["RelaxedOneHotCategorical"],
    "studentT": ["StudentT"],
    "transformed_distribution": ["TransformedDistribution"],
    "transforms": [
        "AbsTransform",
        "AffineTransform",
        "CatTransform",
        "ComposeTransform",
        "CorrCholeskyTransform",
        "CumulativeDistributionTransform",
        "ExpTransform",
        "IndependentTransform",
        "LowerCholeskyTransform",
        "PositiveDefiniteTransform",
        "PowerTransform",
        "ReshapeTransform",
        "SigmoidTransform",
        "SoftmaxTransform",
        "SoftplusTransform",
        "StackTransform",
        "StickBreakingTransform",
        "TanhTransform",
        "Transform",
    ],
    "uniform": ["Uniform"],
    "von_mises": ["VonMises"],
    "weibull": ["Weibull"],
    "wishart": ["Wishart"],
}


@pytest.mark.parametrize("module, names", MODULES.items(), ids=list(MODULES))
def test_classes_import_from_torchs_submodule(module, names):
    found = importlib.import_module(f"tocha.distributions.{module}")
    for name in names:
        assert getattr(found, name) is getattr(D, name)
        assert getattr(D, name).__module__ == f"tocha.distributions.{module}"


def test_every_class_is_in_the_table():
    classes = {n for n in D.__all__ if inspect.isclass(getattr(D, n)) and n != "Distribution"}
    assert classes == {name for names in MODULES.values() for name in names}


@pytest.mark.parametrize("module, names", MODULES.items(), ids=list(MODULES))
def test_table_matches_live_torch(module, names):
    torch = pytest.importorskip("torch")
    for name in names:
        assert getattr(torch.distributions, name).__module__ == f"torch.distributions.{module}"
