"""`DataLoader`, as ``torch.utils.data.dataloader``: batches of a dataset in the sampler's
order, read in the main process (``num_workers=0``) or by worker processes of
``tocha.multiprocessing``, whose batches come back through shared memory.

Faults: an exception in a worker is raised again in the main process with its type and the
worker's traceback; a worker that dies makes the iterator raise within about a second; an
iterator that is finished, dropped or collected shuts its workers down.
"""

from __future__ import annotations

import atexit
import itertools
import math
import multiprocessing.context
import os
import queue
import signal
import time
import warnings
from collections.abc import Callable, Iterable

import tocha
import tocha.multiprocessing as tocha_mp

from . import _worker
from ._collate import default_collate, default_convert
from ._fetch import create_fetcher
from ._pin_memory import pin_memory
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

get_worker_info = _worker.get_worker_info

# Seconds between the main process's checks that its workers are alive while it waits.
STATUS_CHECK_INTERVAL = 0.5

_python_exiting = False


def _set_python_exiting() -> None:
    global _python_exiting
    _python_exiting = True


atexit.register(_set_python_exiting)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: None, forever."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over a dataset in batches, as ``torch.utils.data.DataLoader``.

    Args:
        dataset: a map-style `Dataset` (anything with ``__getitem__`` and ``__len__``) or an
            `IterableDataset`.
        batch_size: samples per batch; None turns batching off (samples come one by one,
            through `default_convert`).
        shuffle: reshuffle every epoch (a `RandomSampler` over `generator`).
        sampler: the order of the indices (exclusive with `shuffle`).
        batch_sampler: yields whole lists of indices (exclusive with `batch_size`,
            `shuffle`, `sampler` and `drop_last`).
        num_workers: worker processes; 0 reads in the main process.
        collate_fn: turns a list of samples into a batch (default `default_collate`).
        pin_memory: put batches in page-locked host memory when tocha-cuda is installed
            with a GPU; otherwise a no-op (with PyTorch's warning).
        drop_last: drop the last batch when it is short.
        timeout: seconds to wait for a batch from the workers before raising (0: forever).
        worker_init_fn: called as ``fn(worker_id)`` in each worker after seeding.
        multiprocessing_context: a start method name (``"fork"``, ``"spawn"``,
            ``"forkserver"``) or a context; by default ``tocha.multiprocessing``'s.
        generator: the source of the shuffle and of the workers' base seed.
        prefetch_factor: batches in flight per worker (default 2 when there are workers).
        persistent_workers: keep the workers between epochs.
        pin_memory_device: deprecated, as in PyTorch.
        in_order: yield the batches in the sampler's order; False yields each one as soon
            as it is ready.

    Each iterator draws a base seed from `generator`; worker ``i`` seeds ``random``,
    ``tocha`` and NumPy's global generator from ``base_seed + i``, so the workers' random
    streams differ and a seeded `generator` reproduces them.

    Example::

        >>> ds = TensorDataset(tocha.arange(10.0), tocha.arange(10))
        >>> for x, y in DataLoader(ds, batch_size=4, shuffle=True, num_workers=2):
        ...     x.shape
        tocha.Size([4])
        tocha.Size([4])
        tocha.Size([2])
    """

    _initialized = False

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            for name, value in (("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value is not None:
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} "
                        f"option, but got {name}={value}"
                    )
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive "
                "with drop_last"
            )
        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(context, str):
                methods = tocha_mp.get_all_start_methods()
                if context not in methods:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method "
                        f"in {methods!r}, but got multiprocessing_context={context!r}"
                    )
                context = tocha_mp.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a "
                    "string specifying the start method, but got "
                    f"multiprocessing_context={context}"
                )
        self._multiprocessing_context = context

    def __setattr__(self, attr, val) -> None:
        if self._initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {type(self).__name__} is initialized"
            )
        super().__setattr__(attr, val)

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if not self.persistent_workers or self.num_workers == 0:
            return self._get_iterator()
        if self._iterator is None or self._iterator._shutdown:
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == "iterable":
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                div = length // self.batch_size
                length = div if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn when there are more workers than CPUs this process may run on."""
        if not self.num_workers:
            return
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        cpus = cpus or os.cpu_count()
        if cpus is None or self.num_workers > cpus:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"Our suggested max number of worker in current system is {cpus}, which is "
                "smaller than what this DataLoader is going to create. Please be aware that "
                "excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=2,
            )


