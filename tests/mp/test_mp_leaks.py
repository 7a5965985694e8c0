"""tocha.multiprocessing leaks nothing: /dev/shm entries and the parent's file descriptors
come back to where they were whether children exit, raise or are killed holding shared
tensors; thousands of small tensors do not exhaust file descriptors."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap

import mp_workers
import pytest

import tocha as torch
import tocha.multiprocessing as mp

TIMEOUT = 60


def counts() -> tuple[int, int]:
    gc.collect()
    shm = len([f for f in os.listdir("/dev/shm") if f.startswith("tocha_")])
    return shm, len(os.listdir("/proc/self/fd"))


def scenario(method: str, outcome: str) -> None:
    """Send tensors to a child, get tensors it made, then let it end in `outcome`."""
    ctx = mp.get_context(method)
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=mp_workers.hold, args=(q_in, q_out, outcome))
    p.start()
    try:
        sent = [torch.randn(100), torch.randn(500_000)]
        q_in.put(sent)
        made = q_out.get(timeout=TIMEOUT)
        assert made[0].tolist() == [2.0] * 10 and made[1].is_shared()
        q_in.put("go on")
        if outcome == "kill":
            assert q_out.get(timeout=TIMEOUT) == "holding"
            os.kill(p.pid, signal.SIGKILL)
        p.join(TIMEOUT)
        assert p.exitcode == {"exit": 0, "raise": 1, "kill": -signal.SIGKILL}[outcome]
        assert made[1][-1].item() == 3.0  # still readable after the child is gone
    finally:
        if p.is_alive():
            p.kill()
            p.join()
        p.close()
        for q in (q_in, q_out):
            q.close()
            q.join_thread()


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_no_leak_when_children_exit_raise_or_are_killed(method, strategy):
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(strategy)
    try:
        scenario(method, "exit")  # warm up: resource sharer, helper processes, arenas
        before = counts()
        for outcome in ("exit", "raise", "kill"):
            scenario(method, outcome)
            assert counts() == before, outcome
    finally:
        mp.set_sharing_strategy(old)


def test_ten_thousand_small_tensors_under_a_low_fd_limit():
    # The receiver keeps all 10,000; with a soft limit of 1024 descriptors this passes only
    # because small storages share arenas and a received segment is mapped once per process.
    code = textwrap.dedent(
        f"""
        import resource, sys
        sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
        import mp_workers
        import tocha as torch
        import tocha.multiprocessing as mp

        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, resource.getrlimit(
            resource.RLIMIT_NOFILE)[1]))
        ctx = mp.get_context("fork")
        q_in, q_out = ctx.Queue(), ctx.Queue()
        p = ctx.Process(target=mp_workers.keep_all, args=(q_in, q_out, 10_000))
        p.start()
        for i in range(10_000):
            q_in.put(torch.full((25,), float(i)))
        total = q_out.get(timeout=120)
        p.join(60)
        assert total == sum(range(10_000)), total
        assert p.exitcode == 0
        print("ok")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]
