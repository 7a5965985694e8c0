"""What runs in a DataLoader worker process: `get_worker_info`, the per-worker seeding, the
fetch loop, and the messages it exchanges with the main process."""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

import tocha

from ._fetch import create_fetcher

__all__ = ["ExceptionWrapper", "WorkerInfo", "get_worker_info", "worker_loop"]

# Seconds between a worker's checks that the main process is alive.
STATUS_CHECK_INTERVAL = 1.0

_worker_info: WorkerInfo | None = None


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
    return _worker_info


@dataclass(frozen=True)
class IterableDatasetStopIteration:
    """Sent by a worker whose copy of an iterable dataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back as an ack."""


class ExceptionWrapper:
    """An exception with its traceback as text, to raise again in another process."""

    def __init__(self, where: str) -> None:
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self):
        """Raise an exception of the original type whose message holds the original
        traceback (a RuntimeError when that type cannot be built from a message)."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    """A message that KeyError prints as it is (KeyError shows its argument's repr)."""

    def __repr__(self):
        return self


def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed this process's ``random``, ``tocha`` and NumPy global generators for worker
    `worker_id` of an iterator whose base seed is `base_seed`; returns the seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    tocha.manual_seed(seed)
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]
    np.random.seed(np.random.SeedSequence(entropy).generate_state(4))
    return seed


def worker_loop(
    dataset_kind,
    dataset,
    index_queue,
    data_queue,
    done_event,
    auto_collation,
    collate_fn,
    drop_last,
    base_seed,
    init_fn,
    worker_id,
    num_workers,
) -> None:
    """A worker's life: seed, run `init_fn`, then fetch the batches whose indices arrive on
    `index_queue` and put ``(task index, batch)`` on `data_queue`, until None arrives or the
    main process dies. Exceptions travel as `ExceptionWrapper`."""
    global _worker_info
    parent = os.getppid()
    try:
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while os.getppid() == parent:
            try:
                r = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = create_fetcher(
                    dataset_kind, dataset, auto_collation, collate_fn, drop_last
                )
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if dataset_kind != "iterable":
                        data = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
                    else:
                        data = IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the whole process group: the main process handles it.
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
