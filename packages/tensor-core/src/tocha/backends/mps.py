"""``tocha.backends.mps``: Apple's Metal backend, which tocha does not have."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether an MPS device can be used: never, in tocha."""
    return False


def is_built() -> bool:
    """Whether tocha was built with MPS: no."""
    return False
