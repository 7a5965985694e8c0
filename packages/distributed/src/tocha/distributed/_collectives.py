"""Collectives on tensors, in place as in PyTorch: `all_reduce`, `broadcast`, `reduce`,
`all_gather`, `all_gather_into_tensor`, `reduce_scatter_tensor`, `gather`, `scatter`,
`all_to_all_single`, `barrier`, and point to point `send`, `recv`, `isend`, `irecv`.

Each works on the tensor's own array (a contiguous copy for a non-contiguous tensor, copied
back), starts the backend's non-blocking call and, unless ``async_op=True``, waits for it
against the group's timeout. With ``async_op=True`` it returns the `Work`; ``wait()`` then
writes the results. Ranks (`src`, `dst`) are ranks of the default group, or ranks of `group`
when passed as `group_src` / `group_dst`, as in PyTorch.
"""

from __future__ import annotations

import time

import numpy as np

from tocha import Tensor
from tocha.library import bump_version

from ._check import check_enabled, fingerprint_check
from ._group import GroupMember, get_group_rank, member
from ._types import DistBackendError, ReduceOp
from ._work import Work

__all__ = [
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "broadcast",
    "gather",
    "irecv",
    "isend",
    "recv",
    "monitored_barrier",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]


# -- helpers ----------------------------------------------------------------------------------
def _check_tensor(param, name: str) -> None:
    if not isinstance(param, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
            f"             but got {type(param)} instead."
        )


def _check_tensor_list(param, name: str) -> None:
    if not isinstance(param, list) or not all(isinstance(p, Tensor) for p in param):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type "
            f"List[torch.Tensor]\n             but got {type(param)} instead."
        )


def _buffer(t: Tensor):
    """The contiguous array a collective works on for `t`, and what to do once `t` was
    written: copy a temporary buffer back, and count the in-place write."""
    data = t._data
    if data.flags.c_contiguous:
        return data, lambda: bump_version(t)
    work = data.copy(order="C")

    def write_back() -> None:
        data[...] = work
        bump_version(t)

    return work, write_back


def _input(t: Tensor):
    """The contiguous array a collective reads for `t` (no write back)."""
    data = t._data
    return data if data.flags.c_contiguous else data.copy(order="C")


def _group_rank(group, g, rank, group_rank, name: str, collective: str = "") -> int:
    """The group rank meant by a global `rank` or a `group_rank` (exactly one of them).

    On the default group a root outside it is the backend's error, as PyTorch's gloo
    reports it for `collective`."""
    if collective and rank is not None and group in (None, GroupMember.WORLD):
        if not 0 <= rank < g.size():
            raise RuntimeError(f"ProcessGroupGloo::{collective}: invalid root rank: {rank}")
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {name} and group_{name}")
    if group_rank is not None:
        if not 0 <= group_rank < g.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {group}")
        return group_rank
    if rank is None:
        if group is None:
            return 0
        raise ValueError(f"Must specify {name} or group_{name}")
    return get_group_rank(g, rank)


_INTEGRAL_NAMES = {
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def _check_op(op, arr, collective: str) -> None:
    """PyTorch's errors for a reduce op that is not one, or that the dtype cannot take."""
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(
            f"{collective}(): incompatible function arguments: op must be a "
            f"torch.distributed.ReduceOp, got {op!r}"
        )
    kind = arr.dtype.kind
    if op == ReduceOp.AVG and kind in "iub":
        raise RuntimeError(
            "result type Float can't be cast to the desired output type "
            f"{_INTEGRAL_NAMES.get(arr.dtype.name, arr.dtype.name)}"
        )
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind not in "iub":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if kind == "c" and op in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT):
        error = ValueError if collective == "all_reduce" else RuntimeError
        raise error(f"{collective} does not support RedOpType.{op.name} on complex tensors")


def _finish(work: Work, async_op: bool, outputs: list | None = None):
    """`work` for ``async_op=True`` (its ``result()`` and future's value: `outputs`), else
    None once it is done."""
    if outputs is not None:
        work._result = outputs
    if async_op:
        return work
    work.wait()
    return None


def _check(g, kind: str, arr=None, op=-1, root=-1) -> None:
    if check_enabled():
        fingerprint_check(g, kind, arr, op, root)


