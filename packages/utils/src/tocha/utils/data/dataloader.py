"""`DataLoader`, as ``torch.utils.data.dataloader``: batches of a dataset in the sampler's
order, read in the main process (``num_workers=0``) or by worker processes of
``tocha.multiprocessing`` (`_worker.WorkerPool`), whose batches come back through shared
memory.

Faults: an exception in a worker is raised again in the main process with its type and the
worker's traceback; a worker that dies makes the iterator raise within about a second; an
iterator that is finished, dropped or collected shuts its workers down.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing.context
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

import tocha
import tocha.multiprocessing as tocha_mp

from ._collate import default_collate, default_convert, pin
from ._reader import BatchRecipe
from ._worker import WorkerPool, WorkerSetup, get_worker_info
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, draw_seed

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

T_co = TypeVar("T_co", covariant=True)

# Attributes that cannot change once a DataLoader is built (its samplers depend on them).
_SET_ONCE = frozenset(
    {"batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"}
)


class _StreamRequests(Sampler):
    """The sampler of an `IterableDataset`: None forever, each one asking the stream for
    its next sample; the stream's end ends the epoch."""

    def __iter__(self) -> Iterator[None]:
        return itertools.repeat(None)


def _check_worker_options(num_workers: int, timeout: float, prefetch_factor, persistent):
    """The checked `prefetch_factor` (2 by default with workers), or a ValueError."""
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
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor


def _check_sampling_options(dataset, batch_size, shuffle, sampler, batch_sampler, drop_last):
    """The checked ``(shuffle, batch_size, drop_last)``: a batch sampler decides batches
    alone (no batch size, no dropping), or a ValueError."""
    if isinstance(dataset, IterableDataset):
        if shuffle not in {False, None}:
            raise ValueError(
                "DataLoader with IterableDataset: expected unspecified shuffle option, "
                f"but got shuffle={shuffle}"
            )
        for name, value in (("sampler", sampler), ("batch_sampler", batch_sampler)):
            if value is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified {name} option, "
                    f"but got {name}={value}"
                )
    shuffle = bool(shuffle)
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError(
                "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                "sampler, and drop_last"
            )
        return shuffle, None, False
    if batch_size is None and drop_last:
        raise ValueError(
            "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
        )
    return shuffle, batch_size, drop_last


def _cpus_available() -> int | None:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or None
    return os.cpu_count()


