"""A character-level GPT trained on Python's own standard-library sources.

The text is the source of a few modules of the running Python (``os.path.dirname(
os.__file__)``), so nothing is downloaded. The model is a small decoder-only transformer:
token and position embeddings, pre-norm blocks of causal self-attention (through
``F.scaled_dot_product_attention(..., is_causal=True)``) and an MLP, and a linear head tied
to the token embedding. It is trained with AdamW, a linear warmup then a cosine decay of the
learning rate (LambdaLR, stepped every batch) and gradient clipping; batches of random windows
come from a DataLoader with worker processes. It ends by printing a few generated samples.

    python examples/char_gpt.py [--steps 400] [--workers 2] [--samples 3]
    python examples/char_gpt.py --quick      # fewer steps, a smaller model: the quick demo
    python examples/char_gpt.py --steps 3 --samples 1 --length 40   # a smoke run
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable

from tqdm import tqdm

import tocha as torch
import tocha.nn as nn
import tocha.nn.functional as F
from tocha.utils.data import DataLoader, Dataset, RandomSampler

MODULES = ("textwrap", "string", "heapq", "bisect", "functools", "fractions")
# The settings that --quick changes: the full demo's, and the quick one's. An option given on
# the command line wins over both.
FULL = {"steps": 400, "batch_size": 32, "block": 64, "dim": 96, "layers": 2, "length": 200}
QUICK = {"steps": 100, "batch_size": 16, "block": 32, "dim": 64, "layers": 2, "length": 120}


def stdlib_text(modules: tuple[str, ...] = MODULES) -> str:
    """The source code of some standard-library modules, concatenated."""
    folder = os.path.dirname(os.__file__)
    parts = []
    for name in modules:
        with open(os.path.join(folder, f"{name}.py"), encoding="utf-8") as f:
            parts.append(f.read())
    return "\n".join(parts)


class CharWindows(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Windows of `block` + 1 characters of a text, encoded as int64 codes: item i is
    (codes[i : i + block], codes[i + 1 : i + block + 1]), the input and the next-character
    target."""

    def __init__(self, codes: torch.Tensor, block: int) -> None:
        self.codes, self.block = codes, block

    def __len__(self) -> int:
        return len(self.codes) - self.block

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        chunk = self.codes[i : i + self.block + 1]
        return chunk[:-1], chunk[1:]


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention where each position sees only itself and earlier ones."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(N, T, dim) -> (N, T, dim)."""
        n, t, dim = x.shape
        q, k, v = self.qkv(x).view(n, t, 3, self.heads, dim // self.heads).unbind(2)
        y = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        out: torch.Tensor = self.proj(y.transpose(1, 2).reshape(n, t, dim))
        return out


class Block(nn.Module):
    """A pre-norm transformer block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = CausalSelfAttention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        out: torch.Tensor = x + self.mlp(self.norm2(x))
        return out


class GPT(nn.Module):
    """A decoder-only transformer over `vocab` characters with a context of `block`."""

    def __init__(self, vocab: int, block: int, dim: int = 96, heads: int = 4, layers: int = 2):
        super().__init__()
        self.block = block
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(block, dim)
        self.blocks = nn.Sequential(*(Block(dim, heads) for _ in range(layers)))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tokens.weight  # weight tying
        for name, p in self.named_parameters():
            if name.endswith("weight") and p.dim() == 2:  # GPT-2's init: small, centred
                nn.init.normal_(p, std=0.02)

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        """Next-character logits (N, T, vocab) for codes (N, T)."""
        positions = torch.arange(codes.shape[1], device=codes.device)
        x = self.tokens(codes) + self.positions(positions)
        logits: torch.Tensor = self.head(self.norm(self.blocks(x)))
        return logits

    @torch.no_grad()
    def generate(
        self, codes: torch.Tensor, length: int, temperature: float = 0.8, top_k: int = 10
    ) -> torch.Tensor:
        """`codes` (N, T) followed by `length` sampled characters (N, T + length): each one
        drawn from the `top_k` likeliest, their probabilities sharpened by `temperature`."""
        for _ in range(length):
            logits = self(codes[:, -self.block :])[:, -1] / temperature
            kth = logits.topk(top_k).values[:, -1:]
            logits = logits.masked_fill(logits < kth, -math.inf)
            following = torch.multinomial(F.softmax(logits, dim=-1), 1)
            codes = torch.cat([codes, following], dim=1)
        return codes


def warmup_cosine(warmup: int, total: int) -> Callable[[int], float]:
    """The lr factor at each step: linear from 0 to 1 over `warmup` steps, then a cosine
    decay to 0.1 at step `total`."""

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return 0.1 + 0.45 * (1 + math.cos(math.pi * progress))

    return factor


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, help=f"optimizer steps (default {FULL['steps']})")
    parser.add_argument("--batch-size", type=int, help=f"default {FULL['batch_size']}")
    parser.add_argument(
        "--block", type=int, help=f"context length in characters (default {FULL['block']})"
    )
    parser.add_argument("--dim", type=int, help=f"model width (default {FULL['dim']})")
    parser.add_argument("--layers", type=int, help=f"transformer blocks (default {FULL['layers']})")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a quick demo: " + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in QUICK.items()),
    )
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    parser.add_argument("--samples", type=int, default=3, help="samples generated at the end")
    parser.add_argument(
        "--length", type=int, help=f"characters per sample (default {FULL['length']})"
    )
    parser.add_argument("--device", default="cpu", help="cpu, or cuda with tocha-cuda")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)

    try:
        device = torch.empty(0, device=args.device).device
    except RuntimeError as error:
        raise SystemExit(f"char_gpt.py: {error}") from None
    torch.manual_seed(args.seed)
    text = stdlib_text()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    codes = torch.tensor([index[c] for c in text], dtype=torch.int64)
    data = CharWindows(codes, args.block)
    sampler = RandomSampler(
        data,
        replacement=True,
        num_samples=args.steps * args.batch_size,
        generator=torch.Generator().manual_seed(args.seed),
    )
    loader = DataLoader(data, args.batch_size, sampler=sampler, num_workers=args.workers)

    model = GPT(len(chars), args.block, dim=args.dim, layers=args.layers).to(device)
    print(
        f"char GPT: {len(text):,} characters of {', '.join(MODULES)}.py, "
        f"{len(chars)} distinct; {sum(p.numel() for p in model.parameters()):,} parameters"
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    schedule = warmup_cosine(max(1, args.steps // 10), args.steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    start = time.perf_counter()
    running = None
    bar = tqdm(loader, desc="char GPT", disable=None)
    for step, (x, y) in enumerate(bar, 1):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        running = loss.item() if running is None else 0.9 * running + 0.1 * loss.item()
        bar.set_postfix(loss=f"{running:.3f}")
        if step % max(1, args.steps // 6) == 0 or step == args.steps:
            tqdm.write(
                f"step {step:>4}/{args.steps}  loss {running:.3f}  "
                f"lr {scheduler.get_last_lr()[0]:.2e}"
            )
    print(
        f"trained {args.steps} steps in {time.perf_counter() - start:.1f} s "
        f"(a uniform guess would score {math.log(len(chars)):.3f})"
    )

    model.eval()
    prompt = torch.tensor([[index[c] for c in "def "]] * args.samples, device=device)
    for i, row in enumerate(model.generate(prompt, args.length).tolist(), 1):
        print(f"--- sample {i} ---\n{''.join(chars[c] for c in row)}")


if __name__ == "__main__":
    main()
