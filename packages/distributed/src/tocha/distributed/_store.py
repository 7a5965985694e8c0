"""Key-value stores, as ``torch.distributed``'s: `HashStore` (in this process), `TCPStore`
(served by the master process, reached over TCP), `PrefixStore` (a namespace in another).

Values are bytes (a str is encoded as UTF-8); `get` and `wait` block until the keys exist,
then raise `DistStoreError` after the store's timeout, with PyTorch's messages. The TCP protocol
carries JSON, never pickles: a store's port accepts no code.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import threading
import time
from datetime import timedelta

from ._types import DistStoreError

__all__ = ["HashStore", "PrefixStore", "Store", "TCPStore"]

DEFAULT_TIMEOUT = timedelta(seconds=300)
_WORKERS_KEY = "tocha/store/workers"


def _bytes(value) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


class _Table:
    """The keys and values, and the operations on them, behind one condition."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.cond = threading.Condition()

    def _wait(self, keys: list[str], seconds: float) -> None:
        if not self.cond.wait_for(lambda: all(k in self.data for k in keys), timeout=seconds):
            raise DistStoreError("Wait timeout")

    def run(self, op: str, args: list, seconds: float):
        with self.cond:
            if op == "set":
                self.data[args[0]] = args[1]
            elif op == "get":
                self._wait([args[0]], seconds)
                return self.data[args[0]]
            elif op == "add":
                value = int(self.data.get(args[0], b"0")) + int(args[1])
                self.data[args[0]] = str(value).encode()
                result = value
            elif op == "append":
                self.data[args[0]] = self.data.get(args[0], b"") + args[1]
            elif op == "compare_set":
                key, expected, desired = args
                current = self.data.get(key)
                if (current is None and expected == b"") or current == expected:
                    self.data[key] = desired
                result = self.data.get(key, expected)
                self.cond.notify_all()
                return result
            elif op == "check":
                return all(k in self.data for k in args)
            elif op == "wait":
                self._wait(list(args), seconds)
                return None
            elif op == "delete_key":
                return self.data.pop(args[0], None) is not None
            elif op == "num_keys":
                return len(self.data)
            elif op == "list_keys":
                return list(self.data)
            else:
                raise ValueError(f"unknown store operation {op!r}")
            self.cond.notify_all()
            return result if op == "add" else None


