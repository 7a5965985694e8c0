"""Write ``torch_meta.pt``: ``torch.save`` of meta tensors and a meta Parameter, with PyTorch.

Run with PyTorch installed: ``python tests/core/checkpoints/make_meta_checkpoint.py``.
"""

from pathlib import Path

import torch

HERE = Path(__file__).parent

if __name__ == "__main__":
    w = torch.empty(2, 5, device="meta")
    torch.save(
        {
            "w": w,
            "t": w.t(),
            "half": torch.empty(3, dtype=torch.float16, device="meta"),
            "p": torch.nn.Parameter(torch.empty(4, 3, device="meta")),
        },
        HERE / "torch_meta.pt",
    )
