"""DataLoader faults: exceptions in workers, workers that die, timeouts, iterators dropped
early, Ctrl-C. Every test is bounded in time and checks that no worker process and no
shared memory stays behind."""

from __future__ import annotations

import ctypes
import faulthandler
import gc
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import tocha
from tocha.utils.data import DataLoader, Dataset

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


class Faulty(Dataset):
    """Items are tensors; item `bad` raises, kills or crashes its worker, or sleeps (only
    the first time, with a file path `once`)."""

    def __init__(self, bad=-1, how="raise", n=40, once=None):
        self.bad, self.how, self.n, self.once = bad, how, n, once

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad and not (self.once and self.once.exists()):
            if self.once:
                self.once.touch()
            if self.how == "raise":
                raise ValueError(f"bad item {i}")
            if self.how == "keyerror":
                raise KeyError(i)
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.how == "segfault":
                # pytest's faulthandler, inherited by the worker, would print a "Fatal Python
                # error" dump of every thread; the worker still dies of SIGSEGV without it.
                faulthandler.disable()
                ctypes.string_at(0)
            if self.how == "exit":
                os._exit(3)
            if self.how == "sleep":
                time.sleep(10)
            if self.how == "nap":
                time.sleep(0.8)
        return tocha.full((1000,), float(i))


def children() -> set[int]:
    """The pids of this process's live child processes."""
    pid = os.getpid()
    found = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.update(int(p) for p in f.read().split())
        except FileNotFoundError:  # a thread that ended since the listing
            continue
    return found


def _link(path: str) -> str:
    """Where a /proc fd link points, or "" for an fd closed since the listing."""
    try:
        return os.readlink(path)
    except FileNotFoundError:
        return ""


def memfds() -> int:
    """Shared memory files this process holds open or mapped."""
    fds = sum("memfd:" in _link(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd"))
    with open("/proc/self/maps") as maps:
        return fds + sum("memfd:" in line for line in maps)


@pytest.fixture
def nothing_left_behind():
    """Fails the test when it leaves a child process or shared memory behind."""
    gc.collect()
    before_children, before_shm = children(), memfds()
    yield
    gc.collect()
    deadline = time.monotonic() + 10
    while children() - before_children and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not children() - before_children
    assert memfds() <= before_shm


def test_worker_exception_reraised_with_type_and_traceback(nothing_left_behind):
    loader = DataLoader(Faulty(bad=5), batch_size=2, num_workers=2)
    it = iter(loader)
    next(it), next(it)
    with pytest.raises(ValueError) as info:
        next(it)
    message = str(info.value)
    assert "Caught ValueError in DataLoader worker process 0." in message
    assert "Traceback (most recent call last)" in message and "bad item 5" in message
    assert "__getitem__" in message
    assert next(it)[0][0].item() == 6  # the iterator goes on after a failed batch
    del it


def test_worker_keyerror_and_single_process():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process"):
        list(DataLoader(Faulty(bad=1, how="keyerror"), num_workers=1))
    with pytest.raises(ValueError, match="^bad item 1$"):
        list(DataLoader(Faulty(bad=1)))


def test_worker_init_fn_error_reraised(nothing_left_behind):
    def init(worker_id):
        raise RuntimeError(f"init failed in {worker_id}")

    with pytest.raises(RuntimeError, match="init failed in 0"):
        list(DataLoader(Faulty(), num_workers=1, worker_init_fn=init))


@pytest.mark.parametrize(
    "how,detail", [("kill", "SIGKILL"), ("segfault", "SIGSEGV"), ("exit", "exit code 3")]
)
def test_dead_worker_raises_within_seconds(nothing_left_behind, how, detail):
    loader = DataLoader(Faulty(bad=9, how=how), batch_size=2, num_workers=2)
    start = time.monotonic()
    with pytest.raises(
        RuntimeError,
        match=r"DataLoader worker \(pid \d+\) exited "
        r"unexpectedly",
    ) as info:
        for _ in loader:
            pass
    assert time.monotonic() - start < 15
    assert detail in str(info.value)


def test_timeout_raises(nothing_left_behind):
    loader = DataLoader(Faulty(bad=0, how="sleep"), num_workers=1, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.5 seconds"):
        next(iter(loader))
    assert time.monotonic() - start < 5


def test_iterator_goes_on_after_a_timeout(nothing_left_behind):
    loader = DataLoader(Faulty(bad=0, how="nap", n=4), num_workers=1, timeout=0.3)
    it = iter(loader)
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        next(it)
    time.sleep(1)
    assert [batch[0, 0].item() for batch in it] == [0.0, 1.0, 2.0, 3.0]


def test_unpicklable_batch_raises_instead_of_hanging(nothing_left_behind):
    def collate(samples):
        return lambda: samples  # a local function: it cannot be pickled

    start = time.monotonic()
    with pytest.raises(Exception, match="Caught .* in DataLoader worker process 0") as info:
        next(iter(DataLoader(Faulty(), num_workers=1, collate_fn=collate)))
    assert "pickle" in str(info.value) and time.monotonic() - start < 15


def test_persistent_workers_start_again_after_one_died(nothing_left_behind, tmp_path):
    loader = DataLoader(
        Faulty(bad=3, how="kill", n=8, once=tmp_path / "killed"),
        batch_size=2,
        num_workers=2,
        persistent_workers=True,
    )
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(loader)
    assert len(list(loader)) == 4
    del loader


@pytest.mark.parametrize("how", ["break", "del", "exception", "gc"])
def test_iterator_dropped_early_shuts_workers_down(nothing_left_behind, how):
    loader = DataLoader(Faulty(n=200), batch_size=4, num_workers=2)
    if how == "break":
        for _ in loader:
            break
    elif how == "del":
        it = iter(loader)
        next(it)
        del it
    elif how == "exception":
        with pytest.raises(ZeroDivisionError):
            for _ in loader:
                raise ZeroDivisionError
    else:
        it = iter(loader)
        next(it)
        cycle = [it]
        cycle.append(cycle)  # only the garbage collector can free it
        del it, cycle


def test_finished_epoch_ends_workers(nothing_left_behind):
    assert len(list(DataLoader(Faulty(n=10), batch_size=4, num_workers=2))) == 3


CTRL_C_SCRIPT = textwrap.dedent("""
    import os, sys, time
    from tocha.utils.data import DataLoader, Dataset

    class Slow(Dataset):  # item i is the pid of the worker that read it
        def __len__(self):
            return 1000
        def __getitem__(self, i):
            time.sleep(0.05)
            return os.getpid()

    it = iter(DataLoader(Slow(), num_workers=2))
    print(next(it).item(), next(it).item(), flush=True)  # batches 0 and 1: workers 0 and 1
    for batch in it:
        pass
""")


def test_ctrl_c_in_main_process_ends_workers():
    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "KeyboardInterrupt" in err
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{p}") for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(os.path.exists(f"/proc/{p}") for p in pids)
