"""Gradients through copy_ and fill_, against PyTorch. Their values are in
tests/core/test_fill.py, which needs no tocha-autograd."""

from __future__ import annotations

import numpy as np

import tocha


def test_copy_is_differentiable_with_respect_to_the_source(torch):
    grads = []
    for lib in (tocha, torch):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.zeros(2, 3)
        b.copy_(a * 2)
        (b * b).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_fill_of_a_tracked_tensor_cuts_the_gradient(torch):
    grads = []
    for lib in (tocha, torch):
        a = lib.ones(3, requires_grad=True)
        y = a * 2
        y[1:].fill_(5)
        (y * a).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
