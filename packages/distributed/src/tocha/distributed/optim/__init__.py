"""``tocha.distributed.optim``, as ``torch.distributed.optim``: `ZeroRedundancyOptimizer`,
which shards an optimizer's state over the ranks."""

from ._zero import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
