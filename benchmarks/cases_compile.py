"""Compiler benchmarks (issue 22): tocha.compile's result against PyTorch **eager** (and, for
the elementwise chain, against NumPy's unfused ops), at 1 thread.

Targets: the small graph's forward and backward at most 0.5 of torch's time, the MLP step
0.8 (the model compiled; with the loss compiled too; and the whole training step function
compiled, with SGD and AdamW), the GPT block 0.9 (and 0.7 of
tocha's eager time: the row "tocha eager" beside it), the elementwise chain 0.6 of NumPy's.
Each case compiles on its first (untimed) call. The whole-step rows are timed in CPU time
(the machine they were written on is shared).
"""

from __future__ import annotations

import time

import numpy as np
from harness import Case, faster_than_torch, numpy_throughput

_COMPILED: dict = {}


def _compile(lib, fn):
    """``tocha.compile(fn)`` with numba loaded first (it loads in the background otherwise, and
    the first timed calls would run the kernels' NumPy forms); `fn` itself for PyTorch."""
    if lib.__name__ != "tocha":
        return fn
    from tocha.compiler import _codegen_numba

    _codegen_numba.wait_for_numba()
    return lib.compile(fn)


def _compiled(lib, key, make):
    """`make(lib)`'s result compiled once per library and key (tocha.compile for tocha; the
    eager callable for torch, whose compiled form is not the comparison)."""
    slot = (lib.__name__, key)
    if slot not in _COMPILED:
        made = make(lib)
        _COMPILED[slot] = _compile(lib, made)
    return _COMPILED[slot]


def small_inputs():
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(100, dtype=np.float32) for _ in range(3))


def small_graph(lib, a, b, c):
    """``((a*b)+c).sum().backward()`` on 100-element leaves, the forward compiled."""
    for t in (a, b, c):
        if not t.requires_grad:
            t.requires_grad_()
    fn = _compiled(lib, "small", lambda lib: lambda a, b, c: ((a * b) + c).sum())
    fn(a, b, c).backward()


def mlp_inputs():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((64, 784), dtype=np.float32),
        rng.integers(0, 10, 64).astype(np.int64),
    )


def _mlp(lib):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)
    )
    return model


_MLP: dict = {}


