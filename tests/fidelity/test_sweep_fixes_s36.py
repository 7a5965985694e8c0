"""Disagreements the differential sweep found, checked against PyTorch (recorded): the norms'
dtype and dim checks, the normalizations' and losses' checks, and the gradients PyTorch
declares but has not implemented (floor_divide, unique, detach_copy, remainder of a number,
igamma's by its input), which raise at backward rather than giving none or zeros."""

from __future__ import annotations

import math

import numpy as np
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
    "lib.binary_cross_entropy_with_logits(full((3, 4), 1, 'float64'), full((4,), 1, 'float64'))",
    "lib.binary_cross_entropy_with_logits(full((4,), 1, 'float64'), full((3, 4), 1, 'float64'))",
    "lib.binary_cross_entropy_with_logits(full((4,), 1, 'float64'), full((3, 4), 1, 'float64'), "
    "reduction=1)",
    "lib.binary_cross_entropy_with_logits(full((3, 4), 1, 'float64'), full((5,), 1, 'float64'))",
]


@pytest.mark.parametrize("expression", LOSSES)
def test_loss_checks(torch, expression):
    agree(torch, expression)


def _backward(lib, fn, *shapes):
    """The gradients of ``fn(*leaves).sum()`` by float64 leaves of these shapes (the first
    output where `fn` returns several)."""
    leaves = [
        (lib.arange(math.prod(shape), dtype=lib.float64).reshape(shape) / 7 + 0.5).requires_grad_()
        for shape in shapes
    ]
    result = fn(lib, *leaves)
    result = result[0] if isinstance(result, tuple) else result
    return lib.autograd.grad(result.sum(), leaves, allow_unused=True)


