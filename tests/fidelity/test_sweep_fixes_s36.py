"""Disagreements the differential sweep found, checked against PyTorch (recorded): the norms'
dtype and dim checks."""

from __future__ import annotations

import pytest

import tocha
from tests.fidelity.test_fidelity_fixes import _builtin_base, _outcome
from tests.fidelity.test_sweep_fixes_signatures import same_outcome


def _env(lib) -> dict:
    return {
        "lib": lib,
        "full": lambda shape, value, dtype: lib.full(shape, value, dtype=getattr(lib, dtype)),
    }


def same_error(torch, expression: str) -> None:
    """The expression raises in both libraries: the same builtin class and message. It sees
    ``lib`` (torch or tocha) and ``full(shape, value, dtype_name)``."""
    want = _outcome(lambda: eval(expression, _env(torch)))
    got = _outcome(lambda: eval(expression, _env(tocha)))
    assert isinstance(want, Exception), f"PyTorch returned {want!r}"
    assert isinstance(got, Exception), f"tocha returned {got!r} where PyTorch raised {want!r}"
    assert (_builtin_base(got), str(got)) == (_builtin_base(want), str(want))


def agree(torch, expression: str) -> None:
    """`same_error` where PyTorch raises, else `same_outcome` (shapes, dtypes and values)."""
    if isinstance(_outcome(lambda: eval(expression, _env(torch))), Exception):
        same_error(torch, expression)
    else:
        same_outcome(torch, expression)


NORM_ERRORS = [
    "lib.linalg.matrix_norm(full((2, 3, 4), 1, 'float32'), 2, dim=(1, 0, 2))",
    "lib.linalg.matrix_norm(full((2, 3, 4), 1, 'float32'), dim=(1,))",
    "lib.nuclear_norm(full((2, 3, 4), 1, 'float64'), (1, 2, 0))",
    "lib.linalg.matrix_norm(full((0, 3), 1, 'bfloat16'), dtype=lib.float16)",
    "lib.linalg.matrix_norm(full((3, 4), 1, 'float64'), dtype=lib.float16)",
    "lib.linalg.matrix_norm(full((3, 4), 1, 'float32'), 1, dtype=lib.float16)",
    "lib.linalg.matrix_norm(full((3, 4), 1, 'complex64'), 2, dtype=lib.float32)",
    "lib.linalg.matrix_norm(full((3, 4), 1, 'float16'), dtype=lib.complex64)",
    "lib.linalg.matrix_norm(full((3, 4), 1, 'float32'), dtype=lib.int64)",
    "lib.linalg.vector_norm(full((3, 4), 1, 'float64'), dtype=lib.float16)",
    "lib.linalg.vector_norm(full((3, 4), 1, 'float16'), dtype=lib.bfloat16)",
    "lib.linalg.vector_norm(full((3, 4), 1, 'complex128'), dtype=lib.complex64)",
    "full((5,), 1, 'float64').norm(dim=(0,), dtype=lib.float32)",
    "lib.norm(full((4, 1, 3), 1, 'float32'), p=2.0, dim=(0, 2, 1), dtype=lib.bfloat16)",
    "lib.norm(full((4, 1, 3), 1, 'float32'), p='nuc', dim=(0, 2), dtype=lib.float16)",
    "lib.linalg.norm(full((4, 1, 3), 1, 'float32'), dim=(2, 0, 1))",
    "lib.linalg.norm(full((4, 1, 3), 1, 'float32'), 2, dim=())",
]


@pytest.mark.parametrize("expression", NORM_ERRORS)
def test_norm_errors(torch, expression):
    same_error(torch, expression)


NORM_VALUES = [
    "lib.linalg.matrix_norm(full((3, 4), 1, 'float16'), dtype=lib.float64)",
    "lib.linalg.matrix_norm(full((3, 4), 1, 'float32'), 'nuc', dtype=lib.float64)",
    "lib.linalg.vector_norm(full((3, 4), 1, 'complex64'), dtype=lib.complex128)",
    "lib.norm(full((4, 1, 3), 1, 'bfloat16'), p='fro', dim=(0, 2), dtype=lib.float32)",
    "lib.linalg.norm(full((4, 1, 3), 1, 'float32'), dim=(2, 0))",
]


