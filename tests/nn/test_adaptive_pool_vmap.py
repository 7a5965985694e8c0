"""Global adaptive average pooling (ResNet's last layer) under vmap and per-example
gradients: one window is a mean, with no data-dependent test of the values."""

from __future__ import annotations

import numpy as np

import tocha
import tocha.nn.functional as F
from tocha.func import grad, vmap


def test_vmap_of_global_adaptive_average_pooling():
    x = tocha.randn(4, 3, 5, 5)
    got = vmap(lambda t: F.adaptive_avg_pool2d(t, 1))(x)
    np.testing.assert_allclose(
        got.numpy(), x.mean((2, 3), keepdim=True).numpy(), rtol=1e-5, atol=1e-6
    )


def test_per_example_gradients_through_global_pooling():
    x, w = tocha.randn(4, 3, 5, 5), tocha.randn(3)

    def loss(w, xi):
        return F.adaptive_avg_pool2d(xi * w[:, None, None], (1, 1)).sum()

    grads = vmap(grad(loss), in_dims=(None, 0))(w, x)
    np.testing.assert_allclose(grads.numpy(), x.mean((2, 3)).numpy(), rtol=1e-5, atol=1e-6)


def test_an_inf_stays_in_its_window():
    x = tocha.tensor([[[[1.0, float("inf")], [2.0, 3.0]]], [[[1.0, 2.0], [3.0, 4.0]]]])
    assert F.adaptive_avg_pool2d(x, 1).flatten().tolist() == [float("inf"), 2.5]
