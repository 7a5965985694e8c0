"""In-place comparisons write their bool result into a tensor of any dtype, as PyTorch's
(``x.ge_(1.5)`` on an int64 tensor; issue 25 item 4): the operands' promoted dtype does not
need to fit the target."""

from __future__ import annotations

import pytest

import tocha
from tests.core.helpers import assert_tensor

CALLS = {
    "int_ge_float": lambda lib: lib.tensor([1, 2, 3]).ge_(1.5),
    "int32_lt_float": lambda lib: lib.tensor([1, 2, 3], dtype=lib.int32).lt_(2.5),
    "bool_le_int": lambda lib: lib.tensor([True, False]).le_(2),
    "int_eq_float_tensor": lambda lib: lib.tensor([1, 2, 3]).eq_(lib.tensor([1.0, 2.5, 3.0])),
    "int_greater_alias": lambda lib: lib.tensor([0, 4]).greater_(0.5),
    "int_logical_and_float": lambda lib: lib.tensor([1, 2, 0]).logical_and_(
        lib.tensor([1.0, 0.0, 3.0])
    ),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_matches_torch(torch, name):
    assert_tensor(CALLS[name](tocha), CALLS[name](torch))


def test_other_in_place_ops_still_refuse_a_wider_result():
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        tocha.tensor([1, 2, 3]).add_(1.5)
