"""Names of call targets, and their resolution against an allowlist.

A target is named ``tocha.<fn>``, ``tocha.nn.functional.<fn>`` (or ``tocha.linalg``,
``tocha.fft``, ``tocha.special``), ``tocha.Tensor.<method>``, ``tocha.export.ops.<primitive>``,
``operator.<fn>`` or ``builtins.getattr``. `resolve` accepts only those: a saved program can
name nothing else (``os.system`` is refused).
"""

from __future__ import annotations

import builtins
import importlib
import operator
import types
from typing import Any

import tocha

from . import ops

__all__ = ["resolve", "target_name"]

# Most specific first: a function published in two namespaces (``tocha.conv2d`` is
# ``tocha.nn.functional.conv2d``, put in ``tocha`` on first access) is named by the same one
# in every process.
_NAMESPACES = ("tocha.nn.functional", "tocha.linalg", "tocha.fft", "tocha.special", "tocha")
_OPERATORS = frozenset(
    {
        "getitem",
        "setitem",
        "add",
        "sub",
        "mul",
        "floordiv",
        "truediv",
        "mod",
        "neg",
        "pow",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "and_",
        "or_",
        "not_",
        "abs",
    }
)
_REFUSED = frozenset({"save", "load", "compile", "set_default_dtype", "manual_seed"})


def _method_names() -> dict[int, str]:
    return {
        id(_unwrapped(v)): k
        for k, v in vars(tocha.Tensor).items()
        if isinstance(v, types.FunctionType)
    }


def _unwrapped(fn: Any) -> Any:
    """`fn` without the wrappers `__torch_function__` dispatch puts around a published
    function or method (``__wrapped__``): a target is known by the function it calls."""
    while isinstance(fn, types.FunctionType) and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn


def _is(published: Any, target: Any) -> bool:
    return published is target or (
        published is not None and _unwrapped(published) is _unwrapped(target)
    )


def target_name(target: Any) -> str:
    """The dotted name `resolve` maps back to `target`."""
    if isinstance(target, ops.Primitive):
        return f"tocha.export.ops.{target.name}"
    short = getattr(target, "__name__", None)
    if target is builtins.getattr:
        return "builtins.getattr"
    if short is not None and getattr(operator, short, None) is target:
        return f"operator.{short}"
    for namespace in _NAMESPACES:
        module = importlib.import_module(namespace)
        if short is not None and _is(vars(module).get(short), target):
            return f"{namespace}.{short}"
    if short is not None and _is(vars(tocha.Tensor).get(short), target):
        return f"tocha.Tensor.{short}"
    method = _method_names().get(id(_unwrapped(target)))
    if method is not None and _is(vars(tocha.Tensor)[method], target):
        return f"tocha.Tensor.{method}"
    raise ValueError(f"{target!r} is not a public tocha function, primitive or operator")


def resolve(name: str) -> Any:
    """The target named `name`; ValueError for anything outside the allowlist."""
    head, _, short = name.rpartition(".")
    if head == "builtins" and short == "getattr":
        return builtins.getattr
    if head == "operator" and short in _OPERATORS:
        return getattr(operator, short)
    if head == "tocha.export.ops":
        try:
            return ops.get(short)
        except AttributeError:
            pass
    elif head == "tocha.Tensor":
        value = vars(tocha.Tensor).get(short)
        if isinstance(value, types.FunctionType):
            return value
    elif head in _NAMESPACES and not short.startswith("_") and short not in _REFUSED:
        try:  # getattr: a name tocha provides on first access (tocha.conv2d) counts too
            value = getattr(importlib.import_module(head), short)
        except (AttributeError, ImportError):
            value = None
        module = (value.__module__ or "") if isinstance(value, types.FunctionType) else ""
        if module == "tocha" or module.startswith("tocha."):
            return value
    raise ValueError(
        f"refusing to load target {name!r}: only tocha's public functions, Tensor methods, "
        "tocha.export.ops primitives, operator functions and builtins.getattr may be named"
    )
