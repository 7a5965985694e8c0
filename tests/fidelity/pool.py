"""Run cases in worker processes with a time bound on each: a call that hangs (a LAPACK loop,
an unbounded allocation) is reported as ``("hang",)`` and its worker replaced; a worker that
dies is reported as ``("crash", exit code)``. Nothing a case does can block the run."""

from __future__ import annotations

import importlib
import multiprocessing
import os
import resource
import time
from multiprocessing.connection import wait

# Each worker's address space, so that a huge allocation fails instead of swapping the machine.
MEMORY_LIMIT = 8 * 2**30


def _worker(job_path: str, connection) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    module, name = job_path.split(":")
    job = getattr(importlib.import_module(module), name)
    warm = getattr(job, "warm", None)
    if warm is not None:  # imports and first-use costs do not count against a case's time
        warm()
    connection.send("ready")
    while True:
        item = connection.recv()
        if item is None:
            return
        index, case = item
        connection.send((index, job(case)))


class _Slot:
    def __init__(self, context, job_path: str):
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker, args=(job_path, child), daemon=True)
        self.process.start()
        child.close()
        self.connection.recv()
        self.index: int | None = None
        self.started = 0.0

    def send(self, index: int, case) -> None:
        self.index = index
        self.started = time.monotonic()
        self.connection.send((index, case))

    def stop(self) -> None:
        self.process.kill()
        self.process.join()
        self.connection.close()


def run_bounded(
    job_path: str, cases: list, workers: int = 0, timeout: float = 10.0, progress=None
) -> list:
    """``job(case)`` for each case, in order, in `workers` processes (``module:function``
    names the job, run in the worker, after ``job.warm()`` when it has one); a case running
    over `timeout` seconds gives ``("hang",)``."""
    context = multiprocessing.get_context("spawn")
    workers = workers or max(1, (os.cpu_count() or 2))
    results: list = [None] * len(cases)
    pending = list(range(len(cases)))[::-1]
    slots = [_Slot(context, job_path) for _ in range(min(workers, len(cases)) or 1)]
    done = 0
    try:
        for slot in slots:
            if pending:
                i = pending.pop()
                slot.send(i, cases[i])
        while any(slot.index is not None for slot in slots):
            busy = [slot for slot in slots if slot.index is not None]
            ready = wait([slot.connection for slot in busy], timeout=0.5)
            now = time.monotonic()
            for n, slot in enumerate(slots):
                if slot.index is None:
                    continue
                finished = slot.connection in ready
                if finished:
                    try:
                        index, result = slot.connection.recv()
                    except (EOFError, OSError):
                        index, result = slot.index, ("crash", slot.process.exitcode)
                        finished = False
                    results[index] = result
                elif now - slot.started > timeout:
                    results[slot.index] = ("hang",)
                else:
                    continue
                done += 1
                if progress is not None:
                    progress(done, len(cases))
                if not finished:
                    slot.stop()
                    slot = slots[n] = _Slot(context, job_path)
                slot.index = None
                if pending:
                    i = pending.pop()
                    slot.send(i, cases[i])
    finally:
        for slot in slots:
            if slot.process.is_alive():
                slot.connection.send(None)
                slot.process.join(timeout=5)
            slot.stop()
    return results
