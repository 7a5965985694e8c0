"""Exceptions of PyTorch's type (and message) for the biggest groups of the sweep's
exception-type differences; checked against PyTorch (recorded)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.fidelity.test_fidelity_fixes import (
    _builtin_base,
    _outcome,
    assert_same_error,
    assert_same_error_class,
)

SHAPES = [(), (5,), (0, 3), (3, 4), (4, 1, 3), (2, 3, 4)]


@pytest.mark.parametrize("name", ["addbmm", "baddbmm"])
@pytest.mark.parametrize("b1", SHAPES[:4])
@pytest.mark.parametrize("b2", [(), (3, 4), (2, 3, 4)])
def test_batched_addmm_reads_sizes_before_checking_dims(torch, name, b1, b2):
    def call(lib):
        return getattr(lib, name)(lib.ones(3, 4), lib.ones(b1), lib.ones(b2))

    # PyTorch's message for a wrong input size comes from its expand, which tocha words
    # its own way: the class is compared (IndexError where a size read fails).
    assert_same_error_class(lambda: call(torch), lambda: call(tocha))


@pytest.mark.parametrize(
    "expression",
    [
        "lib.resize_as_sparse_(x, x)",
        "x.sparse_resize_((3,), 1, 0)",
        "x.sparse_resize_and_clear_((3,), 1, 0)",
    ],
)
def test_sparse_only_inplace_ops_on_a_dense_tensor(torch, expression):
    def call(lib):
        return eval(expression, {"x": lib.ones(3), "lib": lib})

    want, got = _error(lambda: call(torch)), _error(lambda: call(tocha))
    assert type(got) is NotImplementedError and type(want) is NotImplementedError
    assert str(want).startswith(str(got).split(" This could")[0])


def _error(call) -> Exception:
    try:
        call()
    except Exception as exc:  # the outcome compared is the exception itself
        return exc
    raise AssertionError("no exception")


@pytest.mark.parametrize(
    "expression",
    [
        "lib.split(lib.tensor(1.0), 2)",
        "lib.split(lib.tensor(1.0), 2, dim=4)",
        "lib.split_with_sizes(lib.tensor(1.0), (1,))",
        "lib.split(lib.ones(3), 2, 5)",
        "lib.zeros(3, 4).index_fill(0, lib.zeros(2, 2, dtype=lib.long), 1.0)",
        "lib.zeros(3, 4).index_fill_(0, lib.zeros(2, 2, dtype=lib.long), lib.tensor(1.0))",
        "lib.zeros(3, 4).index_select(0, lib.zeros(2, 2, dtype=lib.long))",
        "lib.einsum()",
        "lib.einsum(lib.ones(2))",
        "lib.einsum('i')",
        "lib.tril_indices(2, 2, dtype=lib.float32)",
        "lib.triu_indices(2, 2, dtype=lib.int16)",
        "lib.repeat_interleave(lib.ones(2, 3))",
        "lib.tensordot(lib.ones(3, 4), lib.ones(3, 4), (1,))",
        "lib.tensordot(lib.ones(3, 4), lib.ones(3, 4), [[1], [0], [1]])",
        "lib.ones(3, 4).resize(-1)",
        "lib.ones(3, 4).resize(5)",
        "lib.ones(3, 4).resize((2, 6))",
        "lib.hann_window(3, dtype=lib.complex64)",
        "lib.nn.functional.conv_transpose1d(lib.ones(3, 4), lib.ones(3, 4))",
        "lib.nn.functional.conv1d(lib.ones(3, 4), lib.ones(3))",
        "lib.nn.functional.embedding_bag(lib.ones(5), lib.ones(5))",
        "lib.nn.functional.embedding_bag(lib.ones(5), lib.ones(5, 3))",
        "lib.nn.functional.avg_pool2d(lib.ones(5), 1)",
        "lib.nn.functional.avg_pool2d(lib.ones(3, 4), 1)",
        "lib.nn.functional.avg_pool2d(lib.tensor(1.0), 1)",
        "lib.fft.fftshift(lib.tensor(1.0))",
        "lib.fft.ifftshift(lib.ones(3), dim=())",
        "lib.linalg.vecdot(lib.ones(3, dtype=lib.int32), lib.ones(3))",
        "lib.linalg.vecdot(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool))",
        "lib.nn.functional.cosine_similarity(lib.ones(2, 3).long(), lib.ones(2, 3).long())",
        "lib.cosine_similarity(lib.ones(2, 3, dtype=lib.complex64), lib.ones(2, 3))",
        "lib.lu_unpack(lib.ones(3, 4), lib.zeros(0))",
        "lib.lu_unpack(lib.ones(3, 4), lib.zeros(3, dtype=lib.int64))",
        "lib.ones(3, 4).narrow(0, lib.tensor([1]), 1)",
        "lib.ones(3, 4).narrow(0, lib.tensor(1.0), 1)",
        "lib.narrow(lib.ones(3, 4), 1, lib.tensor(True), 1)",
        "lib.narrow(lib.ones(3, 4), 1, lib.ones(2, 2), 1)",
        "lib.ormqr(lib.ones(5), lib.ones(5), lib.ones(5))",
        "lib.cholesky_inverse(lib.tensor(2.0))",
        "lib.nn.functional.scaled_dot_product_attention(lib.ones(5), lib.ones(5), lib.ones(5))",
        "lib.nn.functional.scaled_dot_product_attention(lib.ones(5), lib.ones(2, 5), lib.ones(5))",
    ],
)
@pytest.mark.filterwarnings("ignore:non-inplace resize is deprecated")
def test_errors(torch, expression):
    assert_same_error(
        lambda: eval(expression, {"lib": torch}), lambda: eval(expression, {"lib": tocha})
    )


def test_cosine_similarity_computes_in_the_common_dtype(torch):
    def call(lib):
        x = lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float16)
        y = lib.tensor([[1, 0, 2]])
        result = lib.nn.functional.cosine_similarity(x.float(), y.double())
        return str(result.dtype).split(".")[-1], result.tolist()

    (want_dtype, want), (got_dtype, got) = call(torch), call(tocha)
    assert got_dtype == want_dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("start", ["lib.tensor(1)", "lib.tensor(-2, dtype=lib.int32)", "-2", "0"])
def test_narrow_starts(torch, start):
    def call(lib):
        x = lib.arange(12.0).reshape(3, 4)
        return x.narrow(1, eval(start, {"lib": lib}), 2).tolist()

    assert call(tocha) == call(torch)


@pytest.mark.parametrize("expression", ["x.repeat_interleave()", "x.repeat_interleave(None)"])
def test_repeat_interleave_method_needs_repeats(torch, expression):
    """Only the function has the form without `repeats` (a TypeError from PyTorch's argument
    parser, whose message tocha does not copy)."""
    assert_same_error_class(
        lambda: eval(expression, {"x": torch.ones(3)}),
        lambda: eval(expression, {"x": tocha.ones(3)}),
    )


@pytest.mark.parametrize(
    "expression",
    [
        "lib.conj_physical_('abc')",
        "lib.detach_('abc')",
        "lib.ldexp_('abc', lib.ones(3))",
        "lib.positive('abc')",
        "lib.renorm('abc', 2, 0, 1.0)",
        "lib.cross(lib.ones(3, 3), 'abc', dim=0)",
        "lib.take_along_dim('abc', lib.zeros(3, 3, dtype=lib.long), 0)",
        "lib.tril_indices(2, 2, dtype='float32')",
        "lib.linalg.vector_norm(lib.ones(3), dtype='float32')",
        "lib.hspmm(lib.eye(3).to_sparse(), 'abc')",
        "lib.smm('abc', lib.ones(3, 3))",
        "lib.sspaddmm(lib.eye(3).to_sparse(), lib.eye(3).to_sparse(), 'abc')",
        "lib.full((2, 3), 0.5, dtype='float32')",
        "lib.full_like(lib.ones(2), 0.5, dtype='float32')",
        "lib.index_put('abc', [lib.zeros(2, dtype=lib.long)], lib.ones(2))",
        "lib.put('abc', lib.zeros(2, dtype=lib.long), lib.ones(2))",
        "lib.repeat_interleave('abc')",
    ],
)
def test_non_tensor_arguments(torch, expression):
    """PyTorch's TypeError naming the argument (was an AttributeError or KeyError from
    inside tocha)."""
    assert_same_error(
        lambda: eval(expression, {"lib": torch}), lambda: eval(expression, {"lib": tocha})
    )


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool"])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (4, 1, 3), (2, 1, 2, 3)])
@pytest.mark.parametrize("lengths", ["(1,)", "lib.tensor([1.0])"])
def test_ctc_loss_checks_in_pytorchs_order(torch, dtype, shape, lengths):
    """Float lengths, an unbatched 0-d log_probs, its kernel's dtypes, then dims (was
    ValueErrors from unpacking shapes)."""

    def call(lib):
        n = eval(lengths, {"lib": lib})
        log_probs = lib.zeros(shape, dtype=getattr(lib, dtype))
        return lib.nn.functional.ctc_loss(log_probs, lib.ones(1, 1, dtype=lib.long), n, n)

    want, got = _outcome(lambda: call(torch)), _outcome(lambda: call(tocha))
    if isinstance(want, Exception):
        assert _builtin_base(got) == _builtin_base(want), (got, want)
    else:
        assert not isinstance(got, Exception), got


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "expression",
    [
        "L.lu(a)",
        "L.lu_factor_ex(a)",
        "L.det(a)",
        "L.solve(a, a)",
        "L.svd(a)",
        "L.svdvals(a)",
        "L.cond(a)",
        "L.cholesky(a)",
        "L.qr(a)",
        "L.eigh(a)",
        "L.eigvals(a)",
        "L.householder_product(a, a[0])",
        "L.solve_triangular(a, a, upper=True)",
        "L.inv(a)",
        "L.matrix_rank(a)",
    ],
)
def test_linalg_low_precision_errors(torch, dtype, expression):
    """The functions whose CPU kernel has no half/bfloat16 form name it (NotImplementedError);
    the others keep PyTorch's 'Low precision dtypes not supported' (RuntimeError)."""

    if expression == "L.eigvals(a)" and dtype == "float16":
        pytest.skip(
            "PyTorch warns once per process that ComplexHalf is experimental here, so its "
            "recorded answer would depend on the order the tests run in"
        )

    def call(lib):
        a = lib.eye(3, dtype=getattr(lib, dtype))
        return eval(expression, {"L": lib.linalg, "a": a})

    assert_same_error_class(lambda: call(torch), lambda: call(tocha))
