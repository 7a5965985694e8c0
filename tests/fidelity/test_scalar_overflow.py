"""Python numbers beyond a dtype's range, as PyTorch takes them: a scalar argument that the
kernel converts to the result's type (alpha, addcmul's value) raises its RuntimeError, an
operand of an elementwise op does not (``x + 1e300`` is inf); checked against PyTorch
(recorded)."""

from __future__ import annotations

import pytest

import tocha
from tests.fidelity.test_fidelity_fixes import assert_same_error

CALLS = [
    ("float32", "x.add(x, alpha=1e300)"),
    ("float32", "x.sub(1, alpha=-1e300)"),
    ("float32", "x.add_(x, alpha=1e300)"),
    ("float32", "lib.rsub(x, 2, alpha=1e300)"),
    ("float16", "x.add(x, alpha=1e5)"),
    ("complex64", "x.add(x, alpha=1e300)"),
    ("float32", "x.addcmul(x, x, value=1e300)"),
    ("float32", "x.addcdiv(x, x, value=1e300)"),
    ("bfloat16", "x.addcmul_(x, x, value=1e300)"),
    ("int64", "x + 2**64"),
]


@pytest.mark.parametrize("dtype, expression", CALLS)
def test_scalar_arguments_that_overflow(torch, dtype, expression):
    def call(lib):
        x = lib.ones(2, dtype=getattr(lib, dtype))
        return eval(expression, {"x": x, "lib": lib})

    assert_same_error(lambda: call(torch), lambda: call(tocha))


RESULTS = [
    ("float32", "x + 1e300"),
    ("float32", "x * -1e300"),
    ("float16", "x.addcdiv(x, x, value=1e5)"),
    ("float16", "x.add(x.float(), alpha=1e5)"),
    ("float64", "x.add(x.float(), alpha=1e300)"),
    ("float32", "x.add(x, alpha=float('inf'))"),
    ("int32", "x + 2**40"),
    ("uint8", "x + 300"),
]


@pytest.mark.parametrize("dtype, expression", RESULTS)
def test_results_where_pytorch_takes_the_number(torch, dtype, expression):
    def call(lib):
        x = lib.ones(2, dtype=getattr(lib, dtype))
        result = eval(expression, {"x": x, "lib": lib})
        return str(result.dtype).split(".")[-1], result.float().numpy().tolist()

    assert call(tocha) == call(torch)
