"""vmap's batching rules, each against the loop it replaces: for every row, ``vmap(fn)`` over a
batch equals ``fn`` applied to each example and stacked, and a row whose ops all have rules
runs without the loop's warning.

Each row: an id, ``fn(*inputs)``, the per-example input shapes (a shape, or a value passed
as is) and in_dims. Inputs are float64 unless a row says otherwise.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

import tocha
import tocha.nn.functional as F
from tocha.export import ops
from tocha.func._batching import LOOPED
from tocha.func._vmap import vmap

BATCH = 3


@dataclass
class Row:
    id: str
    fn: object
    shapes: tuple
    in_dims: object = 0
    dtype: str = "float64"
    looped: bool = False  # an op of the row falls back to the loop (by design)
    kwargs: dict = field(default_factory=dict)


def row(id, fn, *shapes, **options) -> Row:
    return Row(id, fn, shapes, **options)


ROWS = [
    # -- elementwise ---------------------------------------------------------------------
    row("sin", lambda x: x.sin(), (4, 5)),
    row("exp_0dim", lambda x: x.exp(), ()),
    row("add_broadcast", lambda x, y: x + y, (4, 5), (5,)),
    row("add_unbatched_bigger", lambda x, y: x + y, (5,), (4, 5), in_dims=(0, None)),
    row("mul_scalar", lambda x: 2.5 * x - 1, (4,)),
    row("div_both", lambda x, y: x / y, (2, 3), (2, 3)),
    row("pow_scalar", lambda x: x.abs() ** 1.5, (4,)),
    row("int_to_float", lambda x: (x * 3).long().sqrt(), (4,)),
    row("compare", lambda x, y: (x > y).float(), (4,), (4,)),
    row("where", lambda x, y: tocha.where(x > 0, x, y), (4, 2), (2,)),
    row("clamp", lambda x: x.clamp(-0.5, 0.5), (6,)),
    row("clamp_tensor", lambda x, lo: x.clamp(min=lo), (6,), (6,)),
    row("masked_fill", lambda x: x.masked_fill(x > 0, 0.0), (3, 4)),
    row("relu_gelu", lambda x: F.gelu(F.relu(x) - 0.3), (5,)),
    row("activations", lambda x: F.silu(x) + F.elu(x) + F.softplus(x) + F.leaky_relu(x), (5,)),
    row("maximum", lambda x, y: tocha.maximum(x, y), (4,), (4,)),
    row("lerp_like", lambda x, y: x + 0.3 * (y - x), (4,), (1,)),
    row("to_dtype", lambda x: x.float().double(), (3,)),
    # -- reductions and ops over dims ----------------------------------------------------
    row("sum_all", lambda x: x.sum(), (3, 4)),
    row("sum_dim", lambda x: x.sum(1, keepdim=True), (3, 4)),
    row("mean_dims", lambda x: x.mean((0, -1)), (2, 3, 4)),
    row("var_std", lambda x: x.var(0) + x.std(), (4, 3)),
    row("amax", lambda x: x.amax(-1), (3, 4)),
    row("max_dim", lambda x: x.max(1), (3, 4)),
    row("argmax", lambda x: x.argmax(0), (3, 4)),
    row("argmax_all", lambda x: x.argmax(), (3, 4)),
    row("logsumexp", lambda x: x.logsumexp(1), (3, 4)),
    row("norm", lambda x: x.norm(dim=1), (3, 4)),
    row("prod", lambda x: x.prod(0), (3, 2)),
    row("cumsum", lambda x: x.cumsum(-1), (3, 4)),
    row("softmax", lambda x: x.softmax(0), (3, 4)),
    row("log_softmax", lambda x: F.log_softmax(x, -1), (3, 4)),
    row("sort", lambda x: x.sort(-1, descending=True), (3, 4)),
    row("topk", lambda x: x.topk(2, 0), (3, 4)),
    row("flip", lambda x: x.flip(0, 1), (3, 4)),
    row("roll", lambda x: x.roll(1, 0), (3, 4)),
    row("gather", lambda x, i: x.gather(1, i), (3, 4), (3, 2), dtype="gather"),
    # -- shapes and views ----------------------------------------------------------------
    row("view", lambda x: x.view(12).view(2, 6), (3, 4)),
    row("gelu_jacfwd", lambda x: tocha.func.jacfwd(lambda a: F.gelu(a).sum())(x), (3, 4)),
    row("unfold", lambda x: x.unfold(1, 2, 1), (3, 4)),
    row("unfold_dim0_step", lambda x: x.unfold(0, 2, 2).sin(), (5, 2)),
    row("unfold_in_dim_1", lambda x: x.unfold(1, 2, 1), (3, 4), in_dims=1),
    row("as_strided", lambda x: x.as_strided((2, 2), (1, 2)), (3, 4)),
    row("reshape_infer", lambda x: x.reshape(-1, 2), (3, 4)),
    row("permute_T", lambda x: x.permute(2, 0, 1).mT, (2, 3, 4)),
    row("unsqueeze_expand", lambda x: x.unsqueeze(0).expand(2, 3, 4), (3, 4)),
    row("squeeze_dim", lambda x: x.squeeze(1), (3, 1, 4)),
    row("getitem_basic", lambda x: x[1:, ::2], (3, 4)),
    row("index_unbatched", lambda x: x[tocha.tensor([2, 0, 2])], (3, 4)),
    row("index_after_slice", lambda x: x[:, tocha.tensor([1, 3])], (3, 4)),
    row("index_mask", lambda x: x[:, tocha.tensor([True, False, True, True])], (3, 4)),
    row("index_batched", lambda x, i: x[i % 3], (3, 4), (2,), dtype="gather"),
    row("index_two_batched", lambda x, i: x[i % 3, (i + 1) % 4], (3, 4), (2,), dtype="gather"),
    row(
        "index_batched_after_slice", lambda x, i: x[:, i], (3, 4), (2,), dtype="gather", looped=True
    ),
    row("getitem_int_none", lambda x: x[0, None, ..., -1], (3, 4, 2)),
    row("narrow_split", lambda x: x.split([1, 3], 1)[1].narrow(0, 1, 2), (3, 4)),
    row("unbind", lambda x: x.unbind(1)[2], (3, 4)),
    row("cat", lambda x, y: tocha.cat([x, y], 1), (3, 4), (3, 2)),
    row("cat_unbatched", lambda x, y: tocha.cat([x, y]), (3, 4), (2, 4), in_dims=(0, None)),
    row("stack", lambda x, y: tocha.stack([x, y], -1), (3, 4), (3, 4)),
    row("repeat", lambda x: x.repeat(2, 1, 3), (3, 4)),
    row("diagonal_tril", lambda x: x.tril().diagonal(), (4, 4)),
    row("pad", lambda x: F.pad(x, (1, 2)), (3, 4)),
    row("flatten", lambda x: x.flatten(), (3, 4, 2)),
    row("in_dim_1", lambda x: x * 2, (3, 4), in_dims=1),
    row("in_dim_neg", lambda x: x.sum(0), (3, 4), in_dims=-1),
    # -- products ------------------------------------------------------------------------
    row("matmul_mm", lambda x, y: x @ y, (3, 4), (4, 2)),
    row("matmul_unbatched_w", lambda x, w: x @ w, (3, 4), (4, 2), in_dims=(0, None)),
    row("matmul_unbatched_x", lambda x, w: x @ w, (3, 4), (4, 2), in_dims=(None, 0)),
    row("matmul_vec_mat", lambda x, w: x @ w, (4,), (4, 2)),
    row("matmul_mat_vec", lambda x, v: x @ v, (3, 4), (4,)),
    row("matmul_vec_vec", lambda x, v: x @ v, (4,), (4,)),
    row("matmul_bmm_broadcast", lambda x, w: x @ w, (2, 3, 4), (4, 5), in_dims=(0, None)),
    row("matmul_vec_batched_w", lambda v, w: v @ w, (4,), (2, 4, 5), in_dims=(None, 0)),
    row("linear", lambda x, w, b: F.linear(x, w, b), (5, 4), (3, 4), (3,), in_dims=(0, None, None)),
    row("linear_batched_weight", lambda x, w, b: F.linear(x, w, b), (5, 4), (3, 4), (3,)),
    row("linear_vector_input", lambda x, w: F.linear(x, w), (4,), (3, 4)),
    row("linear_weight_only", lambda x, w: F.linear(x, w), (5, 4), (3, 4), in_dims=(None, 0)),
    row("einsum_ellipsis", lambda x, y: tocha.einsum("...i,...i->...", x, y), (3, 4), (4,)),
    row("einsum", lambda x, y: tocha.einsum("ij,jk->ik", x, y), (3, 4), (4, 2)),
    row("einsum_half", lambda x, y: tocha.einsum("ij,j->i", x, y), (3, 4), (4,), in_dims=(0, None)),
    # -- folded into the kernel's batch dim ----------------------------------------------
    row(
        "conv2d",
        lambda x, w: F.conv2d(x, w, padding=1),
        (2, 3, 6, 6),
        (4, 3, 3, 3),
        in_dims=(0, None),
    ),
    row("max_pool2d", lambda x: F.max_pool2d(x, 2), (2, 3, 6, 6)),
    row("avg_pool2d", lambda x: F.avg_pool2d(x, 2), (2, 3, 6, 6)),
    row("layer_norm", lambda x: F.layer_norm(x, (4,)), (3, 4)),
    row(
        "layer_norm_affine",
        lambda x, w, b: F.layer_norm(x, (4,), w, b),
        (3, 4),
        (4,),
        (4,),
        in_dims=(0, None, None),
    ),
    row("group_norm", lambda x: F.group_norm(x, 2), (3, 4, 5)),
    row(
        "linear_pointwise",
        lambda x, w, b: ops.linear_pointwise(x, w, b, "gelu"),
        (2, 5),
        (4, 5),
        (4,),
        in_dims=(0, None, None),
    ),
    row(
        "group_norm_affine",
        lambda x, w, b: F.group_norm(x, 2, w, b),
        (3, 4, 5),
        (4,),
        (4,),
        in_dims=(0, None, None),
    ),
    row(
        "layer_norm_batched_weight", lambda x, w, b: F.layer_norm(x, (4,), w, b), (3, 4), (4,), (4,)
    ),
    row(
        "conv2d_batched_weight",
        lambda x, w, b: F.conv2d(x, w, b, padding=1),
        (2, 3, 5, 5),
        (4, 3, 3, 3),
        (4,),
    ),
    row(
        "conv2d_weight_only",
        lambda x, w: F.conv2d(x, w, groups=3),
        (2, 3, 5, 5),
        (6, 1, 3, 3),
        in_dims=(None, 0),
    ),
    row("batch_norm_training", lambda x: F.batch_norm(x, None, None, training=True), (4, 3, 2)),
    row(
        "batch_norm_affine",
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        (4, 3),
        (3,),
        (3,),
    ),
    row(
        "embedding",
        lambda i, w: F.embedding(i, w),
        (2, 3),
        (5, 4),
        dtype="embedding",
        in_dims=(0, None),
    ),
    row(
        "embedding_batched_weight",
        lambda i, w: F.embedding(i, w),
        (2, 3),
        (5, 4),
        dtype="embedding",
    ),
    row(
        "embedding_weight_only",
        lambda i, w: F.embedding(i, w),
        (2, 3),
        (5, 4),
        dtype="embedding",
        in_dims=(None, 0),
    ),
    # -- rules of their own -----------------------------------------------------------------
    row("median_all", lambda x: x.median() + x.nanmedian(), (3, 4)),
    row("index_add", lambda x, s: x.index_add(1, tocha.tensor([0, 2]), s), (3, 4), (3, 2)),
    row("index_copy_fill", lambda x: x.index_fill(0, tocha.tensor([1]), -1.0), (3, 4)),
    row(
        "searchsorted",
        lambda v: tocha.searchsorted(tocha.tensor([-1.0, 0.0, 1.0], dtype=tocha.float64), v),
        (5,),
    ),
    row(
        "isin",
        lambda x: tocha.isin((x * 2).round(), tocha.tensor([0.0, 1.0], dtype=tocha.float64)),
        (5,),
    ),
    row("outer", lambda a, b: tocha.outer(a, b), (3,), (4,)),
    row("vdot", lambda a, b: tocha.vdot(a, b), (3,), (3,)),
    row(
        "tensordot_a",
        lambda a, b: tocha.tensordot(a, b, dims=([1], [0])),
        (3, 4),
        (4, 2),
        in_dims=(0, None),
    ),
    row(
        "tensordot_b",
        lambda a, b: tocha.tensordot(a, b, dims=([1], [0])),
        (3, 4),
        (4, 2),
        in_dims=(None, 0),
    ),
    row("bce", lambda x, t: F.binary_cross_entropy(x.sigmoid(), t.sigmoid()), (3, 4), (3, 4)),
    row(
        "bce_none",
        lambda x, t: F.binary_cross_entropy(x.sigmoid(), t.sigmoid(), reduction="none"),
        (3, 4),
        (3, 4),
    ),
    row(
        "attention",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        (2, 3, 4),
        (2, 5, 4),
        (2, 5, 4),
    ),
    row(
        "attention_causal",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        (2, 3, 4),
        (2, 3, 4),
        (2, 3, 4),
    ),
    row(
        "attention_unbatched_kv",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
        (2, 3, 4),
        (2, 5, 4),
        (2, 5, 4),
        in_dims=(0, None, None),
    ),
    row("setitem", lambda x, v: _set(x, (slice(1, None), 0), v), (3, 4), (2,)),
    row("setitem_scalar", lambda x: _set(x, (0,), 5.0), (3, 4)),
    row("index_put", lambda x, v: _set(x, (tocha.tensor([0, 2]),), v), (3, 4), (4,)),
    row(
        "index_put_accumulate",
        lambda x, v: x.index_put((tocha.tensor([0, 0]),), v, accumulate=True),
        (3, 4),
        (4,),
    ),
    # -- losses: the batch folded into the rows ------------------------------------------
    row("cross_entropy", lambda x, t: F.cross_entropy(x, t), (4, 5), (4,), dtype="target"),
    row(
        "cross_entropy_sum",
        lambda x, t: F.cross_entropy(x, t, reduction="sum"),
        (4, 5),
        (4,),
        dtype="target",
    ),
    row(
        "cross_entropy_none",
        lambda x, t: F.cross_entropy(x, t, reduction="none"),
        (4, 5),
        (4,),
        dtype="target",
    ),
    row("cross_entropy_1d", lambda x, t: F.cross_entropy(x, t), (5,), (), dtype="target"),
    row(
        "cross_entropy_ignore",
        lambda x, t: F.cross_entropy(x, t, ignore_index=1),
        (4, 5),
        (4,),
        dtype="target",
    ),
    row(
        "cross_entropy_spatial",
        lambda x, t: F.cross_entropy(x, t),
        (2, 5, 3),
        (2, 3),
        dtype="target",
    ),
    row("nll_loss", lambda x, t: F.nll_loss(x, t), (4, 5), (4,), dtype="target"),
    row(
        "nll_loss_weight",
        lambda x, t: F.nll_loss(x, t, weight=tocha.arange(1.0, 6.0, dtype=tocha.float64)),
        (4, 5),
        (4,),
        dtype="target",
    ),
    # -- looped by design (no rule) -------------------------------------------------------
    row(
        "cross_entropy_smoothing",
        lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1),
        (4, 5),
        (4,),
        dtype="target",
        looped=True,
    ),
]


def _set(x, key, value):
    out = x.clone()
    out[key] = value
    return out


def _inputs(r: Row, rng):
    values = []
    for k, shape in enumerate(r.shapes):
        dims = r.in_dims if isinstance(r.in_dims, tuple) else (r.in_dims,) * len(r.shapes)
        dim = dims[k]
        full = list(shape)
        if dim is not None:
            full.insert(dim % (len(shape) + 1), BATCH)
        if r.dtype == "gather" and k == 1:
            values.append(tocha.from_numpy(rng.integers(0, 4, size=full)))
        elif r.dtype == "embedding" and k == 0:
            values.append(tocha.from_numpy(rng.integers(0, 5, size=full)))
        elif r.dtype == "target" and k == 1:
            values.append(tocha.from_numpy(rng.integers(0, 5, size=full)))
        else:
            values.append(tocha.from_numpy(rng.standard_normal(full)))
    return values


def _looped(r: Row, inputs):
    dims = r.in_dims if isinstance(r.in_dims, tuple) else (r.in_dims,) * len(inputs)
    results = []
    for b in range(BATCH):
        example = [x if d is None else x.select(d, b) for x, d in zip(inputs, dims)]
        results.append(r.fn(*example))
    if isinstance(results[0], tuple):
        return tuple(tocha.stack([res[j] for res in results]) for j in range(len(results[0])))
    return tocha.stack(results)


def _assert_same(got, expected):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_same(g, e)
        return
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("r", ROWS, ids=[r.id for r in ROWS])
def test_vmap_equals_the_loop(r):
    rng = np.random.default_rng(0)
    inputs = _inputs(r, rng)
    expected = _looped(r, inputs)
    LOOPED.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = vmap(r.fn, in_dims=r.in_dims)(*inputs)
    _assert_same(got, expected)
    if not r.looped:
        assert not LOOPED, f"fell back to the loop: {sorted(LOOPED)}"


NESTED = [r for r in ROWS if r.in_dims == 0 and not r.looped][:40]


@pytest.mark.parametrize("r", NESTED, ids=[r.id for r in NESTED])
def test_nested_vmap_equals_the_loop(r):
    """vmap of vmap: two outer examples, each a batch, against the loop of the loop."""
    rng = np.random.default_rng(1)
    outer = [_inputs(r, rng) for _ in range(2)]
    per_outer = [_looped(r, inputs) for inputs in outer]
    if isinstance(per_outer[0], tuple):
        expected = tuple(tocha.stack([p[j] for p in per_outer]) for j in range(len(per_outer[0])))
    else:
        expected = tocha.stack(per_outer)
    stacked = [tocha.stack([inputs[k] for inputs in outer]) for k in range(len(r.shapes))]
    got = vmap(vmap(r.fn))(*stacked)
    _assert_same(got, expected)


# -- the registry: every primitive has a rule, or the loop with a reason -----------------------
# Primitives that take no tensor argument: a batched tensor never reaches them.
NO_TENSOR_INPUT = set(
    "arange bernoulli cauchy empty exponential eye full geometric log_normal normal ones "
    "positions randint randperm uniform zeros lu_permutation_matrix".split()
)
# Primitives that run once per example (the loop warns once), and why.
LOOPED_BY_DESIGN = {
    **dict.fromkeys(
        (
            "masked_select nonzero unique unique_consecutive bincount histc histogram histogramdd"
        ).split(),
        "the result's shape depends on the values (vmap refuses results of unequal shapes)",
    ),
    **dict.fromkeys(
        "linalg_eig linalg_eigvals linalg_lstsq linalg_lu_factor_ex linalg_lu_solve "
        "linalg_pinv linalg_qr linalg_solve linalg_solve_triangular linalg_svd "
        "linalg_vecdot".split(),
        "linear algebra with vector/matrix right-hand sides or several outputs: looped",
    ),
    **dict.fromkeys(
        "native_batch_norm_backward native_layer_norm_backward native_group_norm_backward "
        "scaled_dot_product_attention_backward avg_pool_backward".split(),
        "reduced parameter gradients; under a transform the norms' and attention's "
        "backward run as tocha ops, which have rules",
    ),
    "rnn_layer": "a recurrence over time per example (looped)",
    "rnn_layer_backward": "a recurrence over time per example (looped)",
    "ctc_loss": "alignment dynamic programming per example (looped)",
    "ctc_loss_backward": "alignment dynamic programming per example (looped)",
    "kron": "rare inside vmap (looped)",
    "multinomial": "a random draw of its own per example (looped)",
    "poisson": "a random draw of its own per example (looped)",
    "binomial": "a random draw of its own per example (looped)",
    "to_device": "moves whole arrays; its kernel is the backend's transfer",
    "_adam_step": "an optimizer's step over parameter lists, never inside vmap",
}


def _registry_names() -> set:
    """The primitives the installed distributions declare (not other tests' throwaway ops)."""
    from tests.installed import load_installed
    from tocha.library import REGISTRY

    load_installed()
    return {
        name
        for name, op in REGISTRY.items()
        if getattr(op.generic, "__module__", "tocha").startswith("tocha")
    }


PRIMITIVES = _registry_names()


def test_every_primitive_has_a_rule_or_loops_by_design():
    from tocha.func._batching_rules import RULES

    missing = sorted(
        n for n in PRIMITIVES if n not in RULES and n not in NO_TENSOR_INPUT | set(LOOPED_BY_DESIGN)
    )
    assert not missing, f"primitives without a batching rule: {missing}"


def test_rules_and_lists_name_existing_primitives():
    from tocha.func._batching_rules import RULES

    assert not set(RULES) - PRIMITIVES
    assert not (NO_TENSOR_INPUT | set(LOOPED_BY_DESIGN)) - PRIMITIVES
    assert not set(RULES) & set(LOOPED_BY_DESIGN)


def test_as_strided_offset_counts_from_each_example():
    """PyTorch's rule: a storage offset inside vmap is relative to where the example starts
    (vmap(lambda a: a.as_strided((2, 2), (1, 2), 1))(x)[1] is [[13, 15], [14, 16]])."""
    x = tocha.arange(24.0).view(2, 3, 4)
    got = vmap(lambda a: a.as_strided((2, 2), (1, 2), 1))(x)
    np.testing.assert_array_equal(got[1].numpy(), [[13.0, 15.0], [14.0, 16.0]])
    written = tocha.arange(24.0).view(2, 3, 4)
    vmap(lambda a: a.unfold(1, 2, 2).mul_(10))(written)
    np.testing.assert_array_equal(written.numpy(), np.arange(24.0).reshape(2, 3, 4) * 10)