GRADIENTS = {
    "floor_divide": (lambda lib, x, y: lib.floor_divide(x, y), (3, 4), (4,)),
    "floor_divide_number": (lambda lib, x: lib.floor_divide(x, 0.5), (5,)),
    "floordiv_operator": (lambda lib, x: 2 // x, (5,)),
    "div_floor": (lambda lib, x, y: lib.div(x, y, rounding_mode="floor"), (3, 4), (4,)),
    "div_trunc": (lambda lib, x: lib.div(x, 2, rounding_mode="trunc"), (5,)),
    "remainder_of_number": (lambda lib, x: lib.remainder(2, x), (3, 4)),
    "remainder": (lambda lib, x, y: lib.remainder(x, y), (3, 4), (3, 4)),
    "unique": (lambda lib, x: lib.unique(x), (3, 4)),
    "unique_inverse": (lambda lib, x: lib.unique(x, return_inverse=True), (3, 4)),
    "unique_dim": (lambda lib, x: x.unique(dim=-1), (5,)),
    "unique_consecutive": (lambda lib, x: lib.unique_consecutive(x, dim=-2), (3, 4)),
    "detach_copy": (lambda lib, x: lib.detach_copy(x), (3, 4)),
    "fill": (lambda lib, x: lib.fill(x, 1.5), (3, 4)),
    "fill_value_tensor": (lambda lib, x, v: lib.fill(x, v.sum()), (3, 4), (2,)),
    "igamma": (lambda lib, a, x: lib.igamma(a, x), (3, 4), (4,)),
    "igammac": (lambda lib, a, x: lib.igammac(a, x), (5,), (5,)),
    "gammainc_other": (lambda lib, a, x: lib.special.gammainc(a.detach(), x), (3, 4), (4,)),
    "gammaincc_other": (lambda lib, a, x: lib.special.gammaincc(a.detach(), x), (4,), (3, 4)),
    "igamma_other_float32": (
        lambda lib, a, x: lib.igamma(a.detach().float(), x.float()),
        (4,),
        (4,),
    ),
}


@pytest.mark.parametrize("name", list(GRADIENTS))
def test_gradients(torch, name):
    """Where PyTorch's derivative is not implemented its backward raises (the same class
    and message); elsewhere the gradients agree."""
    fn, *shapes = GRADIENTS[name]
    want = _outcome(lambda: _backward(torch, fn, *shapes))
    got = _outcome(lambda: _backward(tocha, fn, *shapes))
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"tocha returned {got!r} where PyTorch raised {want!r}"
        assert (_builtin_base(got), str(got)) == (_builtin_base(want), str(want))
        return
    assert not isinstance(got, Exception), f"tocha raised {got!r}"
    for w, g in zip(want, got, strict=True):
        assert (w is None) == (g is None)
        if w is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


MORE_CHECKS = [
    "lib.fill(full((3,), 1, 'float64'), full((3,), 2, 'float32'))",
    "lib.fill(full((3,), 1, 'float64').requires_grad_(), float('nan')).detach()",
    "lib.fill(full((3,), 1, 'int64'), 2.5)",
    "lib.autograd.grad(lib.fill(full((3,), 1, 'float64').requires_grad_(), 1.5).sum(), [])",
    "lib.unique_consecutive(full((3, 4), 1, 'complex64'), return_counts=True)",
    "lib.unique_consecutive(full((), 1, 'float16'), return_counts=True, dim=-1)",
    "lib.unique_consecutive(full((), 1, 'float16'), return_counts=True)",
    "full((3, 4), 1, 'float32').T.detach_()",
    "lib.detach_(full((3, 4), 1, 'float32')[0])",
    "full((3, 4), 1, 'float32').requires_grad_()[0].detach_()",
    "full((3, 4), 1, 'float32').detach().detach_()",
]


@pytest.mark.parametrize("expression", MORE_CHECKS)
def test_more_checks(torch, expression):
    agree(torch, expression)


DTYPE_REFUSALS = [
    "lib.trapezoid(full((3, 4), 1, 'bool'))",
    "lib.trapezoid(full((3, 4), 1, 'float32'), full((4,), 1, 'bool'))",
    "lib.trapz(full((3, 4), 1, 'bool'), full((3, 4), 1, 'bool'))",
    "lib.trapezoid(full((), 1, 'float32'))",
    "lib.trapz(full((0,), 1, 'bool'), full((0,), 1, 'bool'), dim=-1)",
    "lib.trapezoid(full((0, 3), 1, 'bool'), dim=0)",
    "lib.trapezoid(full((0, 3), 1, 'bool'))",
    "lib.cumulative_trapezoid(full((3, 4), 1, 'bool'))",
    "lib.cumulative_trapezoid(full((), 1, 'bool'), full((), 1, 'bool'), dim=-1)",
    "lib.cumulative_trapezoid(full((), 1, 'float32'))",
    "lib.cov(full((3, 4), 1, 'bool'))",
    "lib.gradient(full((3, 4), 1, 'bool'))",
    "lib.gradient(full((3, 4), 1, 'int64'))",
    "lib.cdist(full((2, 3, 4), 1, 'float16'), full((2, 3, 4), 1, 'float16'))",
    "lib.pdist(full((3, 4), 1, 'bfloat16'))",
    "lib.prelu(full((), 1, 'int64'), full((), 1, 'int64'))",
    "lib.prelu(full((2, 3), 1, 'bool'), full((1,), 1, 'bool'))",
    "lib.avg_pool1d(full((3, 4), 1, 'bool'), (1,))",
    "lib.nn.functional.avg_pool2d(full((2, 3, 4), 1, 'int32'), (1,))",
    "lib.nn.functional.avg_pool2d(full((2, 3, 4), 1, 'int64'), (1,))",
    "lib.nn.functional.avg_pool3d(full((1, 2, 3, 4), 1, 'float16'), (1,))",
    "lib.nn.functional.avg_pool3d(full((1, 2, 3, 4), 1, 'int64'), (1,))",
    "lib.nn.functional.conv1d(full((2, 3, 4), 1, 'bool'), full((2, 3, 4), 1, 'bool'))",
    "lib.nn.functional.conv3d(full((1, 1, 2, 3, 4), 1, 'bool'), full((1, 1, 2, 3, 4), 1, 'bool'))",
    "lib.nn.functional.conv1d(full((2, 3, 4), 1, 'int32'), full((2, 3, 4), 1, 'int32'))",
    "lib.nn.functional.conv_transpose1d(full((2, 3, 4), 1, 'int32'), full((3, 2, 4), 1, 'int32'))",
    "lib.nn.functional.conv_transpose3d(full((1, 1, 2, 3, 4), 1, 'bool'), "
    "full((1, 1, 2, 3, 4), 1, 'bool'))",
    "lib.nn.functional.conv_transpose2d(full((4, 1, 3), 1, 'float64'), "
    "full((4, 1, 3), 1, 'float64'))",
    "lib.conv_transpose2d(full((2, 3, 4), 1, 'float32'), full((2, 3, 4), 1, 'float32'), stride=2)",
    "lib.nn.functional.conv_transpose3d(full((1, 2, 3, 4), 1, 'float32'), "
    "full((1, 2, 3, 4), 1, 'float32'))",
    "lib.nn.functional.conv2d(full((4, 1, 3), 1, 'float32'), full((4, 1, 3), 1, 'float32'))",
]


@pytest.mark.parametrize("expression", DTYPE_REFUSALS)
def test_dtype_refusals(torch, expression):
    agree(torch, expression)


EMPTY_AND_ORDER = [
    "lib.kthvalue(full((0,), 1, 'int32'), 1, dim=0)",
    "lib.kthvalue(full((0, 3), 1, 'bool'), 1, dim=-2, keepdim=True)",
    "lib.kthvalue(full((3, 0), 1, 'float32'), 1)",
    "lib.kthvalue(full((3, 0), 1, 'float32'), 1, dim=0)",
    "lib.kthvalue(full((), 1, 'bool'), 1, dim=-1)",
    "lib.kthvalue(full((3,), 1, 'bool'), 1)",
    "lib.aminmax(full((0,), 1, 'complex64'), dim=-1)",
    "lib.aminmax(full((3,), 1, 'complex64'))",
    "lib.mode(full((), 1, 'complex64'))",
    "lib.mode(full((0,), 1, 'complex64'))",
    "lib.mode(full((3,), 1, 'complex64'))",
    "lib.searchsorted(full((3, 4), 1, 'bool'), full((3, 4), 1, 'bool'))",
    "lib.searchsorted(full((4,), 1, 'bool'), True)",
    "lib.searchsorted(full((4,), 1, 'bool'), 1)",
    "lib.bucketize(full((4,), 1, 'bool'), full((4,), 1, 'bool'))",
    "lib.bincount(full((3,), 1, 'bool'))",
    "lib.bincount(full((3,), 1, 'uint8'))",
    "lib.normal(2, full((), 1, 'complex64'))",
    "lib.normal(full((), 1, 'complex64'), full((), 1, 'complex64'))",
    "lib.svd(full((0, 3), 1, 'float16'))",
    "lib.linalg.svd(full((2, 0, 0), 1, 'float16'))",
    "lib.linalg.svdvals(full((0, 3), 1, 'float16'))",
    "lib.linalg.matrix_rank(full((0, 3), 1, 'bfloat16'), 1e-05)",
    "lib.linalg.eigh(full((0, 0), 1, 'float16'))",
    "lib.linalg.cholesky(full((0, 0), 1, 'float16'))",
    "lib.linalg.det(full((2, 0, 0), 1, 'float16'))",
    "lib.linalg.solve(full((0, 0), 1, 'float16'), full((0, 0), 1, 'float16'))",
    "lib.linalg.qr(full((0, 3), 1, 'float16'))",
    "lib.linalg.svd(full((2, 3), 1, 'float16'))",
    "lib.linalg.cond(full((0, 0), 1, 'float32'))",
    "lib.linalg.cond(full((2, 0, 0), 1, 'float16'))",
    "lib.linalg.cond(full((0, 3), 1, 'float64'))",
    "lib.lu_unpack(full((5,), 1, 'int32'), full((5,), 1, 'int32'))",
    "lib.lu_unpack(full((5,), 1, 'float64'), full((5,), 1, 'float64'))",
    "lib.lu_unpack(full((0, 3), 1, 'int32'), full((0, 3), 1, 'int32'))",
    "lib.lu_unpack(full((2, 0, 3), 1, 'float32'), full((2, 0), 1, 'int32'))",
    "lib.lu_unpack(full((3, 0), 1, 'float64'), full((0,), 1, 'int32'))",
    "lib.lu_unpack(*lib.linalg.lu_factor(lib.tensor([[1.0, 2.0], [3.0, 4.0]])))",
]


COMPLEX_LOGADDEXP = [
    "lib.logaddexp(lib.tensor([1 + 2j, -1000 + 1j, 1000 + 3j, complex('inf'), 0j]), "
    "lib.tensor([0.5 - 1j, -1000 + 0j, 3 + 0j, 1 + 0j, complex('-inf')]))",
    "lib.logaddexp(lib.tensor([1 + 2j, -1000 + 1j], dtype=lib.complex128), "
    "lib.tensor([0.5 - 1j, -1000 + 0j], dtype=lib.complex128))",
    "lib.logaddexp(full((2, 3), 1, 'complex64'), full((3,), 2, 'float32'))",
    "lib.logaddexp(full((0, 3), 1, 'complex64'), full((0, 3), 1, 'complex64'))",
    "lib.logaddexp(full((2, 3), 1, 'int64'), full((3,), 2, 'int64'))",
    "lib.logaddexp2(full((2, 3), 1, 'complex64'), full((3,), 2, 'complex64'))",
    "(lambda a, b: lib.autograd.grad(lib.logaddexp(a, b).abs().sum(), [a, b]))("
    "lib.tensor([1 + 2j, 0.5 - 1j], dtype=lib.complex128, requires_grad=True), "
    "lib.tensor([0.3 + 0.1j, -1 + 1j], dtype=lib.complex128, requires_grad=True))",
]


GRID_SAMPLE = [
    "lib.nn.functional.grid_sample(full((), 1, 'float64'), full((), 1, 'float64'), "
    "align_corners=False)",
    "lib.nn.functional.grid_sample(full((1, 1, 2, 2), 1, 'float64'), full((), 1, 'float64'), "
    "align_corners=False)",
    "lib.nn.functional.grid_sample(full((3,), 1, 'float64'), full((3,), 1, 'float64'), "
    "align_corners=False)",
    "lib.nn.functional.grid_sample(full((2, 3, 4), 1, 'float64'), full((2, 3, 1), 1, 'float64'), "
    "align_corners=False)",
    "lib.nn.functional.grid_sample(full((1, 1, 2, 2), 1, 'float64'), full((3,), 1, 'float64'), "
    "align_corners=False)",
    "lib.nn.functional.grid_sample(full((1, 1, 2, 2), 1, 'float64'), "
    "full((1, 2, 2), 1, 'float64'), align_corners=False)",
    "lib.nn.functional.grid_sample(full((1, 1, 2, 2, 2), 1, 'float64'), "
    "full((1, 2, 2, 2), 0, 'float64'), align_corners=False)",
]


EMPTY_KERNELS = [
    "lib.nn.functional.glu(full((0,), 1, 'float16'))",
    "lib.nn.functional.glu(full((3, 0), 1, 'float32'))",
    "lib.nn.functional.glu(full((2, 3), 1, 'float32'), 0)",
    "lib.repeat_interleave(full((), 1, 'complex64'), full((), 1, 'complex64'), dim=0)",
    "lib.repeat_interleave(full((), 1, 'float32'), full((), 2, 'int64'), dim=-1)",
    "lib.repeat_interleave(full((), 1, 'complex64'), full((), 1, 'int64'))",
    "lib.inner(full((0, 3), 1, 'bool'), full((0, 3), 1, 'bool'))",
    "lib.inner(full((0,), 1, 'bool'), full((0,), 1, 'bool'))",
    "lib.inner(full((2, 3), 1, 'bool'), full((2, 3), 1, 'bool'))",
    "lib.inner(full((3,), 1, 'float32'), full((4,), 1, 'float32'))",
    "lib.inner(full((2, 3), 1, 'float32'), full((4, 2), 1, 'float32'))",
    "lib.mm(full((2, 0), 1, 'bool'), full((0, 2), 1, 'bool'))",
    "lib.mm(full((2, 3), 1, 'bool'), full((3, 0), 1, 'bool'))",
    "lib.mm(full((2, 3), 1, 'bool'), full((3, 2), 1, 'bool'))",
    "lib.tensordot(full((2, 0), 1, 'bool'), full((0, 2), 1, 'bool'), 1)",
    "lib.nn.functional.scaled_dot_product_attention(full((0, 3), 1, 'float64'), "
    "full((0, 3), 1, 'float64'), full((0, 3), 1, 'float64'))",
    "lib.nn.functional.scaled_dot_product_attention(full((0, 3), 1, 'bool'), "
    "full((0, 3), 1, 'bool'), full((0, 3), 1, 'bool'))",
    "lib.nn.functional.scaled_dot_product_attention(full((2, 3, 0), 1, 'float16'), "
    "full((2, 3, 0), 1, 'float16'), full((2, 3, 0), 1, 'float16'))",
    "lib.nn.functional.scaled_dot_product_attention(full((2, 0, 4), 1, 'float32'), "
    "full((2, 5, 3), 1, 'float32'), full((2, 5, 4), 1, 'float32'))",
    "lib.nn.functional.scaled_dot_product_attention(full((2, 3, 4), 1, 'int64'), "
    "full((2, 3, 4), 1, 'int64'), full((2, 3, 4), 1, 'int64'))",
    "lib.nn.functional.multilabel_margin_loss(full((5,), 1, 'float16'), "
    "lib.tensor([-1.7, 0.5, 4.9, 2.0, 1.0], dtype=lib.float16))",
    "lib.nn.functional.multilabel_margin_loss(full((5,), 1, 'float32'), "
    "lib.tensor([5.5, 0.5, 4.9, 2.0, 1.0]))",
    "lib.adaptive_max_pool1d(full((0, 3), 1, 'float32'), (1,))",
    "lib.nn.functional.adaptive_max_pool1d(full((0, 2, 3), 1, 'float32'), 2, True)",
    "lib.nn.functional.adaptive_max_pool1d(full((2, 0, 3), 1, 'float32'), 2)",
    "lib.nn.functional.adaptive_max_pool2d(full((0, 3, 3), 1, 'float32'), 2)",
    "lib.nn.functional.adaptive_max_pool2d(full((3, 0, 3), 1, 'float32'), 2)",
    "lib.nn.functional.adaptive_max_pool2d(full((2, 3, 3, 0), 1, 'float32'), 2)",
]


OUT_ARGUMENTS = [
    "lib.argsort(full((3, 4), 1, 'float32'), stable=True, out=lib.empty(0, dtype=lib.int64))",
    "lib.argsort(lib.tensor([3, 1, 2]), stable=False, descending=True, "
    "out=lib.empty(0, dtype=lib.int64))",
    "lib.argsort(lib.tensor([3, 1, 2]), out=lib.empty(0, dtype=lib.int64))",
    "lib.argsort(lib.tensor([3, 1, 2]), stable=True, out=lib.empty(0))",
    "lib.argsort(lib.tensor([3, 1, 2]), 0, True)",
    "lib.tensor([3, 1, 2]).argsort(stable=True)",
    "lib.nonzero_static(lib.tensor([0, 1, 2]), size=1, out=lib.empty(0, dtype=lib.int64))",
    "lib.nonzero_static(lib.tensor([0, 1, 2]), size=4, out=lib.empty(0))",
    "lib.tensor([0, 1, 2]).nonzero_static(size=1, out=lib.empty(0, dtype=lib.int64))",
    "lib.tensor([0, 1, 2]).nonzero_static(size=3)",
    "lib.embedding(full((0, 3), 1, 'float32'), lib.tensor([0, 1, 2]))",
    "lib.nn.functional.embedding(lib.tensor([0, 1]), full((0, 3), 1, 'float32'))",
    "lib.embedding(full((0, 3), 1, 'float32'), lib.tensor([], dtype=lib.int64))",
    "lib.embedding(full((2, 3), 1, 'float32'), lib.tensor([5]))",
    "lib.add(full((3,), 1, 'int64'), full((3,), 1, 'int64'), alpha=1.0)",
    "lib.add(full((3,), 1, 'bool'), full((3,), 1, 'bool'), alpha=0.5)",
    "full((3,), 1, 'bool').add_(full((3,), 1, 'bool'), alpha=0.5)",
    "lib.add(full((3,), 1, 'bool'), full((3,), 1, 'bool'), alpha=2)",
    "lib.sub(full((3,), 1, 'int64'), 2, alpha=1.0)",
    "lib.add(full((3,), 1, 'float32'), full((3,), 1, 'int64'), alpha=1.5)",
    "lib.tensor([True, False, False, True]).index_add_(-1, lib.tensor([0, 1, 2, 3]), "
    "lib.tensor([False, True, False, True]), alpha=0.5)",
    "lib.tensor([True, False, False, True]).index_add(0, lib.tensor([0, 1, 2, 3]), "
    "lib.tensor([False, True, False, True]), alpha=0.0)",
    "lib.tensor([1, 0, 0, 1]).index_add(0, lib.tensor([0, 1, 2, 3]), lib.tensor([0, 1, 0, 1]), "
    "alpha=1.5)",
    "lib.addr(full((2, 2), 1, 'bool'), full((2,), 1, 'bool'), full((2,), 1, 'bool'), alpha=0.5)",
    "lib.addr(full((2, 2), 1, 'bool'), full((2,), 1, 'bool'), full((2,), 1, 'bool'), beta=0.5)",
    "lib.addr(full((2, 2), 1, 'bool'), full((2,), 0, 'bool'), full((2,), 1, 'bool'), beta=2, "
    "alpha=3)",
    "lib.addr(full((2, 2), 1, 'bool'), full((2,), 1, 'bool'), full((2,), 1, 'bool'), beta=0, "
    "alpha=0)",
    "lib.addr(full((2, 2), 1, 'int32'), full((2,), 1, 'int32'), full((2,), 1, 'int32'), alpha=0.5)",
    "lib.addr(full((2, 2), 1, 'bool'), full((2,), 1, 'int32'), full((2,), 1, 'int32'))",
    "lib.histogramdd(full((), 1, 'float64'), (4,))",
    "lib.histogramdd(full((), 1, 'float64'), 4)",
    "lib.histogram(full((5,), 1, 'float16'))",
    "lib.histogram(full((), 1, 'float16'), 3)",
    "lib.histogram(full((5,), 1, 'float16'), full((3,), 1, 'float16'))",
]


@pytest.mark.parametrize("expression", OUT_ARGUMENTS)
def test_out_arguments(torch, expression):
    agree(torch, expression)


def test_argsort_method_takes_no_out(torch):
    """A TypeError as PyTorch's (whose message lists its parser's overloads)."""
    same_outcome(torch, "lib.tensor([3, 1, 2]).argsort(stable=True, out=lib.empty(0))")


@pytest.mark.parametrize("expression", EMPTY_KERNELS)
def test_empty_kernels(torch, expression):
    agree(torch, expression)


@pytest.mark.parametrize("expression", GRID_SAMPLE)
def test_grid_sample_check_order(torch, expression):
    agree(torch, expression)


@pytest.mark.parametrize("expression", COMPLEX_LOGADDEXP)
def test_complex_logaddexp(torch, expression):
    agree(torch, expression)


@pytest.mark.parametrize("expression", EMPTY_AND_ORDER)
def test_empty_inputs_and_check_order(torch, expression):
    agree(torch, expression)
