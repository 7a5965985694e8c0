"""The small types of ``torch.distributed``: `ReduceOp`, `Backend`, the errors, the default
timeout."""

from __future__ import annotations

import enum
from datetime import timedelta

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "DistNetworkError",
    "DistStoreError",
    "ReduceOp",
    "default_pg_timeout",
    "supports_complex",
]

# PyTorch's default for every backend but NCCL's watchdog: 30 minutes.
default_pg_timeout = timedelta(minutes=30)


class DistError(RuntimeError):
    """An error of the distributed package."""


class DistBackendError(DistError):
    """A collective failed in the backend: a timeout, a peer gone, an MPI or NCCL error."""


class DistNetworkError(DistError):
    """A network error: rank 0 could not listen on the rendezvous port, a peer is gone."""


class DistStoreError(DistError):
    """The rendezvous failed: the ranks did not all arrive in time."""


class ReduceOp:
    """How `all_reduce`, `reduce` and `reduce_scatter_tensor` combine the ranks' tensors.

    ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR`` are
    members of the enum ``ReduceOp.RedOpType``, as in PyTorch.
    """

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

        def __str__(self) -> str:
            return f"RedOpType.{self.name}"

        __format__ = object.__format__

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


def supports_complex(reduceOp) -> bool:
    """Whether `reduceOp` can reduce complex tensors (not MAX, MIN, PRODUCT nor the bitwise
    ones)."""
    unsupported = (
        ReduceOp.MAX,
        ReduceOp.MIN,
        ReduceOp.PRODUCT,
        ReduceOp.BAND,
        ReduceOp.BOR,
        ReduceOp.BXOR,
    )
    return reduceOp not in unsupported


class Backend(str):
    """A backend's name, lower-cased: ``Backend("MPI") == "mpi"``. As PyTorch's, any string
    is a name; `check` refuses those tocha cannot run.

    tocha has ``mpi`` (through mpi4py), ``gloo`` (PyTorch's CPU backend, carried by the same
    MPI communicators) and ``nccl`` (through CuPy), and the per-device form
    ``"cpu:gloo,cuda:nccl"``; ``ucc`` is a name PyTorch knows that tocha does not build.
    """

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        return super().__new__(cls, name.lower())

    def check(self) -> Backend:
        """This name, when a process group can run on it; PyTorch's AssertionError for a
        backend it does not know, or one not built (``ucc``)."""
        for part in self.split(","):
            backend = part.split(":", 1)[-1]
            if backend == self.UCC:
                raise AssertionError("Unknown c10d backend type UCC")
            if backend not in (self.MPI, self.GLOO, self.NCCL) or part.count(":") > 1:
                raise AssertionError(f"Unknown backend type {self}")
        return self

    def uses_nccl(self) -> bool:
        """Whether CUDA tensors go through NCCL (``"nccl"`` or ``"cpu:gloo,cuda:nccl"``)."""
        return any(part.split(":", 1)[-1] == self.NCCL for part in self.split(","))
