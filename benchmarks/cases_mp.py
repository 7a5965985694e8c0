"""Multiprocessing benchmarks (issue tocha-mp): a shared tensor's round trip between processes.

The timed call puts a tensor already in shared memory on a Queue to another process, which
puts it back; only a handle travels, so the time does not grow with the size. Target: the
256 MB round trip takes at most 1.5x the 1 MB one (shown beside torch.multiprocessing's).
"""

from __future__ import annotations

import atexit

import numpy as np
from harness import Case

# tocha's time per size label, filled as the cases are judged (the 1 MB case runs first).
_TIMES: dict = {}
MB = 1024 * 1024


def _echo(q_in, q_out):
    """The other process: send back whatever arrives until None."""
    while True:
        obj = q_in.get()
        if obj is None:
            return
        q_out.put(obj)


class _Peer:
    """An echo process (fork start method) and its two queues, stopped at exit."""

    def __init__(self, mp):
        ctx = mp.get_context("fork")
        self.q_in, self.q_out = ctx.Queue(), ctx.Queue()
        self.process = ctx.Process(target=_echo, args=(self.q_in, self.q_out), daemon=True)
        self.process.start()
        atexit.register(self.stop)

    def stop(self) -> None:
        if self.process.is_alive():
            self.q_in.put(None)
            self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


class RoundTrip:
    """The timed call: ``q_in.put(t); q_out.get()`` with an echo process (one per library,
    started on the first, untimed call, which also moves `t` to shared memory)."""

    def __init__(self):
        self.peers = {}

    def __call__(self, lib, t):
        peer = self.peers.get(lib.__name__)
        if peer is None:
            peer = self.peers[lib.__name__] = _Peer(lib.multiprocessing)
        t.share_memory_()
        peer.q_in.put(t)
        peer.q_out.get(timeout=60)


def floats(megabytes: int):
    return lambda: (np.zeros(megabytes * MB // 4, np.float32),)


def size_independent(reference: str, limit: float):
    """Goal: tocha's time at most `limit` times its time on the `reference` case."""

    def judge(result):
        tocha = result.times["tocha"]
        _TIMES[result.case.size] = tocha
        base = _TIMES.get(reference)
        if tocha is None or base is None or result.case.size == reference:
            return None
        ratio = tocha / base
        return ratio <= limit, f"{result.case.size} / {reference} = {ratio:.2f} <= {limit:g}"

    return judge


_ROUND_TRIP = RoundTrip()
CASES = [
    Case(
        "Queue round trip of a shared tensor",
        f"{mb} MB float32",
        floats(mb),
        _ROUND_TRIP,
        goal=size_independent("1 MB float32", 1.5),
    )
    for mb in (1, 256)
]
