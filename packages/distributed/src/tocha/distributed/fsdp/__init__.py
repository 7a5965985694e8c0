"""``tocha.distributed.fsdp``, as ``torch.distributed.fsdp``: the policies of fully sharded
data parallelism (`MixedPrecisionPolicy`, `CPUOffloadPolicy`, `OffloadPolicy`), which are
plain settings, and `fully_shard` / `FullyShardedDataParallel`, which are not in tocha yet:
they raise NotImplementedError (tocha's data parallelism is `DistributedDataParallel`)."""

from __future__ import annotations

import dataclasses

import tocha

__all__ = [
    "CPUOffloadPolicy",
    "FullyShardedDataParallel",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "fully_shard",
]


@dataclasses.dataclass(frozen=True)
class MixedPrecisionPolicy:
    """The dtypes of sharded parameters in forward and backward, of gradient reduction and of
    the outputs (None keeps the original one)."""

    param_dtype: tocha.dtype | None = None
    reduce_dtype: tocha.dtype | None = None
    output_dtype: tocha.dtype | None = None
    cast_forward_inputs: bool = True


@dataclasses.dataclass
class OffloadPolicy:
    """No offloading."""


@dataclasses.dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep sharded parameters and gradients in CPU memory (`pin_memory`: in pinned memory)."""

    pin_memory: bool = True


def fully_shard(module, **kwargs):
    """Shard `module`'s parameters over the ranks: not in tocha yet, raises
    NotImplementedError."""
    raise NotImplementedError("torch.distributed.fsdp.fully_shard is not in tocha yet")


class FullyShardedDataParallel:
    """The FSDP wrapper: not in tocha yet; wrapping a module raises NotImplementedError (use
    `tocha.distributed.DistributedDataParallel`)."""

    def __init__(self, module, *args, **kwargs) -> None:
        raise NotImplementedError(
            "torch.distributed.fsdp.FullyShardedDataParallel is not in tocha yet "
            "(tocha.nn.parallel.DistributedDataParallel is)"
        )
