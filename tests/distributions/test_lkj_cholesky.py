"""LKJCholesky against torch (recorded): log_prob over dims and concentrations, batch and
sample shapes, the dim check; without torch: samples lie in the support, and for dim 2 the
correlation's law is the documented Beta((r + 1)/2; eta, eta)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha


def _corr_cholesky(lib, dim):
    rng = np.random.default_rng(dim)
    a = rng.standard_normal((dim, dim))
    c = a @ a.T + dim * np.eye(dim)
    d = np.sqrt(np.diag(c))
    return lib.linalg.cholesky(lib.tensor(c / d[:, None] / d[None, :]))


def _log_probs(lib):
    values = []
    for dim in (2, 3, 5):
        for eta in (0.5, 1.0, 3.0):
            eta_t = lib.tensor(eta, dtype=lib.float64)
            values.append(
                lib.distributions.LKJCholesky(dim, eta_t).log_prob(_corr_cholesky(lib, dim))
            )
    batch = lib.distributions.LKJCholesky(3, lib.tensor([0.5, 2.0], dtype=lib.float64))
    values.extend(batch.log_prob(_corr_cholesky(lib, 3)).unbind())
    return [v.item() for v in values]


def test_log_prob_matches_torch(torch):
    np.testing.assert_allclose(_log_probs(tocha), _log_probs(torch), rtol=1e-12)


def test_shapes_match_torch(torch):
    def shapes(lib):
        m = lib.distributions.LKJCholesky(3, lib.tensor([0.5, 2.0]))
        return [
            list(m.batch_shape),
            list(m.event_shape),
            list(m.sample((4,)).shape),
            list(m.expand((3, 2)).sample().shape),
        ]

    assert shapes(tocha) == shapes(torch)


def test_dim_check(torch):
    for lib in (tocha, torch):
        with pytest.raises(
            ValueError, match="Expected dim to be an integer greater than or equal to 2"
        ):
            lib.distributions.LKJCholesky(1)


def test_samples_are_cholesky_factors_of_correlation_matrices():
    tocha.manual_seed(0)
    samples = tocha.distributions.LKJCholesky(4, 0.7).sample((500,))
    assert bool(tocha.distributions.constraints.corr_cholesky.check(samples).all())
    corr = samples @ samples.mT
    np.testing.assert_allclose(corr.diagonal(dim1=-2, dim2=-1).numpy(), 1.0, rtol=1e-6)


@pytest.mark.parametrize("eta", [0.5, 2.0])
def test_dim_2_correlation_has_the_lkj_marginal(eta):
    """For dim 2, (r + 1)/2 ~ Beta(eta, eta): mean 0 and variance 1/(2 eta + 1) for r."""
    tocha.manual_seed(1)
    samples = tocha.distributions.LKJCholesky(2, eta).sample((40000,)).double()
    r = samples[:, 1, 0]
    assert abs(float(r.mean())) < 0.02
    np.testing.assert_allclose(float(r.var()), 1 / (2 * eta + 1), rtol=0.05)
