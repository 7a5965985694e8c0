"""Fetchers: turn what the sampler gives (an index, or a list of them) into a collated
batch, for map-style and iterable datasets alike, in the main process or in a worker."""

from __future__ import annotations

__all__ = ["create_fetcher"]


class MapDatasetFetcher:
    """Reads ``dataset[i]`` for each index of a batch (or ``dataset.__getitems__``)."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        getitems = getattr(dataset, "__getitems__", None)
        self.getitems = getitems if callable(getitems) else None

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if self.getitems is not None:
            return self.collate_fn(self.getitems(possibly_batched_index))
        dataset = self.dataset
        return self.collate_fn([dataset[i] for i in possibly_batched_index])


class IterableDatasetFetcher:
    """Takes the next samples of ``iter(dataset)``, as many as the batch's indices; raises
    StopIteration when the stream is exhausted (or, with `drop_last`, short)."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(kind: str, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    """The fetcher for a dataset of `kind` (``"map"`` or ``"iterable"``)."""
    fetcher = MapDatasetFetcher if kind == "map" else IterableDatasetFetcher
    return fetcher(dataset, auto_collation, collate_fn, drop_last)
