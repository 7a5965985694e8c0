"""An LSTM language model over a NumPy-generated token stream, trained with truncated
backpropagation through time (the hidden state is carried between chunks and detached),
gradient clipping and Adam. Written for PyTorch; weights and data come from NumPy. Prints
the losses as JSON on its last line."""

import argparse
import json
import math

import numpy as np
import torch
import torch.nn as nn


class LanguageModel(nn.Module):
    def __init__(self, vocab, dim=16, hidden=24, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        h, state = self.lstm(self.embed(x), state)
        return self.out(h), state


def init_from_numpy(model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            bound = 1.0 / math.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, p.shape).astype(np.float32)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    vocab, batch, bptt = 9, 4, 10
    rng = np.random.default_rng(5)
    stream = np.cumsum(rng.integers(1, 3, size=batch * (bptt * args.steps + 1))) % vocab
    data = torch.from_numpy(stream.reshape(batch, -1)).long()
    model = LanguageModel(vocab)
    init_from_numpy(model, 6)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    criterion = nn.CrossEntropyLoss()
    state = None
    losses = []
    for step in range(args.steps):
        x = data[:, step * bptt : (step + 1) * bptt]
        y = data[:, step * bptt + 1 : (step + 1) * bptt + 1]
        if state is not None:
            state = tuple(s.detach() for s in state)
        logits, state = model(x, state)
        loss = criterion(logits.reshape(-1, vocab), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
        optimizer.step()
        losses.append(loss.item())
        print(f"step {step} loss {loss.item():.4f} ppl {math.exp(loss.item()):.2f}")
    print(json.dumps({"losses": losses}))


if __name__ == "__main__":
    main()
