"""The bad-input fuzzer's raw errors and silent acceptances, made PyTorch's: the exception
class (and the message, where tocha words it as PyTorch does) of calls that once leaked a
NumPy or Python error from inside tocha, or returned where PyTorch refuses; checked against
PyTorch (recorded)."""

from __future__ import annotations

import pytest

import tocha
from tests.fidelity.test_fidelity_fixes import assert_same_error, assert_same_error_class

HUGE = 2**40

# Same class and message as PyTorch's.
SAME_ERROR = [
    "lib.arange(float('inf'))",
    "lib.arange(0, float('nan'))",
    "lib.arange(0, 5, float('nan'))",
    "lib.range(float('-inf'), 5)",
    "lib.range(0, 5, 0)",
    "lib.range(5, 0, 1)",
    "lib.range(0, 5, dtype='float32')",
    "lib.as_tensor(x, dtype='float32')",
    "lib.poisson('abc')",
    "lib.multinomial([[1.0, 2.0]], 1)",
    "lib.bernoulli(None)",
    "lib.column_stack('abc')",
    "lib.column_stack([1, 'x'])",
    "lib.linalg.multi_dot('abc')",
    "lib.linalg.multi_dot([1, 'x'])",
    "lib.linalg.vecdot(x, x, dim=2**40)",
    "lib.linalg.vecdot(x, x, dim=2**63)",
    "lib.histc(x, bins=2.5)",
    "lib.histc(x, bins=True)",
    "lib.histc(x, bins=2**63)",
    "lib.histc(x, min=float('nan'))",
    "lib.histc(x, max=float('inf'))",
    "lib.histc(x, max=1e300)",
    "lib.histogram(x, bins=2**63)",
    "lib.histogram(x, weight=lib.ones(3, 4, dtype=lib.long))",
    "lib.histogram(x, 2, range=(0.0, float('inf')))",
    "lib.histogram(x, 2, range=(0.0, 1e300))",
    f"lib.ones(({HUGE}, {HUGE}))",
    f"lib.zeros({HUGE})",
    f"lib.eye({HUGE}, 3)",
    f"lib.full(({HUGE}, {HUGE}), 0.5)",
    f"x.new_ones(({HUGE}, {HUGE}))",
    f"x.tile(({HUGE}, {HUGE}))",
    f"x.repeat({HUGE}, {HUGE})",
    f"lib.nn.functional.pad(x, ({HUGE}, {HUGE}))",
    "lib.embedding(x, lib.zeros(2, dtype=lib.long), padding_idx=2**63)",
    "lib.ctc_loss(x.log_softmax(1), lib.ones(3, 4).long(), (1,), (1,))",
    "lib.nn.functional.cross_entropy(x.long(), x)",
    "lib.nn.functional.cross_entropy(x, x, weight='abc')",
    "lib.nn.functional.linear(x, lib.ones(5, 4), lib.ones(5, dtype=lib.complex64))",
    "lib.nn.functional.scaled_dot_product_attention(x, x, x, attn_mask='abc')",
    "lib.nn.functional.rrelu(x, lower=float('nan'))",
    "lib.nn.functional.rrelu(x, upper=float('inf'))",
    "lib.nn.functional.rrelu(x, lower=1e300)",
    "lib.nn.functional.rrelu(x, upper=1e300)",
    "lib.nn.functional.rrelu(x, training=2)",
    "lib.nn.functional.softshrink(x, lambd=float('nan'))",
    "lib.nn.functional.softshrink(x, lambd=1e300)",
    "lib.nn.functional.softshrink(x.half(), lambd=1e5)",
    "lib.nn.functional.glu(x.long())",
    "lib.nn.functional.glu(x.to(lib.complex64))",
    "lib.nn.functional.pdist(x, p=float('nan'))",
    "lib.cdist(x, x, p=float('nan'))",
    "lib.cdist(x, x, compute_mode='abc')",
    "lib.isclose(x, x, rtol=float('nan'))",
    "lib.allclose(x, x, atol=float('nan'))",
    "lib.isclose(x, x, equal_nan=2)",
    "lib.lerp(x, x.long(), 0.25)",
    "lib.lerp(x.to(lib.complex64), x, 0.25)",
    "x.lerp_(x, x.to(lib.complex64))",
    "lib.nn.functional.binary_cross_entropy_with_logits(x, x, weight=x.to(lib.complex64))",
    "lib.nn.functional.binary_cross_entropy_with_logits(x.to(lib.complex64), x)",
    "lib.nn.functional.binary_cross_entropy_with_logits(x, x.long())",
    "lib.nn.functional.huber_loss(x, x, delta=float('nan'))",
    "lib.nn.functional.huber_loss(x.long(), x)",
    "lib.nn.functional.huber_loss(x, x.to(lib.complex64))",
    "lib.nn.functional.huber_loss(x.long(), x.long())",
    "lib.nn.functional.smooth_l1_loss(x, x, beta=float('nan'))",
    "lib.nn.functional.smooth_l1_loss(x, x.to(lib.complex64))",
    "lib.nn.functional.mse_loss(x.to(lib.complex64), x)",
    "lib.nn.functional.mse_loss(x.long(), x.long())",
    "lib.nn.functional.soft_margin_loss(x.long(), x)",
    "lib.nn.functional.soft_margin_loss(x, x.to(lib.complex64))",
    "lib.nn.functional.hinge_embedding_loss(x.long(), x)",
    "lib.nn.functional.kl_div(x.to(lib.complex64), x)",
    "lib.nn.functional.multilabel_margin_loss(x[:1], lib.tensor([[0, 1, -1, 7]]))",
    "lib.nn.functional.multilabel_margin_loss(x[:1], lib.tensor([[0, -1, -3, 2]]))",
    "lib.nn.functional.adaptive_max_pool1d(x.long(), 1)",
    "lib.nn.functional.adaptive_max_pool3d(x.long().reshape(1, 1, 3, 4), 1)",
    "lib.nn.functional.adaptive_max_pool2d(x.bool().unsqueeze(0), 1)",
    "lib.nn.functional.adaptive_avg_pool1d(x.long(), 1)",
    "lib.nn.functional.adaptive_avg_pool2d(x.bool().unsqueeze(0), 1)",
    "lib.nn.functional.avg_pool1d(x.to(lib.complex64), 1)",
    "lib.nn.functional.avg_pool3d(x.to(lib.complex64).reshape(1, 1, 3, 4), 1)",
    "lib.nn.functional.group_norm(x.long(), 1)",
    "lib.nn.functional.group_norm(x.to(lib.complex64), 1)",
    "lib.norm_except_dim(x, dim=-3)",
    "lib.norm_except_dim(x, dim=2**63)",
    "lib.norm_except_dim(x, dim=True)",
    "lib.norm_except_dim(x, dim=-1, pow=2.5)",
    "lib.nonzero_static(x, size=-3)",
    "lib.nonzero_static(x, size=True)",
    "lib.nonzero_static(x, size=1, fill_value=2.5)",
    "lib.nonzero_static(x, size=1, fill_value=2**63)",
    "lib.hamming_window(2**63)",
    "lib.bartlett_window(2**63, True, dtype=lib.float32)",
    "lib.topk(x, 1, largest=2)",
    "lib.topk(x, 1, sorted='abc')",
    "lib.kthvalue(x, 1, keepdim=2)",
    "lib.unique(x, sorted='abc')",
    "lib.unique(x, return_inverse=2)",
    "lib.unique(x.to(lib.complex64))",
    "lib.unique(x.to(lib.complex64), dim=0)",
    "lib.unique_consecutive(x, return_counts=2)",
    "lib.unique_consecutive(x.to(lib.complex64), dim=-1)",
    "lib.argsort(x, stable=True, dim=0, descending=2)",
    "lib.nn.functional.rrelu('abc')",
    "lib.rrelu(None)",
    "lib.nn.functional.cosine_similarity(x, x, eps=float('nan'))",
    "lib.nn.functional.cosine_similarity(x, x, eps=-2.0)",
    "lib.nn.functional.cosine_similarity(x, x, eps=1e300)",
    "x.uniform_(**{'from': float('nan')})",
    "x.uniform_(0, float('inf'))",
    "x.uniform_(0, 1e300)",
    "x.to(lib.complex64).uniform_(0, 1e300)",
    "x.normal_(0, float('nan'))",
    "lib.normal(x, float('nan'))",
    "lib.renorm(x, float('nan'), 1, 2)",
    "lib.renorm(x, 2.0, 1, float('nan'))",
    "lib.linalg.svd(x, driver='gesvd')",
    "lib.linalg.svdvals(x, driver='gesvd')",
    "lib.linalg.matrix_norm(x, dim=(-2, 3))",
    "lib.linalg.norm(x, 'fro', dim=(-2, 3))",
    "lib.nuclear_norm(x, (-2, 3))",
    "lib.searchsorted(x.to(lib.complex64), x)",
    "lib.searchsorted(x, x.to(lib.complex64))",
    "lib.polygamma(2, x.to(lib.complex64))",
    "lib.special.softmax(x.to(lib.complex64), 0)",
    "lib.special.log_softmax(x.to(lib.complex64), -1)",
    "lib.fft.rfft(x, n=2**63)",
    "lib.fft.fft(x, dim=-2, n=2**63)",
    "lib.linalg.cross(x[:, :3], x[:, :3].long())",
    "lib.cross(x[:, :3].long(), x[:, :3], dim=1)",
    "lib.linalg.cross(x[:, :2], x[:, :2].long())",
    "lib.nn.functional.adaptive_avg_pool1d(x, (0, 0))",
    "lib.nn.functional.adaptive_max_pool1d(x, (2, 2))",
    "lib.randperm(2**63)",
    "lib.randint(2**63, (2, 3))",
    "x.random_(1, to=2**63)",
    "x.cumsum_(1, dtype='float32')",
    "x.cumprod_(-1, dtype='float32')",
    "x.cumsum_(1, dtype=lib.float64)",
    "lib.linalg.svdvals(x, driver=3)",
    "lib.linalg.lu(x, pivot=2)",
    "lib.linalg.lu_factor(x, pivot='abc')",
    "lib.linalg.lu_factor_ex(x, pivot=2)",
    "lib.kl_div(x, x, log_target=2)",
    "lib.nn.functional.kl_div(x, x, reduction='sum', log_target=2)",
    "lib.index_put(x, (lib.tensor([0]),), lib.tensor(1.0), accumulate=2)",
    "x.index_put_((lib.tensor([0]),), lib.tensor(1.0), accumulate='abc')",
    "lib.nn.functional.avg_pool1d(x, 1, ceil_mode=2)",
    "lib.nn.functional.avg_pool1d(x, 1, count_include_pad='abc')",
    "lib.max_pool1d(x, (1,), ceil_mode=2)",
    "lib.nanquantile(lib.ones(0, 4), 0.5, dim=1)",
    "lib.quantile(lib.ones(0, 4), 0.5, dim=0)",
    "lib.nanquantile(lib.ones(0, 4), 0.5)",
    "lib.resolve_conj('abc')",
    "lib.resolve_neg(None)",
    "lib.full((2, 3), 1e300)",
    "lib.full_like(x, 1e300)",
    "lib.full((2,), 1e5, dtype=lib.float16)",
    "lib.full((0,), 1e6, dtype=lib.float16)",
    "lib.full((1,), 1e300)",
    "lib.full_like(x, -1e300, dtype=lib.bfloat16)",
    "lib.fill(x, 1e300)",
    "lib.unique_consecutive(lib.ones(0, 4), dim=-1)",
    "lib.linalg.matrix_rank(x, x.to(lib.complex64))",
    "lib.linalg.matrix_rank(x, rtol=x.to(lib.complex64)[:, 0])",
]

