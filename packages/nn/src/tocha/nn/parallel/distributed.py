"""Where ``tocha.nn.parallel.DistributedDataParallel`` comes from: tocha-distributed's class
when it is installed, else a stand-in that imports (so ``isinstance`` checks and scripts that
only import it work) and raises ImportError naming tocha-distributed when instantiated."""

from __future__ import annotations

from ..modules.module import Module

__all__ = ["distributed_data_parallel"]

_MISSING = (
    "DistributedDataParallel needs tocha-distributed, which is not installed: "
    "pip install tocha-distributed"
)


class _DistributedDataParallelMissing(Module):
    """The stand-in for ``DistributedDataParallel`` without tocha-distributed."""

    def __new__(cls, *args, **kwargs):
        raise ImportError(_MISSING)


_DistributedDataParallelMissing.__name__ = "DistributedDataParallel"
_DistributedDataParallelMissing.__qualname__ = "DistributedDataParallel"


def distributed_data_parallel() -> type:
    """tocha-distributed's ``DistributedDataParallel``, or the stand-in without it."""
    try:
        from tocha.distributed import DistributedDataParallel
    except ImportError:
        return _DistributedDataParallelMissing
    return DistributedDataParallel
