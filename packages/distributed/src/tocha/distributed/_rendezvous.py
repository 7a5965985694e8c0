"""Rendezvous: what `init_process_group` learns from ``init_method``, the environment and its
``rank``/``world_size`` arguments, checked as PyTorch checks them, and matched against the MPI
world that carries the group.

The ``env://`` method reads ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK`` and ``WORLD_SIZE``
(arguments take precedence); ``tcp://host:port`` and ``file://path`` need ``rank`` and
``world_size`` as arguments or in the query (``tcp://host:port?rank=0&world_size=2``). The
processes then form one MPI world: the launcher (``python -m tocha.distributed.run``, or
``mpiexec``) started them as one, or, started apart (``torch.multiprocessing.spawn``), they
meet at rank 0's address before MPI starts (`_join`); a process alone is a world of one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

__all__ = ["Rendezvous", "check_rank", "match_world", "rendezvous"]


@dataclass(frozen=True)
class Rendezvous:
    """Where a process group meets: the rank and world size it expects, and the address."""

    rank: int
    world_size: int
    master_addr: str | None = None
    master_port: int | None = None
    file: str | None = None


def _error(scheme: str, what: str) -> ValueError:
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: {what}")


def _from_env(name: str) -> str:
    value = os.environ.get(name)
    if value is None:
        raise _error("env", f"environment variable {name} expected, but not set")
    return value


def _query_int(query: dict[str, list[str]], key: str, given: int) -> int:
    if given != -1:
        return given
    values = query.get(key)
    return int(values[0]) if values else -1


def rendezvous(init_method: str | None, rank: int, world_size: int, store) -> Rendezvous:
    """The rank and world size that `init_method` (or `store`) gives, as PyTorch reads them.

    Raises PyTorch's errors: ``ValueError`` for a missing variable, rank, world size or port;
    ``RuntimeError`` for a scheme it has no handler for.
    """
    if store is not None:
        if init_method is not None:
            raise AssertionError("Cannot specify both init_method and store.")
        if rank < 0:
            raise AssertionError("rank must be non-negative if using store")
        if world_size <= 0:
            raise AssertionError("world_size must be positive if using store")
        return Rendezvous(rank, world_size)
    url = urlparse(init_method or "env://")
    query = parse_qs(url.query)
    rank = _query_int(query, "rank", rank)
    world_size = _query_int(query, "world_size", world_size)
    if url.scheme == "env":
        if rank == -1:
            rank = int(_from_env("RANK"))
        if world_size == -1:
            world_size = int(_from_env("WORLD_SIZE"))
        addr = _from_env("MASTER_ADDR")
        port = int(_from_env("MASTER_PORT"))
        return Rendezvous(rank, world_size, addr, port)
    if url.scheme in ("tcp", "file"):
        if rank == -1:
            raise _error(url.scheme, "rank parameter missing")
        if world_size == -1:
            raise _error(url.scheme, "world size parameter missing")
        if world_size == 0:
            raise ValueError("TCPStore world size cannot be 0")
        if url.scheme == "file":
            return Rendezvous(rank, world_size, file=url.path)
        if url.port is None:
            raise _error("tcp", "port number missing")
        return Rendezvous(rank, world_size, url.hostname, url.port)
    raise RuntimeError(f"No rendezvous handler for {url.scheme}://")


def check_rank(meeting: Rendezvous) -> None:
    """Refuse a world size below 1 and a rank outside ``[0, world_size)``."""
    if meeting.world_size < 1:
        raise ValueError(f"Invalid world size {meeting.world_size}: it must be at least 1")
    if not 0 <= meeting.rank < meeting.world_size:
        raise ValueError(
            f"Invalid rank {meeting.rank}: the rank must be in [0, {meeting.world_size})"
        )


def match_world(meeting: Rendezvous, mpi_rank: int, mpi_size: int) -> None:
    """Refuse a rendezvous that the MPI world cannot carry: another size, or another rank."""
    if meeting.world_size != mpi_size:
        raise RuntimeError(
            f"init_process_group expects a world of {meeting.world_size} process(es), but this "
            f"process belongs to an MPI world of {mpi_size}: MPI started before this call "
            "(an earlier process group, or mpi4py imported first), or the launcher started "
            "another number of processes"
        )
    check_rank(meeting)
    if meeting.rank != mpi_rank:
        raise RuntimeError(
            f"init_process_group was given rank {meeting.rank}, but the launcher started this "
            f"process as rank {mpi_rank}: pass the rank from the RANK environment variable "
            "(or use init_method='env://', the default)"
        )
