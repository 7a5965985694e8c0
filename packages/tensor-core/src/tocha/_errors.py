"""The exception classes PyTorch names at its top level for device failures."""

from __future__ import annotations

__all__ = ["AcceleratorError", "OutOfMemoryError"]


class OutOfMemoryError(RuntimeError):
    """A device ran out of memory (on a GPU: after the cache was emptied once and the
    allocation retried), as `torch.OutOfMemoryError` (also `torch.cuda.OutOfMemoryError`)."""


class AcceleratorError(RuntimeError):
    """An accelerator reported an error while running work, as `torch.AcceleratorError`."""
