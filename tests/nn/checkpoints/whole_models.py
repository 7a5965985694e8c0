"""The whole models of the checkpoint tests, built from either framework's ``nn`` (this file
imports neither): make_torch_checkpoints.py saves PyTorch's, test_whole_model_checkpoints.py
tocha's."""

from __future__ import annotations

import numpy as np

NAMES = ["transformer", "conv", "lstm", "attention"]


def models(nn) -> dict:
    """Stock modules in eval mode (dropout off): a Transformer language model with a gelu
    and a relu layer, a convolution block, a 2-layer LSTM, a MultiheadAttention."""
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", batch_first=True)
    relu_layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    transformer = nn.Sequential(
        nn.Embedding(20, 8),
        nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
        relu_layer,
        nn.LayerNorm(8),
        nn.Linear(8, 20),
    )
    conv = nn.Sequential(
        nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Dropout(0.5)
    )
    return {
        "transformer": transformer.eval(),
        "conv": conv.eval(),
        "lstm": nn.LSTM(4, 5, num_layers=2).eval(),
        "attention": nn.MultiheadAttention(8, 2).eval(),
    }


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "transformer": rng.integers(0, 20, (2, 5)),
        "conv": rng.standard_normal((2, 2, 4, 4)).astype(np.float32),
        "lstm": rng.standard_normal((3, 2, 4)).astype(np.float32),
        "attention": rng.standard_normal((3, 2, 8)).astype(np.float32),
    }


def run(name: str, model, x):
    """The model's output on `x`: the first output of LSTM and MultiheadAttention."""
    if name == "attention":
        return model(x, x, x)[0]
    if name == "lstm":
        return model(x)[0]
    return model(x)