class DataLoader(Generic[T_co]):
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

    Each epoch (or, with `persistent_workers`, the workers' start) draws a base seed from
    `generator`, with workers or without, so that a seeded generator gives the same
    shuffles whatever `num_workers` is. Worker ``i`` seeds ``random``, ``tocha`` and
    NumPy's global generator from ``base_seed + i``.

    Example::

        >>> ds = TensorDataset(tocha.arange(10.0), tocha.arange(10))
        >>> for x, y in DataLoader(ds, batch_size=4, shuffle=True, num_workers=2):
        ...     x.shape
        tocha.Size([4])
        tocha.Size([4])
        tocha.Size([2])
    """

    def __init__(
        self,
        dataset: Dataset[T_co],
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
        self.prefetch_factor = _check_worker_options(
            num_workers, timeout, prefetch_factor, persistent_workers
        )
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        shuffle, batch_size, drop_last = _check_sampling_options(
            dataset, batch_size, shuffle, sampler, batch_sampler, drop_last
        )
        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _StreamRequests()
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
        self._batched = batch_sampler is not None
        if collate_fn is None:
            collate_fn = default_collate if self._batched else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._frozen = True
        self._reported_length: int | None = None
        self._pool: WorkerPool | None = None
        self._warn_if_too_many_workers(stacklevel=3)

    @property
    def multiprocessing_context(self):
        """The multiprocessing context of the workers (None: ``tocha.multiprocessing``)."""
        return self._context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None and self.num_workers == 0:
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
        if context is not None and not isinstance(context, multiprocessing.context.BaseContext):
            raise TypeError(
                "multiprocessing_context option should be a valid context object or a "
                "string specifying the start method, but got "
                f"multiprocessing_context={context}"
            )
        self._context = context

    def __setattr__(self, name: str, value) -> None:
        if name in _SET_ONCE and self.__dict__.get("_frozen"):
            raise ValueError(
                f"{name} attribute should not be set after {type(self).__name__} is initialized"
            )
        super().__setattr__(name, value)

    @property
    def _request_sampler(self):
        """What one read takes: a batch's indices, or (batching off) one index."""
        return self.batch_sampler if self._batched else self.sampler

    def __len__(self) -> int:
        if not isinstance(self.dataset, IterableDataset):
            return len(self._request_sampler)
        length = self._reported_length = len(self.dataset)
        if self.batch_size is None:
            return length
        if self.drop_last:
            return length // self.batch_size
        return math.ceil(length / self.batch_size)

    def __iter__(self) -> Iterator:
        pin_batches = self._pin_batches()
        requests = iter(self._request_sampler)
        recipe = BatchRecipe(self.dataset, self._batched, self.collate_fn, self.drop_last)
        if self.num_workers == 0:
            if self.timeout != 0:
                raise AssertionError(
                    "DataLoader with num_workers=0 requires timeout == 0 (only workers are "
                    "waited for)"
                )
            draw_seed(self.generator)
            batches = map(recipe.reader(), requests)
        elif self.persistent_workers:
            if self._pool is None or self._pool.closed:
                self._pool = self._start_pool(recipe)
            batches = self._pool.start_epoch(requests, close_at_end=False)
        else:
            batches = self._start_pool(recipe).start_epoch(requests, close_at_end=True)
        return _LoaderIterator(self, batches, pin_batches)

    def _start_pool(self, recipe: BatchRecipe) -> WorkerPool:
        self._warn_if_too_many_workers(stacklevel=4)
        setup = WorkerSetup(
            recipe, self.worker_init_fn, draw_seed(self.generator), self.num_workers
        )
        context = self.multiprocessing_context or tocha_mp
        return WorkerPool(setup, context, self.prefetch_factor, self.in_order, self.timeout)

    def _pin_batches(self) -> bool:
        """Whether batches are pinned, with PyTorch's warnings when they cannot be."""
        if self.pin_memory and self.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{self.pin_memory_device}'.",
                stacklevel=3,
            )
        if self.pin_memory and not tocha.cuda.is_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then "
                "device pinned memory won't be used.",
                stacklevel=3,
            )
            return False
        return self.pin_memory

    def _warn_if_too_many_workers(self, stacklevel: int) -> None:
        """Warn when there are more workers than CPUs this process may run on."""
        if not self.num_workers:
            return
        cpus = _cpus_available()
        if cpus is None or self.num_workers > cpus:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"Our suggested max number of worker in current system is {cpus}, which is "
                "smaller than what this DataLoader is going to create. Please be aware that "
                "excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=stacklevel,
            )


class _LoaderIterator:
    """What ``iter(loader)`` gives: the epoch's batches (from the main process's reader or
    a worker pool), pinned when asked, with PyTorch's warning when an `IterableDataset`
    gives more batches than the length it reported to ``len(loader)``."""

    def __init__(self, loader: DataLoader, batches: Iterator, pin_batches: bool) -> None:
        self._batches = batches
        self._pin = pin_batches
        self._request_sampler = loader._request_sampler
        self._dataset = loader.dataset
        self._reported_length = loader._reported_length
        self._with_workers = loader.num_workers > 0
        self._yielded = 0

    def __iter__(self) -> _LoaderIterator:
        return self

    def __next__(self):
        batch = next(self._batches)
        if self._reported_length is not None:
            self._yielded += 1
            if self._yielded > self._reported_length:
                self._warn_longer_than_reported()
        return pin(batch) if self._pin else batch

    def _warn_longer_than_reported(self) -> None:
        message = (
            f"Length of IterableDataset {self._dataset} was reported to be "
            f"{self._reported_length} (when accessing len(dataloader)), but {self._yielded} "
            "samples have been fetched. "
        )
        if self._with_workers:
            message += (
                "For multiprocessing data-loading, this could be caused by not properly "
                "configuring the IterableDataset replica at each worker."
            )
        warnings.warn(message, stacklevel=3)

    def __len__(self) -> int:
        return len(self._request_sampler)

    def __getstate__(self):
        raise NotImplementedError("a DataLoader iterator cannot be pickled")
