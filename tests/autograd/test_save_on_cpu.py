"""tocha.autograd.graph.save_on_cpu: saved tensors pass through CPU memory, and backward
gives the same gradients as without it."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.autograd.graph import save_on_cpu


@pytest.mark.parametrize("pin_memory", [False, True], ids=["plain", "pinned"])
def test_gradients_are_unchanged(pin_memory):
    x = tocha.tensor([0.5, -1.0, 2.0], requires_grad=True)
    with save_on_cpu(pin_memory=pin_memory):
        y = (x.exp() * x.sin()).sum()
    y.backward()
    reference = tocha.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (reference.exp() * reference.sin()).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), reference.grad.numpy())


def test_pinned_copies_are_independent_of_later_writes():
    x = tocha.tensor([1.0, 2.0], requires_grad=True)
    w = tocha.tensor([3.0, 4.0])
    with save_on_cpu(pin_memory=True):
        y = (x * w).sum()
    y.backward()
    assert x.grad.tolist() == [3.0, 4.0]
