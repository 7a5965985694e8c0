"""Model ensembling with torch.func, after PyTorch's tutorial of that name.

Several MLPs of the same architecture (different weights) classify MNIST-shaped inputs
(random data). Their predictions are computed by a loop over the models, and by one call:
``stack_module_state`` stacks each parameter of the models along a new leading dim, and
``vmap`` maps ``functional_call`` of one base model over it. Two variants, as in the
tutorial: each model gets its own minibatch, or all get the same one.

Written for PyTorch; it runs unchanged on tocha with ``python -m tocha.run``:

    python examples/model_ensembling.py               # PyTorch
    python -m tocha.run examples/model_ensembling.py  # tocha

Weights and data come from NumPy, so both print the same numbers; the last line is JSON
(a summary of each variant's predictions) for tests/examples/test_func_examples.py.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
from typing import Any

import numpy as np
import torch
import torch.nn as nn
from torch.func import functional_call, stack_module_state, vmap


def make_mlp() -> Any:
    """The tutorial's MLP: 784 -> 128 -> 128 -> 10 with ReLUs."""
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(784, 128),
        nn.ReLU(),
        nn.Linear(128, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    )


def init_from_numpy(model: Any, seed: int) -> None:
    """Every parameter uniform in +-1/sqrt(fan_in), drawn by NumPy (the same in any framework)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            fan_in = p[0].numel() if p.dim() > 1 else p.numel()
            bound = 1.0 / math.sqrt(fan_in)
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, p.shape).astype(np.float32)))


def summary(predictions: Any) -> list[float]:
    """Per model: the mean of its predictions and the mean of their squares."""
    flat = predictions.flatten(1)
    return [*flat.mean(1).tolist(), *flat.pow(2).mean(1).tolist()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    models = [make_mlp() for _ in range(args.models)]
    for seed, model in enumerate(models):
        init_from_numpy(model, seed)
    rng = np.random.default_rng(100)
    data = torch.from_numpy(
        rng.standard_normal((args.models, args.batch_size, 1, 28, 28)).astype(np.float32)
    )

    # Variant 1: a different minibatch for each model.
    minibatches = data[: args.models]
    loop_different = torch.stack([model(mb) for model, mb in zip(models, minibatches)])
    # Variant 2: the same minibatch for all.
    minibatch = data[0]
    loop_same = torch.stack([model(minibatch) for model in models])

    params, buffers = stack_module_state(models)
    base_model = copy.deepcopy(models[0])

    def fmodel(params: Any, buffers: Any, x: Any) -> Any:
        return functional_call(base_model, (params, buffers), (x,))

    vmap_different = vmap(fmodel)(params, buffers, minibatches)
    vmap_same = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)

    different_ok = torch.allclose(vmap_different, loop_different, atol=1e-3, rtol=1e-5)
    same_ok = torch.allclose(vmap_same, loop_same, atol=1e-3, rtol=1e-5)
    print(f"{args.models} models, stacked parameters: {sorted(params)}")
    print(f"different minibatch per model, vmap equals the loop: {different_ok}")
    print(f"same minibatch for all models, vmap equals the loop: {same_ok}")
    print(
        json.dumps(
            {
                "different": summary(vmap_different),
                "same": summary(vmap_same),
                "agree": different_ok and same_ok,
            }
        )
    )


if __name__ == "__main__":
    main()
