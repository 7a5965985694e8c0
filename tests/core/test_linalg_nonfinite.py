"""Decompositions at their edges, as PyTorch's: matrices holding inf or NaN give NaN at once
(LAPACK's divide-and-conquer SVD never returns on them, so tocha checks first), the partial
results LAPACK leaves (cholesky_ex), the parts lu_unpack is not asked for."""

from __future__ import annotations

import math

import pytest

import tocha
from tests.core.helpers import assert_tensor


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


LU_CASES = {
    "no_pivots": {"unpack_pivots": False},
    "no_data": {"unpack_data": False},
    "both": {},
}


@pytest.mark.parametrize("case", sorted(LU_CASES))
def test_lu_unpack_leaves_out_what_is_not_asked_for(case, torch):
    a = [[1.0, 2.0, 0.5], [3.0, 4.0, 1.0], [0.0, 1.0, 2.0]]
    want = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(a)), **LU_CASES[case])
    got = tocha.lu_unpack(*tocha.linalg.lu_factor(tocha.tensor(a)), **LU_CASES[case])
    assert type(got).__name__ == "lu_unpack"  # torch.return_types.lu_unpack
    for g, w in zip(got, want):
        assert_tensor(g, w, rtol=1e-6)


CHOLESKY = {
    "fails_second": [[1.0, 2.0], [2.0, 1.0]],
    "fails_first": [[-1.0, 0.0], [0.0, 1.0]],
    "fails_middle": [[4.0, 2.0, 1.0], [2.0, 1.0, 3.0], [1.0, 3.0, 5.0]],
    "batch": [[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]],
}


@pytest.mark.parametrize("case", sorted(CHOLESKY))
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_keeps_lapacks_partial_factor(case, upper, torch):
    want = torch.linalg.cholesky_ex(torch.tensor(CHOLESKY[case]), upper=upper)
    got = tocha.linalg.cholesky_ex(tocha.tensor(CHOLESKY[case]), upper=upper)
    assert_tensor(got.L, want.L, rtol=1e-6)
    assert_tensor(got.info, want.info)
