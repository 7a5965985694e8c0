"""Train a tiny GPT-2 (Hugging Face transformers) from a config on local text, then generate.

A program written for PyTorch, run unchanged on tocha:

    python -m tocha.run examples/hf_gpt2.py              # on tocha
    python examples/hf_gpt2.py                           # on PyTorch, for comparison

The text is a file of this repository (README.md by default, ``--text`` to choose), read as
characters; the model is GPT2LMHeadModel from a small GPT2Config (no download). It prints
the loss as it trains, saves the model with ``save_pretrained`` (to ``--save``, by default a
temporary folder) and reloads it with ``from_pretrained``, then prints a sample and a last
JSON line with the first and last losses.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from transformers import GPT2Config, GPT2LMHeadModel

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default=str(ROOT / "README.md"), help="a text file")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--block", type=int, default=32, help="context length")
    parser.add_argument("--generate", type=int, default=200, help="characters to generate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", default=None, help="folder for save_pretrained")
    args = parser.parse_args()

    text = Path(args.text).read_text(encoding="utf-8")
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([index[c] for c in text], dtype=torch.long)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # the matrices are tiny: more threads only wait for each other

    end = len(chars)  # a token of its own, never in the text: generation runs its full length
    config = GPT2Config(
        vocab_size=len(chars) + 1,
        n_positions=max(args.block, 16 + args.generate),
        n_embd=48,
        n_layer=2,
        n_head=4,
        bos_token_id=end,
        eos_token_id=end,
    )
    model: Any = GPT2LMHeadModel(config)  # transformers has no type annotations
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    print(f"{sum(p.numel() for p in model.parameters())} parameters, {len(text)} characters")

    losses, start = [], time.perf_counter()
    model.train()
    for step in range(1, args.steps + 1):
        starts = torch.randint(0, len(data) - args.block - 1, (args.batch_size,))
        batch = torch.stack([data[s : s + args.block] for s in starts.tolist()])
        loss = model(input_ids=batch, labels=batch).loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if step == 1 or step % 50 == 0 or step == args.steps:
            elapsed = time.perf_counter() - start
            print(f"step {step:4d}  loss {loss.item():.3f}  ({elapsed:.1f} s)", flush=True)

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.save or scratch
        model.save_pretrained(folder)
        model = GPT2LMHeadModel.from_pretrained(folder)  # built on the meta device, then loaded
    print(f"saved and reloaded through {'--save ' + folder if args.save else 'a temporary folder'}")
    model.eval()
    prompt = torch.tensor([[index[c] for c in text[:16]]])
    with torch.no_grad():
        out = model.generate(
            prompt,
            max_new_tokens=args.generate,
            do_sample=True,
            top_k=10,
            pad_token_id=end,
            attention_mask=torch.ones_like(prompt),
        )
    sample = "".join(chars[i] for i in out[0].tolist() if i != end)
    print("---\n" + sample + "\n---")
    print(json.dumps({"first_loss": losses[0], "last_loss": losses[-1], "sample": sample}))


if __name__ == "__main__":
    main()