@pytest.mark.parametrize("expression", NORM_VALUES)
def test_norm_values(torch, expression):
    same_outcome(torch, expression)


NORMALIZATION = [
    "lib.nn.functional.batch_norm(full((), 1, 'float64'), full((), 1, 'float64'), "
    "full((), 1, 'float64'))",
    "lib.nn.functional.batch_norm(full((0,), 1, 'float32'), full((0,), 1, 'float32'), "
    "full((0,), 1, 'float32'))",
    "lib.nn.functional.batch_norm(full((0, 3), 1, 'int64'), full((3,), 1, 'int64'), "
    "full((3,), 1, 'int64'))",
    "lib.nn.functional.batch_norm(full((0, 3), 1, 'float32'), full((2,), 1, 'float32'), "
    "full((2,), 1, 'float32'), training=True)",
    "lib.nn.functional.batch_norm(full((5,), 1, 'float32'), full((5,), 1, 'float32'), "
    "full((5,), 1, 'float32'))",
    "lib.nn.functional.batch_norm(full((5,), 1, 'float32'), full((0,), 1, 'float32'), "
    "full((0,), 1, 'float32'))",
    "lib.nn.functional.batch_norm(full((2, 3), 1, 'int64'), full((3,), 1, 'int64'), "
    "full((3,), 1, 'int64'))",
    "lib.nn.functional.batch_norm(full((2, 3), 1, 'complex64'), full((3,), 1, 'complex64'), "
    "full((3,), 1, 'complex64'))",
    "lib.nn.functional.instance_norm(full((2, 3, 4), 1, 'bool'))",
    "lib.group_norm(full((5,), 1, 'float64'), 1)",
    "lib.group_norm(full((), 1, 'bool'), 1)",
    "lib.group_norm(full((2, 4), 1, 'int64'), 1)",
    "lib.nn.functional.group_norm(full((5,), 1, 'float64'), 1)",
    "lib.nn.functional.group_norm(full((), 1, 'int32'), 1)",
    "lib.rms_norm(full((), 1, 'float64'), (1,))",
    "lib.rms_norm(full((3,), 1, 'float64'), (1, 3))",
    "lib.rms_norm(full((), 1, 'float64'), ())",
    "lib.rms_norm(full((3,), 1, 'float64'), (2,))",
    "lib.norm_except_dim(full((0,), 1, 'float32'))",
    "lib.norm_except_dim(full((3, 0), 1, 'float32'), 2, 1)",
    "lib.norm_except_dim(full((3, 0, 2), 1, 'float32'), 2, 1)",
    "lib.norm_except_dim(full((), 1, 'float32'))",
    "full((), 1, 'float32').size(0)",
    "full((), 1, 'float32').stride(-1)",
]


@pytest.mark.parametrize("expression", NORMALIZATION)
def test_normalization_checks(torch, expression):
    agree(torch, expression)


def test_batch_norm_of_a_0_dim_input(torch):
    """PyTorch's own message here is an internal one (a SmallVector that cannot grow)."""
    same_outcome(
        torch,
        "lib.nn.functional.batch_norm(full((), 1, 'float64'), full((0,), 1, 'float64'), "
        "full((0,), 1, 'float64'))",
    )


