"""Dtypes and argument forms the sweep found tocha taking where PyTorch's CPU kernels refuse
them (or refusing where they take them), checked against PyTorch (recorded): bernoulli, the
in-place samplers of empty tensors (no dtype check: no kernel runs), complex sinc, clamp of a
bool tensor by numbers, the median of no elements, integer dtypes of reductions whose
gradient is wanted, cumsum/cumprod into bool and in place, nansum/nanmean's dtypes."""

from __future__ import annotations

import pytest

from tests.fidelity.test_sweep_fixes_signatures import same_outcome

BERNOULLI = [
    "lib.bernoulli(full((3,), 0.5, 'int64'))",
    "lib.bernoulli(full((3,), 0.5, 'bool'))",
    "lib.bernoulli(full((3,), 0.5, 'complex64'))",
    "lib.bernoulli(full((0,), 0.5, 'complex64'))",
    "lib.bernoulli(full((0, 3), 0, 'int64'))",
    "lib.bernoulli(full((3,), 0.5, 'float32'), full((3,), 0.5, 'float32'))",
    "full((3,), 0.5, 'float32').bernoulli(full((3,), 0.5, 'float32'))",
    "lib.bernoulli(full((3,), 0.5, 'float32'), full((), 1, 'int64'))",
    "lib.bernoulli(full((3,), 0.5, 'float32'), full((), -2, 'int64'))",
    "lib.bernoulli(full((3,), 0.5, 'int64'), 0.5)",
    "lib.bernoulli(full((3,), 0.5, 'complex64'), 0.5)",
    "lib.bernoulli(full((0,), 0.5, 'complex64'), 0.5)",
    "full((3,), 0, 'complex64').bernoulli_(0.5)",
    "full((3,), 0, 'complex64').bernoulli_(full((3,), 0.5, 'float32'))",
    "full((3,), 0, 'complex64').bernoulli_(full((3,), 0.5, 'complex64'))",
    "full((3,), 0, 'float32').bernoulli_(full((3,), 0, 'int64'))",
    "full((3,), 0, 'int32').bernoulli_(full((3,), 0, 'int32'))",
    "full((3,), 0, 'int32').bernoulli_(full((3,), 0.5, 'float32'))",
    "full((0,), 0, 'int32').bernoulli_(full((0,), 0, 'int32'))",
    "full((3,), 0, 'bool').bernoulli_(full((3,), 0, 'bool'))",
    "full((3,), 0, 'float32').bernoulli_(full((4,), 0.5, 'float32'))",
]


@pytest.mark.parametrize("expression", BERNOULLI)
def test_bernoulli_dtypes_and_forms(torch, expression):
    same_outcome(torch, expression, values=False)


EMPTY_SAMPLERS = [
    "full((0,), 0, 'bool').normal_()",
    "full((0, 3), 0, 'int64').normal_()",
    "full((3,), 0, 'bool').normal_()",
    "full((0,), 0, 'complex64').exponential_()",
    "full((3,), 0, 'complex64').exponential_()",
    "full((0,), 0, 'bool').log_normal_()",
    "full((0,), 0, 'complex64').random_()",
    "full((3,), 0, 'complex64').random_()",
    "full((0,), 0, 'complex64').geometric_(0.5)",
    "full((0,), 0, 'complex64').cauchy_()",
    "full((0,), 0, 'int64').uniform_()",
    "lib.randn_like(full((0,), 0, 'int32'))",
    "lib.normal(full((0, 3), 0, 'int64'))",
    "lib.normal(full((3,), 0, 'int64'))",
]


@pytest.mark.parametrize("expression", EMPTY_SAMPLERS)
def test_samplers_check_dtypes_only_with_elements(torch, expression):
    same_outcome(torch, expression, values=False)


VALUES = [
    "lib.sinc(full((2, 3), 0.25, 'complex64') * (1 + 1j))",
    "lib.sinc(full((3,), 0, 'complex64'))",
    "lib.special.sinc(full((2,), 1.5, 'complex128') - 0.5j)",
    "full((3,), 0.5, 'complex64').sinc_()",
    "lib.clamp_min(full((3,), 1, 'bool'), -0.5)",
    "lib.clamp_max(full((3,), 1, 'bool'), 0.5)",
    "lib.clamp_min(full((3,), 1, 'bool'), 2)",
    "lib.clamp(full((3,), 0, 'bool'), 0.5, 1.5)",
    "lib.clamp_min(full((3,), 1, 'bool'), True)",
    "full((3,), 1, 'bool').clamp_min_(0.5)",
    "full((3,), 1, 'bool').clamp_(0, 1)",
]


@pytest.mark.parametrize("expression", VALUES)
def test_complex_sinc_and_bool_clamp(torch, expression):
    same_outcome(torch, expression)


