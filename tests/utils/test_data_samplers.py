"""Datasets, random_split and samplers of tocha.utils.data: behaviour, statistics, and
agreement with torch.utils.data where the result is deterministic."""

from __future__ import annotations

import math
import sys
import types
from collections import Counter

import numpy as np
import pytest

import tocha
from tocha.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * i


class Stream(IterableDataset):
    def __init__(self, values):
        self.values = values

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        return len(self.values)


def test_tensor_dataset():
    x, y = tocha.arange(12).reshape(6, 2), tocha.arange(6)
    ds = TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[2]
    assert a.tolist() == [4, 5] and b.item() == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, tocha.arange(5))


def test_concat_and_add():
    ds = Squares(3) + Squares(2)
    assert isinstance(ds, ConcatDataset)
    assert [ds[i] for i in range(len(ds))] == [0, 1, 4, 0, 1]
    assert ds.cumulative_sizes == [3, 5]
    assert ds[-1] == 1
    with pytest.raises(ValueError, match="absolute value of index"):
        ds[-6]
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Squares(2), Stream([1])])
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        ConcatDataset([])


def test_chain_dataset():
    ds = Stream([1, 2]) + Stream([3])
    assert isinstance(ds, ChainDataset)
    assert list(ds) == [1, 2, 3] and len(ds) == 3
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(ChainDataset([Squares(2)]))


def test_subset_and_stack_dataset():
    sub = Subset(Squares(10), [3, 1, 4])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [9, 1, 16]
    assert sub.__getitems__([0, 2]) == [9, 16]
    st = StackDataset(Squares(3), Subset(Squares(5), [4, 3, 2]))
    assert st[1] == (1, 9) and st.__getitems__([0, 2]) == [(0, 16), (4, 4)]
    named = StackDataset(a=Squares(2), b=Squares(2))
    assert named[1] == {"a": 1, "b": 1} and named.__getitems__([1]) == [{"a": 1, "b": 1}]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(Squares(2), Squares(3))
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()


def test_random_split_lengths_and_fractions():
    g = tocha.Generator().manual_seed(1)
    parts = random_split(range(10), [3, 7], generator=g)
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    parts = random_split(range(11), [0.5, 0.3, 0.2], generator=g)
    assert [len(p) for p in parts] == [6, 3, 2]  # floors 5, 3, 2; the remainder to the first
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [1.0, 0.0])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(5), [2, 2])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(range(5), [1.5, -0.5])
    again = random_split(range(10), [3, 7], generator=tocha.Generator().manual_seed(1))
    first = random_split(range(10), [3, 7], generator=tocha.Generator().manual_seed(1))
    assert again[0].indices == first[0].indices


def test_random_split_lengths_agree_with_torch(torch):
    for n, fracs in [(11, [0.5, 0.3, 0.2]), (7, [0.1, 0.9]), (100, [1 / 3] * 3)]:
        ours = [len(p) for p in random_split(range(n), fracs)]
        assert ours == [len(p) for p in torch.utils.data.random_split(range(n), fracs)]


def test_sequential_and_batch_sampler_agree_with_torch(torch):
    for size, drop in [(3, False), (3, True), (5, False), (10, True)]:
        ours = BatchSampler(SequentialSampler(range(10)), size, drop)
        theirs = torch.utils.data.BatchSampler(
            torch.utils.data.SequentialSampler(range(10)), size, drop
        )
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, 1)


def test_random_sampler_covers_an_epoch_once():
    g = tocha.Generator().manual_seed(0)
    sampler = RandomSampler(range(1000), generator=g)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == list(range(1000)) and sorted(second) == list(range(1000))
    assert first != second and first != sorted(first)
    more = list(RandomSampler(range(10), num_samples=25, generator=g))
    assert len(more) == 25 and Counter(more[:20]) == Counter(list(range(10)) * 2)


