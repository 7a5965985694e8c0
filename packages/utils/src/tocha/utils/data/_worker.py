"""DataLoader workers: the worker side (`get_worker_info`, seeding, `worker_main`) and the
main process's side (`WorkerPool`, `PoolEpoch`).

Messages: the main process puts ``(epoch, task, request)`` on a worker's own task queue, or
None to stop it. The worker answers every task with ``(epoch, task, worker_id, outcome,
value)`` on the reply queue the workers share; `outcome` is BATCH (`value` is the batch),
FAILED (a `WorkerFailure`) or EXHAUSTED (the worker's copy of an iterable dataset has no
more samples this epoch). The main process drops replies of earlier epochs, so that an
epoch abandoned midway on persistent workers needs no handshake.

A worker pickles its reply itself before queueing the bytes: a batch that cannot be pickled
is then answered as a failure, where the queue's background thread would only print the
error and leave the main process waiting.
"""

from __future__ import annotations

import os
import pickle
import queue
import random
import signal
import time
import traceback
import weakref
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np

import tocha

from ._reader import BatchRecipe
from .dataset import IterableDataset

__all__ = ["PoolEpoch", "WorkerInfo", "WorkerPool", "WorkerSetup", "get_worker_info"]

BATCH, FAILED, EXHAUSTED = range(3)

# Seconds a worker waits for a task before it checks that the main process is alive.
PARENT_CHECK_SECONDS = 1.0
# Seconds the main process waits for a reply before it checks that the workers are alive.
LIVENESS_CHECK_SECONDS = 0.5
# Seconds the workers get to leave when asked, before they are terminated.
STOP_GRACE_SECONDS = 0.5
# What `next(requests, _END)` gives once the sampler is exhausted.
_END = object()

_this_worker: WorkerInfo | None = None


@dataclass(frozen=True)
class WorkerInfo:
    """About the worker process this code runs in (see `get_worker_info`).

    Attributes:
        id: the worker's index in ``[0, num_workers)``.
        num_workers: how many workers the DataLoader has.
        seed: the seed of this worker's ``random``, ``tocha`` (and NumPy) generators.
        dataset: this worker's copy of the dataset.
    """

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker, the `WorkerInfo` of that worker; None in the main process.

    Example (sharding an `IterableDataset` by worker)::

        >>> info = get_worker_info()
        >>> shard = range(len(data)) if info is None else range(info.id, len(data),
        ...                                                       info.num_workers)
    """
    return _this_worker


class _ShownAsIs(str):
    """A KeyError message: KeyError prints its argument's repr, this repr is the text."""

    def __repr__(self) -> str:
        return str(self)


class WorkerFailure:
    """An exception raised in a worker, carried to the main process as its type and its
    traceback's text."""

    def __init__(self, worker_id: int, exc: BaseException) -> None:
        self.worker_id = worker_id
        self.text = "".join(traceback.format_exception(exc))
        self.type_name = type(exc).__name__
        self.exc_type = type(exc)
        try:
            pickle.dumps(self.exc_type)
        except Exception:  # a class the main process could not look up (a local one)
            self.exc_type = RuntimeError

    def exception(self) -> BaseException:
        """The exception to raise in the main process: of the original type, its message the
        worker's traceback (a RuntimeError when the type cannot be built from a message)."""
        message = (
            f"Caught {self.type_name} in DataLoader worker process {self.worker_id}."
            f"\nOriginal {self.text}"
        )
        if issubclass(self.exc_type, KeyError):
            message = _ShownAsIs(message)
        try:
            return self.exc_type(message)
        except Exception:
            return RuntimeError(message)


def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed this process's ``random``, ``tocha`` and NumPy global generators for worker
    `worker_id` of a pool whose base seed is `base_seed`; returns the seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    tocha.manual_seed(seed)
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]
    np.random.seed(np.random.SeedSequence(entropy).generate_state(4))
    return seed


@dataclass(frozen=True)
class WorkerSetup:
    """What every worker of a pool starts from.

    Attributes:
        recipe: how requests become batches.
        init_fn: called as ``init_fn(worker_id)`` after seeding, or None.
        base_seed: worker ``i`` is seeded with ``base_seed + i``.
        num_workers: the size of the pool.
    """

    recipe: BatchRecipe
    init_fn: Any
    base_seed: int
    num_workers: int


