"""Disagreements the differential sweep found, checked against PyTorch (recorded):
``torch.threshold`` and ``torch.hardshrink`` take ``out=``; ``randint_like`` takes a one-value
tensor as its ``high``; linspace and logspace read their bounds as integers in an integral
dtype; ``round(decimals=)`` scales float16 and bfloat16 in float32; an empty var or std is NaN
whatever the correction."""

from __future__ import annotations

import pytest

from tests.fidelity.test_sweep_fixes_signatures import same_outcome

OUT_CALLS = [
    "lib.threshold(x, 0.5, 1.5, out=lib.empty(0, dtype=lib.float64))",
    "lib.threshold(x, 0.5, 1.5, out=lib.empty(3, 4, dtype=lib.float64))",
    "lib.threshold(x, 0.5, 1.5, out=lib.empty(3, 4, dtype=lib.int64))",
    "lib.hardshrink(x, 0.3, out=lib.empty(0, dtype=lib.float64))",
    "lib.hardshrink(x, out=lib.empty(3, 4, dtype=lib.float32))",
    "lib.hardshrink(x - 0.8, lambd=0.5)",
    "lib.threshold(x, 0.5, 1.5, out=lib.empty(3, 4, dtype=lib.complex128))",
    "lib.hardshrink(x, out=lib.empty(3, 4, dtype=lib.float64))",
]


@pytest.mark.parametrize("expression", OUT_CALLS)
def test_nn_functions_take_out(torch, expression):
    same_outcome(torch, expression)


def test_out_is_the_result():
    import tocha

    x = tocha.arange(6.0)
    out = tocha.empty(0)
    assert tocha.threshold(x, 2.0, -1.0, out=out) is out
    assert out.tolist() == [-1.0, -1.0, -1.0, 3.0, 4.0, 5.0]


RANDINT_LIKE_CALLS = [
    "lib.randint_like(lib.zeros(3), lib.tensor(5))",
    "lib.randint_like(lib.zeros(3), lib.tensor(2.7))",
    "lib.randint_like(lib.zeros(3), lib.tensor([5, 6]))",
    "lib.randint_like(lib.zeros(3), lib.tensor([5]))",
    "lib.randint_like(lib.zeros(3), lib.tensor(0.5))",
    "lib.randint_like(lib.zeros(3, dtype=lib.int64), lib.tensor(3))",
]


@pytest.mark.parametrize("expression", RANDINT_LIKE_CALLS)
def test_randint_like_takes_a_one_value_tensor_as_high(torch, expression):
    same_outcome(torch, expression, values=False)


def test_randint_like_truncates_a_float_high():
    import tocha

    values = tocha.randint_like(tocha.zeros(1000), tocha.tensor(2.7))
    assert set(values.tolist()) == {0.0, 1.0}


SPACE_CALLS = [
    f"lib.{fn}({start}, {end}, 4, dtype=lib.{dtype})"
    for fn in ("linspace", "logspace")
    for start, end, dtype in [
        (1.5, 5, "int64"),
        (1.5, 5.7, "int32"),
        (1.5, 5.7, "uint8"),
        (-1.5, 2.5, "uint8"),
        (-1.5, 2.5, "int8"),
        (0, 300, "uint8"),
        (1.9, -3.9, "int16"),
        ("lib.tensor(1.5)", 5, "int64"),
        (1.5, 5.7, "float64"),
    ]
]


@pytest.mark.parametrize("expression", SPACE_CALLS)
def test_integral_spaces_truncate_their_bounds(torch, expression):
    same_outcome(torch, expression)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("decimals", [1, 2, -1, 3])
def test_round_with_decimals_scales_half_floats_in_float32(torch, dtype, decimals):
    values = "[0.123, 1.55, -2.449, 3.14159, 10.05, 0.95, 12345.678, 0.0049, 0.25, 1.005]"
    x = f"lib.tensor({values}).to(lib.{dtype})"  # compared in float32: it holds them all
    same_outcome(torch, f"{x}.round(decimals={decimals}).float()")
    same_outcome(torch, f"{x}.round_(decimals={decimals}).float()")


EMPTY_MOMENT_CALLS = [
    "lib.var(lib.zeros(0), correction=-1.5)",
    "lib.std(lib.zeros(0, 3), 0, correction=-1.5)",
    "lib.var_mean(lib.zeros(0), correction=-1)",
    "lib.std_mean(lib.zeros(2, 0), 1, correction=-2)",
    "lib.var(lib.zeros(0), correction=0)",
    "lib.std(x, correction=-1.5)",
]


@pytest.mark.parametrize("expression", EMPTY_MOMENT_CALLS)
def test_an_empty_moment_is_nan_whatever_the_correction(torch, expression):
    same_outcome(torch, expression)
