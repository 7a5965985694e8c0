"""Models the compiler tests train compiled and eagerly: name -> (make the model, make a batch
of inputs, the loss of the output)."""

from __future__ import annotations

import tocha
import tocha.nn as nn
import tocha.nn.functional as F


class Block(nn.Module):
    """A GPT block: pre-LayerNorm causal self-attention and a GELU MLP."""

    def __init__(self, d: int = 32, heads: int = 4, t: int = 16) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads
        self.register_buffer("mask", tocha.tril(tocha.ones(t, t)).view(1, 1, t, t))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.attn(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc(self.ln2(x))))


class CNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(64, 10)
        self.drop = nn.Dropout(0.25)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


class LSTMModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.out = nn.Linear(16, 20)

    def forward(self, idx):
        h, _ = self.lstm(self.emb(idx))
        return self.out(h)


def _mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4)
    )


CASES = {
    "mlp": (_mlp, lambda: (tocha.randn(5, 8),), lambda out: out.square().mean()),
    "cnn": (
        CNN,
        lambda: (tocha.randn(3, 1, 8, 8),),
        lambda out: F.cross_entropy(out, tocha.tensor([1, 2, 3], device=out.device)),
    ),
    "lstm": (
        LSTMModel,
        lambda: (tocha.randint(0, 20, (2, 7)),),
        lambda out: F.cross_entropy(out.reshape(-1, 20), tocha.arange(14, device=out.device) % 20),
    ),
    "gpt": (Block, lambda: (tocha.randn(2, 16, 32),), lambda out: out.square().mean()),
}
