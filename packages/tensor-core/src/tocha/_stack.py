"""Where a warning points: the first caller outside tocha."""

from __future__ import annotations

import sys

__all__ = ["user_stacklevel"]


def user_stacklevel() -> int:
    """The `stacklevel` for a `warnings.warn` made by this function's caller that names the
    first frame outside tocha (the user's line, however deep tocha's own calls went)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name != "tocha" and not name.startswith("tocha."):
            return level
        frame = frame.f_back
        level += 1
    return level
