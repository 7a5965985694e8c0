"""`DistributedSampler`, as ``torch.utils.data.distributed``: each of ``num_replicas``
processes reads its own share of a dataset."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator

import tocha

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _process_group():
    """tocha.distributed when a program has initialised it (looked up, not imported: it is
    a later distribution in the dependency order), as PyTorch's defaults need."""
    dist = sys.modules.get("tocha.distributed")
    if dist is None or not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    if not dist.is_initialized():
        raise ValueError(
            "Default process group has not been initialized, please make sure to call "
            "init_process_group."
        )
    return dist


class DistributedSampler(Sampler[int]):
    """The indices of replica `rank` out of `num_replicas`: every ``num_replicas``-th index
    from ``rank`` of one shared order, padded by repeating indices (or truncated, with
    `drop_last`) so that every replica gets ``num_samples`` indices.

    tocha has no ``tocha.distributed`` yet: `num_replicas` and `rank` must be given.

    Args:
        dataset: the dataset (only its length is read).
        num_replicas: the number of processes sharing the dataset.
        rank: this process's index in ``[0, num_replicas)``.
        shuffle: shuffle the shared order, seeded with ``seed + epoch``.
        seed: the seed of the shuffle; the same in every replica.
        drop_last: drop the tail instead of padding.

    Example::

        >>> sampler = DistributedSampler(dataset, num_replicas=4, rank=1)
        >>> for epoch in range(epochs):
        ...     sampler.set_epoch(epoch)  # a new shuffle each epoch
        ...     for batch in DataLoader(dataset, sampler=sampler): ...
    """

    def __init__(
        self,
        dataset,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            dist = _process_group()
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        whole, rest = divmod(len(dataset), num_replicas)
        self.num_samples = whole + (1 if rest and not drop_last else 0)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            generator = tocha.Generator().manual_seed(self.seed + self.epoch)
            order = tocha.randperm(n, generator=generator).tolist()
        else:
            order = range(n)
        # The shared order, cut to total_size or padded by starting it over; this replica
        # takes every num_replicas-th index of it from its rank.
        shared = itertools.islice(itertools.cycle(order), self.total_size)
        return itertools.islice(shared, self.rank, None, self.num_replicas)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, which seeds the shuffle: call it before each epoch's iteration."""
        self.epoch = epoch
