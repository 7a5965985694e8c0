"""Write ``torch_legacy.pt``: ``torch.save`` in PyTorch's legacy format
(``_use_new_zipfile_serialization=False``, the only format before PyTorch 1.6) of a state dict
(tensors of several dtypes, two views of one storage, a transposed tensor, plain values), with
PyTorch. (A whole module saved so carries its class's source text: that case is tested live.)

Run with PyTorch installed: ``python tests/core/checkpoints/make_legacy_checkpoints.py``.
"""

from pathlib import Path

import torch

HERE = Path(__file__).parent


def state():
    """The state dict saved; test_serialization_legacy.py builds the same values in tocha."""
    base = torch.arange(10.0)
    return {
        "w": torch.arange(6.0).reshape(2, 3),
        "wt": torch.arange(6.0).reshape(2, 3).t(),
        "b": torch.tensor([1, 2]),
        "h": torch.tensor([0.5, -2.0], dtype=torch.float16),
        "mask": torch.tensor([True, False, True]),
        "view1": base[2:5],
        "view2": base[4:],
        "meta": {"epoch": 3, "lr": 0.1, "names": ["a", "b"]},
    }


if __name__ == "__main__":
    torch.save(state(), HERE / "torch_legacy.pt", _use_new_zipfile_serialization=False)
