"""``tocha.backends.cudnn``: the cuDNN flags PyTorch programs assign
(``tocha.backends.cudnn.benchmark = True``), as ``torch.backends.cudnn``. tocha has no cuDNN;
the flags are kept as set and change nothing."""

from __future__ import annotations

__all__ = ["enabled", "benchmark", "deterministic", "allow_tf32", "is_available", "version"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Whether cuDNN can be used: never, in tocha."""
    return False


def version() -> None:
    """cuDNN's version: None, as PyTorch says when it has none."""
    return None
