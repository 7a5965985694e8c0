"""Attention against torch: F.scaled_dot_product_attention (values, gradients, masks, causal,
scale, GQA, dropout), F.multi_head_attention_forward and nn.MultiheadAttention with
identical weights over every option (masks, need_weights, average_attn_weights, batch_first,
kdim/vdim, bias_kv, zero_attn, unbatched); float64 gradcheck (reverse and forward mode) and
gradgradcheck (and forward over reverse); forward-mode tangents against
torch.autograd.forward_ad; errors; repr, state_dict keys and initialisation."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tests.nn.forward_ad import assert_tangents_match, check_forward_over_reverse
from tocha.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng


def _tol(dtype: str) -> float:
    return 2e-5 if dtype == "float32" else 1e-10


def _close(ours, theirs, dtype: str) -> None:
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=_tol(dtype), atol=_tol(dtype)
    )


def _pair_of(torch, array, grad: bool = True):
    """The same array as a torch and a tocha tensor (requiring grad when float and `grad`)."""
    t, o = torch.from_numpy(array.copy()), tocha.from_numpy(array.copy())
    if grad and array.dtype.kind == "f":
        t.requires_grad_()
        o.requires_grad_()
    return t, o


# -- scaled_dot_product_attention -------------------------------------------------------------
SDPA_SHAPES = [
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 3)),
    ((5, 4), (6, 4), (6, 3)),
    ((2, 5, 4), (2, 6, 4), (2, 6, 4)),
    ((2, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)),
]
SDPA_OPTIONS = [
    {},
    {"is_causal": True},
    {"scale": 0.3},
    {"mask": "bool"},
    {"mask": "float"},
    {"mask": "float_grad"},
    {"mask": "bool_batched"},
]


def _sdpa_mask(kind: str, q_shape, k_shape):
    rng = RNG(5)
    shape = (q_shape[-2], k_shape[-2])
    if kind == "bool_batched":
        shape = (q_shape[0], 1) + shape if len(q_shape) == 4 else shape
    if kind.startswith("bool"):
        mask = rng.random(shape) > 0.4
        mask[..., 0] = True
        return mask
    return rng.standard_normal(shape)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", SDPA_OPTIONS, ids=str)
@pytest.mark.parametrize("shapes", SDPA_SHAPES, ids=str)
def test_sdpa_matches_torch(torch, shapes, options, dtype):
    rng = RNG(0)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    pairs = [_pair_of(torch, a) for a in arrays]
    kwargs_t, kwargs_o = {}, {}
    options = dict(options)
    kind = options.pop("mask", None)
    if kind is not None:
        mask = _sdpa_mask(kind, shapes[0], shapes[1])
        if mask.dtype.kind == "f":
            mask = mask.astype(dtype)
        mt, mo = _pair_of(torch, mask, grad=kind == "float_grad")
        kwargs_t["attn_mask"], kwargs_o["attn_mask"] = mt, mo
        pairs.append((mt, mo))
    kwargs_t.update(options)
    kwargs_o.update(options)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(p[0] for p in pairs[:3]), **kwargs_t
    )
    ours = F.scaled_dot_product_attention(*(p[1] for p in pairs[:3]), **kwargs_o)
    assert ours.dtype == getattr(tocha, dtype) and tuple(ours.shape) == tuple(theirs.shape)
    _close(ours, theirs, dtype)
    g = rng.standard_normal(tuple(theirs.shape)).astype(dtype)
    theirs.backward(torch.from_numpy(g))
    ours.backward(tocha.from_numpy(g))
    for t, o in pairs:
        if t.requires_grad:
            _close(o.grad, t.grad, dtype)


def test_sdpa_gqa_matches_torch(torch):
    rng = RNG(1)
    arrays = [rng.standard_normal(s) for s in ((2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 3))]
    pairs = [_pair_of(torch, a) for a in arrays]
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(p[0] for p in pairs), enable_gqa=True
    )
    ours = F.scaled_dot_product_attention(*(p[1] for p in pairs), enable_gqa=True)
    _close(ours, theirs, "float64")
    theirs.sum().backward()
    ours.sum().backward()
    for t, o in pairs:
        _close(o.grad, t.grad, "float64")


def test_sdpa_fully_masked_rows_give_zeros(torch):
    rng = RNG(2)
    arrays = [rng.standard_normal((3, 4, 5)) for _ in range(3)]
    mask = np.ones((4, 4), dtype=bool)
    mask[1] = False
    pairs = [_pair_of(torch, a) for a in arrays]
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(p[0] for p in pairs), attn_mask=torch.from_numpy(mask)
    )
    ours = F.scaled_dot_product_attention(*(p[1] for p in pairs), attn_mask=tocha.from_numpy(mask))
    _close(ours, theirs, "float64")
    assert (ours.detach().numpy()[:, 1] == 0).all()
    theirs.sum().backward()
    ours.sum().backward()
    for t, o in pairs:
        _close(o.grad, t.grad, "float64")


def test_sdpa_dropout():
    q = tocha.randn(2, 3, 8, 4)
    tocha.manual_seed(7)
    first = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    tocha.manual_seed(7)
    again = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert tocha.equal(first, again)
    assert not tocha.allclose(first, F.scaled_dot_product_attention(q, q, q))
    zero = F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
    assert (zero == 0).all()


def _double(*shape, seed=0):
    rng = RNG(seed)
    return tocha.from_numpy(rng.standard_normal(shape)).requires_grad_()


@pytest.mark.parametrize(
    "options",
    [{}, {"is_causal": True}, {"scale": 0.7}, {"mask": True}, {"dropout_p": 0.3}],
    ids=str,
)
def test_sdpa_gradcheck(options):
    q, k, v = _double(2, 3, 4), _double(2, 5, 4, seed=1), _double(2, 5, 3, seed=2)
    args = [q, k, v]
    options = dict(options)
    if options.pop("mask", False):
        args.append(_double(3, 5, seed=3))

    def fn(*args):
        tocha.manual_seed(0)
        return F.scaled_dot_product_attention(*args, **options)

    assert gradcheck(fn, tuple(args), check_forward_ad=True)
    assert gradgradcheck(fn, tuple(args))
    assert check_forward_over_reverse(fn, tuple(args))


def _fully_masked_row():
    mask = np.ones((3, 5), dtype=bool)
    mask[1] = False
    return mask


# (id, keyword arguments of scaled_dot_product_attention, shapes of q, k, v and a float mask)
SDPA_FORWARD = [
    ("plain", {}, [(2, 3, 4), (2, 5, 4), (2, 5, 3)]),
    ("causal", {"is_causal": True}, [(2, 3, 4), (2, 5, 4), (2, 5, 3)]),
    ("scale", {"scale": 0.7}, [(2, 3, 4), (2, 5, 4), (2, 5, 3)]),
    ("float_mask", {}, [(2, 3, 4), (2, 5, 4), (2, 5, 3), (3, 5)]),
    ("bool_mask_row", {"attn_mask": _fully_masked_row()}, [(2, 3, 4), (2, 5, 4), (2, 5, 3)]),
    ("gqa", {"enable_gqa": True}, [(2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 3)]),
]


@pytest.mark.parametrize("name,options,shapes", SDPA_FORWARD, ids=[c[0] for c in SDPA_FORWARD])
def test_sdpa_forward_ad_matches_torch(torch, name, options, shapes):
    rng = RNG(5)
    arrays = [rng.standard_normal(s) for s in shapes]

    def fn(lib, q, k, v, *mask):
        kwargs = dict(options)
        if "attn_mask" in kwargs:
            kwargs["attn_mask"] = lib.from_numpy(kwargs["attn_mask"])
        if mask:
            kwargs["attn_mask"] = mask[0]
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)

    assert_tangents_match(torch, fn, arrays)


def test_sdpa_errors(torch):
    q = tocha.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=tocha.ones(3, 3), is_causal=True)
    with pytest.raises(
        RuntimeError,
        match="Expected query, key, and value to have the same "
        "dtype, but got query.dtype: float key.dtype: float "
        "and value.dtype: double instead.",
    ):
        F.scaled_dot_product_attention(q, q, q.double())
    with pytest.raises(
        RuntimeError,
        match="Expected attn_mask dtype to be bool or float or to "
        "match query dtype, but got attn_mask.dtype: long",
    ):
        F.scaled_dot_product_attention(q, q, q, attn_mask=tocha.ones(3, 3, dtype=tocha.int64))
    with pytest.raises(
        RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"
    ):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide"):
        F.scaled_dot_product_attention(
            tocha.randn(1, 3, 2, 4),
            tocha.randn(1, 2, 2, 4),
            tocha.randn(1, 2, 2, 4),
            enable_gqa=True,
        )


# -- MultiheadAttention -----------------------------------------------------------------------
E, H = 8, 2
L, S, N = 5, 6, 3


def _mha_pair(torch, dtype="float64", **kwargs):
    theirs = torch.nn.MultiheadAttention(E, H, **kwargs).to(getattr(torch, dtype))
    ours = nn.MultiheadAttention(E, H, **kwargs).to(getattr(tocha, dtype))
    state = {k: tocha.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    # biases start at zero in both: give them values so that their gradients are tested
    rng = RNG(9)
    for key, value in state.items():
        if "bias" in key:
            value.copy_(tocha.from_numpy(rng.standard_normal(tuple(value.shape))))
    ours.load_state_dict(state)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in state.items()})
    return ours, theirs


def _mha_inputs(torch, kind, batched, batch_first, kdim, vdim, dtype):
    """(torch, tocha) pairs of query, key and value: the same tensor for "self", key is value
    for "kv", three tensors for "separate"."""
    rng = RNG(3)
    lead_q = ((N, L) if batch_first else (L, N)) if batched else (L,)
    lead_k = ((N, S) if batch_first else (S, N)) if batched else (S,)
    if kind == "self":
        pair = _pair_of(torch, rng.standard_normal(lead_q + (E,)).astype(dtype))
        return [pair, pair, pair], [pair]
    q = _pair_of(torch, rng.standard_normal(lead_q + (E,)).astype(dtype))
    k = _pair_of(torch, rng.standard_normal(lead_k + (kdim or E,)).astype(dtype))
    if kind == "kv":
        return [q, k, k], [q, k]
    v = _pair_of(torch, rng.standard_normal(lead_k + (vdim or E,)).astype(dtype))
    return [q, k, v], [q, k, v]


def _masks(torch, kind, batched, tgt, src, dtype):
    """attn_mask and key_padding_mask pairs for a mask kind (None when absent)."""
    rng = RNG(4)
    attn = padding = None
    if kind in ("attn_bool", "both_bool"):
        mask = rng.random((tgt, src)) > 0.6
        mask[:, 0] = False
        attn = mask
    if kind == "attn_float3d":
        attn = rng.standard_normal(((N if batched else 1) * H, tgt, src)).astype(dtype)
    if kind in ("padding_bool", "both_bool"):
        mask = rng.random((N, src) if batched else (src,)) > 0.6
        mask[..., 0] = False
        padding = mask
    if kind == "padding_float":
        padding = rng.standard_normal((N, src) if batched else (src,)).astype(dtype)
    if kind == "both_float":
        attn = rng.standard_normal((tgt, src)).astype(dtype)
        padding = rng.standard_normal((N, src) if batched else (src,)).astype(dtype)
    return [None if m is None else _pair_of(torch, m, grad=False) for m in (attn, padding)]


def _run_mha(torch, ours, theirs, inputs, leaves, masks, dtype, **call):
    attn, padding = masks
    result_t = theirs(
        *(p[0] for p in inputs),
        attn_mask=attn and attn[0],
        key_padding_mask=padding and padding[0],
        **call,
    )
    result_o = ours(
        *(p[1] for p in inputs),
        attn_mask=attn and attn[1],
        key_padding_mask=padding and padding[1],
        **call,
    )
    assert (result_o[1] is None) == (result_t[1] is None)
    rng = RNG(6)
    total_t = total_o = 0
    for t, o in zip(result_t, result_o):
        if t is None:
            continue
        assert tuple(o.shape) == tuple(t.shape)
        _close(o, t, dtype)
        g = rng.standard_normal(tuple(t.shape)).astype(dtype)
        total_t = total_t + (t * torch.from_numpy(g)).sum()
        total_o = total_o + (o * tocha.from_numpy(g)).sum()
    total_t.backward()
    total_o.backward()
    for t, o in leaves:
        _close(o.grad, t.grad, dtype)
    params_t = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _close(p.grad, params_t[name].grad, dtype)


MHA_CASES = [
    # kind, batched, batch_first, module kwargs, masks, call kwargs
    ("self", True, False, {}, None, {}),
    ("self", True, True, {}, None, {}),
    ("self", True, False, {}, None, {"need_weights": False}),
    ("self", True, True, {}, None, {"average_attn_weights": False}),
    ("self", False, False, {}, None, {}),
    ("self", False, False, {}, "attn_float3d", {"need_weights": False}),
    ("kv", True, False, {}, None, {}),
    ("kv", True, True, {}, "padding_bool", {"need_weights": False}),
    ("separate", True, False, {}, None, {}),
    ("separate", True, True, {"kdim": 5, "vdim": 3}, None, {}),
    ("separate", True, False, {"kdim": 5, "vdim": 3}, "both_bool", {"need_weights": False}),
    ("separate", False, False, {"kdim": 5, "vdim": 3}, "padding_float", {}),
    ("self", True, False, {"bias": False}, "attn_bool", {}),
    ("self", True, True, {"add_bias_kv": True}, "both_bool", {}),
    (
        "kv",
        True,
        False,
        {"add_bias_kv": True, "add_zero_attn": True},
        "both_float",
        {"need_weights": False},
    ),
    ("self", True, False, {"add_zero_attn": True}, "attn_float3d", {"average_attn_weights": False}),
    ("separate", True, True, {"add_zero_attn": True, "kdim": 4}, "padding_bool", {}),
    ("self", True, False, {}, "attn_float3d", {}),
    ("self", True, True, {}, "both_float", {"need_weights": False}),
]


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize(
    "kind,batched,batch_first,kwargs,mask_kind,call",
    MHA_CASES,
    ids=[str(i) for i in range(len(MHA_CASES))],
)
def test_mha_matches_torch(torch, kind, batched, batch_first, kwargs, mask_kind, call, train):
    dtype = "float64"
    ours, theirs = _mha_pair(torch, dtype, batch_first=batch_first, **kwargs)
    ours.train(train)
    theirs.train(train)
    inputs, leaves = _mha_inputs(
        torch, kind, batched, batch_first, kwargs.get("kdim"), kwargs.get("vdim"), dtype
    )
    masks = _masks(torch, mask_kind, batched, L, L if kind == "self" else S, dtype)
    _run_mha(torch, ours, theirs, inputs, leaves, masks, dtype, **call)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_float32(torch, need_weights):
    ours, theirs = _mha_pair(torch, "float32", batch_first=True)
    inputs, leaves = _mha_inputs(torch, "self", True, True, None, None, "float32")
    masks = _masks(torch, "both_bool", True, L, L, "float32")
    _run_mha(torch, ours, theirs, inputs, leaves, masks, "float32", need_weights=need_weights)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_is_causal(torch, need_weights):
    ours, theirs = _mha_pair(torch)
    inputs, leaves = _mha_inputs(torch, "self", True, False, None, None, "float64")
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    masks = [(causal, tocha.from_numpy(causal.numpy().copy())), None]
    _run_mha(
        torch,
        ours,
        theirs,
        inputs,
        leaves,
        masks,
        "float64",
        is_causal=True,
        need_weights=need_weights,
    )


def test_mha_functional_matches_torch(torch):
    ours, theirs = _mha_pair(torch, add_bias_kv=True)
    rng = RNG(8)
    q = _pair_of(torch, rng.standard_normal((L, N, E)))
    k = _pair_of(torch, rng.standard_normal((S, N, E)))
    mask = _pair_of(torch, rng.random((N, S)) > 0.7, grad=False)
    args_t = (
        E,
        H,
        theirs.in_proj_weight,
        theirs.in_proj_bias,
        theirs.bias_k,
        theirs.bias_v,
        True,
        0.0,
        theirs.out_proj.weight,
        theirs.out_proj.bias,
    )
    args_o = (
        E,
        H,
        ours.in_proj_weight,
        ours.in_proj_bias,
        ours.bias_k,
        ours.bias_v,
        True,
        0.0,
        ours.out_proj.weight,
        ours.out_proj.bias,
    )
    out_t, w_t = torch.nn.functional.multi_head_attention_forward(
        q[0], k[0], k[0], *args_t, key_padding_mask=mask[0], average_attn_weights=False
    )
    out_o, w_o = F.multi_head_attention_forward(
        q[1], k[1], k[1], *args_o, key_padding_mask=mask[1], average_attn_weights=False
    )
    _close(out_o, out_t, "float64")
    _close(w_o, w_t, "float64")
    (out_t.sum() + w_t.pow(2).sum()).backward()
    (out_o.sum() + w_o.pow(2).sum()).backward()
    for t, o in (q, k, (theirs.in_proj_weight, ours.in_proj_weight), (theirs.bias_k, ours.bias_k)):
        _close(o.grad, t.grad, "float64")


def test_mha_dropout_weights():
    mha = nn.MultiheadAttention(E, H, dropout=0.5)
    x = tocha.randn(L, N, E)
    _, weights = mha(x, x, x, average_attn_weights=False)
    mha.eval()
    _, full = mha(x, x, x, average_attn_weights=False)
    w, full = weights.detach().numpy(), full.detach().numpy()
    kept = w != 0
    assert not kept.all() and kept.any()
    np.testing.assert_allclose(w[kept], 2 * full[kept], rtol=1e-6)
    np.testing.assert_allclose(full.sum(-1), 1, rtol=1e-6)


def test_mha_gradcheck():
    mha = nn.MultiheadAttention(4, 2, add_bias_kv=True, kdim=3).double()
    q, k, v = _double(3, 2, 4), _double(5, 2, 3, seed=1), _double(5, 2, 4, seed=2)
    mask = tocha.from_numpy(RNG(4).standard_normal((3, 5)))
    assert gradcheck(lambda q, k, v: mha(q, k, v, attn_mask=mask), (q, k, v), check_forward_ad=True)
    assert gradgradcheck(lambda q, k, v: mha(q, k, v, need_weights=False)[0], (q, k, v))
    assert check_forward_over_reverse(
        lambda q, k, v: mha(q, k, v, need_weights=False)[0], (q, k, v)
    )


def test_mha_repr_state_dict_and_init(torch):
    for kwargs in (
        {},
        {"kdim": 3, "vdim": 5, "bias": False},
        {"add_bias_kv": True},
        {"batch_first": True, "add_zero_attn": True},
    ):
        ours, theirs = (
            nn.MultiheadAttention(16, 4, **kwargs),
            torch.nn.MultiheadAttention(16, 4, **kwargs),
        )
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    mha = nn.MultiheadAttention(64, 4)
    assert type(mha.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(mha.out_proj, nn.Linear)
    assert (mha.in_proj_bias == 0).all() and (mha.out_proj.bias == 0).all()
    bound = math.sqrt(6 / (64 + 192))
    w = mha.in_proj_weight.detach().numpy()
    assert abs(w).max() <= bound and abs(w).max() > 0.9 * bound
    from tocha.nn.modules.activation import MultiheadAttention

    assert MultiheadAttention is nn.MultiheadAttention


def test_mha_errors(torch):
    with pytest.raises(
        ValueError,
        match="embed_dim and num_heads must be greater than 0, got "
        "embed_dim=0 and num_heads=2 instead",
    ):
        nn.MultiheadAttention(0, 2)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    mha = nn.MultiheadAttention(E, H)
    x = tocha.randn(L, N, E)
    cases = [
        (
            (tocha.randn(2, L, N, E), x, x),
            {},
            AssertionError,
            "query should be unbatched 2D or batched 3D tensor but received 4-D query tensor",
        ),
        (
            (x, x[0], x[0]),
            {},
            AssertionError,
            "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D and "
            "2-D tensors respectively",
        ),
        (
            (x, x, x),
            {"attn_mask": tocha.zeros(L, L + 1)},
            RuntimeError,
            "The shape of the 2D attn_mask is torch.Size([5, 6]), but should be (5, 5).",
        ),
        (
            (x, x, x),
            {"attn_mask": tocha.zeros(N, L, L)},
            RuntimeError,
            "The shape of the 3D attn_mask is torch.Size([3, 5, 5]), but should be (6, 5, 5).",
        ),
        (
            (x, x, x),
            {"key_padding_mask": tocha.zeros(N, L + 1, dtype=tocha.bool)},
            AssertionError,
            "Expected key_padded_mask.shape[1] to be 5, but got 6",
        ),
        (
            (x, x, x),
            {"attn_mask": tocha.zeros(L, L, dtype=tocha.int64)},
            AssertionError,
            "only bool and floating types of attn_mask are supported",
        ),
        (
            (x, x, x),
            {"is_causal": True},
            RuntimeError,
            "Need attn_mask if specifying the is_causal hint",
        ),
        (
            (tocha.randn(L, N, E + 2), x, x),
            {},
            AssertionError,
            "was expecting embedding dimension of 8, but got 10",
        ),
    ]
    theirs = torch.nn.MultiheadAttention(E, H)
    for args, kwargs, error, message in cases:
        message = re.escape(message)
        with pytest.raises(error, match=message):
            mha(*args, **kwargs)
        with pytest.raises(error, match=message):
            theirs(
                *(torch.from_numpy(a.numpy()) for a in args),
                **{
                    k: torch.from_numpy(v.numpy()) if isinstance(v, tocha.Tensor) else v
                    for k, v in kwargs.items()
                },
            )


def test_mha_mismatched_mask_types_warn():
    mha = nn.MultiheadAttention(E, H)
    x = tocha.randn(L, N, E)
    with pytest.warns(
        UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"
    ):
        mha(
            x,
            x,
            x,
            key_padding_mask=tocha.zeros(N, L, dtype=tocha.bool),
            attn_mask=tocha.zeros(L, L),
        )


@pytest.mark.parametrize("combo", list(itertools.product([True, False], repeat=2)))
def test_mha_without_grad_matches_torch(torch, combo):
    batch_first, need_weights = combo
    ours, theirs = _mha_pair(torch, "float32", batch_first=batch_first)
    ours.eval()
    theirs.eval()
    x = RNG(0).standard_normal((N, L, E)).astype(np.float32)
    with torch.no_grad():
        out_t, w_t = theirs(*(torch.from_numpy(x),) * 3, need_weights=need_weights)
    with tocha.no_grad():
        out_o, w_o = ours(*(tocha.from_numpy(x),) * 3, need_weights=need_weights)
    _close(out_o, out_t, "float32")
    if need_weights:
        _close(w_o, w_t, "float32")


# -- an explicit mask with is_causal, and clashing batch dims ---------------------------------
@pytest.mark.parametrize("mask_kind", ["bool", "float"])
@pytest.mark.parametrize("gqa", [False, True])
def test_sdpa_mask_and_causal_together(torch, mask_kind, gqa):
    """PyTorch's CPU flash kernel (4-D inputs, no dropout) applies both: the mask and the
    causal triangle."""
    rng = np.random.default_rng(3)
    kv_heads = 2 if gqa else 4
    arrays = [
        rng.standard_normal((2, 4, 5, 8)),
        rng.standard_normal((2, kv_heads, 6, 8)),
        rng.standard_normal((2, kv_heads, 6, 8)),
    ]
    mask = rng.random((5, 6)) > 0.3
    mask[:, 0] = True
    if mask_kind == "float":
        mask = rng.standard_normal((5, 6))

    def run(lib):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = lib.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=lib.tensor(mask), is_causal=True, enable_gqa=gqa
        )
        out.sum().backward()
        return out.detach().numpy(), q.grad.numpy(), k.grad.numpy()

    for ours, theirs in zip(run(tocha), run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("q_shape,kwargs", [((4, 5, 8), {}), ((2, 4, 5, 8), {"dropout_p": 0.5})])
def test_sdpa_mask_and_causal_refused_off_the_fused_path(torch, q_shape, kwargs):
    def run(lib):
        q = lib.ones(q_shape)
        lib.nn.functional.scaled_dot_product_attention(
            q, q, q, attn_mask=lib.ones(5, 5, dtype=lib.bool), is_causal=True, **kwargs
        )

    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "q_shape,k_shape",
    [((2, 4, 5, 8), (2, 2, 6, 8)), ((4, 5, 8), (2, 6, 8)), ((2, 4, 5, 8), (3, 4, 6, 8))],
)
def test_sdpa_clashing_batch_dims(torch, q_shape, k_shape):
    def run(lib):
        lib.nn.functional.scaled_dot_product_attention(
            lib.ones(q_shape), lib.ones(k_shape), lib.ones(k_shape)
        )

    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)


# -- multi_head_attention_forward with static keys and values ----------------------------------
STATIC = ["k", "v", "kv", "kv-zero-attn"]


@pytest.mark.parametrize("case", STATIC)
def test_mha_forward_static_k_v(torch, case):
    rng = np.random.default_rng(5)
    L, S, N, E, H = 3, 4, 2, 6, 2
    arrays = {
        "q": rng.standard_normal((L, N, E)),
        "k": rng.standard_normal((S, N, E)),
        "v": rng.standard_normal((S, N, E)),
        "W": rng.standard_normal((3 * E, E)),
        "b": rng.standard_normal(3 * E),
        "Wo": rng.standard_normal((E, E)),
        "bo": rng.standard_normal(E),
        "sk": rng.standard_normal((N * H, 4 if case == "k" else 5, E // H)),
        "sv": rng.standard_normal((N * H, 4 if case == "v" else 5, E // H)),
    }

    def run(lib):
        t = {name: lib.tensor(a, requires_grad=name in ("q", "sk")) for name, a in arrays.items()}
        kwargs = {}
        if "k" in case:
            kwargs["static_k"] = t["sk"]
        if "v" in case:
            kwargs["static_v"] = t["sv"]
        out, weights = lib.nn.functional.multi_head_attention_forward(
            t["q"],
            t["k"],
            t["v"],
            E,
            H,
            t["W"],
            t["b"],
            None,
            None,
            "zero" in case,
            0.0,
            t["Wo"],
            t["bo"],
            training=False,
            **kwargs,
        )
        out.sum().backward()
        grads = [t["q"].grad.numpy()] + ([t["sk"].grad.numpy()] if "k" in case else [])
        return [out.detach().numpy(), weights.detach().numpy(), *grads]

    for ours, theirs in zip(run(tocha), run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [{"static_k": (3, 5, 3)}, {"static_k": (4, 5, 2)}, {"static_v": (4, 5, 3)}],
    ids=["batch", "head_dim", "length"],
)
def test_mha_forward_static_errors(torch, kwargs):
    def run(lib):
        q = lib.ones(3, 2, 6)
        given = {name: lib.ones(shape) for name, shape in kwargs.items()}
        lib.nn.functional.multi_head_attention_forward(
            q,
            q,
            q,
            6,
            2,
            lib.ones(18, 6),
            None,
            None,
            None,
            False,
            0.0,
            lib.ones(6, 6),
            None,
            training=False,
            **given,
        )

    with pytest.raises(Exception) as theirs:
        run(torch)
    with pytest.raises(type(theirs.value)) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)
