"""tocha.utils.data: datasets, samplers and `DataLoader`, with the API of
``torch.utils.data``.

Example::

    >>> import tocha as torch
    >>> from tocha.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(torch.randn(100, 3), torch.randint(0, 2, (100,)))
    >>> for x, y in DataLoader(ds, batch_size=32, shuffle=True, num_workers=2):
    ...     pass
"""

from typing import TYPE_CHECKING

from ._collate import default_collate, default_convert
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]


# Hidden from type checkers, so that they report the names tocha lacks.
if not TYPE_CHECKING:

    def __getattr__(name):
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)
