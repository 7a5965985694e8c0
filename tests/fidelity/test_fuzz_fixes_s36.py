"""The bad-input fuzzer's raw errors and silent acceptances of session 36, made PyTorch's:
histograms over edges that do not increase, fills that overflow their dtype, and more;
checked against PyTorch (recorded)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tests.fidelity.test_fidelity_fixes import assert_same_error, assert_same_error_class

EDGES = "lib.tensor([0.0, 2.0, 1.0, 3.0])"
DATA = "lib.tensor([0.5, 1.5, 2.5, 1.0, 2.0, 3.0, 0.0, -1.0, 1.2])"

# Same class and message as PyTorch's.
SAME_ERROR = [
    "lib.empty(3, dtype=lib.float16).fill_(1e6)",
    "lib.empty(0, dtype=lib.float16).fill_(1e6)",
    "lib.empty(3, dtype=lib.float16).fill_(2**40)",
    "lib.empty((), dtype=lib.float32).fill_(1e300)",
    "lib.empty(1, dtype=lib.complex64).fill_(1e300)",
    "lib.empty(3, dtype=lib.bfloat16).fill_(-1e300)",
    "lib.empty(3, dtype=lib.int32).fill_(2**40)",
    "lib.empty(1, dtype=lib.int8).fill_(300)",
    "lib.empty(1, dtype=lib.int8).fill_(127.9)",
    "lib.empty(1, dtype=lib.int8).fill_(-128.5)",
    "lib.empty(3, dtype=lib.uint8).fill_(-1000)",
    "lib.empty(3, dtype=lib.uint8).fill_(-0.5)",
    "lib.empty(3, dtype=lib.int64).fill_(2**63)",
    "lib.empty(3, dtype=lib.int32).fill_(float('nan'))",
    "lib.empty(3, dtype=lib.int32).fill_(float('inf'))",
    "lib.ones(3, requires_grad=True).clone().fill_(1e300)",
    "lib.full((3,), 2.5e10, dtype=lib.int8)",
    "lib.full((3,), float('inf'), dtype=lib.int32)",
    "lib.full((3,), 256, dtype=lib.uint8)",
    "lib.full_like(lib.ones(2, dtype=lib.int16), 40000)",
    "lib.full((3,), 2**40, dtype=lib.float16)",
    "lib.empty(3).fill_(2 + 1j)",
    "lib.full((3,), 2 + 1j, dtype=lib.int32)",
    "lib.empty(3, dtype=lib.int8).fill_(np.int64(300))",
    "lib.empty(3, dtype=lib.float16).fill_(np.float64(1e6))",
    "lib.ctc_loss(x.log_softmax(1), lib.ones(7).long(), (1,), (1,))",
    "lib.nn.functional.ctc_loss(x.log_softmax(1), lib.ones(2).long(), (1,), (1,))",
    "lib.ctc_loss(x.log_softmax(1), lib.ones(()).long(), (1,), (1,))",
    "lib.max_pool1d(x.long(), (1,))",
    "lib.nn.functional.max_pool1d(x.to(lib.uint8), 1)",
    "lib.sparse_coo_tensor((2**40, 2**40))",
    "lib.sparse_coo_tensor(lib.zeros(2, 0).long(), lib.zeros(0), (2**62, 2))",
    "F.elu(x, alpha=1e300)",
    "F.elu(x.long(), alpha=1e300)",
    "F.celu(x.half(), alpha=1e39)",
    "F.leaky_relu_(x.clone(), 1e300)",
    "F.leaky_relu(x.to(lib.complex64), 1e300)",
    "F.softplus(x, threshold=1e300)",
    "F.softplus(x.bfloat16(), beta=-1e39)",
    "F.threshold(x, 1e300, 1.5)",
    "F.threshold_(x.half(), 0.5, 1e5)",
    "F.threshold(x.long(), float('nan'), 1)",
    "F.hardtanh(x, max_val=1e300)",
    "F.hardtanh(x.half(), -1e5, 1.0)",
    "F.hardtanh(x.long(), max_val=float('inf'))",
    "F.hardshrink(x.half(), 1e5)",
    "x.clamp(min=1e300)",
    "x.half().clamp(max=1e5)",
    "x.long().clamp(1e39)",
    "x.clone().clamp_max_(1e300)",
    "lib.clip(x.bfloat16(), -1e39, 0.5)",
    "x.logit(1e300)",
    "lib.special.logit(x.half(), eps=1e5)",
    "lib.lerp(x, x, 1e300)",
    "x.half().lerp(x.half(), 1e39)",
    "x.to(lib.complex64).lerp_(x.to(lib.complex64), 1e300)",
    "x.clone().index_add_(0, lib.tensor([0]), x[:1], alpha=1e300)",
    "x.long().index_add_(0, lib.tensor([0]), x[:1].long(), alpha=float('nan'))",
    "F.hinge_embedding_loss(x, x, margin=1e300)",
    "F.hinge_embedding_loss(x.long(), x.long(), margin=float('nan'))",
    "F.normalize(x, eps=1e300)",
    "F.normalize(x.half(), eps=1e5)",
    "x.sum(1, keepdim=2)",
    "lib.sum(x, (0, 1), keepdim='abc')",
    "x.prod(1, keepdim=1)",
    "x.amax(keepdim=2)",
    "lib.amin(x, 0, keepdim=None)",
    "x.aminmax(keepdim=2)",
    "x.argmax(keepdim='abc')",
    "lib.argmin(x, 1, keepdim=object())",
    "x.median(0, keepdim=2)",
    "lib.nanmedian(x, 1, keepdim=2)",
    "lib.mode(x, keepdim=2)",
    "lib.logsumexp(x, 1, keepdim=2)",
    "x.nansum(1, keepdim=2)",
    "x.nanmean(1, keepdim=2)",
    "x.max(1, keepdim=2)",
    "lib.diag(x, diagonal=True)",
    "lib.diagonal(x, offset=2**63)",
    "x.tril(diagonal=True)",
    "x.clone().triu_(2**63)",
    "lib.diff(x, n=2**63)",
    "x.diff(n=True)",
    "lib.rot90(x, k=2.5)",
    "lib.rot90(x, k=2**63)",
    "lib.diag_embed(x, offset=True)",
    "x.diagflat(offset=True)",
    "lib.cov(x, correction=2.5)",
    "lib.cov(x, correction=2**63)",
    "x.chunk(2**63)",
    "x.split(2**63)",
    "lib.special.polygamma(2**63, x)",
]

# PyTorch's argument parser words these its own way: the class is compared.
SAME_CLASS = [
    "lib.argsort(x, dim=0, stable='abc')",
    "lib.argsort(x, dim=0, stable=1)",
    "lib.index_put(x, [], x)",
    "x.clone().index_put_((), lib.tensor(2.0), True)",
    "lib.nn.functional.lp_pool1d(x, 0.5, True)",
    "lib.nn.functional.lp_pool1d(x, 0.5, 1, True)",
    "lib.nn.functional.avg_pool1d(x, 'abc')",
    "lib.nn.functional.max_pool2d(x[None], (1.5, 2.0))",
    "lib.nn.functional.max_pool1d(x, 1, stride=True)",
    "x.mean(1, keepdim=2)",
    "x.norm(keepdim=2)",
    "lib.all(x, -2, keepdim=2)",
    "x.any(-1, keepdim=2)",
    "x.var(keepdim='abc')",
    "lib.std(x, 1, keepdim=2)",
    "lib.var_mean(x, (0, 1), keepdim=2)",
    "lib.std_mean(x, (0, 1), keepdim=object())",
    "x.var(unbiased=2)",
    "lib.std(x, unbiased=2)",
    "lib.var_mean(x, 1, unbiased=2)",
    "lib.round(x, decimals=2.5)",
    "x.split(True)",
    "lib.kthvalue(x, True)",
    "x.narrow(-1, 0, True)",
    "lib.select(x, 0, True)",
    "x.chunk(True)",
    "lib.polygamma(2.5, x)",
    "x.clone().polygamma_(True)",
    "x.mvlgamma(2.5)",
    "lib.special.multigammaln(x, True)",
    "x.clone().round_(decimals=True)",
    "lib.special.round(x, decimals=2.5)",
    "x.unfold(1, 1, True)",
    "x.topk(True)",
    "lib.svd(x, some=2)",
    "x.svd(True, 'abc')",
    "lib.qr(x, some=2)",
    "lib.linalg.svd(x, full_matrices=2)",
    "lib.linalg.lu_factor_ex(x[:, :3], check_errors=2)",
    "lib.slice_copy(x, 1, end=2**63)",
    "x.slice_scatter(x, dim=1, end=2**63)",
    "lib.fft.fft(x, n=2**63)",
    "lib.histogramdd(x, 2**40)",
    "lib.histogramdd(x, 2**20)",
    "lib.histogramdd(x, [2**40, 1, 1, 1])",
    "lib.linalg.matrix_norm(x, keepdim=2)",
    "lib.linalg.norm(x, dim=(1, 0), keepdim=2)",
    "lib.linalg.norm(x, 'fro', keepdim=False, dim='abc')",
    "lib.linalg.vector_norm(x, dim=(0, 1.5))",
    "lib.nuclear_norm(x, keepdim=2)",
    "lib.frobenius_norm(x, keepdim='abc')",
    "lib.gather(x, 0, lib.tensor([[0, 1, 2, 0]]), sparse_grad=2)",
    "lib.scatter_reduce(x, 0, lib.tensor([[0, 1, 2, 0]]), x[:1], 'sum', include_self=2)",
    "lib.nanquantile(x, 0.5, dim=True)",
    "x.quantile(0.5, 1, keepdim='abc')",
    "x.clone().fill_diagonal_(1.0, wrap=2)",
    "x.to(lib.float64, copy=2)",
    "x.to(x, non_blocking=None)",
    "x.to_dense(masked_grad=2)",
    "x.requires_grad_(2)",
    "x.clone().copy_(x, non_blocking=None)",
    "lib.searchsorted(x, x, right=2)",
    "lib.searchsorted(x, x, out_int32='abc')",
    "F.embedding(lib.tensor([0, 2]), x, sparse='abc')",
    "lib.embedding(x, lib.tensor([0, 2]), scale_grad_by_freq=None)",
    "lib.group_norm(x, 1, cudnn_enabled=2)",
    "F.triplet_margin_loss(x, x, x, swap='abc')",
    "F.scaled_dot_product_attention(x, x, x, is_causal='abc')",
    "F.scaled_dot_product_attention(x, x, x, enable_gqa=2)",
    "F.pairwise_distance(x, x, keepdim=2)",
    "lib.binary_cross_entropy_with_logits(x, x, reduction=True)",
    "lib.kl_div(x, x, reduction=True)",
    "F.poisson_nll_loss(x, x, eps='abc')",
    "lib.poisson_nll_loss(x, x, True, True, None, 1)",
    "lib.hsplit(x, True)",
    "x.vsplit(True)",
    "x.tensor_split(True, dim=-1)",
    "lib.fft.fft(x, n=True)",
    "lib.fft.rfft(x, n=2.5)",
    "lib.slice_copy(x, 1, step=True)",
    "lib.slice_copy(x, 1, step=None)",
    "lib.slice_copy(x, True)",
    "x.slice_scatter(x, dim=1, step=None)",
    "lib.softmax(x, None)",
    "x.log_softmax(True)",
    "lib.special.softmax(x, None)",
    "lib.linalg.vecdot(x, x, dim=None)",
    "F.cosine_similarity(x, x, dim=None)",
    "F.gumbel_softmax(x, dim=None)",
    "lib.margin_ranking_loss(x, x, x, reduction='abc')",
    "lib.binary_cross_entropy_with_logits(x, x, reduction='mean')",
    "lib.gradient(x, edge_order=True)",
    "lib.gradient(x, spacing=0.5, dim=(1, 0), edge_order=2.0)",
]

VALUES = [
    f"lib.histogram({DATA}, {EDGES}).hist.tolist()",
    f"lib.histogram({DATA}, {EDGES}, weight=lib.arange(9.0)).hist.tolist()",
    f"lib.histogram({DATA}, {EDGES}, density=True).hist.tolist()",
    f"lib.histogram({DATA}, {EDGES}).bin_edges.tolist()",
    f"{DATA}.histogram(lib.tensor([-1.0, 2.5, 0.5])).hist.tolist()",
    f"lib.histogram({DATA}, lib.tensor([3.0, 1.0, 2.0])).hist.tolist()",
    f"lib.histogram({DATA}, lib.tensor([3.0, 1.0, 2.0]), density=True).hist.tolist()",
    "lib.empty(3, dtype=lib.uint8).fill_(-1).tolist()",
    "lib.empty(3, dtype=lib.uint8).fill_(-129).tolist()",
    "lib.empty(3, dtype=lib.uint16).fill_(-1).tolist()",
    "lib.empty(2, dtype=lib.int64).fill_(-(2**63)).tolist()",
    "lib.empty(2, dtype=lib.bool).fill_(2**63).tolist()",
    "lib.empty(1, dtype=lib.float16).fill_(1e6).tolist()",
    "lib.empty(1, dtype=lib.bfloat16).fill_(1e300).tolist()",
    "lib.empty(2, dtype=lib.bfloat16).fill_(2**63).tolist()",
    "lib.full((2,), -1, dtype=lib.uint8).tolist()",
    "lib.full((2,), 2**63, dtype=lib.bool).tolist()",
    "lib.empty(3, dtype=lib.int32).fill_(2 + 0j).tolist()",
    "lib.full((3,), 2 + 0j, dtype=lib.int32).tolist()",
    "lib.full_like(lib.ones(2, dtype=lib.bool), 2 + 1j).tolist()",
    "lib.empty(3, dtype=lib.uint8).fill_(np.int64(-1)).tolist()",
    "lib.empty(2).fill_(np.complex64(1 + 0j)).tolist()",
    "lib.ctc_loss((x * lib.arange(4.0)).log_softmax(1), lib.tensor([1, 2]), (3,), (2,)).item()",
    "lib.nn.functional.max_pool1d(x.long(), 1, return_indices=True)[0].tolist()",
    "lib.nn.functional.max_pool1d(x, [1], stride=(1,)).tolist()",
    "list(lib.sparse_coo_tensor((2**31, 2**31)).shape)",
    "F.elu(x.double(), alpha=1e300).tolist()",
    "F.leaky_relu(x.half() - 2, 1e5).tolist()",
    "F.hardshrink(x.half(), 6e4).tolist()",
    "x.clamp(max=float('inf')).tolist()",
    "x.clamp(min=float('nan')).tolist()",
    "F.threshold(x, float('nan'), 2.0).tolist()",
    "F.threshold(lib.tensor([float('nan'), 0.5, 2.0]), 1.0, 7.0).tolist()",
    "lib.lerp(x.double(), x.double() * 2, 1e300).tolist()",
    "x.long().index_add(0, lib.tensor([0]), x[:1].long(), alpha=2.5).tolist()",
    "list(x.sum(1, keepdim=True).shape)",
    "x.var(False).item()",
    "list(lib.std(x, 1, True, True).shape)",
    "(x * lib.arange(4.0)).diag(lib.tensor(1)).tolist()",
    "(x * lib.arange(4.0)).tril(np.int64(-1)).tolist()",
    "(x * lib.arange(4.0)).select(1, lib.tensor(2)).tolist()",
    "(x * lib.arange(4.0)).topk(lib.tensor(2))[0].tolist()",
    "x.round(decimals=np.int64(1)).tolist()",
    "lib.polygamma(lib.tensor(1), x).tolist()",
    "[x.to(lib.float64, False, True).dtype is lib.float64, x.to(x, True, True) is x]",
    "x.to(lib.float32, copy=True) is x",
    "list(lib.slice_copy(x, 1, -3, None, 2).shape)",
    "list(x.slice_scatter(x[:, :2], dim=1, start=lib.tensor(2)).shape)",
    "len(x.tensor_split(lib.tensor(2)))",
    "list(lib.fft.fft(x, n=lib.tensor(3)).shape)",
    "lib.kl_div(x, x * 2, reduction=1).item()",
    "lib.softmax(x * lib.arange(4.0), np.int64(1)).tolist()",
    "F.softmax(x * lib.arange(4.0), None).tolist()",
    "lib.gradient(x * lib.arange(4.0), edge_order=2)[1].tolist()",
    "lib.kl_div(x, x * 2, reduction=2).item()",
    "F.cosine_similarity(x, x * 2, dim=np.int64(0)).tolist()",
    "lib.quantile(x * lib.arange(4.0), 0.5, dim=np.int64(1)).tolist()",
]


def _env(lib) -> dict:
    return {"lib": lib, "F": lib.nn.functional, "np": np, "x": lib.ones(3, 4)}


@pytest.mark.parametrize("expression", SAME_ERROR)
def test_errors(torch, expression):
    assert_same_error(lambda: eval(expression, _env(torch)), lambda: eval(expression, _env(tocha)))


@pytest.mark.parametrize("expression", SAME_CLASS)
def test_error_classes(torch, expression):
    assert_same_error_class(
        lambda: eval(expression, _env(torch)), lambda: eval(expression, _env(tocha))
    )


@pytest.mark.parametrize("expression", VALUES)
def test_values(torch, expression):
    assert _close(eval(expression, _env(tocha)), eval(expression, _env(torch)))


def test_threshold_gradient_passes_nan_inputs(torch):
    def grad(lib):
        x = lib.tensor([float("nan"), 0.5, 2.0], requires_grad=True)
        lib.nn.functional.threshold(x, 1.0, 7.0).sum().backward()
        return x.grad.tolist()

    assert grad(tocha) == grad(torch)


def _close(ours, theirs) -> bool:
    """Equal structure, types and values (floats within a float32 rounding step)."""
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(map(_close, ours, theirs))
    if type(ours) is not type(theirs):
        return False
    if isinstance(ours, float):
        return ours == pytest.approx(theirs, rel=1e-6, abs=0, nan_ok=True)
    return ours == theirs
