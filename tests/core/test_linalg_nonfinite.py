"""Decompositions of matrices holding inf or NaN return (NaN) at once, as PyTorch's do:
LAPACK's divide-and-conquer SVD never returns on them, so tocha checks first."""

from __future__ import annotations

import math

import pytest

import tocha


def _with_inf():
    x = tocha.ones(3, 3)
    x[0, 0] = math.inf
    return x


@pytest.mark.parametrize(
    "call",
    [
        lambda x: tocha.linalg.svd(x).S,
        lambda x: tocha.linalg.svd(x, full_matrices=True).U,
        lambda x: tocha.linalg.pinv(x),
        lambda x: tocha.linalg.lstsq(x, x).solution,
        lambda x: tocha.linalg.eigvals(x),
        lambda x: tocha.svd(x).V,
    ],
    ids=["svd", "svd_full", "pinv", "lstsq", "eigvals", "torch_svd"],
)
def test_non_finite_matrices_give_nan(call):
    assert tocha.isnan(call(_with_inf())).all()


def test_only_the_non_finite_matrices_of_a_batch_are_nan():
    S = tocha.linalg.svd(tocha.stack([_with_inf(), 2 * tocha.eye(3)])).S
    assert tocha.isnan(S[0]).all()
    assert tocha.equal(S[1], tocha.full((3,), 2.0))


def test_eig_refuses_non_finite_input_as_torch(torch):
    x = torch.ones(3, 3)
    x[0, 0] = math.inf
    with pytest.raises(RuntimeError) as want:
        torch.linalg.eig(x)
    with pytest.raises(RuntimeError) as got:
        tocha.linalg.eig(_with_inf())
    assert str(got.value) == str(want.value)
