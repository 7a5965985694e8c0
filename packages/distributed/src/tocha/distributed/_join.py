"""Joining processes that were started apart (``torch.multiprocessing.spawn``,
``multiprocessing.Process``, separate shells) into one MPI world, before MPI starts.

Rank 0 listens on the rendezvous port, as PyTorch's TCP store does, and hands the socket to
a small server (`_pmi_server`). Every rank says hello to it and waits until all ranks have;
then each points MPICH's process-manager client at the server (``PMI_PORT``, ``PMI_ID``), so
that ``MPI_Init`` makes the ranks one world, as if ``mpiexec`` had started them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from ._types import DistNetworkError, DistStoreError

__all__ = ["forget", "join", "started_by_mpi"]

# What MPI process managers (Hydra, gforker, Open MPI, PMIx) set in their processes.
_MANAGER_VARIABLES = ("PMI_FD", "PMI_PORT", "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE")
_SERVER = Path(__file__).with_name("_pmi_server.py")
_RETRY_SECONDS = 0.05


def started_by_mpi() -> bool:
    """Whether an MPI process manager started this process (so MPI_Init joins its world)."""
    return any(name in os.environ for name in _MANAGER_VARIABLES)


def listen(port: int) -> socket.socket:
    """A socket listening on `port` (0: a free one) on every interface; PyTorch's
    `DistNetworkError` when the port is taken."""
    return _listen("", port)


def _listen(host: str, port: int) -> socket.socket:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("", port))
    except OSError as exc:
        server.close()
        name = "EADDRINUSE" if exc.errno == 98 else os.strerror(exc.errno or 0)
        raise DistNetworkError(
            "The server socket has failed to listen on any local network address. "
            f"port: {port}, useIpv6: false, code: -{exc.errno}, name: {name}, message: "
            f"{(exc.strerror or '').lower()}"
        ) from None
    server.listen(128)
    return server


def _start_server(server: socket.socket, size: int, timeout: timedelta) -> None:
    fd = server.fileno()
    subprocess.Popen(
        [
            sys.executable,
            "-I",
            str(_SERVER),
            str(fd),
            str(size),
            str(timeout.total_seconds()),
            str(os.getpid()),
        ],
        pass_fds=[fd],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    server.close()


def _file_address(path: str, rank: int, deadline: float) -> tuple[str, int, socket.socket | None]:
    """For ``file://``: rank 0 listens on a free port and writes ``host:port`` into the file;
    the others read it there."""
    if rank == 0:
        server = _listen("", 0)
        host = _own_address()
        Path(path).write_text(f"{host}:{server.getsockname()[1]}")
        return host, server.getsockname()[1], server
    while True:
        try:
            host, _, port = Path(path).read_text().partition(":")
            if port.isdigit():
                return host, int(port), None
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise DistStoreError(f"Timed out waiting for rank 0 to write its address into {path}")
        time.sleep(_RETRY_SECONDS)


def _own_address() -> str:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _hello(
    host: str, port: int, rank: int, size: int, deadline: float, seconds: int, reread=None
) -> tuple[str, int]:
    """Say hello to the server and wait until every rank has; returns the server's address.
    `reread()` gives the address again after a failed connection (a ``file://`` may still
    hold a past run's)."""
    while True:
        try:
            conn = socket.create_connection((host, port), timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise DistStoreError(
                    f"Timed out after {seconds} seconds waiting to connect to the rendezvous "
                    f"server of rank 0 at {host}:{port}"
                ) from None
            time.sleep(_RETRY_SECONDS)
            if reread is not None:
                host, port = reread()
    with conn:
        conn.settimeout(max(deadline - time.monotonic(), 0.001))
        hello = f"cmd=tocha_hello rank={rank} size={size} host={socket.gethostname()}\n"
        joined, answer = 1, ""
        try:
            conn.sendall(hello.encode())
            stream = conn.makefile("rb")
            while answer := stream.readline().decode().strip():
                if not answer.startswith("cmd=tocha_joined count="):
                    break
                joined = int(answer.rpartition("=")[2])
        except OSError:
            answer = ""
    if answer == "cmd=tocha_go":
        return host, port
    if answer.startswith("cmd=tocha_error msg="):
        raise ValueError(answer.removeprefix("cmd=tocha_error msg="))
    raise DistStoreError(
        f"Timed out after {seconds} seconds waiting for clients. {joined}/{size} clients joined."
    )


def _store_address(store, rank: int) -> tuple[str, int, socket.socket | None]:
    """With a store (``init_process_group(store=...)``): rank 0 listens on a free port and
    sets its address in the store; the others get it there."""
    key = "tocha/rendezvous_address"
    if rank == 0:
        server = _listen("", 0)
        host = getattr(store, "host", None) or _own_address()
        store.set(key, f"{host}:{server.getsockname()[1]}")
        return host, server.getsockname()[1], server
    host, _, port = store.get(key).decode().rpartition(":")
    return host, int(port), None


def join(meeting, file: str | None, timeout: timedelta, store=None) -> None:
    """Meet the other ranks of `meeting` (a `Rendezvous`) and set the environment that makes
    the coming ``MPI_Init`` join them.

    Raises `DistNetworkError` when rank 0 cannot listen on the port, `DistStoreError` when
    the ranks do not all arrive within `timeout`, ValueError for a rank or world size that
    does not fit rank 0's.
    """
    seconds = int(timeout.total_seconds()) + 1
    deadline = time.monotonic() + timeout.total_seconds()
    server = None
    if store is not None:
        host, port, server = _store_address(store, meeting.rank)
    elif file is not None:
        host, port, server = _file_address(file, meeting.rank, deadline)
    else:
        host, port = meeting.master_addr, meeting.master_port
        if meeting.rank == 0:
            server = _listen(host, port)
    if server is not None:
        _start_server(server, meeting.world_size, timeout)
    reread = None
    if file is not None and meeting.rank != 0:
        reread = lambda: _file_address(file, meeting.rank, deadline)[:2]  # noqa: E731
    host, port = _hello(host, port, meeting.rank, meeting.world_size, deadline, seconds, reread)
    os.environ["PMI_PORT"] = f"{host}:{port}"
    os.environ["PMI_ID"] = str(meeting.rank)


def forget() -> None:
    """Drop the variables `join` set, once MPI has started, so that this process's own
    children do not take them for theirs."""
    os.environ.pop("PMI_PORT", None)
    os.environ.pop("PMI_ID", None)
