"""validate_args: argument and sample checks raise torch's errors with torch's messages;
set_default_validate_args; constructor errors."""

from __future__ import annotations

import pytest

import tocha


def _t(lib, values):
    return lib.tensor(values, dtype=lib.float64)


ERRORS = {
    "normal_scale": lambda D, lib: D.Normal(_t(lib, [0.0, 1.0]), _t(lib, [1.0, -1.0])),
    "normal_scale_scalar": lambda D, lib: D.Normal(0.0, 0.0),
    "normal_loc_nan": lambda D, lib: D.Normal(_t(lib, [float("nan")]), _t(lib, [1.0])),
    "uniform_bounds": lambda D, lib: D.Uniform(_t(lib, [1.0]), _t(lib, [0.0])),
    "bernoulli_probs": lambda D, lib: D.Bernoulli(_t(lib, [0.2, 1.5])),
    "bernoulli_both": lambda D, lib: D.Bernoulli(probs=0.5, logits=0.0),
    "bernoulli_neither": lambda D, lib: D.Bernoulli(),
    "categorical_simplex": lambda D, lib: D.Categorical(_t(lib, [0.2, -0.5])),
    "categorical_scalar": lambda D, lib: D.Categorical(_t(lib, 0.5)),
    "dirichlet_scalar": lambda D, lib: D.Dirichlet(_t(lib, 0.5)),
    "dirichlet_concentration": lambda D, lib: D.Dirichlet(_t(lib, [1.0, 0.0])),
    "gamma_rate": lambda D, lib: D.Gamma(_t(lib, [1.0]), _t(lib, [-2.0])),
    "beta_concentration": lambda D, lib: D.Beta(_t(lib, [1.0]), _t(lib, [0.0])),
    "poisson_rate": lambda D, lib: D.Poisson(_t(lib, [-1.0])),
    "binomial_count": lambda D, lib: D.Binomial(_t(lib, [2.5]), _t(lib, [0.5])),
    "geometric_zero": lambda D, lib: D.Geometric(_t(lib, [0.0, 0.5])),
    "mvn_loc_scalar": lambda D, lib: D.MultivariateNormal(_t(lib, 0.0), lib.eye(1)),
    "mvn_two_matrices": lambda D, lib: D.MultivariateNormal(
        lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2)
    ),
    "mvn_not_pd": lambda D, lib: D.MultivariateNormal(
        _t(lib, [0.0, 0.0]), _t(lib, [[1.0, 2.0], [2.0, 1.0]])
    ),
    "lowrank_factor_shape": lambda D, lib: D.LowRankMultivariateNormal(
        lib.zeros(3), lib.ones(2, 1), lib.ones(3)
    ),
    "independent_ndims": lambda D, lib: D.Independent(D.Normal(lib.zeros(2), lib.ones(2)), 2),
    "mixture_not_categorical": lambda D, lib: D.MixtureSameFamily(
        D.Normal(0.0, 1.0), D.Normal(lib.zeros(2), lib.ones(2))
    ),
    "mixture_components": lambda D, lib: D.MixtureSameFamily(
        D.Categorical(lib.ones(3)), D.Normal(lib.zeros(2), lib.ones(2))
    ),
    "log_prob_support": lambda D, lib: D.Exponential(_t(lib, [1.0])).log_prob(_t(lib, [-1.0])),
    "log_prob_not_tensor": lambda D, lib: D.Normal(0.0, 1.0).log_prob(0.5),
    "log_prob_event_shape": lambda D, lib: D.Dirichlet(lib.ones(3)).log_prob(lib.ones(2) / 2),
    "log_prob_broadcast": lambda D, lib: D.Normal(lib.zeros(3), lib.ones(3)).log_prob(lib.zeros(2)),
    "log_prob_categorical": lambda D, lib: D.Categorical(lib.ones(3)).log_prob(lib.tensor([3])),
    "log_prob_bernoulli": lambda D, lib: D.Bernoulli(0.3).log_prob(_t(lib, 0.5)),
    "cdf_support": lambda D, lib: D.Gamma(_t(lib, [1.0]), 1.0).cdf(_t(lib, [-1.0])),
    "mean_not_implemented": lambda D, lib: D.VonMises(0.0, 1.0).entropy(),
    "transformed_mean": lambda D, lib: D.LogisticNormal(lib.zeros(2), 1.0).mean,
    "lkj_variance": lambda D, lib: D.LKJCholesky(3, 1.5).variance,
    "rsample_not_implemented": lambda D, lib: D.Poisson(_t(lib, [1.0])).rsample(),
    "multinomial_count": lambda D, lib: D.Multinomial(_t(lib, 3), _t(lib, [0.5, 0.5])),
    "transformed_not_transform": lambda D, lib: D.TransformedDistribution(D.Normal(0.0, 1.0), 3),
    "expand_custom_init": lambda D, lib: D.Normal.expand(D.LogNormal(0.0, 1.0), (2,)),
    "continuous_bernoulli_probs": lambda D, lib: D.ContinuousBernoulli(
        _t(lib, [1.5]), validate_args=True
    ),
    "negative_binomial_count": lambda D, lib: D.NegativeBinomial(_t(lib, [-1.0]), _t(lib, [0.5])),
    "pareto_support": lambda D, lib: D.Pareto(_t(lib, [2.0]), _t(lib, [1.0])).log_prob(
        _t(lib, [1.0])
    ),
    "kumaraswamy_support": lambda D, lib: D.Kumaraswamy(_t(lib, [2.0]), 1.0).log_prob(
        _t(lib, [1.5])
    ),
    "logistic_normal_support": lambda D, lib: D.LogisticNormal(lib.zeros(2), 1.0).log_prob(
        _t(lib, [0.5, 0.6, 0.1])
    ),
    "default_validate_args": lambda D, lib: D.Distribution.set_default_validate_args(3),
    "broadcast_all_not_a_number": lambda D, lib: D.utils.broadcast_all(lib.ones(2), "a"),
}


def _error(lib, name):
    with pytest.raises(Exception) as info:
        ERRORS[name](lib.distributions, lib)
    return type(info.value).__name__, str(info.value).replace("torch.", "tocha.")


@pytest.mark.parametrize("name", list(ERRORS), ids=list(ERRORS))
def test_errors_match_torch(torch, name):
    assert _error(tocha, name) == _error(torch, name)


def test_validate_args_false_skips_checks():
    D = tocha.distributions
    d = D.Normal(tocha.tensor([0.0]), tocha.tensor([-1.0]), validate_args=False)
    assert d.log_prob(tocha.tensor([0.0])).shape == (1,)
    assert float(D.Exponential(1.0, validate_args=False).log_prob(tocha.tensor(-1.0))) == 1.0


def test_set_default_validate_args():
    D = tocha.distributions
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(0.0, -1.0)  # no error
        with pytest.raises(ValueError):
            D.Normal(0.0, -1.0, validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_base_distribution_defaults():
    D = tocha.distributions
    d = D.Distribution(validate_args=False)
    assert d.batch_shape == () and d.event_shape == ()
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        _ = d.mode
    for attribute in ("mean", "variance", "stddev"):  # PyTorch 2.13's say nothing
        with pytest.raises(NotImplementedError) as info:
            getattr(d, attribute)
        assert str(info.value) == ""
    with pytest.raises(NotImplementedError):
        d.rsample()
    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        D.Distribution(validate_args=True)
