"""A PyTorch training program that relies on the seed alone: the weights come from the
layers' own initialisation after ``torch.manual_seed``, the data from ``torch.randint``, the
batches from a shuffling DataLoader, and dropout is on. Run under ``python -m tocha.run`` it
must print PyTorch's losses (tocha's CPU stream is PyTorch's under tocha.run).

Prints one JSON object: the losses of each step and the first batch's indices.
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

VOCAB, BLOCK, WIDTH = 40, 12, 32


class TinyLM(nn.Module):
    """Embeddings, one pre-norm transformer layer with dropout, and a tied head."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, WIDTH)
        self.positions = nn.Parameter(torch.randn(BLOCK, WIDTH) * 0.02)
        self.drop = nn.Dropout(0.1)
        self.layer = nn.TransformerEncoderLayer(
            WIDTH, 4, 64, dropout=0.1, batch_first=True, norm_first=True
        )
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.head.weight = self.tokens.weight
        nn.init.normal_(self.tokens.weight, std=0.02)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.drop(self.tokens(ids) + self.positions[: ids.shape[1]])
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1])
        return self.head(self.norm(self.layer(x, src_mask=mask, is_causal=True)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    torch.manual_seed(1337)
    text = torch.randint(0, VOCAB, (600,))
    starts = torch.randperm(len(text) - BLOCK - 1)[:64]
    inputs = torch.stack([text[s : s + BLOCK] for s in starts.tolist()])
    targets = torch.stack([text[s + 1 : s + BLOCK + 1] for s in starts.tolist()])
    loader = DataLoader(TensorDataset(inputs, targets), batch_size=8, shuffle=True)
    model = TinyLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses, first = [], None
    for _, (x, y) in zip(range(args.steps), loader):
        if first is None:
            first = x[:, 0].tolist()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print(json.dumps({"losses": losses, "first_batch": first}))


if __name__ == "__main__":
    main()
