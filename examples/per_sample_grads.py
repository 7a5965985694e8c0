"""Per-sample gradients with torch.func, after PyTorch's tutorial of that name.

A small CNN classifies MNIST-shaped images (random data: the point is the gradients). The
gradient of the loss of each sample alone, with respect to every parameter, is computed two
ways: a loop that runs ``.backward()`` once per sample, and one call of
``vmap(grad(compute_loss))`` over the batch, where ``compute_loss`` calls the model through
``functional_call`` with the parameters as arguments. The two must agree.

Written for PyTorch; it runs unchanged on tocha with ``python -m tocha.run``:

    python examples/per_sample_grads.py               # PyTorch
    python -m tocha.run examples/per_sample_grads.py  # tocha

Weights and data come from NumPy, so both print the same numbers; the last line is JSON
(each sample's loss and the norm of its gradient) for tests/examples/test_func_examples.py.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


def make_model() -> Any:
    """The tutorial's CNN: two 3x3 convolutions, max pooling, two linear layers, log-softmax
    (28x28 images in, 10 log-probabilities out)."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(9216, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
        nn.LogSoftmax(dim=1),
    )


def init_from_numpy(model: Any, seed: int) -> None:
    """Every parameter uniform in +-1/sqrt(fan_in), drawn by NumPy (the same in any framework)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            fan_in = p[0].numel() if p.dim() > 1 else p.numel()
            bound = 1.0 / math.sqrt(fan_in)
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, p.shape).astype(np.float32)))


def make_data(n: int, seed: int) -> tuple[Any, Any]:
    """`n` random 1x28x28 images and their labels in 0..9."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((n, 1, 28, 28)).astype(np.float32)
    targets = rng.integers(0, 10, size=n)
    return torch.from_numpy(data), torch.from_numpy(targets).long()


def loss_fn(predictions: Any, targets: Any) -> Any:
    return F.nll_loss(predictions, targets)


def loop_per_sample_grads(model: Any, data: Any, targets: Any) -> dict[str, Any]:
    """Each sample's gradients by one backward pass each: name -> (N, *param.shape)."""
    grads: dict[str, list[Any]] = {name: [] for name, _ in model.named_parameters()}
    for sample, target in zip(data, targets):
        model.zero_grad()
        loss_fn(model(sample.unsqueeze(0)), target.unsqueeze(0)).backward()
        for name, p in model.named_parameters():
            grads[name].append(p.grad.clone())
    return {name: torch.stack(g) for name, g in grads.items()}


def vmap_per_sample_grads(model: Any, data: Any, targets: Any) -> tuple[Any, dict[str, Any]]:
    """Each sample's loss and gradients in one call: vmap over grad of a function of the
    parameters."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params: Any, buffers: Any, sample: Any, target: Any) -> Any:
        batch = sample.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, target.unsqueeze(0))
        return loss, loss

    compute_sample_grad = vmap(grad(compute_loss, has_aux=True), in_dims=(None, None, 0, 0))
    grads, losses = compute_sample_grad(params, buffers, data, targets)
    return losses, grads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    model = make_model()
    init_from_numpy(model, seed=0)
    data, targets = make_data(args.batch_size, seed=1)

    start = time.perf_counter()
    looped = loop_per_sample_grads(model, data, targets)
    loop_time = time.perf_counter() - start
    start = time.perf_counter()
    losses, vmapped = vmap_per_sample_grads(model, data, targets)
    vmap_time = time.perf_counter() - start

    agree = all(
        torch.allclose(vmapped[name], looped[name], atol=3e-3, rtol=1e-5) for name in looped
    )
    largest = max((vmapped[name] - looped[name]).abs().max().item() for name in looped)
    print(f"per-sample gradients of {args.batch_size} samples, {len(looped)} parameters")
    print(f"loop of backward: {loop_time:.3f} s, vmap(grad): {vmap_time:.3f} s")
    print(f"vmap(grad) equals the loop: {agree} (largest difference {largest:.2e})")
    norms = torch.stack([g.flatten(1).pow(2).sum(1) for g in vmapped.values()]).sum(0).sqrt()
    print(json.dumps({"losses": losses.tolist(), "grad_norms": norms.tolist(), "agree": agree}))


if __name__ == "__main__":
    main()
