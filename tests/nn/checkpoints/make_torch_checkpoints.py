"""Writes the PyTorch-made whole-model checkpoint that test_whole_model_checkpoints.py loads in
tocha, with the inputs and PyTorch's outputs. Run it where PyTorch is installed:

    python tests/nn/checkpoints/make_torch_checkpoints.py

It writes ``torch_models.pt`` (``torch.save`` of a dict of the whole modules of
whole_models.py) and ``torch_models_io.npz`` (inputs and outputs) beside itself.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from whole_models import NAMES, inputs, models, run

HERE = Path(__file__).resolve().parent


def main() -> None:
    torch.manual_seed(0)
    built = models(torch.nn)
    torch.save(built, HERE / "torch_models.pt")
    xs = inputs()
    recorded = {}
    with torch.no_grad():
        for name in NAMES:
            recorded[f"{name}_in"] = xs[name]
            recorded[f"{name}_out"] = run(name, built[name], torch.from_numpy(xs[name])).numpy()
    np.savez(HERE / "torch_models_io.npz", **recorded)


if __name__ == "__main__":
    main()
