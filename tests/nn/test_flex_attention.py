"""tocha.nn.attention.flex_attention against PyTorch's (its unfused eager path): block masks,
masked and modified scores, the log-sum-exp, grouped-query attention and gradients."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import tocha
from tocha.nn.attention.flex_attention import AuxRequest, create_block_mask, flex_attention

try:  # PyTorch loads the module only when it is imported; replay runs have no PyTorch
    importlib.import_module("torch.nn.attention.flex_attention")
except ImportError:
    pass


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < 3)


def relative(score, b, h, q_idx, kv_idx):
    return score + (q_idx - kv_idx) * 0.1 + h


MASKS = {"causal": causal, "sliding": sliding}


@pytest.mark.parametrize("name", list(MASKS), ids=list(MASKS))
def test_block_mask_matches_torch(torch, name):
    got = create_block_mask(MASKS[name], 2, None, 7, 9, device="cpu", BLOCK_SIZE=2)
    want = torch.nn.attention.flex_attention.create_block_mask(
        MASKS[name], 2, None, 7, 9, device="cpu", BLOCK_SIZE=2
    )
    for field in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices"):
        np.testing.assert_array_equal(getattr(got, field).numpy(), getattr(want, field).numpy())
    np.testing.assert_array_equal(got.to_dense().numpy(), want.to_dense().numpy())
    assert got.shape == tuple(want.shape) and got.BLOCK_SIZE == tuple(want.BLOCK_SIZE)


def _inputs(lib, heads_kv=2, requires_grad=False):
    rng = np.random.default_rng(0)
    shapes = [(2, 2, 6, 4), (2, heads_kv, 6, 4), (2, heads_kv, 6, 3)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return [lib.tensor(a, requires_grad=requires_grad) for a in arrays]


CASES = ["mask", "score_mod", "both", "gqa"]


def _options(case: str, make) -> dict:
    return {
        "block_mask": make(sliding, None, None, 6, 6, device="cpu")
        if case != "score_mod"
        else None,
        "score_mod": relative if case in ("score_mod", "both") else None,
        "enable_gqa": case == "gqa",
    }


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_flex_attention_matches_torch(torch, case):
    heads_kv = 1 if case == "gqa" else 2
    tflex = torch.nn.attention.flex_attention
    got, got_aux = flex_attention(
        *_inputs(tocha, heads_kv),
        **_options(case, create_block_mask),
        return_aux=AuxRequest(lse=True),
    )
    want, want_aux = tflex.flex_attention(
        *_inputs(torch, heads_kv),
        **_options(case, tflex.create_block_mask),
        return_aux=tflex.AuxRequest(lse=True),
    )
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_aux.lse.numpy(), want_aux.lse.numpy(), rtol=1e-5, atol=1e-6)


def test_gradients_match_the_attention_written_out(torch):
    """PyTorch's flex_attention has no backward on the CPU: the gradients are compared with
    those of the same attention written with plain ops in PyTorch."""
    got_in = _inputs(tocha, requires_grad=True)
    out = flex_attention(*got_in, **_options("both", create_block_mask))
    (out * out).sum().backward()
    q, k, v = _inputs(torch, requires_grad=True)
    idx = torch.arange(6)
    rel = (idx.view(6, 1) - idx.view(1, 6)) * 0.1 + torch.arange(2).view(1, 2, 1, 1)
    keep = (idx.view(6, 1) >= idx.view(1, 6)) & (idx.view(6, 1) - idx.view(1, 6) < 3)
    scores = (q @ k.transpose(-2, -1) * 0.5 + rel).masked_fill(~keep, float("-inf"))
    want = torch.softmax(scores, dim=-1) @ v
    (want * want).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    for g, w in zip(got_in, (q, k, v)):
        np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_heads_must_match_without_gqa():
    q, k, v = (tocha.randn(1, h, 3, 4) for h in (4, 2, 2))
    with pytest.raises(ValueError, match="Try setting enable_gqa=True"):
        flex_attention(q, k, v)
    out, lse = flex_attention(q, k, v, enable_gqa=True, return_lse=True)
    assert out.shape == (1, 4, 3, 4) and lse.shape == (1, 4, 3)
