"""A character-level LSTM language model trained with truncated backpropagation through time.

The text (the source of a few standard-library modules, nothing downloaded) is cut into
`batch` parallel streams; each step reads the next `bptt` characters of every stream, carries
the LSTM's hidden state over from the previous step but detaches it, so gradients flow back
`bptt` characters at most (truncated BPTT). SGD with momentum, a StepLR schedule and gradient
clipping; the end reports the held-out loss (bits per character) and samples some text.

    python examples/lstm_lm.py [--epochs 6] [--bptt 32] [--batch 32]
    python examples/lstm_lm.py --steps 3 --length 40        # a quick smoke run
"""

from __future__ import annotations

import argparse
import math
import os
import time

import tocha as torch
import tocha.nn as nn
import tocha.nn.functional as F

MODULES = ("textwrap", "string", "heapq", "bisect")


def stdlib_text(modules: tuple[str, ...] = MODULES) -> str:
    """The source code of some standard-library modules, concatenated."""
    folder = os.path.dirname(os.__file__)
    parts = []
    for name in modules:
        with open(os.path.join(folder, f"{name}.py"), encoding="utf-8") as f:
            parts.append(f.read())
    return "\n".join(parts)


def streams(codes: torch.Tensor, batch: int) -> torch.Tensor:
    """`codes` cut into `batch` equal consecutive streams: shape (batch, length)."""
    length = len(codes) // batch
    return codes[: batch * length].view(batch, length)


class CharLSTM(nn.Module):
    """Embedding -> LSTM (batch first) -> Linear over the `vocab` characters."""

    def __init__(self, vocab: int, dim: int = 64, hidden: int = 256, layers: int = 1) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(
        self, codes: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Logits (N, T, vocab) for codes (N, T), and the LSTM's final (h, c)."""
        out, state = self.lstm(self.embed(codes), state)
        return self.head(out), state


@torch.no_grad()
def mean_loss(model: CharLSTM, data: torch.Tensor, bptt: int) -> float:
    """The model's mean next-character cross-entropy over the streams `data`."""
    model.eval()
    state, total, count = None, 0.0, 0
    for i in range(0, data.shape[1] - 1, bptt):
        x, y = data[:, i : i + bptt], data[:, i + 1 : i + 1 + bptt]
        x = x[:, : y.shape[1]]
        logits, state = model(x, state)
        total += F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum").item()
        count += y.numel()
    model.train()
    return total / count


@torch.no_grad()
def sample(model: CharLSTM, prompt: list[int], length: int, temperature: float = 0.7) -> list[int]:
    """`prompt` followed by `length` codes drawn one at a time from the model."""
    model.eval()
    logits, state = model(torch.tensor([prompt]))
    codes = list(prompt)
    for _ in range(length):
        probs = F.softmax(logits[0, -1] / temperature, dim=-1)
        codes.append(int(torch.multinomial(probs, 1).item()))
        logits, state = model(torch.tensor([[codes[-1]]]), state)
    return codes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6, help="passes over the text")
    parser.add_argument("--steps", type=int, help="stop after this many steps in all")
    parser.add_argument("--bptt", type=int, default=32, help="characters per truncated step")
    parser.add_argument("--batch", type=int, default=32, help="parallel streams")
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--length", type=int, default=200, help="characters of the sample")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    text = stdlib_text()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    codes = torch.tensor([index[c] for c in text], dtype=torch.int64)
    cut = len(codes) * 9 // 10
    train, held_out = streams(codes[:cut], args.batch), streams(codes[cut:], args.batch)
    model = CharLSTM(len(chars))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    print(
        f"LSTM LM: {len(text):,} characters, {len(chars)} distinct; "
        f"{args.batch} streams of {train.shape[1]:,}, truncated BPTT every {args.bptt}"
    )

    start, step = time.perf_counter(), 0
    for epoch in range(1, args.epochs + 1):
        state = None
        for i in range(0, train.shape[1] - 1 - args.bptt, args.bptt):
            x, y = train[:, i : i + args.bptt], train[:, i + 1 : i + 1 + args.bptt]
            if state is not None:
                state = tuple(s.detach() for s in state)  # cut the graph: truncated BPTT
            logits, state = model(x, state)
            loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            step += 1
            if step % 50 == 0:
                print(f"epoch {epoch} step {step:>4}  loss {loss.item():.3f}", flush=True)
            if step == args.steps:
                break
        scheduler.step()
        held = mean_loss(model, held_out, args.bptt)
        print(
            f"epoch {epoch}: held-out loss {held:.3f} ({held / math.log(2):.2f} bits/char), "
            f"{time.perf_counter() - start:.1f} s"
        )
        if step == args.steps:
            break
    print("--- sample ---")
    print("".join(chars[c] for c in sample(model, [index[c] for c in "def "], args.length)))


if __name__ == "__main__":
    main()
