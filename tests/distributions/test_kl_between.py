"""kl_divergence between different families against torch: every pair PyTorch registers,
with parameters where p's support sits inside q's and where it does not (infinite), the
shape of the result, and its gradients with respect to both distributions' parameters."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

# each family's parameters, shape (2, 3), chosen so that supports nest for some elements only
PARAMS = {
    "Beta": ([[0.5, 2.0, 3.0], [1.2, 0.7, 4.0]], [[1.5, 0.7, 3.0], [2.0, 5.0, 0.9]]),
    "ContinuousBernoulli": ([[0.2, 0.5, 0.8], [0.35, 0.05, 0.45]],),
    "Exponential": ([[0.5, 2.0, 1.0], [3.0, 0.7, 1.5]],),
    "Gamma": ([[0.5, 2.0, 3.0], [1.0, 4.0, 0.8]], [[1.0, 2.0, 0.5], [3.0, 0.6, 1.2]]),
    "Chi2": ([[1.0, 2.5, 4.0], [3.0, 0.8, 6.0]],),
    "Pareto": ([[0.5, 1.0, 2.0], [0.1, 2.0, 0.3]], [[3.0, 2.5, 1.5], [0.8, 1.2, 4.0]]),
    "Uniform": ([[0.0, 0.2, -1.0], [0.5, 2.0, 0.1]], [[1.0, 0.7, 2.0], [1.0, 3.0, 0.9]]),
    "Normal": ([[0.0, 1.0, -1.0], [0.5, -0.3, 2.0]], [[1.0, 0.5, 2.0], [0.3, 1.4, 0.8]]),
    "Gumbel": ([[0.2, 1.0, -1.0], [0.0, 2.0, -0.5]], [[1.0, 0.5, 2.0], [0.7, 1.3, 0.4]]),
    "Laplace": ([[0.0, 1.0, -1.0], [0.5, -0.3, 2.0]], [[1.0, 0.5, 2.0], [0.3, 1.4, 0.8]]),
    "Poisson": ([[0.5, 2.0, 1.0], [3.0, 0.7, 1.5]],),
    "Bernoulli": ([[0.2, 0.5, 0.8], [0.35, 0.05, 0.7]],),
    "Binomial": ([[3.0, 5.0, 10.0], [1.0, 2.0, 4.0]], [[0.2, 0.5, 0.8], [0.35, 0.05, 0.7]]),
}

PAIRS = [
    ("Beta", "ContinuousBernoulli"),
    ("Beta", "Exponential"),
    ("Beta", "Gamma"),
    ("Beta", "Pareto"),
    ("Beta", "Uniform"),
    ("ContinuousBernoulli", "ContinuousBernoulli"),
    ("ContinuousBernoulli", "Exponential"),
    ("ContinuousBernoulli", "Normal"),
    ("ContinuousBernoulli", "Pareto"),
    ("ContinuousBernoulli", "Uniform"),
    ("Exponential", "Beta"),
    ("Exponential", "ContinuousBernoulli"),
    ("Exponential", "Gumbel"),
    ("Exponential", "Pareto"),
    ("Exponential", "Uniform"),
    ("Gamma", "Beta"),
    ("Gamma", "ContinuousBernoulli"),
    ("Gamma", "Gumbel"),
    ("Gamma", "Pareto"),
    ("Gamma", "Uniform"),
    ("Chi2", "Gumbel"),
    ("Gumbel", "Beta"),
    ("Gumbel", "ContinuousBernoulli"),
    ("Gumbel", "Exponential"),
    ("Gumbel", "Gamma"),
    ("Gumbel", "Gumbel"),
    ("Gumbel", "Normal"),
    ("Gumbel", "Pareto"),
    ("Gumbel", "Uniform"),
    ("Laplace", "Beta"),
    ("Laplace", "ContinuousBernoulli"),
    ("Laplace", "Exponential"),
    ("Laplace", "Gamma"),
    ("Laplace", "Pareto"),
    ("Laplace", "Uniform"),
    ("Normal", "Beta"),
    ("Normal", "ContinuousBernoulli"),
    ("Normal", "Exponential"),
    ("Normal", "Gamma"),
    ("Normal", "Gumbel"),
    ("Normal", "Pareto"),
    ("Normal", "Uniform"),
    ("Pareto", "Beta"),
    ("Pareto", "ContinuousBernoulli"),
    ("Pareto", "Exponential"),
    ("Pareto", "Gamma"),
    ("Pareto", "Chi2"),
    ("Pareto", "Normal"),
    ("Pareto", "Pareto"),
    ("Pareto", "Uniform"),
    ("Poisson", "Bernoulli"),
    ("Poisson", "Binomial"),
    ("Uniform", "Beta"),
    ("Uniform", "ContinuousBernoulli"),
    ("Uniform", "Exponential"),
    ("Uniform", "Gamma"),
    ("Uniform", "Gumbel"),
    ("Uniform", "Pareto"),
]
IDS = [f"{p}-{q}" for p, q in PAIRS]


def _leaves(lib, name, scale=1.0):
    return [
        lib.tensor(np.array(v, dtype=np.float64) * scale, requires_grad=True) for v in PARAMS[name]
    ]


def _kl(lib, pair, reverse_params=False):
    """KL(p || q), with q's parameters flipped along the last dim (other nestings), and the
    leaves of both."""
    D = lib.distributions
    p_params = _leaves(lib, pair[0])
    q_params = _leaves(lib, pair[1])
    if reverse_params:
        q_params = [
            lib.tensor(v.detach().numpy()[:, ::-1].copy(), requires_grad=True) for v in q_params
        ]
    p = getattr(D, pair[0])(*p_params, validate_args=False)
    q = getattr(D, pair[1])(*q_params, validate_args=False)
    return D.kl_divergence(p, q), p_params + q_params


def _values_and_gradients(lib, pair):
    out = []
    for reverse in (False, True):
        kl, leaves = _kl(lib, pair, reverse)
        finite = lib.isfinite(kl)
        total = lib.where(finite, kl, lib.zeros_like(kl)).sum()
        grads = lib.autograd.grad(total, leaves, allow_unused=True) if total.requires_grad else []
        out.append(
            (
                tuple(kl.shape),
                kl.detach().numpy(),
                [None if g is None else g.numpy() for g in grads],
            )
        )
    return out


@pytest.mark.parametrize("pair", PAIRS, ids=IDS)
def test_kl_between_families_matches_torch(torch, pair):
    ours = _values_and_gradients(tocha, pair)
    theirs = _values_and_gradients(torch, pair)
    for (shape, value, grads), (t_shape, t_value, t_grads) in zip(ours, theirs):
        assert shape == t_shape
        np.testing.assert_allclose(value, t_value, rtol=1e-7, atol=1e-12)
        assert len(grads) == len(t_grads)
        for g, t_g in zip(grads, t_grads):
            if t_g is None or g is None:
                assert g is None or not np.any(g), (g, t_g)
                continue
            np.testing.assert_allclose(g, t_g, rtol=1e-7, atol=1e-12)


def _kl_shape(lib, pair, p_shape, q_shape):
    D = lib.distributions
    p = getattr(D, pair[0])(*[lib.full(p_shape, 0.3 + i) for i in range(len(PARAMS[pair[0]]))])
    q = getattr(D, pair[1])(*[lib.full(q_shape, 0.3 + i) for i in range(len(PARAMS[pair[1]]))])
    return tuple(D.kl_divergence(p, q).shape)


@pytest.mark.parametrize("pair", [("Normal", "Beta"), ("Gumbel", "Gumbel"), ("Uniform", "Pareto")])
def test_kl_between_families_result_shape(torch, pair):
    for p_shape, q_shape in (((), (3,)), ((3,), ()), ((2, 1), (3,))):
        assert _kl_shape(tocha, pair, p_shape, q_shape) == _kl_shape(torch, pair, p_shape, q_shape)


def test_kl_between_families_gradcheck():
    D = tocha.distributions
    loc = tocha.tensor([0.3, -0.4], dtype=tocha.float64, requires_grad=True)
    scale = tocha.tensor([0.8, 1.3], dtype=tocha.float64, requires_grad=True)

    def gumbel_gumbel(loc, scale):
        return D.kl_divergence(D.Gumbel(loc, scale), D.Gumbel(loc.flip(0), 1.1))

    def normal_gumbel(loc, scale):
        return D.kl_divergence(D.Normal(loc, scale), D.Gumbel(-loc, scale.flip(0)))

    def uniform_gumbel(low, width):
        return D.kl_divergence(D.Uniform(low, low + width), D.Gumbel(0.2, width.flip(0)))

    for fn in (gumbel_gumbel, normal_gumbel, uniform_gumbel):
        assert tocha.autograd.gradcheck(fn, (loc, scale))
