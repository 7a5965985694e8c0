"""Function-transform benchmarks (issue "tocha.func and forward-mode autograd").

Targets: ``vmap(f)(x)`` over a batch of 1000 (elementwise, matmul and reduction bodies) within
1.5x of the same op written batched by hand (the NumPy column: numpy/tocha >= 0.67); the
Python loop that vmap replaces is timed beside them, without a goal. Per-sample gradients of
an MLP (784-256-10, batch 64) by ``vmap(grad(...))`` and ``jacfwd`` of a 100 -> 100 function:
tocha/torch <= 1.5 against torch.func.
"""

from __future__ import annotations

import numpy as np
from harness import Case, faster_than_torch, numpy_throughput

BATCH = 1000


def batch_of(*shapes):
    def setup():
        rng = np.random.default_rng(0)
        return tuple(rng.standard_normal(s, dtype=np.float32) for s in shapes)

    return setup


def _func(lib):
    return lib.func


def elementwise(lib, x):
    return _func(lib).vmap(lambda r: r.sin() * 2 + 1)(x)


def numpy_elementwise(np, x):
    return np.sin(x) * 2 + 1


def matmul(lib, x, w):
    return _func(lib).vmap(lambda r, m: r @ m, in_dims=(0, None))(x, w)


def numpy_matmul(np, x, w):
    return x @ w


def reduction(lib, x):
    return _func(lib).vmap(lambda r: r.softmax(-1).max())(x)


def numpy_reduction(np, x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).max(-1)


def python_loop(lib, x):
    return lib.stack([r.softmax(-1).max() for r in x])


def mlp_setup():
    rng = np.random.default_rng(0)
    return (
        (rng.standard_normal((256, 784)) * 0.03).astype(np.float32),
        np.zeros(256, np.float32),
        (rng.standard_normal((10, 256)) * 0.06).astype(np.float32),
        np.zeros(10, np.float32),
        rng.standard_normal((64, 784), dtype=np.float32),
        rng.integers(0, 10, 64),
    )


def per_sample_grads(lib, w1, b1, w2, b2, x, t):
    F = lib.nn.functional

    def loss(params, xi, ti):
        a, b, c, d = params
        hidden = F.relu(F.linear(xi, a, b))
        return F.cross_entropy(F.linear(hidden, c, d).unsqueeze(0), ti.unsqueeze(0))

    func = _func(lib)
    return func.vmap(func.grad(loss), in_dims=(None, 0, 0))((w1, b1, w2, b2), x, t)


def jacfwd_setup():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal(100, dtype=np.float32),
        (rng.standard_normal((100, 100)) * 0.1).astype(np.float32),
    )


def jacobian_forward(lib, x, w):
    return _func(lib).jacfwd(lambda v: (w @ v).tanh() * v)(x)


CASES = [
    Case(
        "vmap(lambda r: r.sin() * 2 + 1)(x)",
        f"{BATCH} x 100 float32",
        batch_of((BATCH, 100)),
        elementwise,
        numpy=numpy_elementwise,
        goal=numpy_throughput(0.67),
    ),
    Case(
        "vmap(lambda r, m: r @ m, in_dims=(0, None))(x, w)",
        f"{BATCH} x 64 @ 64x64 float32",
        batch_of((BATCH, 64), (64, 64)),
        matmul,
        numpy=numpy_matmul,
        goal=numpy_throughput(0.67),
    ),
    Case(
        "vmap(lambda r: r.softmax(-1).max())(x)",
        f"{BATCH} x 100 float32",
        batch_of((BATCH, 100)),
        reduction,
        numpy=numpy_reduction,
        goal=numpy_throughput(0.67),
    ),
    Case(
        "stack([r.softmax(-1).max() for r in x]) (the loop vmap replaces)",
        f"{BATCH} x 100 float32",
        batch_of((BATCH, 100)),
        python_loop,
        goal=None,
    ),
    Case(
        "vmap(grad(loss), in_dims=(None, 0, 0)) per-sample gradients",
        "MLP 784-256-10, batch 64",
        mlp_setup,
        per_sample_grads,
        goal=faster_than_torch(1.5),
    ),
    Case(
        "jacfwd(lambda v: (w @ v).tanh() * v)(x)",
        "100 -> 100 float32",
        jacfwd_setup,
        jacobian_forward,
        goal=faster_than_torch(1.5),
    ),
]
