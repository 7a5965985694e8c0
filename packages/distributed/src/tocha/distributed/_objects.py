"""Collectives on picklable Python objects: `broadcast_object_list`, `all_gather_object`,
`gather_object`.

As in PyTorch, objects are pickled (tensors included): use them for small metadata, and the
tensor collectives for tensors. The sizes travel first, then the bytes, through the same
non-blocking MPI calls as tensors, so these too fail after the timeout instead of hanging.
Unpickling runs code from the other ranks: use them only among trusted processes.
"""

from __future__ import annotations

import pickle

import numpy as np

from ._collectives import _group_rank
from ._group import resolve

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object"]


def _dumps(obj) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj), np.uint8)


def broadcast_object_list(
    object_list: list,
    src: int | None = None,
    group=None,
    device=None,
    group_src: int | None = None,
) -> None:
    """Replace the items of every rank's `object_list` by those of rank `src`'s (the lists
    must have the same length on every rank)."""
    g = resolve(group)
    if g is None:
        return
    root = _group_rank(group, g, src, group_src, "src")
    mpi = g._mpi
    mine = g.rank() == root
    payloads = [_dumps(obj) for obj in object_list] if mine else []
    sizes = np.array([p.size for p in payloads] if mine else [0] * len(object_list), np.int64)
    mpi.broadcast(sizes, root).wait()
    data = np.concatenate(payloads) if mine and payloads else np.empty(int(sizes.sum()), np.uint8)
    mpi.broadcast(data, root).wait()
    if not mine:
        ends = np.cumsum(sizes)
        for i, end in enumerate(ends):
            object_list[i] = pickle.loads(data[end - sizes[i] : end].tobytes())


def _all_gather_bytes(g, payload: np.ndarray) -> list[bytes]:
    mpi = g._mpi
    sizes = np.empty(g.size(), np.int64)
    mpi.allgather(sizes, np.array([payload.size], np.int64), "all_gather_object").wait()
    out = np.empty(int(sizes.sum()), np.uint8)
    mpi.allgatherv(out, payload, sizes.tolist()).wait()
    ends = np.cumsum(sizes)
    return [out[end - size : end].tobytes() for end, size in zip(ends, sizes)]


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Every rank's `obj` into every rank's `object_list` (of length world size), in rank
    order."""
    g = resolve(group)
    if g is None:
        return
    if len(object_list) != g.size():
        raise ValueError(
            f"all_gather_object: object_list must have world_size ({g.size()}) items, "
            f"got {len(object_list)}"
        )
    for i, blob in enumerate(_all_gather_bytes(g, _dumps(obj))):
        object_list[i] = pickle.loads(blob)


def gather_object(
    obj,
    object_gather_list: list | None = None,
    dst: int | None = None,
    group=None,
    group_dst: int | None = None,
) -> None:
    """Every rank's `obj` into rank `dst`'s `object_gather_list` (None on the other ranks)."""
    g = resolve(group)
    if g is None:
        return
    root = _group_rank(group, g, dst, group_dst, "dst")
    if g.rank() == root and (object_gather_list is None or len(object_gather_list) != g.size()):
        raise ValueError(
            "Argument ``object_gather_list`` must be a list of world_size items on the "
            "destination rank."
        )
    blobs = _all_gather_bytes(g, _dumps(obj))
    if g.rank() == root:
        for i, blob in enumerate(blobs):
            object_gather_list[i] = pickle.loads(blob)
