"""tocha.compile: a small GPT block trained compiled and eagerly, side by side.

The compiled model is captured on its first call (forward and backward together), then each
step replays two generated functions of kernel calls, with elementwise chains fused into
generated kernels (numba on the CPU when it is installed). The losses agree with eager mode;
the script prints both, the time per step of each, and one of the fused kernels.

    python examples/compiled_training.py [--steps 30] [--device cpu]
"""

from __future__ import annotations

import argparse
import copy
import logging
import os
import time
from collections.abc import Callable

import tocha
import tocha.nn as nn
import tocha.nn.functional as F


class Block(nn.Module):
    """Pre-LayerNorm causal self-attention and a GELU MLP, as in GPT-2."""

    def __init__(self, dim: int, heads: int, block: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.heads = heads
        self.register_buffer("mask", tocha.tril(tocha.ones(block, block)).view(1, 1, block, block))

    def forward(self, x: tocha.Tensor) -> tocha.Tensor:
        b, t, c = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        out: tocha.Tensor = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return out


class KernelSource(logging.Handler):
    """Keeps the first fused kernel the compiler logs."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if not self.text and message.startswith("fused kernel"):
            self.text = message


WARMUP = 3  # the compiled model captures on step 0 and compiles its kernels on step 1


def train(
    model: Callable[[tocha.Tensor], tocha.Tensor],
    opt: tocha.optim.Optimizer,
    batches: list[tuple[tocha.Tensor, tocha.Tensor]],
) -> tuple[list[float], float]:
    """Losses of one pass over `batches` and the mean seconds per step after the warm-up."""
    losses, start = [], time.perf_counter()
    for i, (x, y) in enumerate(batches):
        if i == WARMUP:
            start = time.perf_counter()
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, (time.perf_counter() - start) / max(1, len(batches) - WARMUP)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    tocha.manual_seed(0)
    eager = Block(64, 4, 32).to(args.device)
    model = copy.deepcopy(eager)
    compiled = tocha.compile(model)
    batches = [
        (tocha.randn(8, 32, 64, device=args.device), tocha.randn(8, 32, 64, device=args.device))
        for _ in range(args.steps)
    ]
    source = KernelSource()
    logging.getLogger("tocha.compiler").addHandler(source)
    os.environ["TOCHA_LOGS"] = os.environ.get("TOCHA_LOGS", "kernels")
    opt_c = tocha.optim.AdamW(model.parameters(), lr=1e-3)
    opt_e = tocha.optim.AdamW(eager.parameters(), lr=1e-3)
    losses_c, step_c = train(compiled, opt_c, batches)
    losses_e, step_e = train(eager, opt_e, batches)
    for i in range(0, args.steps, max(1, args.steps // 5)):
        print(f"step {i:3d}  compiled loss {losses_c[i]:.6f}  eager loss {losses_e[i]:.6f}")
    worst = max(abs(a - b) for a, b in zip(losses_c, losses_e))
    print(f"largest loss difference {worst:.2e}")
    print(f"time per step: compiled {step_c * 1e3:.2f} ms, eager {step_e * 1e3:.2f} ms")
    if source.text:
        print("one fused kernel:")
        print("\n".join(line[:160] for line in source.text.splitlines()[:24]))


if __name__ == "__main__":
    main()
