"""DataLoader of tocha.utils.data: batching, order and options against torch.utils.data,
workers (order, seeding, reproducibility, iterable sharding, persistent workers)."""

from __future__ import annotations

import gc
import os
import pickle
import random
import time

import numpy as np
import pytest

import tocha
from tocha.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    TensorDataset,
    get_worker_info,
)


class Numbers(Dataset):
    def __len__(self):
        return 23

    def __getitem__(self, i):
        return {"i": i, "x": np.full(2, i, np.float32), "name": f"n{i}"}


class Randoms(Dataset):
    """Each item draws from random, NumPy and tocha's global generators."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return [i, random.random(), np.random.rand(), tocha.rand(1).item()]


class Shards(IterableDataset):
    """0..n-1, split between workers by get_worker_info."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def plain(batches):
    return [[b["i"].tolist(), b["x"].tolist(), list(b["name"])] for b in batches]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"batch_size": 5},
        {"batch_size": 5, "drop_last": True},
        {"batch_size": None},
        {"batch_sampler": [[3, 1], [0, 2, 4]]},
        {"sampler": [5, 3, 1], "batch_size": 2},
    ],
)
def test_batches_agree_with_torch(torch, kwargs):
    ours = list(DataLoader(Numbers(), **kwargs))
    theirs = list(torch.utils.data.DataLoader(Numbers(), **kwargs))
    if kwargs.get("batch_size", 1) is None:
        assert [b["i"] for b in ours] == [b["i"] for b in theirs]
        assert [b["x"].tolist() for b in ours] == [b["x"].tolist() for b in theirs]
    else:
        assert plain(ours) == plain(theirs)
    assert len(DataLoader(Numbers(), **kwargs)) == len(
        torch.utils.data.DataLoader(Numbers(), **kwargs)
    )


def test_iterable_dataset_batches_agree_with_torch(torch):
    class TorchShards(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(10))

    for kwargs in [{"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {}]:
        ours = [b.tolist() for b in DataLoader(Shards(10), **kwargs)]
        theirs = [b.tolist() for b in torch.utils.data.DataLoader(TorchShards(), **kwargs)]
        assert ours == theirs


def test_tensor_dataset_collate_like_torch(torch):
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    ours = list(DataLoader(TensorDataset(tocha.from_numpy(x)), batch_size=4))
    theirs = list(
        torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.from_numpy(x)), batch_size=4
        )
    )
    assert [b[0].tolist() for b in ours] == [b[0].tolist() for b in theirs]
    assert isinstance(ours[0], list) and ours[0][0].dtype is tocha.float32


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"num_workers": -1}, "num_workers option should be non-negative"),
        ({"timeout": -1}, "timeout option should be non-negative"),
        ({"prefetch_factor": 2}, "prefetch_factor option could only be specified"),
        ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
        ({"shuffle": True, "sampler": [0]}, "sampler option is mutually exclusive with shuffle"),
        ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive"),
        ({"batch_size": None, "drop_last": True}, "batch_size=None option disables auto-batching"),
        ({"multiprocessing_context": "spawn"}, "multiprocessing_context can only be used"),
        ({"num_workers": 1, "multiprocessing_context": "nope"}, "should specify a valid start"),
    ],
)
def test_option_errors_agree_with_torch(torch, kwargs, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(Numbers(), **kwargs)
    with pytest.raises(ValueError, match=message):
        torch.utils.data.DataLoader(Numbers(), **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"batch_size": 5}, {"batch_size": 5, "drop_last": True}, {"batch_size": None}],
    ids=["default", "batch5", "batch5-drop-last", "unbatched"],
)
def test_iterator_length_agrees_with_torch(torch, kwargs):
    assert len(iter(DataLoader(Numbers(), **kwargs))) == len(
        iter(torch.utils.data.DataLoader(Numbers(), **kwargs))
    )


def test_timeout_without_workers_fails_like_torch(torch):
    with pytest.raises(AssertionError):
        iter(DataLoader(Numbers(), timeout=1))
    with pytest.raises(AssertionError):
        iter(torch.utils.data.DataLoader(Numbers(), timeout=1))


def test_loader_is_generic_and_its_iterator_cannot_be_pickled():
    assert DataLoader[int].__origin__ is DataLoader
    with pytest.raises(NotImplementedError, match="cannot be pickled"):
        pickle.dumps(iter(DataLoader(Numbers())))


def test_iterable_dataset_refuses_shuffle_and_samplers():
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Shards(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Shards(3), sampler=[0])


