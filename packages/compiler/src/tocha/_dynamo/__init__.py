"""tocha._dynamo: the parts of ``torch._dynamo`` that programs and their tests call
(``reset``, ``config``, ``disable``, ``list_backends``, ``mark_dynamic``, ``optimize``,
``exc``, ``testing``, ``utils``), over tocha's compiler."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tocha
from tocha.compiler import (
    _dynamic,
    allow_in_graph,
    assume_constant_result,
    config,
    disable,
    list_backends,
    reset,
)

from . import exc, testing, utils

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "exc",
    "list_backends",
    "mark_dynamic",
    "optimize",
    "reset",
    "testing",
    "utils",
]


def optimize(
    backend: Any = "inductor",
    *,
    nopython: bool = False,
    dynamic: bool | None = None,
    disable: bool = False,
) -> Callable[[Callable], Any]:
    """The older form of ``tocha.compile``: ``optimize(backend)(fn)`` is ``tocha.compile(fn,
    backend=backend, fullgraph=nopython, dynamic=dynamic)``."""

    def decorate(fn: Callable) -> Any:
        return tocha.compile(
            fn, backend=backend, fullgraph=nopython, dynamic=dynamic, disable=disable
        )

    return decorate


def mark_dynamic(t: Any, index: Any, min: Any = None, max: Any = None) -> None:
    """Mark dimension(s) `index` of `t` as dynamic: a compiled function called with `t`
    compiles one graph for every size of them (see ``tocha.compile``'s dynamic sizes); an
    index out of range raises IndexError. `min` and `max` are accepted and not checked."""
    dims = list(index) if isinstance(index, (list, tuple)) else [index]
    for i in dims:
        if not -t.dim() <= i < t.dim():
            raise IndexError(
                f"mark_dynamic: dimension {i} is out of range for a {t.dim()}-d tensor"
            )
    _dynamic.mark(t, dims)
