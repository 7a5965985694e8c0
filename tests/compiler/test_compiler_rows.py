"""The numba row kernels that replace primitives' kernels in compiled graphs (softmax's
backward over the last dim): equal to the primitive's, with its fallbacks."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import tocha
import tocha.nn.functional as F
from tocha.compiler import _codegen_numba
from tocha.compiler._codegen_rows import row_kernels
from tocha.library import REGISTRY

pytestmark = pytest.mark.skipif(not _codegen_numba.available(), reason="numba not installed")

CPU = tocha.device("cpu")


@pytest.fixture(scope="module", autouse=True)
def numba_loaded():
    assert _codegen_numba.wait_for_numba(120)


def _probabilities(shape, rng):
    x = rng.standard_normal(shape).astype(np.float32) * 4
    e = np.exp(x - x.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("m", [1, 7, 8, 64, 128, 129, 300])
def test_softmax_backward_rows_equal_the_primitive(m):
    rng = np.random.default_rng(m)
    y = _probabilities((4, 3, m), rng)
    g = rng.standard_normal(y.shape).astype(np.float32)
    g[0, 0, 0], g[1, 1, -1] = np.nan, np.inf
    ours = row_kernels(CPU)["softmax_backward_data"](g, y, 2)
    with np.errstate(all="ignore"):  # as kernels run (tocha.library.kernel_context)
        reference = REGISTRY["softmax_backward_data"].kernels[CPU](g, y, 2)
    assert ours.dtype == reference.dtype and ours.shape == reference.shape
    if m <= 128:  # NumPy's summation order: exactly its result
        np.testing.assert_array_equal(ours, reference)
    else:
        np.testing.assert_allclose(ours, reference, rtol=1e-5, atol=1e-6)


def test_other_dims_dtypes_and_layouts_fall_back_to_the_primitive():
    rng = np.random.default_rng(0)
    y = _probabilities((5, 6), rng)
    g = rng.standard_normal((5, 6)).astype(np.float32)
    kernel = row_kernels(CPU)["softmax_backward_data"]
    reference = REGISTRY["softmax_backward_data"].kernels[CPU]
    cases = [(g, y, 0), (g.astype(np.float64), y.astype(np.float64), 1), (g.T, y.T, 1)]
    for args in cases:
        np.testing.assert_array_equal(kernel(*args), reference(*args))
    empty = np.zeros((0, 3), np.float32)
    assert kernel(empty, empty, 1).shape == (0, 3)


def test_attention_gradients_through_the_row_kernel_match_eager(monkeypatch, caplog):
    monkeypatch.setenv("TOCHA_LOGS", "kernels")
    caplog.set_level(logging.DEBUG, logger="tocha.compiler")
    tocha.manual_seed(0)
    q, k = tocha.randn(2, 4, 32, 8, requires_grad=True), tocha.randn(2, 4, 32, 8)
    mask = tocha.tril(tocha.ones(32, 32)) == 0

    def attention(q, k):
        scores = (q @ k.transpose(-2, -1)) * 0.5
        return F.softmax(scores.masked_fill(mask, float("-inf")), -1)

    compiled = tocha.compile(attention)
    weights = tocha.randn(2, 4, 32, 32)
    for _ in range(2):
        q.grad = None
        (compiled(q, k) * weights).sum().backward()
    got = q.grad
    q.grad = None
    (attention(q, k) * weights).sum().backward()
    assert tocha.allclose(got, q.grad, rtol=1e-5, atol=1e-6)
    assert tocha.allclose(compiled(q, k), attention(q, k), rtol=1e-6, atol=1e-7)
    assert "where" in caplog.text  # the scaling and masked_fill ran as one fused kernel
