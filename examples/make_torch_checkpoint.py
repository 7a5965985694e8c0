"""Write the pretrained checkpoint that examples/finetune.py starts from, with PyTorch.

Trains a small MLP on the pretraining task of `task` (8 classes) and saves its
``state_dict()`` with ``torch.save``. When PyTorch is not installed, tocha trains and saves it
instead, in the same file format (PyTorch's zip archive), and says so. This is the only
program here that imports torch; finetune.py runs it in a subprocess.

    python examples/make_torch_checkpoint.py OUT.pt [--steps 400]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

FEATURES, HIDDEN = 16, 64


def task(classes: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` samples of a synthetic classification task, as float32 inputs and int64 labels.

    Inputs are Gaussian; the label is the argmax of ``tanh(x @ a) @ b``, where ``a`` is the
    same for every task (the shared features a pretrained body can learn) and ``b`` depends
    on the number of classes (the task-specific head). NumPy draws them, so PyTorch and
    tocha see the same data.
    """
    a = np.random.default_rng(0).normal(size=(FEATURES, 4))
    b = np.random.default_rng(classes).normal(size=(4, classes))
    x = np.random.default_rng(seed).normal(size=(n, FEATURES))
    return x.astype(np.float32), (np.tanh(x @ a) @ b).argmax(1).astype(np.int64)


def mlp(nn: Any, classes: int) -> Any:
    """The network, built with either framework's `nn` module (their APIs are the same)."""
    return nn.Sequential(
        nn.Linear(FEATURES, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, classes),
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the checkpoint file to write")
    parser.add_argument("--steps", type=int, default=400, help="Adam steps of pretraining")
    args = parser.parse_args(argv)
    try:
        import torch

        writer = f"PyTorch {torch.__version__}"
    except ImportError:
        import tocha as torch

        writer = "tocha, in PyTorch's format (PyTorch is not installed)"
    torch.manual_seed(0)
    x, y = (torch.from_numpy(a) for a in task(8, 4096, seed=1))
    model = mlp(torch.nn, 8)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(args.steps):
        batch = torch.randint(0, len(x), (128,))
        loss = torch.nn.functional.cross_entropy(model(x[batch]), y[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    torch.save(model.state_dict(), args.out)
    print(
        f"pretrained for {args.steps} steps (train accuracy {accuracy:.1%}); "
        f"{args.out} written by {writer}"
    )


if __name__ == "__main__":
    main()