def test_random_sampler_reproducible_and_default_generator():
    a = list(RandomSampler(range(50), generator=tocha.Generator().manual_seed(3)))
    b = list(RandomSampler(range(50), generator=tocha.Generator().manual_seed(3)))
    assert a == b
    tocha.manual_seed(5)
    c = list(RandomSampler(range(50)))
    tocha.manual_seed(5)
    assert list(RandomSampler(range(50))) == c


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.utils.data.RandomSampler(
            range(8), generator=lib.Generator().manual_seed(42)
        ),
        lambda lib: lib.utils.data.RandomSampler(
            range(5), num_samples=12, generator=lib.Generator().manual_seed(1)
        ),
        lambda lib: lib.utils.data.RandomSampler(
            range(5), replacement=True, num_samples=40, generator=lib.Generator().manual_seed(1)
        ),
    ],
    ids=["whole_epochs", "epochs_and_a_part", "replacement"],
)
def test_random_sampler_epochs_follow_torchs_stream(torch, make):
    """A permutation is drawn (and dropped) for the empty last part of an epoch, as PyTorch
    draws it: the second and later epochs depend on it."""
    from tocha.compat import use_pytorch_random

    previous = use_pytorch_random(True)
    try:
        ours = make(tocha)
        got = [list(ours) for _ in range(3)]
    finally:
        use_pytorch_random(previous)
    theirs = make(torch)
    assert got == [list(theirs) for _ in range(3)]


def test_random_sampler_with_replacement_is_uniform():
    n, draws = 10, 20_000
    counts = Counter(
        RandomSampler(
            range(n),
            replacement=True,
            num_samples=draws,
            generator=tocha.Generator().manual_seed(0),
        )
    )
    assert sum(counts.values()) == draws and set(counts) <= set(range(n))
    sd = math.sqrt(draws * 0.1 * 0.9)
    assert all(abs(counts[i] - draws / n) < 5 * sd for i in range(n))


def test_random_sampler_validation():
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)


def test_subset_random_sampler():
    indices = [5, 7, 9, 11]
    out = list(SubsetRandomSampler(indices, generator=tocha.Generator().manual_seed(0)))
    assert sorted(out) == indices and len(SubsetRandomSampler(indices)) == 4


def test_weighted_random_sampler_frequencies_within_binomial_bounds():
    weights = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
    draws = 30_000
    sampler = WeightedRandomSampler(weights, draws, generator=tocha.Generator().manual_seed(0))
    counts = Counter(sampler)
    total = sum(weights)
    for i, w in enumerate(weights):
        p = w / total
        assert abs(counts[i] - draws * p) < 5 * math.sqrt(draws * p * (1 - p)), (i, counts)


def test_weighted_random_sampler_without_replacement_and_validation():
    out = list(
        WeightedRandomSampler(
            [1, 0, 5, 2], 3, replacement=False, generator=tocha.Generator().manual_seed(0)
        )
    )
    assert sorted(out) == [0, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        WeightedRandomSampler([1.0], True)
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        WeightedRandomSampler([1.0], 1, replacement=None)


@pytest.mark.parametrize(
    "n,replicas,drop_last", [(10, 3, False), (10, 3, True), (8, 4, False), (2, 4, False)]
)
def test_distributed_sampler_agrees_with_torch_without_shuffle(torch, n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(
            range(n), replicas, rank, shuffle=False, drop_last=drop_last
        )
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_distributed_sampler_shuffle_partitions_and_set_epoch():
    samplers = [DistributedSampler(range(12), 3, r, seed=7) for r in range(3)]
    shares = [list(s) for s in samplers]
    assert sorted(sum(shares, [])) == list(range(12))
    assert shares == [list(DistributedSampler(range(12), 3, r, seed=7)) for r in range(3)]
    for s in samplers:
        s.set_epoch(1)
    assert [list(s) for s in samplers] != shares
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval"):
        DistributedSampler(range(4), 3, 3)


def test_distributed_sampler_defaults_come_from_the_process_group(monkeypatch):
    monkeypatch.delitem(sys.modules, "tocha.distributed", raising=False)
    with pytest.raises(RuntimeError, match="Requires distributed package"):
        DistributedSampler(range(4))
    group = types.SimpleNamespace(
        is_available=lambda: True,
        is_initialized=lambda: False,
        get_world_size=lambda: 2,
        get_rank=lambda: 1,
    )
    monkeypatch.setitem(sys.modules, "tocha.distributed", group)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))
    group.is_initialized = lambda: True
    sampler = DistributedSampler(range(4), shuffle=False)
    assert (sampler.num_replicas, sampler.rank, list(sampler)) == (2, 1, [1, 3])


def test_sampler_index_arrays_are_plain_ints():
    assert all(type(i) is int for i in RandomSampler(range(5)))
    assert all(type(i) is int for i in WeightedRandomSampler(np.ones(4), 4))
