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


M = [[1.0, 2.0], [3.0, 4.0]]
# Functions that read their arguments' attributes in their own code: a non-tensor gets
# PyTorch's TypeError naming the argument (found by tests/fidelity/fuzz.py).
OWN_CODE = {
    "addmm_mat2": lambda lib, x: lib.addmm(x, x, "abc"),
    "addmv_input": lambda lib, x: lib.addmv("abc", x, x[0]),
    "addbmm_batch1": lambda lib, x: lib.addbmm(x, object(), x[None]),
    "baddbmm_input": lambda lib, x: lib.baddbmm("abc", x[None], x[None]),
    "addr_vec2": lambda lib, x: lib.addr(x, x[0], "abc"),
    "inner_other": lambda lib, x: lib.inner(x, "abc"),
    "where_condition": lambda lib, x: lib.where("abc", x, x),
    "masked_fill_mask": lambda lib, x: lib.masked_fill(x, "abc", 1.0),
    "hsplit_input": lambda lib, x: lib.hsplit("abc", 2),
    "broadcast_tensors_element": lambda lib, x: lib.broadcast_tensors(x, "abc"),
    "atleast_2d_element": lambda lib, x: lib.atleast_2d(x, [1.0]),
    "zeros_like_input": lambda lib, x: lib.zeros_like("abc"),
    "ones_like_dtype": lambda lib, x: lib.ones_like(x, dtype="float32"),
    "zeros_dtype": lambda lib, x: lib.zeros(2, 3, dtype="float32"),
    "randn_like_input": lambda lib, x: lib.randn_like([1.0]),
    "hann_window_dtype": lambda lib, x: lib.hann_window(4, dtype="float32"),
    "linalg_cross_other": lambda lib, x: lib.linalg.cross(x, "abc"),
    "householder_tau": lambda lib, x: lib.linalg.householder_product(x, "abc"),
}


@pytest.mark.parametrize("name", list(OWN_CODE))
def test_own_code_names_the_argument(name, torch):
    with pytest.raises(TypeError) as want:
        OWN_CODE[name](torch, torch.tensor(M))
    with pytest.raises(TypeError) as got:
        OWN_CODE[name](tocha, tocha.tensor(M))
    if "invalid combination of arguments" in str(want.value):  # PyTorch's overloads
        assert str(got.value).split("(")[0] == str(want.value).split("(")[0]
    else:
        assert str(got.value) == str(want.value)


NOT_A_DTYPE = {
    "sum": lambda lib, x: x.sum(dtype="float32"),
    "mean": lambda lib, x: x.mean(dtype=object()),
    "cumsum": lambda lib, x: x.cumsum(0, dtype="float32"),
    "arange": lambda lib, x: lib.arange(0, 5, dtype=object()),
    "linspace": lambda lib, x: lib.linspace(0, 1, 5, dtype="float32"),
    "eye": lambda lib, x: lib.eye(3, dtype="float32"),
}


@pytest.mark.parametrize("name", list(NOT_A_DTYPE))
def test_a_dtype_that_is_not_one_is_a_type_error(name, torch):
    with pytest.raises(TypeError) as want:
        NOT_A_DTYPE[name](torch, torch.tensor(M))
    with pytest.raises(TypeError) as got:
        NOT_A_DTYPE[name](tocha, tocha.tensor(M))
    assert str(got.value).split("(")[0] == str(want.value).split("(")[0] == name