class Store:
    """The operations every store has; a store runs them through ``_run(op, args)``."""

    def __init__(self, timeout: timedelta = DEFAULT_TIMEOUT) -> None:
        self._timeout = timeout

    @property
    def timeout(self) -> timedelta:
        """How long `get` and `wait` wait for missing keys."""
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        """Set how long `get` and `wait` wait for missing keys."""
        self._timeout = timeout

    def _run(self, op: str, args: list, seconds: float | None = None):
        raise NotImplementedError

    def set(self, key: str, value) -> None:
        """Store `value` (bytes or str) under `key`."""
        self._run("set", [key, _bytes(value)])

    def get(self, key: str) -> bytes:
        """The value of `key`, waiting for it to be set (at most the timeout)."""
        return self._run("get", [key])

    def add(self, key: str, amount: int) -> int:
        """Add `amount` to the integer under `key` (0 when missing); returns the sum."""
        return self._run("add", [key, int(amount)])

    def append(self, key: str, value) -> None:
        """Append `value` to the bytes under `key`."""
        self._run("append", [key, _bytes(value)])

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set `key` to `desired_value` if it holds `expected_value` (or is missing and
        `expected_value` is empty); returns the value it then holds."""
        return self._run("compare_set", [key, _bytes(expected_value), _bytes(desired_value)])

    def check(self, keys: list[str]) -> bool:
        """Whether every key of `keys` is set (never waits)."""
        return self._run("check", list(keys))

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        """Wait until every key of `keys` is set (at most `timeout`, else the store's)."""
        seconds = None if timeout is None else timeout.total_seconds()
        self._run("wait", list(keys), seconds)

    def delete_key(self, key: str) -> bool:
        """Remove `key`; whether it was there."""
        return self._run("delete_key", [key])

    def num_keys(self) -> int:
        """How many keys are set."""
        return self._run("num_keys", [])

    def multi_get(self, keys: list[str]) -> list[bytes]:
        """`get` of each key."""
        return [self.get(k) for k in keys]

    def multi_set(self, keys: list[str], values: list) -> None:
        """`set` of each key to its value."""
        for key, value in zip(keys, values):
            self.set(key, value)

    def has_extended_api(self) -> bool:
        """Whether the store has append, multi_get, multi_set (it has)."""
        return True


class HashStore(Store):
    """A store in this process's memory (threads share it)."""

    def __init__(self) -> None:
        super().__init__()
        self._table = _Table()

    def _run(self, op: str, args: list, seconds: float | None = None):
        wait = self._timeout.total_seconds() if seconds is None else seconds
        return self._table.run(op, args, wait)


class PrefixStore(Store):
    """The keys of `store` that start with ``prefix + "/"``, seen without the prefix."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__(store.timeout)
        self.underlying_store = store
        self._prefix = f"{prefix}/"

    def _run(self, op: str, args: list, seconds: float | None = None):
        if op in ("check", "wait"):
            args = [self._prefix + k for k in args]
        elif args and op not in ("num_keys", "list_keys"):
            args = [self._prefix + args[0], *args[1:]]
        return self.underlying_store._run(op, args, seconds)


# -- TCP --------------------------------------------------------------------------------------
def _encode(value):
    if isinstance(value, bytes):
        return {"b": base64.b64encode(value).decode()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(value):
    if isinstance(value, dict):
        return base64.b64decode(value["b"])
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _send(sock: socket.socket, message) -> None:
    data = json.dumps(_encode(message)).encode()
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _receive(sock: socket.socket):
    header = _exactly(sock, 8)
    return _decode(json.loads(_exactly(sock, struct.unpack("!Q", header)[0])))


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise ConnectionError("the store's connection closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _serve_client(table: _Table, conn: socket.socket) -> None:
    with conn:
        while True:
            try:
                op, args, seconds = _receive(conn)
            except (OSError, ConnectionError, ValueError):
                return
            try:
                reply = ["ok", table.run(op, args, seconds)]
            except DistStoreError:
                keys = args[:1] if op == "get" else args
                waited = ", ".join("/" + k for k in keys)
                reply = ["timeout", f"wait timeout after {int(seconds * 1000)}ms, keys: {waited}"]
            except Exception as exc:  # noqa: BLE001 - told to the client
                reply = ["error", f"{type(exc).__name__}: {exc}"]
            try:
                _send(conn, reply)
            except OSError:
                return


def _serve(server: socket.socket, table: _Table) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        threading.Thread(target=_serve_client, args=(table, conn), daemon=True).start()


class TCPStore(Store):
    """A store served by the master process (``is_master=True``, listening on `port`; 0
    picks a free one, see ``.port``) and reached by the others over TCP.

    Args:
        host_name: the master's address.
        port: the master's port.
        world_size: the number of processes that use the store (with
            `wait_for_workers`, the master waits for all of them to connect).
        is_master: whether this process serves the store.
        timeout: how long to connect, and how long `get`/`wait` wait.
        wait_for_workers: the master waits for `world_size` clients.
    """

    def __init__(
        self,
        host_name: str,
        port: int,
        world_size: int | None = None,
        is_master: bool = False,
        timeout: timedelta = DEFAULT_TIMEOUT,
        wait_for_workers: bool = True,
        multi_tenant: bool = False,
        master_listen_fd: int | None = None,
        use_libuv: bool = True,
    ) -> None:
        super().__init__(timeout)
        self.host = host_name
        self.libUvBackend = use_libuv
        self._lock = threading.Lock()
        if is_master:
            from ._join import listen

            server = listen(port)
            port = server.getsockname()[1]
            threading.Thread(target=_serve, args=(server, _Table()), daemon=True).start()
        self.port = port
        self._sock = self._connect(timeout)
        count = self.add(_WORKERS_KEY, 1)
        if is_master and wait_for_workers and world_size:
            deadline = time.monotonic() + timeout.total_seconds()
            while count < world_size:
                if time.monotonic() > deadline:
                    raise DistStoreError(
                        f"Timed out after {int(timeout.total_seconds()) + 1} seconds waiting "
                        f"for clients. {count}/{world_size} clients joined."
                    )
                time.sleep(0.01)
                count = self.add(_WORKERS_KEY, 0)

    def _connect(self, timeout: timedelta) -> socket.socket:
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            try:
                return socket.create_connection((self.host, self.port), timeout=None)
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise DistStoreError(
                        f"Timed out after {int(timeout.total_seconds())} seconds connecting to "
                        f"the store at {self.host}:{self.port}: {exc}"
                    ) from None
                time.sleep(0.05)

    def _run(self, op: str, args: list, seconds: float | None = None):
        wait = self._timeout.total_seconds() if seconds is None else seconds
        with self._lock:
            _send(self._sock, [op, args, wait])
            status, value = _receive(self._sock)
        if status == "timeout":
            raise DistStoreError(value)
        if status == "error":
            raise RuntimeError(value)
        return value
