"""``tocha.backends.opt_einsum``: the opt_einsum package's contraction-order search, which
PyTorch's einsum uses when it is installed. tocha's einsum orders contractions itself, so the
package is never used: `is_available` is False and `enabled` stays False."""

from __future__ import annotations

__all__ = ["enabled", "get_opt_einsum", "is_available", "strategy"]

enabled = False
strategy = None


def is_available() -> bool:
    """Whether einsum uses opt_einsum: not in tocha."""
    return False


def get_opt_einsum():
    """The opt_einsum module einsum uses: None."""
    return None
