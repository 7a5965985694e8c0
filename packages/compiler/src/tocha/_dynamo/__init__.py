"""tocha._dynamo: the parts of ``torch._dynamo`` that programs and their tests call
(``reset``, ``config``, ``disable``, ``list_backends``, ``mark_dynamic``, ``mark_static``,
``optimize``, ``explain``, ``is_compiling``, ``exc``, ``testing``, ``utils``,
``eval_frame.OptimizedModule``), over tocha's compiler."""

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
    is_compiling,
    list_backends,
    reset,
    set_stance,
)

from . import eval_frame, exc, testing, utils
from ._explain import ExplainOutput, explain

__all__ = [
    "ExplainOutput",
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "disallow_in_graph",
    "eval_frame",
    "exc",
    "explain",
    "graph_break",
    "is_compiling",
    "is_dynamo_supported",
    "list_backends",
    "mark_dynamic",
    "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic",
    "optimize",
    "reset",
    "set_stance",
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


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    """As `mark_dynamic` (PyTorch lets the compiler specialise such a dim again; tocha's
    traces tell a dim that can be dynamic from one that cannot by themselves)."""
    mark_dynamic(t, index)


def mark_static(t: Any, index: Any = None) -> None:
    """Dimension(s) `index` of `t` (all of them when None) are static: a compiled function
    compiles for their size, unmarking them where `mark_dynamic` marked them."""
    if isinstance(t, tocha.nn.Module):
        return  # PyTorch's module form: its integer attributes are treated as constants
    dims = None if index is None else list(index) if isinstance(index, (list, tuple)) else [index]
    _dynamic.unmark(t, dims)


def mark_static_address(t: Any, guard: bool = True) -> None:
    """Tells CUDA graphs that `t`'s memory does not move; tocha uses no CUDA graphs: a
    check that `t` is a tensor, nothing else."""
    if not isinstance(t, tocha.Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")


def graph_break(msg: str = "") -> None:
    """A graph break where PyTorch's tracer meets it; tocha records the kernels a program
    runs wherever they are, so the call does nothing."""


def disallow_in_graph(fn: Callable) -> Callable:
    """`fn` unchanged: tocha's capture records the kernels it runs."""
    return fn


def is_dynamo_supported() -> bool:
    """Whether ``tocha.compile`` works here: always."""
    return True