# -- reductions -------------------------------------------------------------------------------
def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce `tensor` over all ranks, in place: every rank gets the result.

    `op` is ``ReduceOp.SUM`` (default), ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, or a bitwise
    op on integer tensors.

    Example::

        >>> t = torch.ones(2) * (dist.get_rank() + 1)
        >>> dist.all_reduce(t)  # on 2 ranks: tensor([3., 3.]) everywhere
    """
    _check_tensor(tensor, "tensor")
    g = member(group, "all_reduce")
    if g is None:
        return None
    data, done = _buffer(tensor)
    _check_op(op, data, "all_reduce")
    _check(g, "ALLREDUCE", data, op)
    work = g.backend_for(tensor.device.type).allreduce(data, op)
    return _finish(work.then(done), async_op, [tensor])


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op=ReduceOp.SUM,
    group=None,
    async_op: bool = False,
    group_dst: int | None = None,
):
    """Reduce `tensor` over all ranks into rank `dst`'s `tensor` (the others' are kept)."""
    _check_tensor(tensor, "tensor")
    g = member(group, "reduce")
    if g is None:
        return None
    root = _group_rank(group, g, dst, group_dst, "dst", "reduce")
    data, done = _buffer(tensor)
    _check_op(op, data, "reduce")
    _check(g, "REDUCE", data, op, root)
    work = g.backend_for(tensor.device.type).reduce(data, op, root)
    return _finish(work.then(done), async_op, [tensor])


def reduce_scatter_tensor(
    output: Tensor, input: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False
):
    """Reduce `input` over all ranks and give rank ``i`` the ``i``-th of its ``world_size``
    equal chunks (along the first dimension) in `output`."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = member(group, "reduce_scatter_single")
    if g is None:
        return None
    if input.numel() != output.numel() * g.size() or input.dtype != output.dtype:
        raise RuntimeError(
            "reduce_scatter_tensor: input tensor must have world_size times the elements of "
            f"the output tensor and its dtype (got {list(input.shape)} {input.dtype} for "
            f"{list(output.shape)} {output.dtype} with world_size {g.size()})"
        )
    data, done = _buffer(output)
    source = _input(input)
    _check_op(op, source, "reduce_scatter_tensor")
    _check(g, "_REDUCE_SCATTER_BASE", source, op)
    work = g.backend_for(output.device.type).reduce_scatter(data, source, op)
    return _finish(work.then(done), async_op, [output])


def reduce_scatter(
    output: Tensor, input_list: list[Tensor], op=ReduceOp.SUM, group=None, async_op: bool = False
):
    """Reduce ``input_list[i]`` over all ranks into rank ``i``'s `output` (the list holds
    world_size tensors shaped like `output`)."""
    _check_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    g = member(group, "reduce_scatter")
    if g is None:
        return None
    if len(input_list) != g.size():
        raise RuntimeError("invalid input tensor list size, must be world size")
    _check_list(input_list, output, g.size(), "reduce_scatter", RuntimeError)
    xp = output._data.__array_namespace__()
    source = xp.stack([_input(t) for t in input_list])
    _check_op(op, source, "reduce_scatter")
    data, done = _buffer(output)
    _check(g, "_REDUCE_SCATTER_BASE", source, op)
    work = g.backend_for(output.device.type).reduce_scatter(data, source, op)
    return _finish(work.then(done), async_op, [output])


# -- moves ------------------------------------------------------------------------------------
def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group=None,
    async_op: bool = False,
    group_src: int | None = None,
):
    """Copy rank `src`'s `tensor` into every rank's `tensor`."""
    _check_tensor(tensor, "tensor")
    g = member(group, "broadcast")
    if g is None:
        return None
    root = _group_rank(group, g, src, group_src, "src", "broadcast")
    data, done = _buffer(tensor)
    _check(g, "BROADCAST", data, root=root)
    work = g.backend_for(tensor.device.type).broadcast(data, root)
    return _finish(work.then(done), async_op, [tensor])


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group=None, async_op: bool = False):
    """Every rank's `tensor` into every rank's `tensor_list` (``tensor_list[i]`` from rank
    ``i``)."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    g = member(group, "all_gather")
    if g is None:
        return None
    if len(tensor_list) != g.size():
        raise RuntimeError(
            "ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected "
            f"length {g.size()}, got {len(tensor_list)})"
        )
    for out in tensor_list:
        if out.dtype != tensor.dtype:
            raise ValueError(
                f"Invalid usage of tensors with different dtypesFound {out.dtype} and  "
                f"{tensor.dtype}"
            )
    for i, out in enumerate(tensor_list):
        if out.shape != tensor.shape:
            raise RuntimeError(
                f"ProcessGroupGloo::allgather: invalid tensor size at index {i} (expected "
                f"{_size(tensor.shape)}, got {_size(out.shape)})"
            )
    source = _input(tensor)
    flat = _empty_like_stack(source, g.size())
    _check(g, "ALLGATHER", source)
    work = g.backend_for(tensor.device.type).allgather(flat, source)
    return _finish(work.then(_unstack(flat, tensor_list)), async_op, [tensor_list])


def _size(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def _empty_like_stack(arr, n: int):
    """An uninitialized array of `n` arrays like `arr`, in `arr`'s array library."""
    return arr.__array_namespace__().empty((n, *arr.shape), dtype=arr.dtype)


