"""``save_pretrained`` and ``from_pretrained`` through a local folder, for GPT-2, BERT and T5
built from the tiny configs of dropin_hf.py with the fixture weights. ``from_pretrained``
builds the model on the meta device and then loads the safetensors file into it.

Prints one JSON object: per model, the reloaded model's logits, whether every parameter and
buffer landed on the CPU with the original's values, whether tied weights are still one
tensor, and the dtype ``from_pretrained(..., dtype=torch.float64)`` gives.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from dropin_hf import FIXTURES, build, inputs
from safetensors.torch import load_file


def run(name: str, folder: Path) -> dict:
    model = build(name)
    model.load_state_dict(load_file(FIXTURES / f"{name}.safetensors"))
    model.eval()
    model.save_pretrained(folder)
    back = type(model).from_pretrained(folder).eval()
    batch = inputs(name)
    with torch.no_grad():
        logits = back(**batch).logits
        same = torch.equal(logits, model(**batch).logits)
    original = model.state_dict()
    placed = all(
        t.device.type == "cpu" and torch.equal(t, original[k]) for k, t in back.state_dict().items()
    )
    embeddings = back.get_input_embeddings().weight
    tied = back.get_output_embeddings() is None or (
        back.get_output_embeddings().weight is embeddings
    )
    wide = type(model).from_pretrained(folder, dtype=torch.float64)
    return {
        "logits": logits.double().flatten().tolist(),
        "same_as_saved": same,
        "placed": placed,
        "tied": tied,
        "wide_dtype": str(next(wide.parameters()).dtype),
        "meta_left": [k for k, t in back.state_dict().items() if t.is_meta],
    }


def main() -> None:
    root = Path(sys.argv[1])
    print(json.dumps({name: run(name, root / name) for name in ("gpt2", "bert", "t5")}))


if __name__ == "__main__":
    main()