def worker_main(setup: WorkerSetup, worker_id: int, tasks, replies, stop) -> None:
    """A worker's life: seed, run ``setup.init_fn``, then answer the tasks that arrive on
    `tasks` until None arrives, `stop` is set or the main process is gone.

    A stream (iterable dataset) is started afresh at each epoch's first task. Exceptions
    are answered as `WorkerFailure`; a failed ``init_fn`` answers every task.
    """
    global _this_worker
    parent = os.getppid()
    try:
        seed = seed_worker(setup.base_seed, worker_id)
        _this_worker = WorkerInfo(worker_id, setup.num_workers, seed, setup.recipe.dataset)
        setup_failure = None
        try:
            if setup.init_fn is not None:
                setup.init_fn(worker_id)
        except Exception as exc:
            setup_failure = WorkerFailure(worker_id, exc)
        stream = isinstance(setup.recipe.dataset, IterableDataset)
        read, reading_epoch = None, None
        while not stop.is_set():
            try:
                message = tasks.get(timeout=PARENT_CHECK_SECONDS)
            except queue.Empty:
                if os.getppid() != parent:
                    break
                continue
            if message is None:
                break
            epoch, task, request = message
            if setup_failure is not None:
                outcome, value = FAILED, setup_failure
            else:
                try:
                    if read is None or epoch != reading_epoch:
                        read, reading_epoch = None, epoch
                        read = setup.recipe.reader()
                    outcome, value = BATCH, read(request)
                except StopIteration as exc:
                    if stream:
                        outcome, value = EXHAUSTED, None
                    else:
                        outcome, value = FAILED, WorkerFailure(worker_id, exc)
                except Exception as exc:
                    outcome, value = FAILED, WorkerFailure(worker_id, exc)
            replies.put(_pickled(worker_id, (epoch, task, worker_id, outcome, value)))
            del value
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the whole process group: the main process handles it.
    # Replies not yet sent are of no use once the pool stops: leave without flushing them.
    replies.cancel_join_thread()


def _pickled(worker_id: int, reply: tuple) -> bytes:
    """`reply` pickled as for a queue (tensors move to shared memory); a FAILED reply when
    its value cannot be pickled."""
    try:
        return bytes(ForkingPickler.dumps(reply))
    except Exception as exc:
        failure = WorkerFailure(worker_id, exc)
        return bytes(ForkingPickler.dumps((*reply[:3], FAILED, failure)))


def _stop_workers(owner: int, processes: list, task_queues: list, replies, stop) -> None:
    """Ask the workers to leave, give them a moment, then terminate (and kill) those that
    stay; close the queues. A pool's finalizer: it holds no reference to the pool, and does
    nothing in a process forked from the `owner` process (the workers are not its own)."""
    if os.getpid() != owner:
        return
    stop.set()
    try:
        for process, tasks in zip(processes, task_queues):
            if process.is_alive():
                tasks.put(None)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join(timeout=STOP_GRACE_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()
        for q in (*task_queues, replies):
            q.cancel_join_thread()
            q.close()


def _signal_name(number: int) -> str:
    """``SIGKILL (Killed)`` for 9."""
    try:
        return f"{signal.Signals(number).name} ({signal.strsignal(number)})"
    except ValueError:
        return str(number)


class WorkerPool:
    """The worker processes of a DataLoader and the queues to and from them.

    One pool serves one epoch, or every epoch with ``persistent_workers``. Its workers stop
    when it is closed, garbage collected, or when the program exits.

    Args:
        setup: what the workers start from.
        context: a multiprocessing context (or ``tocha.multiprocessing``).
        prefetch_factor: tasks in flight per worker.
        in_order: yield batches in the sampler's order (else as they arrive).
        timeout: seconds to wait for a reply before raising (0: forever).
    """

    def __init__(
        self, setup: WorkerSetup, context, prefetch_factor: int, in_order: bool, timeout: float
    ) -> None:
        self.prefetch_factor = prefetch_factor
        self.in_order = in_order
        self.timeout = timeout
        self.epoch = 0
        self.processes: list = []
        self._task_queues: list = []
        self._replies = context.Queue()
        stop = context.Event()
        self._finalizer = weakref.finalize(
            self, _stop_workers, os.getpid(), self.processes, self._task_queues, self._replies, stop
        )
        try:
            for worker_id in range(setup.num_workers):
                tasks = context.Queue()
                tasks.cancel_join_thread()  # tasks are worthless to an exiting main process
                process = context.Process(
                    target=worker_main,
                    args=(setup, worker_id, tasks, self._replies, stop),
                    daemon=True,
                )
                process.start()
                self._task_queues.append(tasks)
                self.processes.append(process)
        except BaseException:
            self.close()
            raise

    @property
    def closed(self) -> bool:
        """Whether the workers have been stopped."""
        return not self._finalizer.alive

    def close(self) -> None:
        """Stop the workers (asked, then terminated) and close the queues; idempotent."""
        self._finalizer()

    def start_epoch(self, requests, close_at_end: bool) -> PoolEpoch:
        """An iterator of the batches of `requests` read by the workers; earlier epochs'
        iterators stop. With `close_at_end`, the pool closes when the epoch ends."""
        self.epoch += 1
        return PoolEpoch(self, requests, close_at_end)

    def send(self, worker_id: int, message: tuple) -> None:
        """Put `message` on worker `worker_id`'s task queue."""
        self._task_queues[worker_id].put(message)

    def receive(self, epoch: int) -> tuple:
        """The next reply of `epoch` (earlier epochs' replies are dropped).

        Raises RuntimeError when a worker died (the pool is then closed) or when `timeout`
        seconds pass without one.
        """
        deadline = time.monotonic() + self.timeout if self.timeout > 0 else None
        while True:
            wait = LIVENESS_CHECK_SECONDS
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self.timeout} seconds")
                wait = min(wait, left)
            try:
                reply = pickle.loads(self._replies.get(timeout=wait))
            except queue.Empty:
                self._raise_if_a_worker_died(None)
                continue
            except Exception as exc:
                # A batch whose sender died cannot be unpickled (its memory's handle is
                # gone): give the dying worker a moment to show as dead.
                give_up = time.monotonic() + LIVENESS_CHECK_SECONDS
                while time.monotonic() < give_up:
                    self._raise_if_a_worker_died(exc)
                    time.sleep(0.01)
                raise
            if reply[0] == epoch:
                return reply

    def _raise_if_a_worker_died(self, cause: BaseException | None) -> None:
        dead = [process for process in self.processes if not process.is_alive()]
        if not dead:
            return
        self.close()
        pids = ", ".join(str(process.pid) for process in dead)
        code = dead[0].exitcode
        how = (
            f"killed by signal: {_signal_name(-code)}"
            if code is not None and code < 0
            else f"exit code {code}"
        )
        raise RuntimeError(
            f"DataLoader worker (pid{'(s)' if len(dead) > 1 else ''} {pids}) exited "
            f"unexpectedly ({how}). Details are lost due to multiprocessing. Rerunning with "
            "num_workers=0 may give better error trace."
        ) from cause


