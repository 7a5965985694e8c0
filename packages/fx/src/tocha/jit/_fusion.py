"""Fusion settings of PyTorch's JIT: accepted and reported, with nothing to fuse in tocha."""

from __future__ import annotations

from typing import Any

_STATE: dict[str, Any] = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled: bool) -> None:
    """Turn oneDNN fusion on or off (a setting only: tocha's interpreter does not fuse)."""
    _STATE["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """Whether `enable_onednn_fusion` turned oneDNN fusion on."""
    return _STATE["onednn"]


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Set the fusion strategy (``[("STATIC", 2), ("DYNAMIC", 10)]``); returns the previous.

    Raises:
        RuntimeError: for a kind other than ``STATIC`` or ``DYNAMIC``.
    """
    for kind, _ in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise RuntimeError(f"Expected STATIC or DYNAMIC, got {kind}")
    previous = _STATE["strategy"]
    _STATE["strategy"] = list(strategy)
    return previous


class strict_fusion:  # noqa: N801  (PyTorch's name)
    """A context manager asking that the code inside be fused; a no-op in tocha."""

    def __enter__(self) -> strict_fusion:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
