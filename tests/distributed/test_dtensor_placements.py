"""tocha.distributed.tensor's placements and layout arithmetic (as torch.distributed.tensor's),
and the distributed names libraries import that tocha does not implement yet, which raise
NotImplementedError when used."""

from __future__ import annotations

import importlib

import pytest

import tocha
from tocha.distributed import device_mesh, fsdp
from tocha.distributed._functional_collectives import wait_tensor
from tocha.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from tocha.distributed.tensor._utils import compute_local_shape_and_global_offset
from tocha.distributed.tensor.placement_types import _StridedShard

try:  # PyTorch loads the module only when it is imported; replay runs have no PyTorch
    importlib.import_module("torch.distributed.tensor")
except ImportError:
    pass


def test_placements_are_values(torch):
    t = torch.distributed.tensor
    for got, want in [
        (Shard(1), t.Shard(1)),
        (Replicate(), t.Replicate()),
        (Partial(), t.Partial()),
    ]:
        assert repr(got) == repr(want) and str(got) == str(want)
        assert (got.is_shard(), got.is_replicate(), got.is_partial()) == (
            want.is_shard(),
            want.is_replicate(),
            want.is_partial(),
        )
    assert Shard(0) == Shard(0) != Shard(1) and len({Replicate(), Replicate()}) == 1
    assert Shard(0).is_shard(0) and not Shard(0).is_shard(1) and Partial("max").is_partial("max")
    assert _StridedShard(0, split_factor=2) != Shard(0)


@pytest.mark.parametrize("size,chunks", [(10, 3), (2, 4), (8, 2)], ids=["10by3", "2by4", "8by2"])
def test_local_shard_size_and_offset_matches_torch(torch, size, chunks):
    for rank in range(chunks):
        got = Shard.local_shard_size_and_offset(size, chunks, rank)
        want = torch.distributed.tensor.Shard.local_shard_size_and_offset(size, chunks, rank)
        assert got == tuple(want), (size, chunks, rank)


class Mesh:
    def __init__(self, sizes, coordinate):
        self.sizes, self.coordinate = sizes, coordinate

    def size(self, dim):
        return self.sizes[dim]

    def get_coordinate(self):
        return self.coordinate


def test_local_shape_and_global_offset():
    mesh = Mesh([2, 3], [1, 2])
    assert compute_local_shape_and_global_offset((8, 9), mesh, [Shard(0), Shard(1)]) == (
        (4, 3),
        (4, 6),
    )
    assert compute_local_shape_and_global_offset((8, 9), mesh, [Replicate(), Shard(0)]) == (
        (2, 9),
        (6, 0),
    )
    assert compute_local_shape_and_global_offset((8,), Mesh([2], None), [Shard(0)]) == ((), ())


def test_what_tocha_lacks_says_so():
    assert not isinstance(tocha.ones(2), DTensor)
    assert wait_tensor(t := tocha.ones(2)) is t
    for make in (
        lambda: DTensor(),
        lambda: DTensor.from_local(tocha.ones(1)),
        lambda: distribute_tensor(tocha.ones(1)),
        lambda: device_mesh.DeviceMesh("cpu", [0]),
        lambda: fsdp.fully_shard(tocha.nn.Linear(1, 1)),
    ):
        with pytest.raises(NotImplementedError, match="not in tocha yet"):
            make()
    policy = fsdp.MixedPrecisionPolicy(param_dtype=tocha.bfloat16)
    assert policy.param_dtype is tocha.bfloat16 and policy.cast_forward_inputs
    assert fsdp.CPUOffloadPolicy().pin_memory
