"""torch.special's orthogonal polynomials read a non-integer degree as PyTorch does,
truncated toward zero (2.5 is 2; negative degrees give 0): tocha returned 0 for them (found by
tests/fidelity/sweep.py)."""

from __future__ import annotations

import pytest

import tocha
from tests.core.helpers import assert_tensor

X = [0.3, -0.7, 1.5, 2.0, -1.2]
DEGREES = [[0.0, 1.0, 2.0, 3.0, 4.0], [-1.0, 2.5, -2.0, 0.7, 1.3]]
NAMES = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_u",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]


@pytest.mark.parametrize("degrees", DEGREES, ids=["integers", "fractions"])
@pytest.mark.parametrize("name", NAMES)
def test_tensor_degrees_match_torch(torch, name, degrees):
    mine = getattr(tocha.special, name)(tocha.tensor(X), tocha.tensor(degrees))
    theirs = getattr(torch.special, name)(torch.tensor(X), torch.tensor(degrees))
    assert_tensor(mine, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_a_fractional_number_degree_matches_torch(torch, name):
    mine = getattr(tocha.special, name)(tocha.tensor(X), 2.5)
    theirs = getattr(torch.special, name)(torch.tensor(X), 2.5)
    assert_tensor(mine, theirs, rtol=1e-5, atol=1e-5)
