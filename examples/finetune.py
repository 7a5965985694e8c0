"""Fine-tuning a model pretrained and saved by PyTorch.

The checkpoint is a ``state_dict`` written by ``torch.save`` (examples/make_torch_checkpoint.py
writes it, in a subprocess, when the file is missing; without PyTorch that script saves it
with tocha in the same format and says so). ``tocha.load`` reads PyTorch's zip format
directly, with ``weights_only=True``: no code from the file runs. The pretrained MLP is
checked on its own task, its 8-class head is replaced by a 3-class one, the head is trained
alone on a few labelled samples of the new task with the body frozen (``requires_grad_(False)``),
then everything is trained with a smaller learning rate. A model trained from scratch on the
same samples is the baseline.

    python examples/finetune.py [--checkpoint build/demo/pretrained.pt] [--steps 200]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from make_torch_checkpoint import mlp, task

import tocha as torch
import tocha.nn as nn
import tocha.nn.functional as F

HERE = Path(__file__).resolve().parent


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """The share of samples whose largest logit is at their label."""
    with torch.no_grad():
        correct: torch.Tensor = model(x).argmax(1) == y
        return float(correct.float().mean())


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int, lr: float) -> None:
    """`steps` full-batch Adam steps on the parameters that require grad."""
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, default=Path("build/demo/pretrained.pt"))
    parser.add_argument("--steps", type=int, default=200, help="steps of each phase")
    parser.add_argument(
        "--pretrain-steps",
        type=int,
        default=400,
        help="steps of pretraining when the checkpoint has to be written",
    )
    parser.add_argument("--samples", type=int, default=200, help="labelled samples to tune on")
    args = parser.parse_args(argv)
    if not args.checkpoint.exists():
        args.checkpoint.parent.mkdir(parents=True, exist_ok=True)
        maker = HERE / "make_torch_checkpoint.py"
        subprocess.run(
            [sys.executable, str(maker), str(args.checkpoint), "--steps", str(args.pretrain_steps)],
            check=True,
        )
    torch.manual_seed(0)

    model = mlp(nn, 8)
    model.load_state_dict(torch.load(args.checkpoint))
    x_old, y_old = (torch.from_numpy(a) for a in task(8, 2048, seed=2))
    print(
        f"loaded {args.checkpoint}: accuracy on the pretraining task "
        f"{accuracy(model, x_old, y_old):.1%}"
    )

    x, y = (torch.from_numpy(a) for a in task(3, args.samples, seed=3))
    x_test, y_test = (torch.from_numpy(a) for a in task(3, 2048, seed=4))
    model[-1] = nn.Linear(model[-1].in_features, 3)
    for p in model[:-1].parameters():
        p.requires_grad_(False)
    train(model, x, y, args.steps, lr=1e-2)
    print(
        f"new head trained on {args.samples} samples, body frozen: "
        f"test accuracy {accuracy(model, x_test, y_test):.1%}"
    )
    model.requires_grad_(True)
    train(model, x, y, args.steps, lr=1e-3)
    print(f"everything fine-tuned: test accuracy {accuracy(model, x_test, y_test):.1%}")

    scratch = mlp(nn, 3)
    train(scratch, x, y, 2 * args.steps, lr=1e-2)
    print(
        f"baseline, the same network trained from scratch on the same samples: "
        f"test accuracy {accuracy(scratch, x_test, y_test):.1%}"
    )


if __name__ == "__main__":
    main()
