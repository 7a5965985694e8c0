"""``tocha.overrides``, as ``torch.overrides``: the checks libraries make before handing a
call to an argument's ``__torch_function__``.

tocha's own functions do not dispatch on ``__torch_function__`` (tocha.Tensor defines none), so
these only tell whether an argument's type defines one; a library that finds one calls
`handle_torch_function`, which hands the call over as PyTorch's does.

Example:
    >>> has_torch_function_unary(tocha.ones(2))
    False
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ._tensor import Tensor

__all__ = [
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
]


def _overrides(arg: Any) -> bool:
    return getattr(type(arg), "__torch_function__", None) is not None


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of `relevant_args` has a type that defines ``__torch_function__``."""
    return any(_overrides(arg) for arg in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    """`has_torch_function` of one argument."""
    return _overrides(arg)


def has_torch_function_variadic(*args: Any) -> bool:
    """`has_torch_function` of the arguments given."""
    return any(_overrides(arg) for arg in args)


def is_tensor_like(inp: Any) -> bool:
    """Whether `inp` is a tocha Tensor or of a type that defines ``__torch_function__``."""
    return type(inp) is Tensor or _overrides(inp)


def handle_torch_function(
    public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``__torch_function__(public_api, types, args, kwargs)`` of the overriding types
    among `relevant_args` (subclasses before their bases, else in order) until one returns
    something other than NotImplemented; TypeError when none does."""
    overloaded: list = []
    for arg in relevant_args:
        cls = type(arg)
        if not _overrides(arg) or cls in (type(a) for a in overloaded):
            continue
        position = next((i for i, a in enumerate(overloaded) if issubclass(cls, type(a))), None)
        overloaded.insert(len(overloaded) if position is None else position, arg)
    types = tuple(type(arg) for arg in overloaded)
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__qualname__", repr(public_api))
    raise TypeError(
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{[type(arg) for arg in overloaded]}"
    )
