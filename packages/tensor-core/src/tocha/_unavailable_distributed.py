"""``torch.distributed`` under the torch alias when tocha-distributed is not installed: as in
a PyTorch built without distributed support, `is_available` answers False, so that libraries
that ask first skip it; any other name raises AttributeError naming the distribution."""

from __future__ import annotations

import types

__all__ = ["unavailable_distributed"]


def is_available() -> bool:
    """Whether ``torch.distributed`` can run: not without tocha-distributed."""
    return False


class _Unavailable(types.ModuleType):
    def __getattr__(self, name: str):
        from ._missing import not_installed

        raise AttributeError(
            f"module 'torch.distributed' has no attribute '{name}': torch.distributed comes "
            f"from {not_installed('tocha-distributed')}"
        )


def unavailable_distributed() -> types.ModuleType:
    """A ``torch.distributed`` module whose `is_available()` is False."""
    module = _Unavailable("torch.distributed", __doc__)
    module.is_available = is_available
    return module
