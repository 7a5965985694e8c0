"""The meeting point of processes that were not started together by ``mpiexec``.

``torch.multiprocessing.spawn`` and ``multiprocessing.Process`` start workers that each
call ``init_process_group("gloo", init_method="tcp://host:port", rank=r, world_size=n)``.
Rank 0 runs this server (as a script, with the standard library only) on that port; it is
then two things for the workers:

- their rendezvous: each sends ``cmd=tocha_hello rank=R size=N host=H`` and is answered
  ``cmd=tocha_go`` once all N ranks have said hello, after ``cmd=tocha_joined count=K``
  lines as they arrive (``cmd=tocha_error msg=...`` when its rank or world size does not
  fit);
- the process manager of their MPI world: MPICH's simple PMI-1 client (``PMI_PORT`` and
  ``PMI_ID`` in the environment) connects to it during ``MPI_Init`` and learns its rank, the
  world size and which ranks share a machine, exchanges the addresses of the ranks through
  its key-value space, and waits in its barriers.

It stops listening once every rank's MPI has connected (freeing the port), and exits once
every rank's MPI has finalized or gone, when rank 0's process ends, or when the ranks have
not all said hello within the timeout.

Usage: ``python _pmi_server.py LISTEN_FD WORLD_SIZE TIMEOUT_SECONDS PARENT_PID``
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
import uuid


class World:
    """What the ranks have told the server, behind one lock."""

    def __init__(self, size: int) -> None:
        self.size = size
        # MPICH names its shared-memory segments after the key-value space: one per world
        self.kvs_name = f"tocha_{os.getpid()}_{uuid.uuid4().hex[:12]}"
        self.cond = threading.Condition()
        self.hosts: dict[int, str] = {}
        self.kvs: dict[str, str] = {}
        self.barrier_round = 0
        self.barrier_waiting = 0
        self.pmi_joined = 0
        self.pmi_done = 0

    def process_mapping(self) -> str:
        """PMI's ``(vector,(node,nodes,ranks per node),...)``: consecutive ranks on the same
        host form one block."""
        nodes: dict[str, int] = {}
        blocks: list[list[int]] = []
        for rank in range(self.size):
            node = nodes.setdefault(self.hosts.get(rank, ""), len(nodes))
            if blocks and blocks[-1][0] == node:
                blocks[-1][2] += 1
            else:
                blocks.append([node, 1, 1])
        return "(vector," + ",".join(f"({n},{k},{p})" for n, k, p in blocks) + ")"

    def release_barrier(self) -> None:
        """End the barrier once every rank still connected waits in it (under the lock)."""
        if self.barrier_waiting and self.barrier_waiting >= self.size - self.pmi_done:
            self.barrier_waiting = 0
            self.barrier_round += 1
            self.cond.notify_all()


def _fields(line: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in line.split(" ") if "=" in item)


def _hello(world: World, fields: dict[str, str], reply) -> None:
    rank, size = int(fields["rank"]), int(fields["size"])
    with world.cond:
        if size != world.size:
            reply(
                f"cmd=tocha_error msg=rank {rank} expects a world of {size}, rank 0 of {world.size}"
            )
            return
        if rank in world.hosts:
            reply(f"cmd=tocha_error msg=two processes joined as rank {rank}")
            return
        world.hosts[rank] = fields.get("host", "")
        world.cond.notify_all()
        told = 0
        while len(world.hosts) < world.size:
            if len(world.hosts) != told:
                told = len(world.hosts)
                reply(f"cmd=tocha_joined count={told}")
            world.cond.wait()
    reply("cmd=tocha_go")


def _barrier(world: World) -> None:
    with world.cond:
        round_ = world.barrier_round
        world.barrier_waiting += 1
        world.release_barrier()
        world.cond.wait_for(lambda: world.barrier_round != round_)


def _pmi(world: World, fields: dict[str, str], reply) -> bool:
    """Answer one PMI-1 command; False once the client has finalized."""
    cmd = fields.get("cmd")
    if cmd == "init":
        reply("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0")
    elif cmd == "get_maxes":
        reply("cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=4096")
    elif cmd == "get_appnum":
        reply("cmd=appnum rc=0 appnum=0")
    elif cmd == "get_my_kvsname":
        reply(f"cmd=my_kvsname rc=0 kvsname={world.kvs_name}")
    elif cmd == "get_universe_size":
        reply(f"cmd=universe_size rc=0 size={world.size}")
    elif cmd == "put":
        with world.cond:
            world.kvs[fields["key"]] = fields.get("value", "")
        reply("cmd=put_result rc=0")
    elif cmd == "get":
        key = fields.get("key", "")
        with world.cond:
            value = world.process_mapping() if key == "PMI_process_mapping" else world.kvs.get(key)
        if value is None:
            reply("cmd=get_result rc=-1 msg=key_not_found")
        else:
            reply(f"cmd=get_result rc=0 value={value}")
    elif cmd == "barrier_in":
        _barrier(world)
        reply("cmd=barrier_out rc=0")
    elif cmd == "finalize":
        reply("cmd=finalize_ack rc=0")
        return False
    elif cmd == "abort":
        return False
    else:
        reply(f"cmd={cmd} rc=-1 msg=unsupported")
    return True


def _serve(world: World, conn: socket.socket) -> None:
    stream = conn.makefile("rwb", buffering=0)

    def reply(line: str) -> None:
        stream.write((line + "\n").encode())

    pmi = False
    try:
        first = stream.readline().decode().strip()
        fields = _fields(first)
        if fields.get("cmd") == "tocha_hello":
            _hello(world, fields, reply)
            return
        if fields.get("cmd") != "initack":
            return
        rank = int(fields["pmiid"])
        pmi = True
        with world.cond:
            world.pmi_joined += 1
        for line in ("cmd=initack", f"cmd=set size={world.size}", f"cmd=set rank={rank}"):
            reply(line)
        reply("cmd=set debug=0")
        while True:
            line = stream.readline()
            if not line or not _pmi(world, _fields(line.decode().strip()), reply):
                break
    except (OSError, ValueError, KeyError):
        pass
    finally:
        conn.close()
    if not pmi:
        return
    with world.cond:
        world.pmi_done += 1
        world.release_barrier()
        world.cond.notify_all()


def main(argv: list[str]) -> None:
    listen_fd, size, timeout, parent = (int(float(a)) for a in argv)
    server = socket.socket(fileno=listen_fd)
    server.settimeout(0.2)
    world = World(size)
    deadline = time.monotonic() + timeout
    while True:
        with world.cond:
            finished = world.pmi_done >= size
            waiting = len(world.hosts) < size
            everyone = world.pmi_joined >= size
        if finished or os.getppid() != parent or (waiting and time.monotonic() > deadline):
            return
        if everyone:  # free the port at once: the next rendezvous may use it
            server.close()
            time.sleep(0.2)
            continue
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        conn.settimeout(None)
        threading.Thread(target=_serve, args=(world, conn), daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1:])
