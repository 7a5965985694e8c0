"""The emitter table: for each graph target (a public tocha function, a Tensor method, an
``operator`` function, or a tocha primitive by its registry name) the function that writes
it as ONNX nodes.

An emitter is called as ``emit(builder, node, *node.args, **node.kwargs)`` with the call's
own arguments (graph values stay fx nodes; ``builder.value`` names them) and returns the ONNX
name of its result, or a tuple of names for a tuple result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tocha

from . import (
    _attention,
    _core,
    _nn,
    _norm,
    _pointwise,
    _primitives,
    _reduce,
    _resize,
    _rnn,
    _shape,
)

FUNCTIONS: dict[Any, Callable] = {
    **_pointwise.FUNCTIONS,
    **_shape.FUNCTIONS,
    **_nn.FUNCTIONS,
    **_norm.FUNCTIONS,
    **_reduce.FUNCTIONS,
    **_resize.FUNCTIONS,
    **_attention.FUNCTIONS,
}
PRIMITIVES: dict[str, Callable] = {
    **_core.PRIMITIVES,
    **_attention.PRIMITIVES,
    **_primitives.PRIMITIVES,
    **_rnn.PRIMITIVES,
}


def lookup(target: Any) -> Callable | None:
    """The emitter of a call_function target (or of the function it wraps, for a decorated
    one), or None when there is none."""
    while target is not None:
        try:
            emit = FUNCTIONS.get(target)
        except TypeError:
            emit = None
        if emit is None:
            emit = PRIMITIVES.get(getattr(target, "name", None))
        if emit is not None:
            return emit
        target = getattr(target, "__wrapped__", None)
    return None


def out_of_place(target: Any) -> Any:
    """The out-of-place form of an in-place tocha function or Tensor method (``add_`` ->
    ``add``), or None."""
    target = _unwrapped(target)
    name = getattr(target, "__name__", "")
    if not name.endswith("_") or name.startswith("_"):
        return None
    for owner in (tocha, tocha.Tensor):
        if _unwrapped(getattr(owner, name, None)) is target:
            return getattr(owner, name[:-1], None)
    return None


def _unwrapped(fn: Any) -> Any:
    """`fn` without the wrappers its publication added (``__wrapped__``)."""
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn
