"""Writes the PyTorch-made sparse checkpoints that test_sparse_checkpoints.py loads in tocha,
with what PyTorch holds in them. Run it where PyTorch is installed:

    python tests/core/checkpoints/make_sparse_checkpoints.py

It writes ``torch_sparse.pt`` (``torch.save`` of the sparse tensors of `sparse_tensors`,
alone and beside the dense tensor that shares their values), ``torch_embedding.pt`` (a whole
``nn.Embedding(sparse=True)`` checkpoint: the module, its state dict, its sparse gradient
and SparseAdam's state) and ``torch_sparse.npz`` (the indices, values, sizes and coalesced
flags of every sparse tensor, and the embedding's weights and gradient) beside itself.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent


def sparse_tensors() -> dict:
    """Sparse COO tensors of every kind a program saves: uncoalesced (a repeated index) and
    coalesced, hybrid (dense trailing dimensions), empty, integer, float64 and complex."""
    coo = torch.sparse_coo_tensor(
        [[0, 2, 0, 1], [1, 0, 1, 3]], torch.tensor([1.0, 2.0, 3.0, -4.5]), (3, 4)
    )
    return {
        "coo": coo,
        "coalesced": coo.coalesce(),
        "hybrid": torch.sparse_coo_tensor([[4, 1]], torch.arange(6.0).reshape(2, 3), (5, 3)),
        "empty": torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), [], (2, 2)),
        "int": torch.sparse_coo_tensor([[1, 0]], torch.tensor([7, -3]), (4,)),
        "double": torch.sparse_coo_tensor([[0], [2], [1]], [0.25], (1, 3, 2), dtype=torch.float64),
        "complex": torch.sparse_coo_tensor([[2]], torch.tensor([1 + 2j]), (3,)),
    }


def embedding_checkpoint() -> dict:
    """A whole Embedding(sparse=True) after one SparseAdam step, with its sparse gradient."""
    torch.manual_seed(0)
    emb = torch.nn.Embedding(6, 3, sparse=True)
    opt = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
    emb(torch.tensor([[1, 4], [4, 0]])).square().sum().backward()
    opt.step()
    return {
        "model": emb,
        "state_dict": emb.state_dict(),
        "grad": emb.weight.grad,
        "optimizer": opt.state_dict(),
    }


def record(t: torch.Tensor) -> dict:
    return {
        "indices": t._indices().numpy(),
        "values": t._values().numpy(),
        "size": np.array(t.shape, np.int64),
        "coalesced": np.array(t.is_coalesced()),
    }


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note on sparse invariant checks
        tensors = sparse_tensors()
        checkpoint = embedding_checkpoint()
    torch.save({**tensors, "values": tensors["coo"]._values()}, HERE / "torch_sparse.pt")
    torch.save(checkpoint, HERE / "torch_embedding.pt")
    arrays = {
        f"{name}_{key}": value
        for name, t in {**tensors, "grad": checkpoint["grad"]}.items()
        for key, value in record(t).items()
    }
    arrays["weight"] = checkpoint["model"].weight.detach().numpy()
    np.savez(HERE / "torch_sparse.npz", **arrays)


if __name__ == "__main__":
    main()
