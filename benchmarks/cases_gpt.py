"""GPT benchmarks (issue 27): one block of the GPT of karpathy's ng-video-lecture, forward and
backward in training mode, as a new user writes it: six heads of their own ``nn.Linear``
projections, a causal mask by ``masked_fill`` on a ``tril`` buffer, softmax, dropout 0.2,
the heads concatenated and projected, then a ReLU feed-forward 4x wide, each half behind a
``LayerNorm`` and a residual. d 384, 6 heads, T 256, batch 16, float32.

Target: at most PyTorch's time at 1 thread. `build` and `block` are shared with
peak_memory.py, which measures the same step's peak memory.
"""

from __future__ import annotations

import numpy as np
from harness import Case, faster_than_torch

BATCH, SEQ, D_MODEL, HEADS, DROPOUT = 16, 256, 384, 6, 0.2


def tokens():
    """A seeded float32 batch of embeddings ``(16, 256, 384)``."""
    rng = np.random.default_rng(0)
    return (rng.standard_normal((BATCH, SEQ, D_MODEL), dtype=np.float32),)


def build(lib) -> dict:
    """The block's layers (seeded), as ``nn.ModuleDict``, with the causal ``tril`` beside."""
    nn = lib.nn
    lib.manual_seed(0)
    size = D_MODEL // HEADS
    layers = nn.ModuleDict(
        {
            "ln1": nn.LayerNorm(D_MODEL),
            "ln2": nn.LayerNorm(D_MODEL),
            "key": nn.ModuleList(nn.Linear(D_MODEL, size, bias=False) for _ in range(HEADS)),
            "query": nn.ModuleList(nn.Linear(D_MODEL, size, bias=False) for _ in range(HEADS)),
            "value": nn.ModuleList(nn.Linear(D_MODEL, size, bias=False) for _ in range(HEADS)),
            "proj": nn.Linear(D_MODEL, D_MODEL),
            "ff1": nn.Linear(D_MODEL, 4 * D_MODEL),
            "ff2": nn.Linear(4 * D_MODEL, D_MODEL),
            "dropout": nn.Dropout(DROPOUT),
        }
    )
    return {"layers": layers, "tril": lib.tril(lib.ones(SEQ, SEQ))}


def block(lib, model: dict, x):
    """The block's forward: ``x + attention(ln1(x))``, then ``+ feed_forward(ln2(.))``."""
    m, tril = model["layers"], model["tril"]
    F = lib.nn.functional
    drop = m["dropout"]
    h = m["ln1"](x)
    _, t, _ = h.shape
    heads = []
    for key, query, value in zip(m["key"], m["query"], m["value"]):
        k, q = key(h), query(h)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = wei.masked_fill(tril[:t, :t] == 0, float("-inf"))
        wei = drop(F.softmax(wei, dim=-1))
        heads.append(wei @ value(h))
    x = x + drop(m["proj"](lib.cat(heads, dim=-1)))
    ff = m["ff2"](lib.relu(m["ff1"](m["ln2"](x))))
    return x + drop(ff)


class BlockStep:
    """The timed call: the block's forward and backward (the block made on the first,
    untimed, call for the given input; gradients accumulate)."""

    def __init__(self):
        self.models = {}

    def __call__(self, lib, x):
        model = self.models.get(id(x))
        if model is None:
            model = self.models[id(x)] = build(lib)
            x.requires_grad_()
        block(lib, model, x).sum().backward()


CASES = [
    Case(
        "ng-video GPT block fwd+bwd",
        "d 384, 6 heads, 16 x 256 float32",
        tokens,
        BlockStep(),
        goal=faster_than_torch(1.0),
        repeats=3,
    ),
]
