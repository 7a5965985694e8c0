"""A convolutional digit classifier, written as a PyTorch program (``import tocha as torch``).

The 1,797 8x8 handwritten digits bundled with scikit-learn are split 80/20 into a training
and a held-out test set. A small CNN (two Conv2d + MaxPool2d blocks, then two Linear layers)
is trained by AdamW with a cosine learning-rate schedule through tocha's Trainer: batches
come from a DataLoader with worker processes, a progress bar shows the loss, one line per
epoch shows the loss falling and the test accuracy. At the end the checkpoint written by the
Trainer is reloaded into a fresh model and evaluated again, and the loss curves are drawn to
a PNG.

    python examples/digits.py [--epochs 12] [--workers 2] [--out build/demo/digits]
    python examples/digits.py --quick                     # 3 epochs: the quick demo
    python examples/digits.py --epochs 1 --limit 128      # a smoke run
    python examples/digits.py --device cuda               # needs a cuda backend plugin

Needs scikit-learn (the data; without it the script says so and exits) and matplotlib (the
PNG; without it the curves are skipped): ``nox -s demo`` installs both.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import tocha as torch
import tocha.nn as nn
import tocha.nn.functional as F
from tocha.utils.data import DataLoader, Subset, TensorDataset, random_split
from tocha.utils.trainer import Callback, TrainState, evaluate, fit, plot_history

EPOCHS, QUICK_EPOCHS = 12, 3


Examples = Subset[tuple[torch.Tensor, ...]]


def load_digits(seed: int) -> tuple[Examples, Examples]:
    """scikit-learn's digits as (train, test) datasets of (1x8x8 float32 image in [0, 1],
    int64 label), 20% held out at random (a generator seeded with `seed` picks which)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as error:
        reason = "" if getattr(error, "name", None) == "sklearn" else f" ({error})"
        raise SystemExit(
            f"digits.py needs scikit-learn for its data: pip install scikit-learn{reason}"
        ) from None

    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(digits.target, dtype=torch.int64)
    split = random_split(
        TensorDataset(images, labels), [0.8, 0.2], generator=torch.Generator().manual_seed(seed)
    )
    return split[0], split[1]


class DigitsCNN(nn.Module):
    """Conv(1->32) -> pool -> Conv(32->64) -> pool -> Linear(256->128) -> Linear(128->10)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(64 * 2 * 2, 128)
        self.fc2 = nn.Linear(128, 10)
        self.dropout = nn.Dropout(0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of shape (N, 10) for images of shape (N, 1, 8, 8)."""
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = self.dropout(F.relu(self.fc1(x.flatten(1))))
        logits: torch.Tensor = self.fc2(x)
        return logits


def accuracy(logits: torch.Tensor, target: torch.Tensor) -> float:
    """The share of rows whose largest logit is at the target class."""
    return (logits.argmax(dim=1) == target).float().mean().item()


class PrintEpoch(Callback):
    """Prints one line per epoch: the training loss, the held-out loss and accuracy, the lr."""

    def on_epoch_end(self, state: TrainState, record: dict[str, Any]) -> None:
        print(
            f"epoch {record['epoch'] + 1:>2}  loss {record['loss']:.4f}  "
            f"test loss {record['val_loss']:.4f}  test accuracy {record['val_accuracy']:.2%}  "
            f"lr {record['lr']:.2e}  {record['time']:.1f} s",
            flush=True,
        )


def pick_device(name: str) -> torch.device:
    """The device `name`; exits with tocha's own message when no backend serves it."""
    try:
        return torch.empty(0, device=name).device
    except RuntimeError as error:
        raise SystemExit(f"digits.py: {error}") from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--epochs", type=int, help=f"passes over the training set (default {EPOCHS})"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a quick demo: {QUICK_EPOCHS} epochs (unless --epochs)",
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3, help="the initial lr")
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    parser.add_argument("--limit", type=int, help="train on only this many images")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda with tocha-cuda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("build/demo/digits"))
    args = parser.parse_args(argv)
    if args.epochs is None:
        args.epochs = QUICK_EPOCHS if args.quick else EPOCHS

    device = pick_device(args.device)
    torch.manual_seed(args.seed)
    train_set, test_set = load_digits(args.seed)
    if args.limit:
        train_set = Subset(train_set, range(min(args.limit, len(train_set))))
    generator = torch.Generator().manual_seed(args.seed)
    train_loader = DataLoader(
        train_set,
        args.batch_size,
        shuffle=True,
        num_workers=args.workers,
        generator=generator,
        persistent_workers=args.workers > 0,
    )
    test_loader = DataLoader(test_set, batch_size=256)
    print(
        f"digits: {len(train_set)} training images, {len(test_set)} held out; "
        f"{args.workers} loader workers; device {device}"
    )

    model = DigitsCNN()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    fit(
        model,
        optimizer,
        train_loader,
        test_loader,
        epochs=args.epochs,
        loss_fn=F.cross_entropy,
        metrics={"accuracy": accuracy},
        scheduler=scheduler,
        device=device,
        callbacks=[PrintEpoch()],
        checkpoint_dir=args.out,
        history_path=args.out / "history.jsonl",
    )
    seconds = time.perf_counter() - start
    scores = evaluate(
        model, test_loader, loss_fn=F.cross_entropy, metrics={"accuracy": accuracy}, device=device
    )
    print(
        f"trained {args.epochs} epochs in {seconds:.1f} s: "
        f"test accuracy {scores['accuracy']:.2%} on {len(test_set)} held-out images"
    )

    checkpoint = args.out / "last.pt"
    reloaded = DigitsCNN()
    reloaded.load_state_dict(torch.load(checkpoint, map_location=device)["model"])
    again = evaluate(
        reloaded.to(device), test_loader, metrics={"accuracy": accuracy}, device=device
    )
    print(f"checkpoint {checkpoint} reloaded: test accuracy {again['accuracy']:.2%}")
    try:
        png = plot_history(args.out / "history.jsonl", args.out / "loss.png")
    except ImportError:
        print("loss curves not drawn: matplotlib is not installed (pip install matplotlib)")
    else:
        print(f"loss curves drawn to {png}")


if __name__ == "__main__":
    main()
