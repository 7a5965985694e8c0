"""With the file_system strategy, a producer killed by SIGKILL leaks no /dev/shm file: its
watcher unlinks its segments once no living process holds them, with no other tocha process
around to sweep."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="needs /dev/shm")

PRODUCER = textwrap.dedent(
    """
    import os, sys, time
    import tocha as torch
    import tocha.multiprocessing as mp

    mp.set_sharing_strategy("file_system")
    kept = [torch.randn(100).share_memory_(), torch.randn(300_000).share_memory_()]
    mine = sorted(f for f in os.listdir("/dev/shm") if f.startswith(f"tocha_{os.getpid()}_"))
    if sys.argv[1] == "with-holder":
        ctx = mp.get_context("fork")
        q_in, q_out = ctx.Queue(), ctx.Queue()
        child = ctx.Process(target=HOLD, args=(q_in, q_out), daemon=False)
        child.start()
        q_in.put(kept)
        assert q_out.get(timeout=60) == "holding"
        print(child.pid, flush=True)
    print(" ".join(mine), flush=True)
    time.sleep(600)
    """
)
HOLDER = textwrap.dedent(
    """
    def HOLD(q_in, q_out):
        import time
        held = q_in.get(timeout=60)
        q_out.put("holding")
        time.sleep(600)
    """
)


def start(mode: str) -> subprocess.Popen:
    code = PRODUCER.replace("import os, sys, time", "import os, sys, time\n" + HOLDER, 1)
    return subprocess.Popen(
        [sys.executable, "-c", code, mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def shm_files(names: list) -> list:
    return [n for n in names if os.path.exists(os.path.join("/dev/shm", n))]


def wait_until_gone(names: list, seconds: float = 20.0) -> list:
    deadline = time.monotonic() + seconds
    while shm_files(names) and time.monotonic() < deadline:
        time.sleep(0.05)
    return shm_files(names)


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_a_killed_producer_leaves_no_shared_memory_file():
    proc = start("alone")
    try:
        names = proc.stdout.readline().split()
        assert names, proc.stderr.read()
        assert shm_files(names) == names
        kill(proc.pid)
        proc.wait(30)
        assert wait_until_gone(names) == []
    finally:
        kill(proc.pid)
        proc.communicate()


def test_segments_of_a_killed_producer_stay_while_a_receiver_holds_them():
    proc = start("with-holder")
    holder = None
    try:
        holder = int(proc.stdout.readline())
        names = proc.stdout.readline().split()
        assert names, proc.stderr.read()
        kill(proc.pid)
        proc.wait(30)
        time.sleep(0.5)
        assert shm_files(names) == names  # the receiver still maps them
        kill(holder)
        assert wait_until_gone(names) == []
    finally:
        kill(proc.pid)
        if holder is not None:
            kill(holder)
        proc.communicate()
