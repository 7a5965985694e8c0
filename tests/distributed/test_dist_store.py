"""Stores: HashStore and PrefixStore in this process, a TCPStore served by a thread of this
process, and init_process_group(store=...) of two spawned workers (dist_worker_spawn.py)."""

from __future__ import annotations

import socket
import threading
from datetime import timedelta

import pytest

pytest.importorskip("mpi4py", reason="tocha.distributed runs on MPI: pip install mpi4py mpich")

import tocha.distributed as dist  # noqa: E402


@pytest.fixture(params=["hash", "tcp"])
def store(request):
    if request.param == "hash":
        return dist.HashStore()
    return dist.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=10))


def test_store_operations_as_pytorchs(store):
    store.set("a", "x")
    assert store.get("a") == b"x"
    assert (store.add("n", 2), store.add("n", 3)) == (2, 5)
    assert store.num_keys() >= 2 and store.check(["a"]) and not store.check(["b"])
    assert store.delete_key("a") and not store.check(["a"])
    assert store.compare_set("k", "", "v") == b"v"
    assert store.compare_set("k", "v", "w") == b"w"
    assert store.compare_set("k", "zz", "q") == b"w"
    store.append("ap", "x")
    store.append("ap", b"y")
    assert store.multi_get(["k", "ap"]) == [b"w", b"xy"]
    prefixed = dist.PrefixStore("pre", store)
    prefixed.set("z", b"1")
    assert store.get("pre/z") == b"1" and prefixed.get("z") == b"1"
    store.set_timeout(timedelta(seconds=0.2))
    assert store.timeout == timedelta(seconds=0.2)
    with pytest.raises(dist.DistStoreError):
        store.get("never")
    with pytest.raises(dist.DistStoreError):
        store.wait(["never"], timedelta(seconds=0.1))


def test_master_waits_for_its_workers_and_get_waits_for_a_set():
    port = free_port()
    client = {}

    def connect() -> None:  # retries until the master listens
        client["store"] = dist.TCPStore("127.0.0.1", port, 2, timeout=timedelta(seconds=10))

    thread = threading.Thread(target=connect)
    thread.start()
    master = dist.TCPStore("127.0.0.1", port, 2, True, timeout=timedelta(seconds=10))
    thread.join(10)
    threading.Timer(0.2, lambda: client["store"].set("late", "yes")).start()
    assert master.get("late") == b"yes"
    with pytest.raises(dist.DistStoreError, match="1/2 clients joined"):
        dist.TCPStore("127.0.0.1", 0, 2, True, timeout=timedelta(seconds=0.3))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
