"""Structured control flow as functions: `cond` and `while_loop`.

Run eagerly they are plain Python control flow on the predicate's value; their point is the
graph a tracer can keep of them, so the functions' contract (a boolean predicate, operands as a
tuple or list, branch functions taking the operands) is checked here as PyTorch checks it.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

from ._api import export
from ._tensor import Tensor


def _truth(pred, who: str) -> builtins.bool:
    """The Python truth of a predicate: a bool, or a one-element tensor."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(
                f"Expected pred to be bool or single-element tensor, but got {pred}."
            )
        return builtins.bool(pred.item())
    if isinstance(pred, (builtins.bool, builtins.int, builtins.float)):
        return builtins.bool(pred)
    raise RuntimeError(f"{who}: expected pred to be bool or single-element tensor, got {pred!r}")


def cond(pred, true_fn: Callable, false_fn: Callable, operands=()):
    """``true_fn(*operands)`` if `pred` holds, else ``false_fn(*operands)``.

    `pred` is a bool or a one-element tensor; `operands` a tuple or list of the branches'
    arguments. Both branches should return tensors of the same shapes and dtypes (a traced
    graph keeps both)."""
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches of torch.cond to be callable.")
    if isinstance(operands, Tensor):
        operands = (operands,)
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple or list, but got {type(operands)}.")
    branch = true_fn if _truth(pred, "torch.cond") else false_fn
    return branch(*operands)


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs):
    """Run ``carried_inputs = body_fn(*carried_inputs)`` while ``cond_fn(*carried_inputs)``
    holds; the final carried values.

    `cond_fn` returns a bool or a one-element boolean tensor; `body_fn` returns the next
    carried values (a tuple of the same length, or a single value for a single input)."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(
            f"carried_inputs must be a tuple or list, but got {type(carried_inputs)}."
        )
    values = carried_inputs
    while _truth(cond_fn(*_as_args(values)), "torch.while_loop"):
        values = body_fn(*_as_args(values))
    return values


def _as_args(values) -> tuple:
    return tuple(values) if isinstance(values, (tuple, list)) else (values,)


export(cond)
export(while_loop)
