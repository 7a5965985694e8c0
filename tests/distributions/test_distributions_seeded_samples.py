"""With `tocha.compat.use_pytorch_random`, distributions sample PyTorch's values after the
same ``manual_seed`` (their samplers draw through the CPU stream of tocha._cpu_random)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.compat import use_pytorch_random

pytest.importorskip("tocha.distributions")


@pytest.fixture(autouse=True)
def pytorch_stream():
    previous = use_pytorch_random(True)
    yield
    use_pytorch_random(previous)


SAMPLES = {
    "normal": lambda lib: lib.distributions.Normal(lib.zeros(20), lib.ones(20)).sample(),
    "normal_rsample": lambda lib: lib.distributions.Normal(
        lib.tensor(1.0), lib.tensor(2.0)
    ).rsample((20,)),
    "uniform": lambda lib: lib.distributions.Uniform(0.0, 2.0).sample((10,)),
    "bernoulli": lambda lib: lib.distributions.Bernoulli(probs=lib.full((20,), 0.3)).sample(),
    "categorical": lambda lib: lib.distributions.Categorical(
        probs=lib.tensor([0.1, 0.2, 0.7])
    ).sample((10,)),
    "exponential": lambda lib: lib.distributions.Exponential(lib.tensor(2.0)).sample((10,)),
    "multivariate_normal": lambda lib: lib.distributions.MultivariateNormal(
        lib.zeros(3), lib.eye(3)
    ).sample((4,)),
    "gumbel": lambda lib: lib.distributions.Gumbel(0.0, 1.0).sample((5,)),
    "laplace": lambda lib: lib.distributions.Laplace(0.0, 1.0).sample((5,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_samples_match_torch(torch, name):
    tocha.manual_seed(0)
    torch.manual_seed(0)
    got = SAMPLES[name](tocha).numpy()
    want = SAMPLES[name](torch).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
