"""Samplers, as ``torch.utils.data.sampler``: iterables of dataset indices (or of lists of
indices, for `BatchSampler`) that decide the order a `DataLoader` reads samples in."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

import tocha

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

T_co = TypeVar("T_co", covariant=True)


def _positive_int(name: str, value, allow_bool: bool = False) -> None:
    """A ValueError unless `value` is a positive int (a bool counts only with `allow_bool`)."""
    if not isinstance(value, int) or (isinstance(value, bool) and not allow_bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


class Sampler(Generic[T_co]):
    """Base class of samplers: subclasses implement ``__iter__`` and, when they can,
    ``__len__``."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``, in order."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def draw_seed(generator=None) -> int:
    """A non-negative 64-bit seed drawn from `generator` (the default generator when None)."""
    return int(tocha.empty((), dtype=tocha.int64).random_(generator=generator).item())


# Indices drawn with replacement are drawn this many at a time (an epoch of them may be
# longer than memory allows).
_DRAWS_PER_CHUNK = 1024


class RandomSampler(Sampler[int]):
    """Indices of `data_source` in random order.

    Without replacement an epoch is a permutation (``num_samples`` beyond the dataset's
    length chains several); with replacement, ``num_samples`` independent uniform draws.

    Args:
        data_source: the dataset (only its length is read).
        replacement: draw with replacement.
        num_samples: how many indices per epoch (default ``len(data_source)``, read at
            each epoch).
        generator: the source of randomness; by default each epoch uses a fresh generator
            seeded from the default one.
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator=None,
    ) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        self.data_source = data_source
        self.replacement = replacement
        self.generator = generator
        self._fixed_num_samples = num_samples
        _positive_int("num_samples", self.num_samples, allow_bool=True)

    @property
    def num_samples(self) -> int:
        """Indices per epoch."""
        if self._fixed_num_samples is None:
            return len(self.data_source)
        return self._fixed_num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = tocha.Generator().manual_seed(draw_seed())
        # Whole chunks, then the rest, drawn even when empty: a permutation is drawn, and
        # its tail dropped, as PyTorch draws it (the next epoch's stream depends on it).
        chunk = _DRAWS_PER_CHUNK if self.replacement else n
        if chunk == 0:
            return
        whole, rest = divmod(self.num_samples, chunk)
        for size in [chunk] * whole + [rest]:
            if self.replacement:
                yield from tocha.randint(high=n, size=(size,), generator=generator).tolist()
            else:
                yield from tocha.randperm(n, generator=generator).tolist()[:size]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given `indices` in random order, without replacement."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in tocha.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices in ``[0, len(weights))``, index ``i`` drawn with probability
    ``weights[i] / sum(weights)``.

    Args:
        weights: non-negative weights, not necessarily summing to one.
        num_samples: how many indices per epoch.
        replacement: with replacement (default); without, an index is drawn at most once.
        generator: the source of randomness.

    Example::

        >>> list(WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 5))  # doctest: +SKIP
        [4, 4, 1, 4, 5]
    """

    def __init__(
        self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator=None
    ) -> None:
        _positive_int("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights_tensor = tocha.as_tensor(weights, dtype=tocha.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = tocha.multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: any iterable of indices.
        batch_size: the size of a batch.
        drop_last: drop the last batch when it is short.

    Example::

        >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
        [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        _positive_int("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        full, rest = divmod(len(self.sampler), self.batch_size)
        return full if self.drop_last or not rest else full + 1