class _BaseDataLoaderIter:
    """What both iterators share: the sampler's iterator, the base seed, the length."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                stacklevel=3,
            )
        self._pin_memory = loader.pin_memory and tocha.cuda.is_available()
        if loader.pin_memory and not self._pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then "
                "device pinned memory won't be used.",
                stacklevel=3,
            )
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = (
            tocha.empty((), dtype=tocha.int64).random_(generator=loader.generator).item()
        )
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader: DataLoader) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        reported = self._IterableDataset_len_called
        if (
            self._dataset_kind == "iterable"
            and reported is not None
            and self._num_yielded > reported
        ):
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be {reported} "
                f"(when accessing len(dataloader)), but {self._num_yielded} samples have been "
                "fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker."
                )
            warnings.warn(msg, stacklevel=2)
        if self._pin_memory:
            data = pin_memory(data)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Reads every batch in the main process."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = create_fetcher(
            self._dataset_kind,
            self._dataset,
            self._auto_collation,
            self._collate_fn,
            self._drop_last,
        )

    def _next_data(self):
        return self._fetcher.fetch(self._next_index())


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Sends lists of indices to worker processes round-robin (``prefetch_factor`` per
    worker in flight) and yields their batches in the sampler's order.

    Task ``i`` goes to one worker; ``_task_info[i]`` is ``(worker,)`` while it is out and
    ``(worker, data)`` once it arrived ahead of its turn.
    """

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        context = loader.multiprocessing_context or tocha_mp
        self._shutdown = False
        self._workers = []
        self._index_queues = []
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        try:
            for i in range(self._num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()
                w = context.Process(
                    target=_worker.worker_loop,
                    args=(
                        self._dataset_kind,
                        self._dataset,
                        index_queue,
                        self._worker_result_queue,
                        self._workers_done_event,
                        self._auto_collation,
                        self._collate_fn,
                        self._drop_last,
                        self._base_seed,
                        loader.worker_init_fn,
                        i,
                        self._num_workers,
                    ),
                    daemon=True,
                )
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._start_epoch()

    def _start_epoch(self) -> None:
        self._send_idx = 0  # the next task to send
        self._rcvd_idx = 0  # the next task to yield
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _reset(self, loader: DataLoader) -> None:
        """A new epoch on the same (persistent) workers: each one acknowledges the resume;
        results of the previous epoch that arrive meanwhile are dropped."""
        super()._reset(loader)
        for q in self._index_queues:
            q.put(_worker.ResumeIteration())
        waiting = self._num_workers
        while waiting > 0:
            idx, _ = self._get_data()
            if isinstance(idx, _worker.ResumeIteration):
                waiting -= 1
        self._start_epoch()

    def _failed_workers_error(self) -> RuntimeError | None:
        """The error for the workers that died, or None when all are alive."""
        dead = [
            w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()
        ]
        if not dead:
            return None
        for w in dead:
            self._workers_status[self._workers.index(w)] = False
        pids = ", ".join(str(w.pid) for w in dead)
        code = dead[0].exitcode
        how = (
            f"killed by signal: {_signal_name(-code)}"
            if code is not None and code < 0
            else f"exit code {code}"
        )
        return RuntimeError(
            f"DataLoader worker (pid{'(s)' if len(dead) > 1 else ''} {pids}) exited "
            f"unexpectedly ({how}). Details are lost due to multiprocessing. Rerunning with "
            "num_workers=0 may give better error trace."
        )

    def _get_data(self):
        """The next ``(task index, data)`` from the workers, checking every half second that
        they are alive; raises on a dead worker, or when `timeout` passes."""
        waited = 0.0
        while True:
            wait = STATUS_CHECK_INTERVAL
            if self._timeout > 0:
                wait = min(wait, self._timeout - waited)
            try:
                return self._worker_result_queue.get(timeout=wait)
            except Exception as exc:
                # A batch whose sender died cannot be unpickled (its memory's handle is gone);
                # give the dying worker a moment to show as dead.
                error = self._failed_workers_error()
                deadline = time.monotonic() + STATUS_CHECK_INTERVAL
                while (
                    error is None
                    and not isinstance(exc, queue.Empty)
                    and time.monotonic() < deadline
                ):
                    time.sleep(0.01)
                    error = self._failed_workers_error()
                if error is not None:
                    self._shutdown_workers()
                    raise error from exc
                if not isinstance(exc, queue.Empty):
                    raise
                waited += wait
            if self._timeout > 0 and waited >= self._timeout:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # Skip the tasks of workers that ended (an exhausted iterable dataset).
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(*info)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker.IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent_workers:
                    self._index_queues[data.worker_id].put(None)
                self._task_info.pop(idx, None)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx or not self._in_order:
                worker_id = self._task_info.pop(idx)[0]
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(worker_id, data)
            self._task_info[idx] += (data,)

    def _try_put_index(self) -> None:
        """Send the sampler's next indices to the next worker that may take a task."""
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id] and (
                self._in_order
                or self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status)
            ):
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, worker_id: int, data):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self) -> None:
        """Stop the workers (asked nicely, then terminated) and close the queues."""
        if _python_exiting or self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for w, q in zip(self._workers, self._index_queues):
                if w.is_alive():
                    q.put(None)
            for w in self._workers:
                w.join(timeout=STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=STATUS_CHECK_INTERVAL)
                    if w.is_alive():
                        w.kill()
                        w.join()

    def __del__(self) -> None:
        if hasattr(self, "_shutdown"):
            self._shutdown_workers()


def _signal_name(number: int) -> str:
    """``SIGKILL (Killed)`` for 9."""
    try:
        return f"{signal.Signals(number).name} ({signal.strsignal(number)})"
    except ValueError:
        return str(number)
