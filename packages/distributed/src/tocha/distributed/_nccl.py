"""The NCCL backend: collectives on CUDA tensors (CuPy arrays) through CuPy's NCCL bindings.

UNTESTED: written against ``cupy.cuda.nccl`` (CuPy 13) but never run, since the machines this
package was written on have no GPU. CuPy is imported when a group of the ``nccl`` backend is
made, never before. The NCCL unique id is broadcast over the group's MPI communicator, which
also keeps serving CPU tensors, the collective check and objects.

Each call is queued on the current CUDA stream; its `Work` records an event after it and polls
``event.done`` against the timeout, so a dead rank raises instead of hanging (the
communicator is then unusable: NCCL cannot cancel a queued collective).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ._types import ReduceOp
from ._work import Work

__all__ = ["ProcessGroupNCCL"]


class ProcessGroupNCCL:
    """The NCCL communicator of a process group.

    Args:
        mpi: the group's `ProcessGroupMPI` (bootstrap: it carries the unique id).
        device_id: the CUDA device of this rank (default: local rank modulo device count).
    """

    def __init__(self, mpi, device_id=None) -> None:
        import cupy
        from cupy.cuda import nccl

        self._cupy, self._nccl = cupy, nccl
        self.timeout = mpi.timeout
        self.rank, self.size = mpi.rank, mpi.size
        index = device_id if isinstance(device_id, int) else getattr(device_id, "index", None)
        if index is None:
            index = mpi.rank % cupy.cuda.runtime.getDeviceCount()
        cupy.cuda.Device(index).use()
        uid = (
            np.frombuffer(bytes(nccl.get_unique_id()), np.uint8).copy()
            if mpi.rank == 0
            else (np.empty(128, np.uint8))
        )
        mpi.broadcast(uid, 0).wait()
        self.comm = nccl.NcclCommunicator(self.size, tuple(uid.tolist()), self.rank)
        self._ops = {
            ReduceOp.SUM: nccl.NCCL_SUM,
            ReduceOp.PRODUCT: nccl.NCCL_PROD,
            ReduceOp.MIN: nccl.NCCL_MIN,
            ReduceOp.MAX: nccl.NCCL_MAX,
            ReduceOp.AVG: getattr(nccl, "NCCL_AVG", None),
        }
        self._types = {
            "int8": nccl.NCCL_INT8,
            "uint8": nccl.NCCL_UINT8,
            "int32": nccl.NCCL_INT32,
            "int64": nccl.NCCL_INT64,
            "float16": nccl.NCCL_FLOAT16,
            "float32": nccl.NCCL_FLOAT32,
            "float64": nccl.NCCL_FLOAT64,
        }

    def _work(self, what: str, finish=None) -> Work:
        stream = self._cupy.cuda.get_current_stream()
        event = stream.record()
        return Work(lambda: event.done, finish, self.timeout, f"{what} on rank {self.rank}")

    def _typed(self, arr, op):
        dtype = self._types.get(arr.dtype.name)
        nccl_op = self._ops.get(op)
        if dtype is None or nccl_op is None:
            raise ValueError(f"NCCL cannot reduce {arr.dtype.name} tensors with {op!r}")
        return dtype, nccl_op

    def _stream(self) -> int:
        return self._cupy.cuda.get_current_stream().ptr

    def allreduce(self, arr, op) -> Work:
        dtype, nccl_op = self._typed(arr, op)
        ptr = arr.data.ptr
        self.comm.allReduce(ptr, ptr, arr.size, dtype, nccl_op, self._stream())
        return self._work("all_reduce")

    def reduce(self, arr, op, root: int) -> Work:
        dtype, nccl_op = self._typed(arr, op)
        ptr = arr.data.ptr
        self.comm.reduce(ptr, ptr, arr.size, dtype, nccl_op, root, self._stream())
        return self._work("reduce")

    def reduce_scatter(self, out, inp, op) -> Work:
        dtype, nccl_op = self._typed(inp, op)
        self.comm.reduceScatter(
            inp.data.ptr, out.data.ptr, out.size, dtype, nccl_op, self._stream()
        )
        return self._work("reduce_scatter_tensor")

    def broadcast(self, arr, root: int) -> Work:
        ptr = arr.data.ptr
        self.comm.broadcast(ptr, ptr, arr.nbytes, self._nccl.NCCL_UINT8, root, self._stream())
        return self._work("broadcast")

    def allgather(self, out, arr, what: str = "all_gather") -> Work:
        self.comm.allGather(
            arr.data.ptr, out.data.ptr, arr.nbytes, self._nccl.NCCL_UINT8, self._stream()
        )
        return self._work(what)

    def _exchange(self, sends, recvs, what: str) -> Work:
        """Grouped point-to-point calls: `sends` and `recvs` are (pointer, bytes, peer)."""
        nccl, stream = self._nccl, self._stream()
        nccl.groupStart()
        for ptr, nbytes, peer in sends:
            self.comm.send(ptr, nbytes, nccl.NCCL_UINT8, peer, stream)
        for ptr, nbytes, peer in recvs:
            self.comm.recv(ptr, nbytes, nccl.NCCL_UINT8, peer, stream)
        nccl.groupEnd()
        return self._work(what)

    def gather(self, out, arr, root: int) -> Work:
        n = arr.nbytes
        sends = [(arr.data.ptr, n, root)]
        recvs = [(out.data.ptr + i * n, n, i) for i in range(self.size)] if out is not None else []
        return self._exchange(sends, recvs, "gather")

    def scatter(self, inp, out, root: int) -> Work:
        n = out.nbytes
        sends = [(inp.data.ptr + i * n, n, i) for i in range(self.size)] if inp is not None else []
        return self._exchange(sends, [(out.data.ptr, n, root)], "scatter")

    def alltoallv(self, out, out_counts, inp, in_counts) -> Work:
        in_offsets = np.cumsum([0, *in_counts[:-1]])
        out_offsets = np.cumsum([0, *out_counts[:-1]])
        sends = [
            (inp.data.ptr + int(o), c, j) for j, (o, c) in enumerate(zip(in_offsets, in_counts))
        ]
        recvs = [
            (out.data.ptr + int(o), c, j) for j, (o, c) in enumerate(zip(out_offsets, out_counts))
        ]
        return self._exchange(sends, recvs, "all_to_all_single")

    def send(self, arr, dst: int, tag: int) -> Work:
        return self._exchange([(arr.data.ptr, arr.nbytes, dst)], [], "send")

    def recv(self, arr, src: int | None, tag: int):
        if src is None:
            raise RuntimeError("NCCL cannot receive from any source: pass src")
        work = self._exchange([], [(arr.data.ptr, arr.nbytes, src)], "recv")
        return work, SimpleNamespace(Get_source=lambda: src)
