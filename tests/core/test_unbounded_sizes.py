"""Sizes that would make tocha loop or allocate without bound are refused at once (issue 25
item 9; found as hangs by tests/fidelity/fuzz.py), and the sizes PyTorch handles still
work."""

from __future__ import annotations

import time

import numpy as np
import pytest

import tocha
from tests.core.helpers import assert_tensor

X = np.random.default_rng(0).uniform(30, 60, (3, 4))


@pytest.mark.parametrize("p", [1, 3, 50])
def test_mvlgamma_matches_torch(torch, p):
    assert_tensor(tocha.mvlgamma(tocha.tensor(X), p), torch.mvlgamma(torch.tensor(X), p))


def test_mvlgamma_gradient_matches_torch(torch):
    mine = tocha.tensor(X, requires_grad=True)
    theirs = torch.tensor(X, requires_grad=True)
    tocha.mvlgamma(mine, 4).sum().backward()
    torch.mvlgamma(theirs, 4).sum().backward()
    assert_tensor(mine.grad, theirs.grad)


@pytest.mark.parametrize(
    "call",
    [
        lambda: tocha.mvlgamma(tocha.tensor(X), 2**40),
        lambda: tocha.special.multigammaln(tocha.tensor(X), 2**40),
        lambda: tocha.tensor_split(tocha.tensor(X), 2**40),
        lambda: tocha.tensor(X).tensor_split(2**40, dim=1),
    ],
    ids=["mvlgamma", "multigammaln", "tensor_split", "tensor_split_method"],
)
def test_huge_counts_are_refused_at_once(call):
    start = time.monotonic()
    with pytest.raises(RuntimeError):
        call()
    assert time.monotonic() - start < 1.0


def test_many_sections_still_split(torch):
    mine = tocha.tensor_split(tocha.tensor(X), 2**16)
    theirs = torch.tensor_split(torch.tensor(X), 2**16)
    assert len(mine) == len(theirs)
    assert [tuple(t.shape) for t in mine[:5]] == [tuple(t.shape) for t in theirs[:5]]
