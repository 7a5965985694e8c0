"""Run by test_dist_spawn.py with a mode, as PyTorch programs start workers without a
launcher: ``spawn`` (``multiprocessing.spawn`` and ``tcp://`` with rank and world size),
``process`` (``multiprocessing.Process`` and ``env://``), ``file`` (``file://``), ``store``
(a ``TCPStore``), ``alone``
(rank 0 of 2 whose peer never comes), ``port`` (the port is taken), ``raises`` (a worker
raises while the other is in a collective). Prints ``PASS``/``FAIL``
lines."""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import time
from datetime import timedelta

import tocha as torch
import tocha.distributed as dist
import tocha.multiprocessing as mp


def say(line: str) -> None:
    os.write(1, f"{line}\n".encode())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def collectives(rank: int) -> None:
    """A few collectives; one PASS or FAIL line per check."""
    t = torch.tensor([rank + 1.0, 2.0])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    got = {"max": t.tolist()}
    dist.broadcast(t := torch.full((2,), float(rank)), src=1)
    got["broadcast"] = t.tolist()
    objects = [None, None]
    dist.all_gather_object(objects, {"rank": rank})
    got["objects"] = objects
    sub = dist.new_group([1])
    x = torch.ones(1)
    dist.all_reduce(x, group=sub)
    got["subgroup"] = x.tolist()
    got["world"] = (dist.get_rank(), dist.get_world_size(), dist.get_backend())
    expected = {
        "max": [2.0, 2.0],
        "broadcast": [1.0, 1.0],
        "objects": [{"rank": 0}, {"rank": 1}],
        "subgroup": [1.0],
        "world": (rank, 2, "gloo"),
    }
    for name, value in expected.items():
        say(f"{'PASS' if got[name] == value else 'FAIL'} {name} rank {rank}: {got[name]}")


def worker(rank: int, world_size: int, init_method: str, late: float = 0.0) -> None:
    if rank == 0:
        time.sleep(late)  # the others reach the rendezvous first
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size)
    collectives(rank)
    dist.barrier()
    dist.destroy_process_group()


def store_worker(rank: int, port: int) -> None:
    store = dist.TCPStore("127.0.0.1", port, 2, rank == 0, timeout=timedelta(seconds=30))
    dist.init_process_group("gloo", store=store, rank=rank, world_size=2)
    collectives(rank)
    dist.destroy_process_group()


def process_worker(rank: int) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=2)
    collectives(rank)
    dist.destroy_process_group()


def raising_worker(rank: int, init_method: str) -> None:
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=2)
    if rank == 1:
        raise ValueError("rank 1 fails on purpose")
    dist.all_reduce(torch.ones(1))


def expect(error: type, message: str, fn) -> None:
    try:
        fn()
    except error as exc:
        ok = message in str(exc)
        say(f"{'PASS' if ok else 'FAIL'} {mode} raised {error.__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001
        say(f"FAIL {type(exc).__name__}: {exc}")
    else:
        say("FAIL no error")


mode = sys.argv[1] if __name__ == "__main__" else ""

if __name__ == "__main__":
    if mode == "spawn":
        address = f"tcp://127.0.0.1:{free_port()}"
        for _ in range(2):  # the port is free again for the next run
            mp.spawn(worker, args=(2, address), nprocs=2)
    elif mode == "store":
        mp.spawn(store_worker, args=(free_port(),), nprocs=2)
    elif mode == "file":
        with tempfile.TemporaryDirectory() as folder:
            with open(f"{folder}/rendezvous", "w") as stale:  # a past run's address
                stale.write("127.0.0.1:1")
            mp.spawn(worker, args=(2, f"file://{folder}/rendezvous", 1.0), nprocs=2)
    elif mode == "process":
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
        processes = [mp.Process(target=process_worker, args=(r,)) for r in range(2)]
        for p in processes:
            p.start()
        for p in processes:
            p.join(60)
        say(f"{'PASS' if [p.exitcode for p in processes] == [0, 0] else 'FAIL'} exit codes")
    elif mode == "raises":
        expect(
            mp.ProcessRaisedException,
            "rank 1 fails on purpose",
            lambda: mp.spawn(raising_worker, args=(f"tcp://127.0.0.1:{free_port()}",), nprocs=2),
        )
    elif mode == "alone":
        expect(
            dist.DistStoreError,
            "waiting for clients. 1/2 clients joined.",
            lambda: dist.init_process_group(
                "gloo",
                init_method=f"tcp://127.0.0.1:{free_port()}",
                rank=0,
                world_size=2,
                timeout=timedelta(seconds=1),
            ),
        )
    elif mode == "port":
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            address = f"tcp://127.0.0.1:{taken.getsockname()[1]}"
            expect(
                dist.DistNetworkError,
                "EADDRINUSE",
                lambda: dist.init_process_group("gloo", init_method=address, rank=0, world_size=2),
            )