# PyTorch's argument parser words these its own way: the class is compared.
SAME_CLASS = [
    "lib.rand((2, 3), dtype='float32')",
    "lib.randn((2, 3), dtype='float32')",
    "lib.randint(5, (2, 3), dtype='float32')",
    "lib.randperm(2, dtype='float32')",
    "lib.bernoulli('abc', 0.5)",
    "lib.masked_fill(None, lib.ones(3, 4).bool(), 1.5)",
    "lib.sparse_coo_tensor(lib.zeros(2, 1).long(), lib.ones(1), dtype='float32')",
    "lib.histogram(x, bins=True)",
    "lib.histogram(x, density=2)",
    f"lib.eye({HUGE})",
    "lib.hamming_window(5, 2)",
    "lib.sort(x, descending=2)",
    "lib.sort(x, stable='abc')",
    "lib.isin(x, x, invert=2)",
    "lib.isin(x, -1.5, assume_unique='abc')",
    "lib.prod('abc', dtype=lib.complex64)",
    "lib.poisson_nll_loss(x, x, 2, True, 1e-5, 1)",
    "lib.nn.functional.poisson_nll_loss(x, x, log_input=2)",
    "lib.nn.functional.max_pool2d(x.unsqueeze(0), 1, ceil_mode=None)",
    "x.put(lib.tensor([0]), lib.tensor([1.0]), accumulate=2)",
]


