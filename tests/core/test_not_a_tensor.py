"""A value that is not a Tensor, given where an op takes one, gets PyTorch's TypeError naming
the function and the argument, not an AttributeError from inside tocha."""

from __future__ import annotations

import pytest

import tocha

IN_PLACE = ["abs_", "exp_", "sin_", "sqrt_", "neg_", "sigmoid_", "ceil_", "erf_"]
FUNCTIONS = ["angle", "abs", "exp", "isnan", "nonzero"]


@pytest.mark.parametrize("name", IN_PLACE + FUNCTIONS)
def test_a_string_for_the_input_is_a_type_error(name, torch):
    with pytest.raises(TypeError) as want:
        getattr(torch, name)("abc")
    with pytest.raises(TypeError) as got:
        getattr(tocha, name)("abc")
    assert str(got.value) == str(want.value)
