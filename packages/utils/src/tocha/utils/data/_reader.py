"""How a DataLoader turns a *request* (what its sampler yields: one index, or the list of a
batch's indices) into a batch, the same in the main process and in a worker."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .dataset import IterableDataset

__all__ = ["BatchRecipe"]


@dataclass(frozen=True)
class BatchRecipe:
    """The reading settings of a DataLoader, picklable so that workers get them too.

    Attributes:
        dataset: a map-style dataset, or an `IterableDataset` (read as a stream).
        batched: requests are lists of indices whose samples are collated together;
            otherwise one index (for a stream: one sample) per request.
        collate_fn: samples (or one sample) to a batch.
        drop_last: a stream's last, short batch is dropped.
    """

    dataset: Any
    batched: bool
    collate_fn: Callable
    drop_last: bool

    def reader(self) -> Callable:
        """A function from a request to its batch, for one pass over the dataset: a stream
        is started here and raises StopIteration once it has no more samples."""
        dataset, collate = self.dataset, self.collate_fn
        if isinstance(dataset, IterableDataset):
            return _stream_reader(iter(dataset), collate, self.batched, self.drop_last)
        if not self.batched:
            return lambda index: collate(dataset[index])
        getitems = getattr(dataset, "__getitems__", None)
        if callable(getitems):
            return lambda indices: collate(getitems(indices))
        return lambda indices: collate([dataset[i] for i in indices])


def _stream_reader(stream, collate: Callable, batched: bool, drop_last: bool) -> Callable:
    """Batches of the next samples of `stream`, as many as the request's length."""
    if not batched:
        return lambda _: collate(next(stream))
    ended = False

    def read(request: list):
        nonlocal ended
        if ended:
            raise StopIteration
        samples = list(itertools.islice(stream, len(request)))
        if len(samples) < len(request):
            ended = True
            if drop_last or not samples:
                raise StopIteration
        return collate(samples)

    return read