def test_attributes_are_frozen():
    loader = DataLoader(Numbers(), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after"):
        loader.batch_size = 3
    assert isinstance(loader.batch_sampler, BatchSampler)


def test_pin_memory_without_gpu_warns_and_changes_nothing():
    loader = DataLoader(Numbers(), batch_size=4, pin_memory=True)
    with pytest.warns(UserWarning, match="no accelerator is found"):
        batches = list(loader)
    assert plain(batches) == plain(DataLoader(Numbers(), batch_size=4))


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_workers_keep_the_sampler_order(num_workers):
    g = tocha.Generator().manual_seed(0)
    serial = plain(DataLoader(Numbers(), batch_size=3, shuffle=True, generator=g))
    g = tocha.Generator().manual_seed(0)
    parallel = plain(
        DataLoader(Numbers(), batch_size=3, shuffle=True, generator=g, num_workers=num_workers)
    )
    assert parallel == serial


def test_out_of_order_gives_every_batch():
    batches = plain(DataLoader(Numbers(), batch_size=2, num_workers=2, in_order=False))
    assert sorted(sum((b[0] for b in batches), [])) == list(range(23))


class SlowFirst(Dataset):
    """Item 0 takes a second, the others none."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 0:
            time.sleep(1)
        return i


def test_out_of_order_yields_batches_as_they_are_ready():
    batches = [b.item() for b in DataLoader(SlowFirst(), num_workers=2, in_order=False)]
    assert sorted(batches) == list(range(8)) and batches[0] != 0
    assert [b.item() for b in DataLoader(SlowFirst(), num_workers=2)] == list(range(8))


def test_worker_batches_arrive_in_shared_memory():
    loader = DataLoader(TensorDataset(tocha.arange(100.0)), batch_size=10, num_workers=2)
    for (x,) in loader:
        assert x.is_shared()


def test_same_batches_with_zero_and_two_workers_under_a_fixed_generator():
    def run(workers):
        # in the main process (no workers) the items draw from the global generators
        tocha.manual_seed(7), random.seed(7), np.random.seed(7)
        g = tocha.Generator().manual_seed(123)
        loader = DataLoader(Randoms(), batch_size=2, shuffle=True, generator=g, num_workers=workers)
        return [[t.tolist() for t in batch] for epoch in range(2) for batch in loader]

    assert run(2) == run(2)
    assert run(0) == run(0)
    zero, two = run(0), run(2)
    assert [b[0] for b in zero] == [b[0] for b in two]  # the same samples in the same order


def test_workers_random_streams_differ_and_follow_the_generator():
    def values(seed):
        g = tocha.Generator().manual_seed(seed)
        loader = DataLoader(Randoms(), batch_size=1, num_workers=2, generator=g)
        return [[t.item() for t in batch] for batch in loader]

    first = values(1)
    assert first == values(1) and first != values(2)
    # batches 0 and 1 come from workers 0 and 1: each stream (random, NumPy, tocha) differs
    assert all(first[0][k] != first[1][k] for k in (1, 2, 3))


def test_worker_info_and_init_fn():
    def init(worker_id):
        info = get_worker_info()
        assert info.id == worker_id and info.num_workers == 2
        np.random.seed(1000 + worker_id)

    class WhoAmI(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = get_worker_info()
            return info.id, info.seed - info.id

    out = list(DataLoader(WhoAmI(), batch_size=1, num_workers=2, worker_init_fn=init))
    assert [b[0].item() for b in out] == [0, 1, 0, 1]
    assert len({b[1].item() for b in out}) == 1  # one base seed per iterator
    assert get_worker_info() is None


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
@pytest.mark.parametrize("num_workers", [0, 2, 3])
def test_iterable_dataset_sharded_by_worker(num_workers):
    batches = list(DataLoader(Shards(20), batch_size=3, num_workers=num_workers))
    values = sorted(sum((b.tolist() for b in batches), []))
    assert values == list(range(20))


class Pids(Dataset):
    """Item i is the pid of the process that reads it."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return os.getpid()


def test_persistent_workers_reused_across_epochs():
    loader = DataLoader(Numbers(), batch_size=4, num_workers=2, persistent_workers=True)
    first = plain(loader)
    second = plain(loader)
    assert first == second == plain(DataLoader(Numbers(), batch_size=4))
    half = iter(loader)
    next(half)
    assert plain(loader) == first  # an epoch abandoned midway does not leak into the next
    assert list(half) == []  # ... and ends when the next one starts

    loader = DataLoader(Pids(), batch_size=2, num_workers=2, persistent_workers=True)
    pids = {pid for batch in loader for pid in batch.tolist()}
    assert len(pids) == 2 and os.getpid() not in pids
    assert {pid for batch in loader for pid in batch.tolist()} == pids
    del loader
    gc.collect()
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)


def test_persistent_workers_restart_their_streams_every_epoch():
    loader = DataLoader(Shards(10), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b.tolist() for b in loader]
    half = iter(loader)
    next(half)
    assert [b.tolist() for b in loader] == first == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]


def test_spawn_context():
    loader = DataLoader(
        TensorDataset(tocha.arange(6.0)),
        batch_size=2,
        num_workers=2,
        multiprocessing_context="spawn",
    )
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
