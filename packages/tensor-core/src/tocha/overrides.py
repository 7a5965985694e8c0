"""``tocha.overrides``, as ``torch.overrides``: handing a call to an argument's
``__torch_function__``.

tocha.Tensor defines no ``__torch_function__``. The public functions of ``tocha`` (and of the
namespaces that publish theirs through `overridable`) hand a call over to the
``__torch_function__`` of an argument's type (``torch.fx.Proxy``, a tensor-like of a library)
when that argument is not a tensor: the call is first run as usual, and only when it fails
are the arguments looked at (a call on tensors costs one more Python call). A library checks with
`has_torch_function` and calls `handle_torch_function` itself, as with PyTorch's.

Example:
    >>> has_torch_function_unary(tocha.ones(2))
    False
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable
from typing import Any

from . import _dtype
from ._subclass_dispatch import STATE as DISPATCH
from ._subclass_dispatch import _overriding_args, overrides_torch_function
from ._tensor import Tensor

__all__ = [
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "hand_over",
    "overridable",
]


def _overrides(arg: Any) -> bool:
    return overrides_torch_function(type(arg))


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
    """Whether `inp` is a tocha Tensor (of any subclass) or of a type that defines
    ``__torch_function__``."""
    return isinstance(inp, Tensor) or _overrides(inp)


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
    raise _no_implementation(public_api, types)


def _no_implementation(public_api: Callable, types: tuple) -> TypeError:
    """PyTorch's error when every handler returned NotImplemented: worded as its compiled
    functions' for tocha's own functions and Tensor methods, as its Python functions' for the
    others (``torch.nn.functional.relu``)."""
    module = getattr(public_api, "__module__", None) or ""
    qualname = getattr(public_api, "__qualname__", repr(public_api))
    shown = _dtype.SHOWN_MODULE
    method = vars(Tensor).get(getattr(public_api, "__name__", "")) is public_api
    if (
        method
        or qualname.startswith("Tensor.")
        or module == "tocha"
        or module.startswith("tocha._")
    ):
        name = f"{shown}.Tensor.{public_api.__name__}" if method else f"{shown}.{qualname}"
        listed = "".join(f"  - tensor subclass {t}\n" for t in types)
        return TypeError(
            f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned "
            f"NotImplemented:\n\n{listed}\nFor more information, try re-running with "
            "TORCH_LOGS=not_implemented"
        )
    module = _public_module(module)
    if module.startswith("tocha."):
        module = shown + module[len("tocha") :]
    return TypeError(
        f"no implementation found for '{module}.{qualname}' on types that implement "
        f"__torch_function__: {list(types)}"
    )


def overridable(fn: Callable, module: str | None = None, name: str | None = None) -> Callable:
    """`fn` as a public function honouring ``__torch_function__``: a call that fails while an
    argument (or an item of a list, tuple or dict argument) is of a type defining
    ``__torch_function__`` is handed to it (`handle_torch_function`, with the returned
    function as `public_api`); other calls run `fn` unchanged. Published as ``module.name``,
    it is named so (pickled by reference, reported, named in checkpoints as that)."""

    def public(*args: Any, **kwargs: Any) -> Any:
        if DISPATCH.armed and not DISPATCH.disabled:  # a Tensor subclass takes part
            relevant = _overriding_args(args, kwargs)
            if relevant:
                return handle_torch_function(public, relevant, *args, **kwargs)
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        except Exception:
            relevant = _overriding_args(args, kwargs)
            if not relevant:
                raise
        return handle_torch_function(public, relevant, *args, **kwargs)

    functools.update_wrapper(public, fn)
    if module is not None:
        public.__module__ = module
    if name is not None:
        public.__name__ = public.__qualname__ = name
    return public


def hand_over(public: Callable, args: tuple, kwargs: dict, error: Exception) -> Any:
    """For a public function whose call failed with `error`: hand the call to the
    ``__torch_function__`` of its tensor-like arguments, or raise `error` when none has one
    (the functions that check their arguments themselves call this from their error path,
    at no cost to calls that succeed)."""
    relevant = _overriding_args(args, kwargs)
    if not relevant:
        raise error
    return handle_torch_function(public, relevant, *args, **kwargs)


def _public_module(module: str) -> str:
    """The public module a function of `module` is published in: up to its first private
    part, that part itself when a public module of its name exists
    (``tocha.nn._functional.activation``: ``tocha.nn.functional``)."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_"):
            public = ".".join([*parts[:i], part.lstrip("_")])
            return public if public in sys.modules else ".".join(parts[:i])
    return module
