"""Wishart against torch (recorded): log_prob, entropy, mean, variance, mode and the three
matrix forms, for each parametrisation; shapes of samples and expand; the df check; and,
without torch, sample moments, rsample gradients and the exponential-family entropy."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

RNG = np.random.default_rng(0)
_A = RNG.standard_normal((2, 3, 3))
COV = _A @ _A.transpose(0, 2, 1) + 3 * np.eye(3)
_B = RNG.standard_normal((3, 3))
POINT = _B @ _B.T + np.eye(3)
DF = np.array([4.5, 7.0])


def _build(lib, kind):
    cov = lib.tensor(COV)
    matrix = lib.linalg.cholesky(cov) if kind == "scale_tril" else cov
    if kind == "precision_matrix":
        matrix = lib.linalg.inv(cov)
    return lib.distributions.Wishart(lib.tensor(DF), **{kind: matrix})


def _values(lib, kind):
    w = _build(lib, kind)
    x = lib.tensor(POINT)
    return [
        w.log_prob(x),
        w.entropy(),
        w.mean,
        w.variance,
        w.mode,
        w.covariance_matrix,
        w.precision_matrix,
        w.scale_tril,
    ]


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_values_match_torch(torch, kind):
    for ours, theirs in zip(_values(tocha, kind), _values(torch, kind), strict=True):
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_shapes_and_attributes_match_torch(torch):
    def shapes(lib):
        w = _build(lib, "covariance_matrix")
        wide = w.expand((4, 2))
        return [
            list(w.batch_shape),
            list(w.event_shape),
            list(w.sample((5,)).shape),
            list(wide.batch_shape),
            list(wide.rsample().shape),
            list(wide.df.shape),
            w.has_rsample,
        ]

    assert shapes(tocha) == shapes(torch)


def test_df_and_argument_checks(torch):
    for lib in (tocha, torch):
        with pytest.raises(ValueError, match=r"expected to be greater than ndim - 1 = 2\."):
            lib.distributions.Wishart(lib.tensor([2.0, 1.5]), covariance_matrix=lib.eye(3))
        with pytest.raises(AssertionError, match="Exactly one of covariance_matrix"):
            lib.distributions.Wishart(lib.tensor(5.0))
        with pytest.raises(ValueError, match="scale_tril must be at least two-dimensional"):
            lib.distributions.Wishart(lib.tensor(5.0), covariance_matrix=lib.ones(3))


def test_sample_mean_is_df_times_covariance():
    tocha.manual_seed(0)
    w = tocha.distributions.Wishart(tocha.tensor(6.0), covariance_matrix=tocha.tensor(COV[0]))
    samples = w.sample((20000,))
    np.testing.assert_allclose(samples.mean(0).numpy(), 6.0 * COV[0], rtol=0.05, atol=0.3)
    assert bool(tocha.linalg.cholesky_ex(samples).info.eq(0).all())


def test_rsample_carries_gradients_to_the_parameters():
    tril = tocha.linalg.cholesky(tocha.tensor(COV[0])).requires_grad_()
    df = tocha.tensor(5.0, dtype=tocha.float64, requires_grad=True)
    tocha.manual_seed(1)
    sample = tocha.distributions.Wishart(df, scale_tril=tril).rsample()
    sample.trace().backward()
    assert tril.grad is not None and bool(tril.grad.abs().sum() > 0)
    assert df.grad is not None and bool(df.grad.abs() > 0)


def test_entropy_agrees_with_the_exponential_family_form():
    w = _build(tocha, "covariance_matrix")
    generic = tocha.distributions.ExponentialFamily.entropy(w)
    np.testing.assert_allclose(generic.detach().numpy(), w.entropy().numpy(), rtol=1e-10)