REDUCTIONS = [
    "lib.median(full((0,), 0, 'int32'))",
    "lib.median(full((0,), 0, 'bool'))",
    "lib.median(full((0, 3), 0, 'complex64'))",
    "lib.nanmedian(full((0,), 0, 'int64'))",
    "lib.median(full((3,), 0, 'bool'))",
    "lib.median(full((0,), 0, 'complex64'), 0)",
    "lib.nanmedian(full((0, 3), 0, 'bool'), 0)",
    "lib.median(full((3,), 0, 'complex64'), 0)",
    "lib.median(full((0,), 0, 'float32'))",
    "lib.sum(x.requires_grad_(), dtype=lib.int32)",
    "lib.prod(x.requires_grad_(), 1, dtype=lib.bool)",
    "lib.cumsum(x.requires_grad_(), 0, dtype=lib.int64)",
    "lib.sum(x.requires_grad_(), dtype=lib.float32).detach()",
    "lib.sum(x, dtype=lib.int32)",
    "lib.cumsum(x, 0, dtype=lib.bool)",
    "lib.cumprod(full((0,), 1, 'float32'), 0, dtype=lib.bool)",
    "lib.cumprod(full((), 1, 'float64'), 0, dtype=lib.bool)",
    "full((3,), 1, 'bool').cumsum_(0)",
    "full((0, 3), 1, 'bool').cumprod_(0)",
    "full((3,), 1, 'float32').cumsum_(0, dtype=lib.float64)",
    "full((3,), 1, 'float32').cumsum_(0, dtype=lib.float32)",
    "full((3,), 2, 'int32').cumprod_(0)",
    "lib.nansum(x, dtype=lib.complex64)",
    "lib.nanmean(x, dtype=lib.complex64)",
    "lib.nansum(full((0,), 0, 'float32'), dtype=lib.complex64)",
    "lib.nanmean(x, dim=(1, 0), dtype=lib.int64)",
]


@pytest.mark.parametrize("expression", REDUCTIONS)
def test_reduction_dtypes(torch, expression):
    same_outcome(torch, expression)


SPECIAL = [
    "lib.special.erfcx(full((3,), 0.5, 'float16'))",
    "lib.special.erfcx(full((0,), 0.5, 'bfloat16'))",
    "lib.special.erfcx(full((3,), 0.5, 'complex64'))",
    "lib.special.erfcx(full((3,), 1, 'int64'))",
    "lib.special.ndtri(full((3,), 0.5, 'bfloat16'))",
    "lib.special.log_ndtr(full((), 0.5, 'float16'))",
    "lib.special.log_ndtr(x)",
    "lib.special.round(full((3,), 1, 'int32'))",
    "lib.special.round(full((3,), 1, 'bool'))",
    "lib.special.round(x * 10, decimals=1)",
    "lib.special.multigammaln(full((3,), 1, 'bool'), 2)",
    "lib.mvlgamma(full((0, 3), 1, 'bool'), 2)",
    "lib.special.multigammaln(x + 2, 2)",
    "lib.special.softmax(full((3, 4), 1, 'int64'), 1, dtype=lib.int32)",
    "lib.special.softmax(full((3, 4), 1, 'int64'), -1, dtype=lib.bool)",
    "lib.special.softmax(full((0, 3), 1, 'int32'), -2)",
    "lib.special.softmax(x, 0, dtype=lib.float32)",
    "lib.special.log_softmax(full((2, 3), 1, 'float16'), 1, dtype=lib.complex64)",
    "lib.special.log_softmax(full((0,), 1, 'bool'), 0, dtype=lib.int64)",
    "lib.special.log_softmax(full((0, 3), 1, 'complex64'), -2)",
    "lib.special.log_softmax(x, 1)",
]


@pytest.mark.parametrize("expression", SPECIAL)
def test_special_dtypes(torch, expression):
    same_outcome(torch, expression)


RANDOM_BOUNDS = [
    "full((3, 4), 0, 'int64').random_().ge(0).all()",
    "full((3,), 0, 'int64').random_(5, None).ge(5).all()",
    "full((0,), 0, 'complex64').random_(1)",
    "full((3,), 0, 'complex64').random_(1)",
    "full((3,), 0, 'int64').random_(2**63)",
]


@pytest.mark.parametrize("expression", RANDOM_BOUNDS)
def test_random_bounds(torch, expression):
    same_outcome(torch, expression)


TRACE_CUMMAX = [
    "lib.trace(full((3, 4), 1, 'bool'))",
    "lib.trace(full((0,), 1, 'bool'))",
    "lib.trace(x)",
    "lib.cummax(full((0,), 1, 'complex64'), 0)",
    "lib.cummin(full((0, 3), 1, 'complex64'), -1)",
    "lib.cummax(full((3,), 1, 'complex64'), 0)",
]


@pytest.mark.parametrize("expression", TRACE_CUMMAX)
def test_trace_and_cummax_dtypes(torch, expression):
    same_outcome(torch, expression)
