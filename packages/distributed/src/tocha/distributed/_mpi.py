"""The MPI backend: collectives on NumPy arrays through mpi4py's buffer-protocol calls.

Every call is non-blocking (``Iallreduce``, ``Ibcast``...) on the array's own memory, with no
pickling and no copy, and returns a `Work` that polls it. Reductions run on the array's own
MPI type; float16 and bfloat16, which MPI cannot add, are reduced in a float32 copy. Moves that
do not compute (broadcast, gathers, scatters, all-to-all, send and receive) move bytes.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
from mpi4py import MPI

from ._types import DistBackendError, ReduceOp
from ._work import Work

__all__ = ["ProcessGroupMPI"]

_OPS = {
    ReduceOp.SUM: MPI.SUM,
    ReduceOp.AVG: MPI.SUM,
    ReduceOp.PRODUCT: MPI.PROD,
    ReduceOp.MIN: MPI.MIN,
    ReduceOp.MAX: MPI.MAX,
    ReduceOp.BAND: MPI.BAND,
    ReduceOp.BOR: MPI.BOR,
    ReduceOp.BXOR: MPI.BXOR,
}
_BOOL_OPS = {
    ReduceOp.SUM: MPI.LOR,
    ReduceOp.MAX: MPI.LOR,
    ReduceOp.BOR: MPI.LOR,
    ReduceOp.PRODUCT: MPI.LAND,
    ReduceOp.MIN: MPI.LAND,
    ReduceOp.BAND: MPI.LAND,
    ReduceOp.BXOR: MPI.LXOR,
}
_HALF = ("float16", "bfloat16")


def mpi_op(op, dtype: np.dtype):
    """The MPI operation for `op` on arrays of `dtype`; ValueError when there is none."""
    table = _BOOL_OPS if dtype == np.bool_ else _OPS
    found = table.get(op)
    if found is None or (dtype.kind == "c" and op in (ReduceOp.MIN, ReduceOp.MAX)):
        raise ValueError(f"Cannot use {ReduceOp.RedOpType(op)!r} with {dtype.name} tensors")
    if dtype.kind == "f" and op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
        raise ValueError(f"Cannot use {ReduceOp.RedOpType(op)!r} with {dtype.name} tensors")
    return found


def _reducible(arr: np.ndarray) -> np.ndarray:
    """`arr`, or a float32 copy of it when MPI cannot reduce its dtype."""
    return arr.astype(np.float32) if arr.dtype.name in _HALF else arr


def _average(work: np.ndarray, size: int) -> None:
    if work.dtype.kind in "fc":
        work /= size
    else:
        np.floor_divide(work, size, out=work)


class ProcessGroupMPI:
    """Collectives among the processes of one MPI communicator.

    Args:
        comm: the communicator (a duplicate of the user's, so that tocha's messages never
            match theirs).
        timeout: how long a collective may wait for the other ranks.
    """

    def __init__(self, comm: MPI.Comm, timeout: timedelta) -> None:
        self.comm = comm
        self.timeout = timeout
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self._label = f"rank {MPI.COMM_WORLD.Get_rank()}"

    def work(self, requests: list, what: str, finish=None, result=None) -> Work:
        """A `Work` that polls the MPI `requests` of the collective `what`."""

        def test() -> bool:
            try:
                return MPI.Request.Testall(requests)
            except MPI.Exception as exc:
                raise DistBackendError(f"{what} on {self._label} failed: {exc}") from exc

        return Work(test, finish, self.timeout, f"{what} on {self._label}", result)

    # -- reductions ---------------------------------------------------------------------------
    def allreduce(self, arr: np.ndarray, op) -> Work:
        work = _reducible(arr)
        request = self.comm.Iallreduce(MPI.IN_PLACE, work, mpi_op(op, work.dtype))
        return self.work([request], "all_reduce", self._finisher(arr, work, op))

    def reduce(self, arr: np.ndarray, op, root: int) -> Work:
        work = _reducible(arr)
        operation = mpi_op(op, work.dtype)
        if self.rank == root:
            request = self.comm.Ireduce(MPI.IN_PLACE, work, operation, root)
            return self.work([request], "reduce", self._finisher(arr, work, op))
        return self.work([self.comm.Ireduce(work, None, operation, root)], "reduce")

    def reduce_scatter(self, out: np.ndarray, inp: np.ndarray, op) -> Work:
        send, recv = _reducible(inp), _reducible(out)
        request = self.comm.Ireduce_scatter_block(send, recv, mpi_op(op, send.dtype))
        return self.work([request], "reduce_scatter_tensor", self._finisher(out, recv, op))

    def _finisher(self, arr: np.ndarray, work: np.ndarray, op):
        """What to do once a reduction into `work` is done: average, copy back into `arr`."""
        if op != ReduceOp.AVG and work is arr:
            return None
        size = self.size

        def finish() -> None:
            if op == ReduceOp.AVG:
                _average(work, size)
            if work is not arr:
                arr[...] = work

        return finish

    # -- moves --------------------------------------------------------------------------------
    def broadcast(self, arr: np.ndarray, root: int) -> Work:
        return self.work([self.comm.Ibcast([arr, MPI.BYTE], root)], "broadcast")

    def allgather(self, out: np.ndarray, arr: np.ndarray, what: str = "all_gather") -> Work:
        return self.work([self.comm.Iallgather([arr, MPI.BYTE], [out, MPI.BYTE])], what)

    def allgatherv(self, out: np.ndarray, arr: np.ndarray, counts: list[int]) -> Work:
        """Gather byte arrays of different lengths (`counts`) into `out`, one after another."""
        displacements = np.cumsum([0, *counts[:-1]]).tolist()
        request = self.comm.Iallgatherv([arr, MPI.BYTE], [out, (counts, displacements), MPI.BYTE])
        return self.work([request], "all_gather_object")

    def gather(self, out: np.ndarray | None, arr: np.ndarray, root: int) -> Work:
        recv = [out, MPI.BYTE] if self.rank == root else None
        return self.work([self.comm.Igather([arr, MPI.BYTE], recv, root)], "gather")

    def scatter(self, inp: np.ndarray | None, out: np.ndarray, root: int) -> Work:
        send = [inp, MPI.BYTE] if self.rank == root else None
        return self.work([self.comm.Iscatter(send, [out, MPI.BYTE], root)], "scatter")

    def alltoallv(self, out: np.ndarray, out_counts, inp: np.ndarray, in_counts) -> Work:
        """All-to-all of bytes: `in_counts[j]` bytes of `inp` go to rank j, `out_counts[j]`
        bytes from rank j land in `out`, in rank order."""
        send = [inp, (in_counts, np.cumsum([0, *in_counts[:-1]]).tolist()), MPI.BYTE]
        recv = [out, (out_counts, np.cumsum([0, *out_counts[:-1]]).tolist()), MPI.BYTE]
        return self.work([self.comm.Ialltoallv(send, recv)], "all_to_all_single")

    def barrier(self) -> Work:
        return self.work([self.comm.Ibarrier()], "barrier")

    # -- point to point -----------------------------------------------------------------------
    def send(self, arr: np.ndarray, dst: int, tag: int) -> Work:
        return self.work([self.comm.Isend([arr, MPI.BYTE], dst, tag)], "send")

    def recv(self, arr: np.ndarray, src: int | None, tag: int) -> tuple[Work, MPI.Status]:
        """Receive into `arr` from `src` (None: any rank); the status tells the sender."""
        source = MPI.ANY_SOURCE if src is None else src
        request = self.comm.Irecv([arr, MPI.BYTE], source, tag)
        status = MPI.Status()
        expected = arr.nbytes

        def test() -> bool:
            try:
                return request.Test(status)
            except MPI.Exception as exc:  # a longer message than `arr` holds
                raise DistBackendError(
                    f"recv on {self._label}: the message from rank {status.Get_source()} is "
                    f"larger than the tensor's {expected} bytes ({exc})"
                ) from exc

        def finish() -> None:
            got = status.Get_count(MPI.BYTE)
            if got != expected:
                raise RuntimeError(
                    f"recv on {self._label}: expected {expected} bytes from rank "
                    f"{status.Get_source()} but received {got}: the sent tensor has another "
                    "size or dtype"
                )

        return Work(test, finish, self.timeout, f"recv on {self._label}"), status
