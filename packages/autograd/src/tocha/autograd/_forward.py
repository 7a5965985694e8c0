"""Forward-mode AD: tangents carried beside primals, and the table of forward rules.

A tensor made dual at the active level holds ``(level, tangent)`` in its autograd metadata
(``AutogradMeta.fw``); a tangent of an older level reads as none, so leaving a level needs no
sweep. While a level is active the dispatcher shows every op on such a tensor to the autograd
layer, which asks the op's forward rule for the outputs' tangents (`propagate`).

``fwd(name, rule)`` declares the forward rule of primitive `name`: ``rule(tangents, out,
*args)`` gets the op's arguments as the dispatcher received them, their tangents in the same
positions (None for a non-tensor, or a tensor without tangent; at least one is set), and the
op's output (a tuple for several); it returns the output's tangent (one per output for
several, None where an output gets none). Rules are written in tocha ops on the primals and
are not themselves differentiated forward (one level at a time, as in PyTorch), but they are
recorded for backward, so a gradient of a tangent is right.
"""

from __future__ import annotations

import itertools

import tocha
from tocha import Tensor
from tocha.library import GRAD_MODE, REGISTRY, TENSOR_TYPES, call

from ._graph import AutogradMeta

FORWARD_RULES: dict = {}


class _Level:
    """The active dual level (None outside `dual_level`); rules run with it suspended."""

    __slots__ = ("current",)

    def __init__(self):
        self.current = None


LEVEL = _Level()
_LEVEL_IDS = itertools.count()


def fwd(name: str, rule) -> None:
    """Declare the forward rule of primitive `name` (see the module docstring)."""
    if name in FORWARD_RULES:
        raise ValueError(f"forward rule of {name!r} is declared twice")
    FORWARD_RULES[name] = rule


def _tensor_positions(args) -> int:
    """How many leading arguments are tensors (the dispatcher passes tensors first)."""
    n = 0
    for a in args:
        if type(a) not in TENSOR_TYPES:
            break
        n += 1
    return n


def _filled(tangents, args, k: int) -> list:
    """The first `k` tangents, a zero tangent standing in for each missing one."""
    return [t if t is not None else tocha.zeros_like(a) for t, a in zip(tangents[:k], args[:k])]


def linear_rule(name: str):
    """The forward rule of an op linear in its tensor arguments (the leading ones): the op
    itself applied to the tangents."""
    op = REGISTRY[name]

    def rule(tangents, out, *args):
        k = _tensor_positions(args)
        return call(op, _filled(tangents, args, k), *args[k:])

    return rule


def multilinear_rule(name: str):
    """The forward rule of an op linear in each tensor argument separately (a product): the
    sum over arguments with a tangent of the op with that argument replaced by its tangent."""
    op = REGISTRY[name]

    def rule(tangents, out, *args):
        k = _tensor_positions(args)
        total = None
        for i in range(k):
            if tangents[i] is None:
                continue
            inputs = list(args[:k])
            inputs[i] = tangents[i]
            term = call(op, inputs, *args[k:])
            total = term if total is None else total + term
        return total

    return rule


def fwd_linear(*names: str) -> None:
    """Declare ops linear in their tensor arguments: their forward rule is the op itself."""
    for name in names:
        fwd(name, linear_rule(name))


def fwd_multilinear(*names: str) -> None:
    """Declare ops linear in each tensor argument separately (products)."""
    for name in names:
        fwd(name, multilinear_rule(name))


def tangent_of(t, level):
    """`t`'s tangent at `level`, or None."""
    if type(t) not in TENSOR_TYPES:
        return None
    meta = t._ag
    if meta is None:
        return None
    fw = meta.fw
    if fw is None or fw[0] != level:
        return None
    return fw[1]


def set_tangent(t: Tensor, tangent, level) -> None:
    """Make `t` dual at `level` with `tangent` (None removes it)."""
    meta = t._ag
    if meta is None:
        if tangent is None:
            return
        meta = t._ag = AutogradMeta(False)
    meta.fw = None if tangent is None else (level, tangent)


def no_rule(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not "
        "been implemented yet."
    )


def _is_float(t) -> bool:
    return type(t) in TENSOR_TYPES and t._data.dtype.kind in "fcV"


def _fit(tangent, out):
    """A rule's tangent in the output's shape and dtype (a rule may leave it broadcastable,
    or in the dtype of the arguments that had tangents when the op promoted others')."""
    if tangent is None or not _is_float(out):
        return None
    if not isinstance(tangent, Tensor):
        raise TypeError(f"a forward rule returned {type(tangent).__name__}, not a Tensor")
    if tangent._data.dtype != out._data.dtype:
        tangent = tangent.to(out.dtype)
    if tangent._data.shape != out._data.shape:
        tangent = tangent.expand(out._data.shape)
    return tangent


def propagate(op, args, out):
    """Give `op`'s outputs their tangents at the active level, when an argument has one."""
    level = LEVEL.current
    if level is None or not op.differentiable:
        return
    tangents = [tangent_of(a, level) for a in args]
    if not any(t is not None for t in tangents):
        return
    rule = FORWARD_RULES.get(op.name)
    if rule is None:
        raise no_rule(op.name)
    LEVEL.current = None
    try:
        result = rule(tangents, out, *args)
    finally:
        LEVEL.current = level
    if type(out) is tuple:
        if type(result) is not tuple:
            result = (result,) + (None,) * (len(out) - 1)
        for o, t in zip(out, result):
            set_tangent(o, _fit(t, o), level)
    else:
        set_tangent(out, _fit(result, out), level)


def enter() -> int:
    if LEVEL.current is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    LEVEL.current = level = next(_LEVEL_IDS)
    GRAD_MODE.transforms += 1
    return level


def leave(level) -> None:
    if LEVEL.current is None:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    if level is not None and level != LEVEL.current:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    LEVEL.current = None
    GRAD_MODE.transforms -= 1
