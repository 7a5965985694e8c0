"""Collectives on picklable Python objects: `broadcast_object_list`, `all_gather_object`,
`gather_object`, `scatter_object_list`, and point to point `send_object_list`,
`recv_object_list`.

As in PyTorch, objects are pickled (tensors included): use them for small metadata, and the
tensor collectives for tensors. The sizes travel first, then the bytes, through the same
non-blocking MPI calls as tensors, so these too fail after the timeout instead of hanging.
Unpickling runs code from the other ranks: use them only among trusted processes.
"""

from __future__ import annotations

import pickle

import numpy as np

from ._collectives import _group_rank, _peer
from ._group import member

__all__ = [
    "all_gather_object",
    "broadcast_object_list",
    "gather_object",
    "recv_object_list",
    "scatter_object_list",
    "send_object_list",
]

# Tags of the two messages of `send_object_list` (sizes, then bytes), beyond those programs
# use for their tensors.
SIZES_TAG, BYTES_TAG = 32001, 32002


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
    g = member(group, "broadcast_object_list")
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
    g = member(group, "all_gather_object")
    if g is None:
        return
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
    g = member(group, "gather_object")
    if g is None:
        return
    root = _group_rank(group, g, dst, group_dst, "dst")
    if g.rank() == root and (object_gather_list is None or len(object_gather_list) != g.size()):
        raise ValueError(
            "Argument ``object_gather_list`` must be a list of world_size items on the "
            "destination rank."
        )
    blobs = _all_gather_bytes(g, _dumps(obj))
    if g.rank() != root and object_gather_list is not None:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    if g.rank() == root:
        for i, blob in enumerate(blobs):
            object_gather_list[i] = pickle.loads(blob)


def scatter_object_list(
    scatter_object_output_list: list,
    scatter_object_input_list: list | None = None,
    src: int | None = None,
    group=None,
    group_src: int | None = None,
) -> None:
    """Rank `src`'s ``scatter_object_input_list[i]`` into rank ``i``'s
    ``scatter_object_output_list[0]``."""
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    g = member(group, "scatter_object_list")
    if g is None:
        return
    root = _group_rank(group, g, src, group_src, "src")
    size, mine = g.size(), g.rank() == root
    if mine and scatter_object_input_list is None:
        raise ValueError("source rank must provide non-None scatter_object_input_list")
    if mine and len(scatter_object_input_list) != size:
        raise ValueError(
            f"scatter_object_input_list must hold world_size ({size}) objects, got "
            f"{len(scatter_object_input_list)}"
        )
    payloads = [_dumps(obj) for obj in scatter_object_input_list] if mine else []
    sizes = np.array([p.size for p in payloads] if mine else [0] * size, np.int64)
    g._mpi.broadcast(sizes, root).wait()
    source = np.concatenate(payloads) if mine else np.empty(0, np.uint8)
    send_counts = sizes.tolist() if mine else [0] * size
    recv_counts = [int(sizes[g.rank()]) if j == root else 0 for j in range(size)]
    out = np.empty(int(sizes[g.rank()]), np.uint8)
    g._mpi.alltoallv(out, recv_counts, source, send_counts).wait()
    scatter_object_output_list[0] = pickle.loads(out.tobytes())


def send_object_list(
    object_list: list,
    dst: int | None = None,
    group=None,
    device=None,
    group_dst: int | None = None,
    use_batch: bool = False,
) -> None:
    """Send the picklable objects of `object_list` to rank `dst`, whose `recv_object_list`
    takes them (a list of the same length)."""
    g = member(group, "send_object_list")
    if g is None:
        return
    peer = _peer(group, g, dst, group_dst, "dst")
    payloads = [_dumps(obj) for obj in object_list]
    sizes = np.array([p.size for p in payloads], np.int64)
    data = np.concatenate(payloads) if payloads else np.empty(0, np.uint8)
    for work in (g._mpi.send(sizes, peer, SIZES_TAG), g._mpi.send(data, peer, BYTES_TAG)):
        work.wait()


def recv_object_list(
    object_list: list,
    src: int | None = None,
    group=None,
    device=None,
    group_src: int | None = None,
    use_batch: bool = False,
) -> int:
    """Receive into `object_list` the objects that rank `src` (any rank when None) sent with
    `send_object_list`; returns the sender's rank (-1 outside `group`)."""
    g = member(group, "recv_object_list")
    if g is None:
        return -1
    peer = None if src is None and group_src is None else _peer(group, g, src, group_src, "src")
    sizes = np.empty(len(object_list), np.int64)
    work, status = g._mpi.recv(sizes, peer, SIZES_TAG)
    work.wait()
    sender = status.Get_source()
    data = np.empty(int(sizes.sum()), np.uint8)
    g._mpi.recv(data, sender, BYTES_TAG)[0].wait()
    ends = np.cumsum(sizes)
    for i, end in enumerate(ends):
        object_list[i] = pickle.loads(data[end - sizes[i] : end].tobytes())
    return g._ranks[sender]
