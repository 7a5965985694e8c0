"""DataLoader benchmarks (issue tocha-utils).

- An in-memory `TensorDataset` (10k samples of 32 float32 and an int64 label), batch 64,
  ``num_workers=0``: tocha at most 1.2x PyTorch's time per batch (``next(iterator)``).
- A dataset of 32 items that each burn 4 ms of CPU, batch 4, ``num_workers=2`` (persistent
  workers, so that a call is one epoch of 8 batches without the start of the processes) on
  a 2-core machine: at least 1.7x the throughput of ``num_workers=0``. The "numpy" column
  of this case holds the tocha loader with ``num_workers=0`` (the single-process floor), so
  tocha/numpy is the time ratio of two workers to none and the goal reads
  numpy/tocha >= 1.7.
"""

from __future__ import annotations

import time

import numpy as np
from harness import Case, faster_than_torch, numpy_throughput

N_SAMPLES = 10_000
ITEM_CPU_SECONDS = 0.004


def tensors():
    rng = np.random.default_rng(0)
    features = rng.standard_normal((N_SAMPLES, 32), dtype=np.float32)
    labels = rng.integers(0, 10, N_SAMPLES)
    return features, labels


class CpuBoundDataset:
    """Item ``i`` is a 16-float tensor filled with ``i``, after 4 ms of busy CPU."""

    def __init__(self, lib, length: int = 32):
        self.lib = lib
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        start = time.process_time()
        while time.process_time() - start < ITEM_CPU_SECONDS:
            pass
        return self.lib.full((16,), float(i))


class NextBatch:
    """The timed call: the next batch of a loader made on the first call (made again when
    an epoch ends)."""

    def __init__(self, make_loader):
        self.make_loader = make_loader
        self.iterators = {}

    def __call__(self, lib, *inputs):
        key = lib.__name__
        it = self.iterators.get(key)
        if it is None:
            it = self.iterators[key] = iter(self.make_loader(lib, *inputs))
        try:
            return next(it)
        except StopIteration:
            del self.iterators[key]
            return self(lib, *inputs)


def tensor_loader(lib, features, labels):
    ds = lib.utils.data.TensorDataset(features, labels)
    return lib.utils.data.DataLoader(ds, batch_size=64, shuffle=True, num_workers=0)


def cpu_loader(workers: int):
    def make(lib):
        kwargs = {"persistent_workers": True} if workers else {}
        return lib.utils.data.DataLoader(
            CpuBoundDataset(lib), batch_size=4, num_workers=workers, **kwargs
        )

    return make


class Epoch:
    """The timed call: one epoch of a loader made on the first call."""

    def __init__(self, make_loader):
        self.make_loader = make_loader
        self.loaders = {}

    def __call__(self, lib, *inputs):
        loader = self.loaders.get(lib.__name__)
        if loader is None:
            loader = self.loaders[lib.__name__] = self.make_loader(lib, *inputs)
        for _ in loader:
            pass


def _tocha_single_process(numpy_module):
    import tocha
    import tocha.utils.data  # noqa: F401

    return _single(tocha)


_single = Epoch(cpu_loader(0))

CASES = [
    Case(
        "next(DataLoader(TensorDataset, shuffle=True, num_workers=0))",
        "batch 64 x 32 f32",
        tensors,
        NextBatch(tensor_loader),
        goal=faster_than_torch(1.2),
    ),
    Case(
        "epoch of DataLoader(4 ms/item, num_workers=2)",
        "8 batches of 4, 2 cpus",
        lambda: (),
        Epoch(cpu_loader(2)),
        numpy=_tocha_single_process,
        goal=numpy_throughput(1.7),
        repeats=5,
    ),
]
