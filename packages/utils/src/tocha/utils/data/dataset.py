"""Datasets, as ``torch.utils.data.dataset``: the map-style `Dataset` and the
`IterableDataset` bases, and the combinators `TensorDataset`, `StackDataset`,
`ConcatDataset`, `ChainDataset`, `Subset` and `random_split`."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Generic, TypeVar

import tocha

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: ``dataset[index]`` gives one sample.

    Subclasses implement ``__getitem__`` and usually ``__len__`` (samplers and
    `DataLoader` need it); ``__getitems__(indices)`` may fetch a whole batch at once.
    ``a + b`` is ``ConcatDataset([a, b])``.
    """

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset that is a stream: subclasses implement ``__iter__``.

    With ``num_workers > 0`` every worker process iterates its own copy; split the stream
    per worker with `get_worker_info` (``info.id``, ``info.num_workers``) to avoid
    duplicates. ``a + b`` is ``ChainDataset([a, b])``.

    Example::

        >>> class Range(IterableDataset):
        ...     def __iter__(self):
        ...         info = get_worker_info()
        ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
        ...         return iter(range(start, 10, step))
    """

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """A dataset of tensors sharing their first dimension: sample ``i`` is
    ``tuple(t[i] for t in tensors)``.

    Example::

        >>> ds = TensorDataset(tocha.arange(6).reshape(3, 2), tocha.tensor([0, 1, 0]))
        >>> ds[1]
        (tensor([2, 3]), tensor(1))
    """

    def __init__(self, *tensors: tocha.Tensor) -> None:
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


def _items(dataset, indices: list) -> list:
    """``dataset``'s samples at `indices`, through ``__getitems__`` when it has one."""
    getitems = getattr(dataset, "__getitems__", None)
    if not callable(getitems):
        return [dataset[i] for i in indices]
    items = getitems(indices)
    if len(items) != len(indices):
        raise ValueError(
            f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}"
        )
    return items


class StackDataset(Dataset):
    """Datasets of one length side by side: sample ``i`` is ``tuple(d[i] for d in args)``
    or ``{k: d[i] for k, d in kwargs.items()}``.

    Example::

        >>> StackDataset(images=images, labels=labels)[0]  # {"images": ..., "labels": ...}
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                "input/output, but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = list(args or kwargs.values())
        self._size = len(datasets[0])
        if any(self._size != len(dataset) for dataset in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list) -> list:
        if isinstance(self.datasets, dict):
            columns = {k: _items(d, indices) for k, d in self.datasets.items()}
            return [{k: column[j] for k, column in columns.items()} for j in range(len(indices))]
        columns = [_items(d, indices) for d in self.datasets]
        return [tuple(column[j] for column in columns) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._size


class ConcatDataset(Dataset[T_co]):
    """The concatenation of map-style datasets.

    Attributes:
        cumulative_sizes (list[int]): the end index of each dataset in the concatenation.
    """

    @staticmethod
    def cumsum(sequence) -> list[int]:
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[dataset_idx - 1] if dataset_idx else 0
        return self.datasets[dataset_idx][idx - start]


class ChainDataset(IterableDataset):
    """The concatenation of iterable datasets, chained lazily."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def _checked(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self):
        for d in self._checked():
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self._checked())


class Subset(Dataset[T_co]):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        return _items(self.dataset, [self.indices[i] for i in indices])

    def __len__(self) -> int:
        return len(self.indices)


def _fraction_lengths(n: int, fractions: Sequence[float]) -> list[int]:
    """Fractions of `n` as whole lengths adding up to `n` (the remainder dealt round-robin)."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(
                f"Length of split at index {i} is 0. This might result in an empty dataset.",
                stacklevel=3,
            )
    return lengths


def random_split(
    dataset: Dataset,
    lengths: Sequence[int | float],
    generator: tocha.Generator | None = tocha.default_generator,
) -> list[Subset]:
    """Split `dataset` at random into non-overlapping `Subset`s.

    Args:
        dataset: the dataset to split.
        lengths: the lengths of the splits, or fractions of ``len(dataset)`` adding up to 1
            (each split gets ``floor(len * frac)``, the remainder one by one round-robin).
        generator: the source of the permutation.

    Example::

        >>> train, val = random_split(range(10), [0.8, 0.2],
        ...                           generator=tocha.Generator().manual_seed(42))
        >>> len(train), len(val)
        (8, 2)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _fraction_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = tocha.randperm(sum(lengths), generator=generator).tolist()
    bounds = itertools.accumulate(lengths, initial=0)
    return [Subset(dataset, order[start:end]) for start, end in itertools.pairwise(bounds)]
