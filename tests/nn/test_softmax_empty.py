"""softmax, log_softmax and softmin over an empty dimension (or of an empty tensor) return an
empty result as PyTorch, not NumPy's "zero-size array to reduction operation" error (issue 25
item 2)."""

from __future__ import annotations

import pytest

import tocha

CASES = [((0, 3), 0), ((0, 3), 1), ((2, 0), 1), ((0,), 0)]
FUNCTIONS = ["softmax", "log_softmax", "softmin"]


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("shape, dim", CASES, ids=[f"{s}-{d}" for s, d in CASES])
def test_empty_matches_torch(torch, name, shape, dim):
    mine = getattr(tocha.nn.functional, name)(tocha.zeros(shape), dim)
    theirs = getattr(torch.nn.functional, name)(torch.zeros(shape), dim)
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


def test_empty_backward():
    x = tocha.zeros(0, 3, requires_grad=True)
    tocha.nn.functional.log_softmax(x, 0).sum().backward()
    assert tuple(x.grad.shape) == (0, 3)
