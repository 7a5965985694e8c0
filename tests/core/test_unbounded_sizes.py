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


POLYGAMMA_X = [0.5, 1.0, 2.5, 10.0, -0.5]


@pytest.mark.parametrize("n", [171, 200, 2**40])
def test_polygamma_of_a_huge_order_is_an_infinity_at_once(torch, n):
    start = time.monotonic()
    mine = tocha.special.polygamma(n, tocha.tensor(POLYGAMMA_X, dtype=tocha.float64))
    assert time.monotonic() - start < 1.0
    assert_tensor(mine, torch.special.polygamma(n, torch.tensor(POLYGAMMA_X, dtype=torch.float64)))


def test_zeta_of_a_minus_infinite_q_returns(torch):
    q = [float("-inf"), -2.5, 1.5]
    mine = tocha.special.zeta(tocha.full((3,), 2.0), tocha.tensor(q))
    assert_tensor(mine, torch.special.zeta(torch.full((3,), 2.0), torch.tensor(q)))


@pytest.mark.parametrize("dim", [2**63, -(2**63) - 1, 2**64])
def test_dims_beyond_int64_overflow_as_in_torch(torch, dim):
    def outcome(lib, f):
        try:
            f(lib.ones(2, 3))
        except (ValueError, IndexError) as exc:
            return type(exc).__name__, str(exc)
        return None

    for f in (lambda x: x.sum(dim), lambda x: x.transpose(0, dim), lambda x: x.softmax(dim)):
        assert outcome(tocha, f) == outcome(torch, f)
