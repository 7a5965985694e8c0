"""Recurrent layer benchmarks (issue tocha-nn): LSTM and GRU over a sequence, forward and
backward, and an LSTMCell unrolled by hand.

Target: LSTM 1 layer, input 32, hidden 128, sequence 35, batch 20, forward + backward within
2x of PyTorch at one thread. tocha runs the whole layer as one primitive (a time loop on raw
arrays forward, BPTT backward); PyTorch runs its oneDNN layer.
"""

from __future__ import annotations

import numpy as np
from harness import Case, faster_than_torch

SEQ, BATCH, INPUT, HIDDEN = 35, 20, 32, 128


def sequence():
    """A seeded ``(SEQ, BATCH, INPUT)`` float32 batch."""
    rng = np.random.default_rng(0)
    return (rng.standard_normal((SEQ, BATCH, INPUT), dtype=np.float32),)


class Step:
    """The timed call: zero the gradients, run the layer over `x`, backward of the output's
    sum. The layer is made on the first (untimed) call for the given inputs, seeded alike in
    every library."""

    def __init__(self, layer: str, grad_input: bool = True, **kwargs):
        self.layer, self.grad_input, self.kwargs = layer, grad_input, kwargs
        self.models = {}

    def model(self, lib, x):
        model = self.models.get(id(x))
        if model is None:
            model = self.models[id(x)] = getattr(lib.nn, self.layer)(INPUT, HIDDEN, **self.kwargs)
            rng = np.random.default_rng(1)
            with lib.no_grad():
                for p in model.parameters():
                    p.copy_(
                        lib.from_numpy(rng.uniform(-0.08, 0.08, tuple(p.shape)).astype(np.float32))
                    )
        return model

    def __call__(self, lib, x):
        model = self.model(lib, x)
        model.zero_grad()
        if self.grad_input:
            x.requires_grad_()
            x.grad = None
        out = model(x)[0] if self.layer != "LSTMCell" else self.unroll(model, x)
        out.sum().backward()

    @staticmethod
    def unroll(model, x):
        state, total = None, 0
        for t in range(x.shape[0]):
            state = model(x[t], state)
            total = total + state[0]
        return total


INFERENCE = Step("LSTM")


def forward(lib, x):
    """Inference: the LSTM over the sequence under no_grad."""
    with lib.no_grad():
        INFERENCE.model(lib, x)(x)


WITHIN_2 = faster_than_torch(2.0)
SIZE = f"seq {SEQ}, batch {BATCH}, {INPUT} -> {HIDDEN} float32"
CASES = [
    Case("LSTM(32, 128) fwd+bwd", SIZE, sequence, Step("LSTM"), goal=WITHIN_2),
    Case(
        "LSTM(32, 128) fwd+bwd, no input grad", SIZE, sequence, Step("LSTM", False), goal=WITHIN_2
    ),
    Case("LSTM(32, 128) forward, no_grad", SIZE, sequence, forward),
    Case(
        "LSTM(32, 128, 2 layers, bidirectional) fwd+bwd",
        SIZE,
        sequence,
        Step("LSTM", num_layers=2, bidirectional=True),
    ),
    Case("GRU(32, 128) fwd+bwd", SIZE, sequence, Step("GRU"), goal=WITHIN_2),
    Case("LSTMCell(32, 128) unrolled fwd+bwd", SIZE, sequence, Step("LSTMCell"), goal=WITHIN_2),
]