def mlp_step(lib, x, y):
    """One SGD step of a 784-256-128-10 MLP on a batch of 64 (the model compiled)."""
    state = _MLP.get(lib.__name__)
    if state is None:
        model = _mlp(lib)
        run = _compile(lib, model)
        state = _MLP[lib.__name__] = (run, lib.optim.SGD(model.parameters(), lr=0.01))
    run, opt = state
    loss = lib.nn.functional.cross_entropy(run(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


_MLP_LOSS: dict = {}


def mlp_loss_step(lib, x, y):
    """The same SGD step with the loss compiled with the model (``tocha.compile`` of
    ``cross_entropy(model(x), y)``); PyTorch eager as before."""
    state = _MLP_LOSS.get(lib.__name__)
    if state is None:
        model = _mlp(lib)
        F = lib.nn.functional

        def loss_of(x, y):
            return F.cross_entropy(model(x), y)

        run = _compile(lib, loss_of)
        state = _MLP_LOSS[lib.__name__] = (run, lib.optim.SGD(model.parameters(), lr=0.01))
    run, opt = state
    loss = run(x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()


_MLP_TRAIN: dict = {}


def mlp_train_step(lib, x, y, optimizer="SGD"):
    """A whole training step compiled as PyTorch users write it (``@torch.compile def
    train_step``: forward, ``backward()``, the optimizer's step): the backward and the step
    break the graph, the model's forward and backward stay compiled and the update is one
    generated kernel per group; PyTorch eager as before."""
    key = (lib.__name__, optimizer)
    step = _MLP_TRAIN.get(key)
    if step is None:
        model = _mlp(lib)
        F = lib.nn.functional
        if optimizer == "SGD":
            opt = lib.optim.SGD(model.parameters(), lr=0.01)
        else:
            opt = lib.optim.AdamW(model.parameters(), lr=1e-3)

        def train_step(x, y):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

        step = _MLP_TRAIN[key] = _compile(lib, train_step)
        step(x, y)  # the first call breaks the graph; the second compiles the model's part
    step(x, y)


def mlp_train_step_adamw(lib, x, y):
    mlp_train_step(lib, x, y, optimizer="AdamW")


def gpt_inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((8, 64, 128), dtype=np.float32),)


def _gpt_block(lib):
    """A GPT block (d 128, 4 heads, T 64): pre-LayerNorm causal self-attention and a GELU MLP."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class Block(nn.Module):
        def __init__(self, d=128, heads=4, t=64):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.heads = heads
            self.register_buffer("mask", lib.tril(lib.ones(t, t)).view(1, 1, t, t))

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.attn(self.ln1(x)).split(c, dim=2)
            q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
            k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
            v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
            y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc(self.ln2(x))))

    return Block()


_GPT: dict = {}


def gpt_step(lib, x, compiled=True):
    """The block's forward and backward (gradients accumulate)."""
    key = (lib.__name__, compiled)
    run = _GPT.get(key)
    if run is None:
        block = _gpt_block(lib)
        run = _GPT[key] = _compile(lib, block) if compiled else block
    run(x).sum().backward()


def gpt_eager(lib, x):
    gpt_step(lib, x, compiled=False)


def chain_inputs():
    rng = np.random.default_rng(0)
    n = 10_000_000
    return tuple(rng.standard_normal(n, dtype=np.float32) for _ in range(3))


def chain(lib, x, w, b):
    """``((x*w+b).tanh()*0.5+x).relu()`` on 10M float32, compiled."""
    fn = _compiled(lib, "chain", lambda lib: lambda x, w, b: ((x * w + b).tanh() * 0.5 + x).relu())
    fn(x, w, b)


def chain_numpy(np_, x, w, b):
    """The same chain as NumPy's unfused ops."""
    np_.maximum(np_.tanh(x * w + b) * np.float32(0.5) + x, np.float32(0))


CASES = [
    Case(
        "compiled ((a*b)+c).sum().backward()",
        "100 float32",
        small_inputs,
        small_graph,
        goal=faster_than_torch(0.5),
    ),
    Case(
        "compiled MLP SGD step 784-256-128-10",
        "batch 64 float32",
        mlp_inputs,
        mlp_step,
        goal=faster_than_torch(0.8),
    ),
    Case(
        "compiled MLP + loss SGD step 784-256-128-10",
        "batch 64 float32",
        mlp_inputs,
        mlp_loss_step,
        goal=faster_than_torch(0.8),
    ),
    Case(
        "compiled MLP train step incl. SGD step",
        "batch 64 float32",
        mlp_inputs,
        mlp_train_step,
        goal=faster_than_torch(0.8),
        clock=time.process_time,
    ),
    Case(
        "compiled MLP train step incl. AdamW step",
        "batch 64 float32",
        mlp_inputs,
        mlp_train_step_adamw,
        goal=faster_than_torch(0.8),
        clock=time.process_time,
    ),
    Case(
        "compiled GPT block fwd+bwd",
        "d 128, 4 heads, 8 x 64 float32",
        gpt_inputs,
        gpt_step,
        goal=faster_than_torch(0.9),
    ),
    Case("GPT block fwd+bwd, tocha eager", "d 128, 4 heads, 8 x 64 float32", gpt_inputs, gpt_eager),
    Case(
        "compiled ((x*w+b).tanh()*0.5+x).relu()",
        "10M float32",
        chain_inputs,
        chain,
        numpy=chain_numpy,
        goal=numpy_throughput(1 / 0.6),
        repeats=3,
    ),
]
