"""Dropout and bernoulli on tocha's default random stream draw their masks from 32-bit words
compared to a threshold (no float64 uniforms): the same semantics as PyTorch documents."""

import numpy as np
import pytest

import tocha
import tocha.nn.functional as F


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("dtype", [tocha.float32, tocha.float64, tocha.float16])
def test_dropout_keeps_one_minus_p_scaled(p, dtype):
    tocha.manual_seed(0)
    x = tocha.full((200, 500), 2.0, dtype=dtype)
    out = F.dropout(x, p)
    kept = out != 0
    assert out.dtype == dtype
    assert abs(kept.float().mean().item() - (1 - p)) < 5e-3  # 100,000 draws: ~3 sigma
    np.testing.assert_allclose(out[kept].double().numpy(), 2.0 / (1 - p), rtol=1e-3)


def test_dropout_same_seed_same_mask_and_gradient_is_the_mask():
    x = tocha.randn(7, 33, requires_grad=True)
    tocha.manual_seed(3)
    a = F.dropout(x, 0.3)
    tocha.manual_seed(3)
    b = F.dropout(x, 0.3)
    assert tocha.equal(a, b)
    (grad,) = tocha.autograd.grad(a.sum(), x)
    keep = (a != 0).float()
    np.testing.assert_allclose(grad.numpy(), keep.numpy() / 0.7, rtol=1e-6)


def test_dropout_edge_cases_and_inplace():
    x = tocha.randn(5, 6)
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 0.5, training=False) is x
    assert (F.dropout(x, 1.0) == 0).all()
    y = x.clone()
    tocha.manual_seed(1)
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y
    tocha.manual_seed(1)
    assert tocha.equal(F.dropout(x, 0.5), y)


def test_dropout_transposed_input():
    tocha.manual_seed(0)
    x = tocha.ones(300, 400).t()
    out = F.dropout(x, 0.25)
    assert out.shape == (400, 300)
    assert abs((out != 0).float().mean().item() - 0.75) < 5e-3


@pytest.mark.parametrize("p", [0.0, 0.2, 1.0])
def test_bernoulli_scalar_probability(p):
    tocha.manual_seed(0)
    sample = tocha.empty(100_001).bernoulli_(p)
    assert set(np.unique(sample.numpy())) <= {0.0, 1.0}
    assert abs(sample.mean().item() - p) < 5e-3
    tocha.manual_seed(0)
    assert tocha.equal(tocha.empty(100_001).bernoulli_(p), sample)
