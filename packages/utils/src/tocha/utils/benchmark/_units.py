"""Time units for reports: picking one for a time, naming it, rounding to significant
figures, and keeping the first of repeated items."""

from __future__ import annotations

import math

__all__ = ["ordered_unique", "select_unit", "trim_sigfig", "unit_to_english"]

# (unit, seconds), largest first
_UNITS = (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))
_ENGLISH = {"s": "second", "ms": "millisecond", "us": "microsecond", "ns": "nanosecond"}


def select_unit(t: float) -> tuple[str, float]:
    """The largest unit in which `t` seconds is at least 1, as ``(name, seconds per unit)``;
    seconds for a time under a nanosecond, as PyTorch's."""
    for unit, scale in _UNITS:
        if t >= scale:
            return unit, scale
    return _UNITS[0]


def unit_to_english(u: str) -> str:
    """The English name of a unit: ``"us"`` is ``"microsecond"``."""
    return _ENGLISH[u]


def trim_sigfig(x: float, n: int) -> float:
    """`x` rounded to `n` significant figures."""
    if x == 0 or not math.isfinite(x):
        return float(x)
    magnitude = math.floor(math.log10(abs(x)))
    return float(round(x, n - 1 - magnitude))


def ordered_unique(elements) -> list:
    """`elements` without repeats, in the order each first appears."""
    return list(dict.fromkeys(elements))