LOSSES = [
    "lib.margin_ranking_loss(full((3, 4), 1, 'float32'), full((4,), 1, 'float32'), "
    "full((4,), 1, 'float32'))",
    "lib.margin_ranking_loss(full((4, 1, 3), 1, 'int32'), full((1, 3), 1, 'int32'), "
    "full((4, 1, 3), 1, 'int32'))",
    "lib.margin_ranking_loss(full((2, 3, 4), 1, 'complex64'), full((2, 3, 4), 1, 'complex64'), "
    "full((3, 4), 1, 'complex64'))",
    "lib.margin_ranking_loss(lib.arange(3), lib.arange(3) * 2, lib.tensor([1, -1, 1]), 0.5, 2)",
    "lib.nn.functional.margin_ranking_loss(full((2, 3), 1, 'int32'), full((2, 3), 1, 'int32'), "
    "full((2, 3), 1, 'int32'))",
    "lib.nn.functional.margin_ranking_loss(full((2, 3), 1, 'int32'), full((2, 3), 1, 'int32'), "
    "full((2, 3), 1, 'int32'), reduction='none')",
    "lib.hinge_embedding_loss(lib.tensor([0, 1, 3, -2]), lib.tensor([-1, -1, 1, 0]), 1.5, 0)",
    "lib.nn.functional.hinge_embedding_loss(full((3, 4), 1, 'int32'), full((3, 4), 1, 'int32'), "
    "reduction='sum')",
    "lib.nn.functional.binary_cross_entropy(full((2, 3), 1, 'int32'), full((2, 3), 1, 'int32'))",
    "lib.nn.functional.binary_cross_entropy(full((0, 3), 1, 'int64'), full((0, 3), 1, 'int64'))",
    "lib.nn.functional.binary_cross_entropy(full((2, 3), 1, 'bool'), full((2, 3), 1, 'bool'))",
    "lib.nn.functional.binary_cross_entropy(full((2, 3), 1, 'complex64'), "
    "full((2, 3), 1, 'complex64'))",
    "lib.nn.functional.mse_loss(full((0,), 1, 'bool'), full((0,), 1, 'bool'))",
    "lib.nn.functional.smooth_l1_loss(full((0, 3), 1, 'bool'), full((3,), 1, 'bool'))",
    "lib.nn.functional.soft_margin_loss(full((3, 4), 1, 'float64'), "
    "full((3, 4), 1, 'float64').requires_grad_())",
    "lib.nn.functional.nll_loss(full((5,), 1, 'float64'), full((5,), 1, 'int32'))",
    "lib.nn.functional.nll_loss(full((2, 3), 1, 'float64'), full((2,), 1, 'float64'), "
    "weight=full((2,), 1, 'float64'))",
    "lib.nn.functional.nll_loss(full((5,), 1, 'float64'), full((5,), 1, 'int64'))",
    "lib.nn.functional.cross_entropy(full((5,), 1, 'float64'), full((3,), 1, 'float64'))",
    "lib.nn.functional.cross_entropy(full((), 1, 'float64'), full((3,), 1, 'int64'))",
    "lib.nn.functional.cross_entropy(full((), 1, 'bfloat16'), full((), 1, 'bfloat16'))",
    "lib.nn.functional.cross_entropy(full((), 1, 'complex64'), full((), 1, 'complex64'))",
    "lib.nn.functional.cross_entropy(full((5,), 1, 'float32'), full((5,), 1, 'float32'))",
    "lib.nn.functional.linear_cross_entropy(full((5,), 1, 'float32'), full((5,), 1, 'float32'), "
    "full((5,), 1, 'float32'))",
    "lib.nn.functional.linear_cross_entropy(full((3, 4), 1, 'int32'), full((3, 4), 1, 'int32'), "
    "full((3, 4), 1, 'int32'))",
    "lib.nn.functional.multilabel_margin_loss(full((5,), 1, 'float16'), full((5,), 1, 'float16'))",
    "lib.nn.functional.multilabel_margin_loss(full((5,), 1, 'int64'), full((5,), 1, 'int64'))",
    "lib.nn.functional.multilabel_margin_loss(full((2, 3), 1, 'float32'), "
    "full((2, 3), 1, 'int32'))",
    "lib.nn.functional.multilabel_margin_loss(full((0, 3), 1, 'float32'), "
    "full((0, 3), 1, 'int64'), reduction='none')",
]


@pytest.mark.parametrize("expression", LOSSES)
def test_loss_checks(torch, expression):
    agree(torch, expression)
