"""GPU benchmarks (issue tocha-cuda): float16 matmul throughput, the overhead of small ops,
and training steps of an MLP and of a transformer encoder layer, tocha-cuda against PyTorch
on the same GPU.

Every case raises `Unavailable` (shown as n/a) for a library without a usable CUDA GPU, so
the module costs nothing on a machine without one. Each timed call ends with a synchronize,
so the figures are of finished GPU work.

Targets:

- ``a @ b`` 8192x8192 float16: at least 0.9x PyTorch's TFLOP/s (tocha/torch at most 1/0.9);
- small, launch-bound ops (``x + 1``, ``a * b``, ``x.sum()``, ``F.relu``, a 64x64
  ``a @ b``, ``F.softmax(x, -1)`` on 32x128): at most 1.5x PyTorch's time;
- a training step (zero_grad, forward, backward, optimizer step) of the MLP and of the
  transformer layer: at most 1.5x PyTorch's time. Their peak GPU memory (within 1.3x of
  PyTorch's) is measured by peak_memory.py, on the same models (`TRAINING`, `train_step`).
"""

from __future__ import annotations

import numpy as np
from harness import Case, Unavailable, faster_than_torch

MATMUL_N = 8192
WITHIN_1_5 = faster_than_torch(1.5)


def _cuda(lib):
    """`lib`'s cuda module; Unavailable without a usable GPU."""
    if not lib.cuda.is_available():
        raise Unavailable("no CUDA GPU")
    return lib.cuda


def _no_inputs():
    """The harness's setup: no CPU inputs (each case makes its tensors on the GPU)."""
    return ()


class OnGpu:
    """A timed call on GPU tensors made on the first (untimed) call: `make(lib)` gives the
    tensors, `step(lib, *tensors)` the work."""

    def __init__(self, make, step):
        self.make, self.step, self.tensors = make, step, {}

    def __call__(self, lib):
        cuda = _cuda(lib)
        tensors = self.tensors.get(lib.__name__)
        if tensors is None:
            tensors = self.tensors[lib.__name__] = self.make(lib)
        self.step(lib, *tensors)
        cuda.synchronize()


def gpu_randn(*shapes, dtype=np.float32):
    """A maker of seeded standard-normal GPU tensors of `shapes` and `dtype` (the same values
    for every library)."""

    def make(lib):
        rng = np.random.default_rng(0)
        arrays = (rng.standard_normal(shape, dtype=np.float32).astype(dtype) for shape in shapes)
        return tuple(lib.from_numpy(a).to("cuda") for a in arrays)

    return make


def mlp(lib):
    """An MLP 1024-4096-1024 (ReLU) on the GPU, its Adam and a batch of 256."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).to("cuda")
    x = lib.randn(256, 1024, device="cuda")
    return model, lib.optim.Adam(model.parameters(), lr=1e-3), x


def encoder_layer(lib):
    """A TransformerEncoderLayer (d_model 512, 8 heads, feed-forward 2048, batch_first, the
    default dropout 0.1) on the GPU, its AdamW and a batch of 32 sequences of 128."""
    lib.manual_seed(0)
    layer = lib.nn.TransformerEncoderLayer(
        d_model=512, nhead=8, dim_feedforward=2048, batch_first=True
    ).to("cuda")
    x = lib.randn(32, 128, 512, device="cuda")
    return layer, lib.optim.AdamW(layer.parameters(), lr=1e-3), x


def train_step(lib, model, opt, x):
    """One training step: zero_grad, forward, the mean square as loss, backward, step."""
    opt.zero_grad()
    (model(x) ** 2).mean().backward()
    opt.step()


def compiled(maker):
    """`maker` with the model compiled by tocha.compile for tocha (PyTorch's stays eager: the
    comparison is with its eager step)."""

    def make(lib):
        model, opt, x = maker(lib)
        return (lib.compile(model) if lib.__name__ == "tocha" else model), opt, x

    return make


# The training steps timed here and measured by peak_memory.py: name -> maker of
# (model, optimizer, input) on the GPU.
TRAINING = {"mlp": mlp, "transformer": encoder_layer}


def small_op(name, size, make, step):
    """A case of one small, launch-bound op, within 1.5x PyTorch's time."""
    return Case(f"{name} (cuda)", size, _no_inputs, OnGpu(make, step), goal=WITHIN_1_5)


def matmul(lib, a, b):
    """a @ b."""
    return a @ b


def softmax(lib, x):
    """F.softmax over the last dimension."""
    return lib.nn.functional.softmax(x, -1)


def relu(lib, x):
    """F.relu."""
    return lib.nn.functional.relu(x)


CASES = [
    Case(
        "a @ b (cuda, float16; 1.1 TFLOP per call)",
        f"{MATMUL_N}x{MATMUL_N} float16",
        _no_inputs,
        OnGpu(gpu_randn((MATMUL_N, MATMUL_N), (MATMUL_N, MATMUL_N), dtype=np.float16), matmul),
        goal=faster_than_torch(1 / 0.9),
        repeats=5,
    ),
    small_op("x + 1", "100 float32", gpu_randn((100,)), lambda lib, x: x + 1),
    small_op("a * b", "100 float32", gpu_randn((100,), (100,)), lambda lib, a, b: a * b),
    small_op("x.sum()", "100 float32", gpu_randn((100,)), lambda lib, x: x.sum()),
    small_op("F.relu(x)", "100 float32", gpu_randn((100,)), relu),
    small_op("a @ b", "64x64 float32", gpu_randn((64, 64), (64, 64)), matmul),
    small_op("F.softmax(x, -1)", "32x128 float32", gpu_randn((32, 128)), softmax),
    Case(
        "MLP step: Adam, 1024-4096-1024 (cuda)",
        "batch 256 float32",
        _no_inputs,
        OnGpu(mlp, train_step),
        goal=WITHIN_1_5,
        repeats=5,
    ),
    Case(
        "compiled MLP step: Adam, 1024-4096-1024 (cuda)",
        "batch 256 float32",
        _no_inputs,
        OnGpu(compiled(mlp), train_step),
        goal=WITHIN_1_5,
        repeats=5,
    ),
    Case(
        "compiled TransformerEncoderLayer step: AdamW (cuda)",
        "d 512, 8 heads, ff 2048, 32x128 float32",
        _no_inputs,
        OnGpu(compiled(encoder_layer), train_step),
        goal=WITHIN_1_5,
        repeats=5,
    ),
    Case(
        "TransformerEncoderLayer step: AdamW (cuda)",
        "d 512, 8 heads, ff 2048, 32x128 float32",
        _no_inputs,
        OnGpu(encoder_layer, train_step),
        goal=WITHIN_1_5,
        repeats=5,
    ),
]