class PoolEpoch:
    """One epoch of a `WorkerPool`: an iterator of the batches of `requests`.

    Tasks go round-robin to the workers whose stream has not ended, ``prefetch_factor`` per
    worker in flight; each batch taken sends the next task. In order, replies that arrive
    ahead of their turn wait in `_arrived`; otherwise each batch is yielded as it arrives and
    a worker gets a new task only while it has fewer than ``prefetch_factor``.
    """

    def __init__(self, pool: WorkerPool, requests, close_at_end: bool) -> None:
        self._pool = pool
        self._number = pool.epoch
        self._requests = requests
        self._close_at_end = close_at_end
        workers = len(pool.processes)
        self._active = [True] * workers
        self._in_flight = [0] * workers
        self._turn = 0
        self._sent = 0
        self._unanswered = 0
        self._next = 0
        self._arrived: dict[int, tuple] = {}
        for _ in range(pool.prefetch_factor * workers):
            self._send()

    def __iter__(self) -> PoolEpoch:
        return self

    def _send(self) -> None:
        """Send the next request to the next worker that may take it, if any."""
        workers = len(self._active)
        for _ in range(workers):
            worker, self._turn = self._turn, (self._turn + 1) % workers
            if self._active[worker] and (
                self._pool.in_order or self._in_flight[worker] < self._pool.prefetch_factor
            ):
                break
        else:
            return
        request = next(self._requests, _END)
        if request is _END:
            return
        self._pool.send(worker, (self._number, self._sent, request))
        self._in_flight[worker] += 1
        self._sent += 1
        self._unanswered += 1

    def _take(self) -> tuple:
        """The next ``(outcome, value)`` to hand out; raises StopIteration at the end."""
        in_order = self._pool.in_order
        while True:
            if in_order and self._next in self._arrived:
                self._next += 1
                return self._arrived.pop(self._next - 1)
            if not self._unanswered:
                if self._close_at_end:
                    self._pool.close()
                raise StopIteration
            _, task, worker, outcome, value = self._pool.receive(self._number)
            self._unanswered -= 1
            self._in_flight[worker] -= 1
            if outcome == EXHAUSTED:
                self._active[worker] = False
                self._send()
            if not in_order:
                return outcome, value
            self._arrived[task] = (outcome, value)

    def __next__(self):
        if self._number != self._pool.epoch or self._pool.closed:
            raise StopIteration
        while True:
            outcome, value = self._take()
            if outcome != EXHAUSTED:
                break
        self._send()
        if outcome == FAILED:
            raise value.exception()
        return value
