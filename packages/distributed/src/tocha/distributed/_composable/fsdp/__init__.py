"""``tocha.distributed._composable.fsdp``, as PyTorch's: where `fully_shard` and its policies
were published before ``torch.distributed.fsdp``; the same objects."""

from tocha.distributed.fsdp import (
    CPUOffloadPolicy,
    MixedPrecisionPolicy,
    OffloadPolicy,
    fully_shard,
)

__all__ = ["CPUOffloadPolicy", "MixedPrecisionPolicy", "OffloadPolicy", "fully_shard"]
