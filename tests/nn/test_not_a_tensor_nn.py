"""nn.functional ops given a non-tensor where they take a Tensor raise PyTorch's TypeError
naming the argument, not an AttributeError from inside tocha (found by
tests/fidelity/fuzz.py)."""

from __future__ import annotations

import pytest

import tocha

CALLS = {
    "conv1d_input": lambda lib: lib.nn.functional.conv1d("abc", lib.ones(2, 1, 3)),
    "conv2d_weight": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 3, 3), [1.0]),
    "conv_transpose2d_input": lambda lib: lib.nn.functional.conv_transpose2d(
        "abc", lib.ones(1, 1, 3, 3)
    ),
    "linear_input": lambda lib: lib.nn.functional.linear("abc", lib.ones(2, 2)),
    "linear_weight": lambda lib: lib.nn.functional.linear(lib.ones(2, 2), object()),
    "bilinear_input2": lambda lib: lib.nn.functional.bilinear(
        lib.ones(2, 2), "abc", lib.ones(1, 2, 2)
    ),
    "avg_pool2d_input": lambda lib: lib.nn.functional.avg_pool2d("abc", 2),
    "max_pool1d_input": lambda lib: lib.nn.functional.max_pool1d([1.0], 2),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_names_the_argument(name, torch):
    with pytest.raises(TypeError) as want:
        CALLS[name](torch)
    with pytest.raises(TypeError) as got:
        CALLS[name](tocha)
    if "invalid combination of arguments" in str(want.value):  # PyTorch's overloads
        assert str(got.value).split("(")[0] == str(want.value).split("(")[0]
    else:
        assert str(got.value) == str(want.value)
