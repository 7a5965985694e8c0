"""``torch.dropout`` and its family (the native functions, not ``nn.functional``'s) refuse a
probability outside [0, 1] with PyTorch's RuntimeError and message."""

from __future__ import annotations

import math

import pytest

import tocha

NAMES = ["dropout", "dropout_", "alpha_dropout", "feature_dropout", "feature_alpha_dropout_"]


@pytest.mark.parametrize("p", [2.0, -0.5, 1.5, math.nan], ids=["2", "-0.5", "1.5", "nan"])
@pytest.mark.parametrize("name", NAMES)
def test_probability_out_of_range(torch, name, p):
    with pytest.raises(RuntimeError) as want:
        getattr(torch, name)(torch.ones(2, 3), p, True)
    with pytest.raises(RuntimeError) as got:
        getattr(tocha, name)(tocha.ones(2, 3), p, True)
    assert str(got.value) == str(want.value)


def test_functional_dropout_keeps_its_value_error(torch):
    with pytest.raises(ValueError) as want:
        torch.nn.functional.dropout(torch.ones(2), 2.0)
    with pytest.raises(ValueError) as got:
        tocha.nn.functional.dropout(tocha.ones(2), 2.0)
    assert str(got.value) == str(want.value)
