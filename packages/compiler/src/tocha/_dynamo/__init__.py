"""tocha._dynamo: the parts of ``torch._dynamo`` that programs call (``reset``, ``config``,
``disable``, ``list_backends``, ``exc``), over tocha's compiler."""

from __future__ import annotations

from typing import Any

from tocha.compiler import (
    allow_in_graph,
    assume_constant_result,
    config,
    disable,
    list_backends,
    reset,
)

from . import exc

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "exc",
    "list_backends",
    "mark_dynamic",
    "reset",
]


def mark_dynamic(t: Any, index: Any, min: Any = None, max: Any = None) -> None:
    """Accept a request to treat dimension(s) `index` of `t` as dynamic. tocha's compiler
    makes a dim dynamic when a call shows it a second size (or, with ``dynamic=True``, the
    batch dim from the first call), so the request itself changes nothing; an index out of
    range raises IndexError."""
    for i in index if isinstance(index, (list, tuple)) else [index]:
        if not -t.dim() <= i < t.dim():
            raise IndexError(
                f"mark_dynamic: dimension {i} is out of range for a {t.dim()}-d tensor"
            )