def _env(lib) -> dict:
    return {"lib": lib, "x": lib.ones(3, 4)}


@pytest.mark.parametrize("expression", SAME_ERROR)
@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
def test_errors(torch, expression):
    assert_same_error(lambda: eval(expression, _env(torch)), lambda: eval(expression, _env(tocha)))


@pytest.mark.parametrize("expression", SAME_CLASS)
def test_error_classes(torch, expression):
    assert_same_error_class(
        lambda: eval(expression, _env(torch)), lambda: eval(expression, _env(tocha))
    )


@pytest.mark.parametrize(
    "expression",
    [
        "lib.embedding(x, lib.tensor([[0, 1], [2, 0]]), padding_idx=100).tolist()",
        "lib.embedding(x, lib.tensor([[0, 1], [2, 0]]), padding_idx=-3).tolist()",
        "lib.range(0.5, 2.5).tolist()",
        "lib.arange(0, 5, float('inf')).tolist()",
        "lib.nn.functional.rrelu(x.double(), upper=1e300).tolist()",
        "lib.nn.functional.softshrink(x.double(), lambd=1e300).tolist()",
        "lib.cdist(x, x, compute_mode='use_mm_for_euclid_dist').tolist()",
        "lib.nn.functional.binary_cross_entropy_with_logits(x, x.to(lib.complex64)).item()",
        "lib.nn.functional.mse_loss(x.long(), x).item()",
        "lib.nn.functional.soft_margin_loss(x.to(lib.complex64), x).item()",
        "lib.nn.functional.multilabel_margin_loss(x[:1], lib.tensor([[3, 0, -1, 1]])).item()",
        "lib.nn.functional.multilabel_margin_loss(x[:1], lib.tensor([[0, -1, -1, 2]])).item()",
        "lib.nn.functional.adaptive_avg_pool1d(x.to(lib.complex64), 1).tolist()",
        "lib.lerp(x, x, 0.5).tolist()",
        "lib.norm_except_dim(x * lib.arange(4.0), 2, 1).tolist()",
        "lib.norm_except_dim(x * lib.arange(4.0), 3, -1).tolist()",
        "lib.nonzero_static(x, size=14, fill_value=-2).tolist()",
        "lib.hann_window(5, False).tolist()",
        "(x * lib.arange(4.0)).sort(1, True)[0].tolist()",
        "lib.unique(lib.tensor([3, 1, 3]), return_counts=True)[1].tolist()",
        "lib.isin(lib.arange(4), lib.tensor([1, 2]), invert=True).tolist()",
        "lib.nn.functional.cosine_similarity(x, x, eps=float('inf')).tolist()",
        "lib.nn.functional.cosine_similarity(x.double(), x, eps=1e300).tolist()",
        "x.double().uniform_(5, 5).tolist()",
        "lib.linalg.matrix_norm(x * lib.arange(4.0), dim=(1, 0)).item()",
        "lib.bucketize(lib.zeros(0, dtype=lib.cfloat), lib.zeros(0, dtype=lib.cfloat)).tolist()",
        "lib.full((2,), 1e300, dtype=lib.float64).tolist()",
        "lib.full((2,), float('inf')).tolist()",
        "lib.full((1,), 1e6, dtype=lib.float16).tolist()",
        "lib.full((), 1e39, dtype=lib.bfloat16).tolist()",
        "lib.full_like(lib.ones(1), -1e300, dtype=lib.bfloat16).tolist()",
        "lib.linalg.matrix_rank(x, 1e300).item()",
        "lib.linalg.matrix_rank(x, 0.5).item()",
    ],
)
@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
def test_values(torch, expression):
    assert _close(eval(expression, _env(tocha)), eval(expression, _env(torch)))


def _close(ours, theirs) -> bool:
    """Equal structure, types and values, floats within a float32 rounding step or two:
    NumPy's SIMD log/exp round differently on different CPUs."""
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(map(_close, ours, theirs))
    if type(ours) is not type(theirs):
        return False
    if isinstance(ours, (float, complex)):
        return ours == pytest.approx(theirs, rel=1e-6, abs=0, nan_ok=True)
    return ours == theirs
