"""Hogwild: several processes train one model in shared memory, without locks.

The model's parameters are moved to shared memory (``model.share_memory()``); N processes
(``tocha.multiprocessing``, spawn start method) each run their own ``tocha.optim.SGD`` on
their own shard of the data, updating the same parameters in place (Recht et al., 2011).
The problem: scikit-learn's 8x8 handwritten digits when it is installed, else (saying so) a
synthetic regression with targets of unit scale. Each worker prints its loss per epoch; the
parent prints the full-data loss before and after.

    python examples/hogwild.py [--processes 4] [--epochs 10]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import tocha as torch
import tocha.multiprocessing as mp
import tocha.nn as nn
import tocha.nn.functional as F


def load_data() -> tuple[torch.Tensor, torch.Tensor, bool]:
    """(x, y, classification?): digits if scikit-learn is there, else y = x @ w + noise with
    w scaled so that y has about unit variance (as the digits' inputs are in [0, 1])."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        print("scikit-learn is not installed: training on a synthetic regression instead")
        torch.manual_seed(0)
        x = torch.randn(2000, 64)
        y = x @ (torch.randn(64, 1) / 8) + 0.1 * torch.randn(2000, 1)
        return x, y, False
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    return x, torch.tensor(digits.target, dtype=torch.int64), True


def make_model(classification: bool) -> nn.Module:
    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10 if classification else 1))


def loss_fn(classification: bool) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    return F.cross_entropy if classification else F.mse_loss


def train(
    rank: int,
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    classification: bool,
    epochs: int,
    processes: int,
) -> None:
    """One worker: SGD on every `processes`-th example, updating the shared model. The
    regression takes a smaller step: its gradients are larger (inputs of unit variance, a
    squared error), and several processes apply theirs to the same weights at once."""
    torch.manual_seed(rank)
    x, y = x[rank::processes], y[rank::processes]
    criterion = loss_fn(classification)
    lr = 0.05 if classification else 0.01
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    for epoch in range(epochs):
        order = torch.randperm(len(x))
        total = 0.0
        for start in range(0, len(x), 32):
            batch = order[start : start + 32]
            optimizer.zero_grad()
            loss = criterion(model(x[batch]), y[batch])
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        # One write per line: the processes share the output.
        print(
            f"process {rank} epoch {epoch + 1:2d}: loss {total / len(x):.4f}\n", end="", flush=True
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()

    x, y, classification = load_data()
    torch.manual_seed(0)
    model = make_model(classification)
    model.share_memory()
    criterion = loss_fn(classification)
    with torch.no_grad():
        print(f"before: loss {criterion(model(x), y).item():.4f}")
    mp.spawn(
        train,
        args=(model, x, y, classification, args.epochs, args.processes),
        nprocs=args.processes,
    )
    with torch.no_grad():
        loss = criterion(model(x), y).item()
        print(f"after {args.processes} processes x {args.epochs} epochs: loss {loss:.4f}")
        if classification:
            accuracy = (model(x).argmax(1) == y).float().mean().item()
            print(f"accuracy {accuracy:.1%}")


if __name__ == "__main__":
    main()