def _unstack(flat, outputs: list[Tensor]):
    def unstack() -> None:
        for i, out in enumerate(outputs):
            out._data[...] = flat[i]
            bump_version(out)

    return unstack


def _check_gathered(output: Tensor, input: Tensor, size: int) -> None:
    """Refuse an output that is neither `size` inputs concatenated along the first
    dimension nor stacked, with gloo's error for the first of its `size` chunks that does
    not fit."""
    if output.dtype != input.dtype:
        raise RuntimeError(
            "ProcessGroupGloo::allgather: invalid tensor type at index 0 (expected "
            f"{input.dtype}, got {output.dtype})"
        )
    shape, rows = tuple(input.shape), output.shape[0] if output.dim() else 0
    if tuple(output.shape) in ((size * shape[0], *shape[1:]) if shape else (size,), (size, *shape)):
        return
    start = 0
    for i in range(size):
        width = min(-(-rows // size), rows - start) if rows else 0
        chunk = (max(width, 0), *output.shape[1:])
        if chunk != shape:
            raise RuntimeError(
                f"ProcessGroupGloo::allgather: invalid tensor size at index {i} (expected "
                f"{_size(shape)}, got {_size(chunk)})"
            )
        start += width


def all_gather_into_tensor(
    output_tensor: Tensor, input_tensor: Tensor, group=None, async_op: bool = False
):
    """Every rank's `input_tensor`, concatenated in rank order along the first dimension (or
    stacked), into `output_tensor`."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    g = member(group, "all_gather_single")
    if g is None:
        return None
    _check_gathered(output_tensor, input_tensor, g.size())
    data, done = _buffer(output_tensor)
    source = _input(input_tensor)
    _check(g, "_ALLGATHER_BASE", source)
    work = g.backend_for(output_tensor.device.type).allgather(data, source)
    return _finish(work.then(done), async_op, [output_tensor])


def gather(
    tensor: Tensor,
    gather_list: list[Tensor] | None = None,
    dst: int | None = None,
    group=None,
    async_op: bool = False,
    group_dst: int | None = None,
):
    """Every rank's `tensor` into rank `dst`'s `gather_list` (given on `dst` only)."""
    _check_tensor(tensor, "tensor")
    g = member(group, "gather")
    if g is None:
        return None
    root = _group_rank(group, g, dst, group_dst, "dst", "gather")
    source = _input(tensor)
    if g.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_tensor_list(gather_list, "gather_list")
        _check_list(gather_list, tensor, g.size(), "gather")
        flat = _empty_like_stack(source, g.size())
        after = _unstack(flat, gather_list)
    else:
        if gather_list:
            raise ValueError(
                "Argument ``gather_list`` must NOT be specified on non-destination ranks."
            )
        flat, after = None, None
    _check(g, "GATHER", source, root=root)
    work = g.backend_for(tensor.device.type).gather(flat, source, root)
    return _finish(
        work.then(after) if after else work, async_op, [gather_list] if gather_list else []
    )


def _check_list(
    tensors: list[Tensor], like: Tensor, size: int, name: str, error: type = ValueError
) -> None:
    if len(tensors) != size:
        raise error(f"{name}: expected a list of {size} tensors, got {len(tensors)}")
    for i, t in enumerate(tensors):
        if t.shape != like.shape or t.dtype != like.dtype:
            raise error(
                f"{name}: tensor {i} of the list is {list(t.shape)} {t.dtype}, expected "
                f"{list(like.shape)} {like.dtype}"
            )


def scatter(
    tensor: Tensor,
    scatter_list: list[Tensor] | None = None,
    src: int | None = None,
    group=None,
    async_op: bool = False,
    group_src: int | None = None,
):
    """Rank `src`'s ``scatter_list[i]`` into rank ``i``'s `tensor`."""
    _check_tensor(tensor, "tensor")
    g = member(group, "scatter")
    if g is None:
        return None
    root = _group_rank(group, g, src, group_src, "src", "scatter")
    if g.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_tensor_list(scatter_list, "scatter_list")
        _check_list(scatter_list, tensor, g.size(), "scatter")
        xp = tensor._data.__array_namespace__()
        flat = xp.stack([_input(t) for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        flat = None
    data, done = _buffer(tensor)
    _check(g, "SCATTER", data, root=root)
    work = g.backend_for(tensor.device.type).scatter(flat, data, root)
    return _finish(work.then(done), async_op, [tensor])


def all_to_all_single(
    output: Tensor,
    input: Tensor,
    output_split_sizes: list[int] | None = None,
    input_split_sizes: list[int] | None = None,
    group=None,
    async_op: bool = False,
):
    """Split `input` along its first dimension, send piece ``j`` to rank ``j``, and write
    the pieces received, in rank order, into `output`. Equal pieces when the split sizes are
    None."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = member(group, "all_to_all_single")
    if g is None:
        return None
    if input.dtype != output.dtype:
        raise RuntimeError(
            f"all_to_all_single: input and output dtypes differ ({input.dtype}, {output.dtype})"
        )
    size = g.size()
    in_splits = _splits(input, input_split_sizes, size, "input")
    out_splits = _splits(output, output_split_sizes, size, "output")
    source = _input(input)
    data, done = _buffer(output)
    if check_enabled():
        fingerprint_check(g, "ALLTOALL_BASE", source[:0])
        _check_splits(g, in_splits, out_splits)
    row = source.itemsize * int(np.prod(source.shape[1:], dtype=np.int64))
    work = g.backend_for(output.device.type).alltoallv(
        data, [n * row for n in out_splits], source, [n * row for n in in_splits]
    )
    return _finish(work.then(done), async_op, [output])


def all_to_all(
    output_tensor_list: list[Tensor],
    input_tensor_list: list[Tensor],
    group=None,
    async_op: bool = False,
):
    """Send ``input_tensor_list[j]`` to rank ``j`` and receive rank ``j``'s tensor for this
    rank into ``output_tensor_list[j]`` (the tensors may differ in size, not in dtype)."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    g = member(group, "all_to_all")
    if g is None:
        return None
    size = g.size()
    for name, tensors in (("output", output_tensor_list), ("input", input_tensor_list)):
        if len(tensors) != size:
            raise RuntimeError(
                f"ProcessGroupGloo::alltoall: {name} tensor list size {len(tensors)} does not "
                f"match world size {size}"
            )
    dtypes = {t.dtype for t in (*input_tensor_list, *output_tensor_list)}
    if len(dtypes) > 1:
        raise RuntimeError(
            f"all_to_all: the tensors must share one dtype, got {sorted(map(str, dtypes))}"
        )
    xp = input_tensor_list[0]._data.__array_namespace__()
    source = xp.concatenate([_input(t).reshape(-1) for t in input_tensor_list])
    flat = xp.empty(sum(t.numel() for t in output_tensor_list), dtype=source.dtype)
    in_counts = [t.numel() for t in input_tensor_list]
    out_counts = [t.numel() for t in output_tensor_list]
    if check_enabled():
        fingerprint_check(g, "ALLTOALL_BASE", source[:0])
        _check_splits(g, in_counts, out_counts)
    item = source.itemsize
    work = g.backend_for(input_tensor_list[0].device.type).alltoallv(
        flat, [n * item for n in out_counts], source, [n * item for n in in_counts]
    )

    def unpack() -> None:
        start = 0
        for out, n in zip(output_tensor_list, out_counts):
            out._data[...] = flat[start : start + n].reshape(out._data.shape)
            bump_version(out)
            start += n

    return _finish(work.then(unpack), async_op, output_tensor_list)


def _splits(t: Tensor, sizes, world: int, name: str) -> list[int]:
    rows = t.shape[0] if t.dim() else 1
    if sizes is None or len(sizes) == 0:
        if rows % world:
            raise ValueError(f"Tensor's dim 0 does not divide equally across group size {world}")
        return [rows // world] * world
    sizes = [int(s) for s in sizes]
    if len(sizes) != world or sum(sizes) != rows:
        raise ValueError(
            f"all_to_all_single: {name}_split_sizes {sizes} must have {world} entries summing "
            f"to the {name}'s first dimension {rows}"
        )
    return sizes


def _check_splits(g, in_splits: list[int], out_splits: list[int]) -> None:
    """Every rank gets every rank's split sizes; each checks that what rank i sends to rank
    j is what rank j expects from rank i, so that all raise alike."""
    size = g.size()
    mine = np.array([in_splits, out_splits], np.int64)
    every = np.empty((size, 2, size), np.int64)
    g._mpi.allgather(every, mine, "the collective check").wait()
    sent, expected = every[:, 0, :], every[:, 1, :].T
    bad = np.argwhere(sent != expected)
    if bad.size:
        i, j = (int(v) for v in bad[0])
        raise RuntimeError(
            f"all_to_all: rank {g._ranks[i]} sends {sent[i, j]} rows to rank "
            f"{g._ranks[j]}, which expects {expected[i, j]} rows from it"
        )


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every rank of `group` has reached the barrier."""
    g = member(group, "barrier")
    if g is None:
        return None
    _check(g, "BARRIER")
    work = g._mpi.barrier()
    if async_op:
        return work
    work.wait(timeout)
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False) -> None:
    """A barrier that names the ranks that did not reach it: rank 0 waits for every other
    rank (at most `timeout`, the group's by default) and raises RuntimeError naming the
    first rank missing (every rank missing with `wait_all_ranks`); then it releases them."""
    g = member(group, "monitored_barrier")
    if g is None:
        return
    mpi = g._mpi
    limit = mpi.timeout if timeout is None else timeout
    monitor = g.monitor()
    token = np.zeros(1, np.uint8)
    if g.rank() != 0:
        monitor.send(token, 0, 0).wait(limit)
        monitor.recv(np.zeros(1, np.uint8), 0, 0)[0].wait(limit)
        return
    pending = {r: monitor.recv(np.zeros(1, np.uint8), r, 0)[0] for r in range(1, g.size())}
    deadline = time.monotonic() + limit.total_seconds()
    while pending and time.monotonic() < deadline:
        pending = {r: w for r, w in pending.items() if not w.is_completed()}
        time.sleep(0.0005)
    if pending:
        missing = [g._ranks[r] for r in sorted(pending)]
        ms = int(limit.total_seconds() * 1000)
        if wait_all_ranks:
            names = ", ".join(map(str, missing))
            raise DistBackendError(f"Ranks {names} failed to pass monitoredBarrier in {ms} ms")
        raise DistBackendError(f"Rank {missing[0]} failed to pass monitoredBarrier in {ms} ms")
    for work in [monitor.send(token, r, 0) for r in range(1, g.size())]:
        work.wait(limit)


# -- point to point ---------------------------------------------------------------------------
def _peer(group, g, rank, group_rank, name: str) -> int:
    if rank is None and group_rank is None:
        raise ValueError(f"Must specify {name} or group_{name}")
    peer = _group_rank(group, g, rank, group_rank, name)
    if peer == g.rank():
        kind = "destination" if name == "dst" else "source"
        raise ValueError(
            f"Invalid {kind} rank: {kind} rank should not be the same as the rank of the "
            "current process."
        )
    return peer


def isend(
    tensor: Tensor, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None
):
    """Send `tensor` to rank `dst` without waiting; returns the `Work` (keep `tensor`
    unchanged until it is done)."""
    _check_tensor(tensor, "tensor")
    g = member(group, "isend")
    if g is None:
        return None
    peer = _peer(group, g, dst, group_dst, "dst")
    return g.backend_for(tensor.device.type).send(_input(tensor), peer, tag)


def send(
    tensor: Tensor, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None
) -> None:
    """Send `tensor` to rank `dst`."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def irecv(
    tensor: Tensor, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None
):
    """Receive into `tensor` from rank `src` (any rank when None) without waiting."""
    return _irecv(tensor, src, group, tag, group_src)[0]


def _irecv(tensor, src, group, tag, group_src):
    _check_tensor(tensor, "tensor")
    g = member(group, "irecv")
    if g is None:
        return None, None, None
    peer = None if src is None and group_src is None else _peer(group, g, src, group_src, "src")
    data, done = _buffer(tensor)
    work, status = g.backend_for(tensor.device.type).recv(data, peer, tag)
    return work.then(done), status, g


def recv(
    tensor: Tensor, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None
) -> int:
    """Receive into `tensor` from rank `src` (any rank when None); returns the sender's
    rank (-1 outside `group`)."""
    work, status, g = _irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return g._ranks[status.Get_source()]
