"""Interception of tocha's public functions while a program is traced.

tocha has no ``__torch_function__`` protocol, and the eager path must not pay for tracing.
So, for the duration of a trace only, the public functions of ``tocha``,
``tocha.nn.functional``, ``tocha.linalg``, ``tocha.fft`` and ``tocha.special`` (and the
names in given globals dicts and module classes that refer to them) are replaced by
`Intercepted` stand-ins: a stand-in calls ``handle(fn, args, kwargs)`` when any argument,
however deeply nested in tuples, lists or dicts, is traced (``is_traced``), and the original
function otherwise. Tensor's methods and operators get the same treatment for traced
arguments. `Patcher` restores everything on exit.

Nothing here knows about Proxies: another tracer (``tocha.export``) can install it with its
own ``is_traced`` and ``handle``.
"""

from __future__ import annotations

import builtins
import functools
import operator
import sys
from collections.abc import Callable, Iterable
from types import FunctionType, ModuleType
from typing import Any

import tocha

__all__ = [
    "Intercepted",
    "Patcher",
    "contains",
    "intercept_functions",
    "public_functions",
    "torch_alias",
]

_NAMESPACES = ("tocha", "tocha.nn.functional", "tocha.linalg", "tocha.fft", "tocha.special")
_MISSING = object()

# Tensor's binary operators refuse unknown operands with a TypeError. While tracing, a
# traced right operand makes ``tensor <op> traced`` a call of the named Tensor method (as
# torch.fx records it); the reflected operators answer NotImplemented.
TENSOR_OPERATORS: dict[str, str | None] = {
    "__add__": "add",
    "__sub__": "sub",
    "__mul__": "mul",
    "__truediv__": "div",
    "__floordiv__": "floor_divide",
    "__mod__": "remainder",
    "__pow__": "pow",
    "__matmul__": "matmul",
    "__and__": "bitwise_and",
    "__or__": "bitwise_or",
    "__xor__": "bitwise_xor",
    "__lshift__": "bitwise_left_shift",
    "__rshift__": "bitwise_right_shift",
    "__eq__": "eq",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
}
TENSOR_OPERATORS.update(
    {f"__r{name[2:]}": None for name in list(TENSOR_OPERATORS)[:13]}  # the reflected ones
)


class Patcher:
    """Context manager that sets attributes or dict entries and puts the old values back
    (or removes the new entries) on exit, last patched first restored."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> Patcher:
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            target, name, old = self._undo.pop()
            if isinstance(target, dict):
                if old is _MISSING:
                    target.pop(name, None)
                else:
                    target[name] = old
            elif old is _MISSING:
                delattr(target, name)
            else:
                setattr(target, name, old)

    def patch(self, target: dict[str, Any] | Any, name: str, value: Any) -> None:
        """Set ``target[name]`` (a dict) or ``target.name`` (anything else) to `value`."""
        if isinstance(target, dict):
            self._undo.append((target, name, target.get(name, _MISSING)))
            target[name] = value
        else:
            self._undo.append((target, name, target.__dict__.get(name, _MISSING)))
            setattr(target, name, value)


def contains(value: Any, is_traced: Callable[[Any], bool]) -> bool:
    """Whether `value` is traced or holds a traced value in a tuple, list or dict."""
    if is_traced(value):
        return True
    if isinstance(value, (tuple, list)):
        return any(contains(v, is_traced) for v in value)
    if isinstance(value, dict):
        return any(contains(v, is_traced) for v in value.values())
    return False


def torch_alias() -> ModuleType | None:
    """The ``torch`` module of `tocha.compat.alias_torch` (``python -m tocha.run``), None when
    the alias is off. It holds its own copy of tocha's names, so a tracer that wraps
    ``tocha.add`` wraps ``torch.add`` there too (a program's ``torch.add(x, y)``)."""
    compat = sys.modules.get("tocha.compat")
    module = sys.modules.get("torch")
    if compat is None or module is None or not isinstance(module, compat.TorchModule):
        return None
    return module


def public_functions() -> list[tuple[ModuleType, str, Callable[..., Any]]]:
    """``(namespace module, name, function)`` for every public function the tracers
    intercept."""
    found = []
    for namespace in _NAMESPACES:
        module = sys.modules.get(namespace)
        if module is None:
            continue
        for name, value in list(vars(module).items()):
            if name.startswith("__") or isinstance(value, (type, ModuleType)):
                continue
            if callable(value):
                found.append((module, name, value))
    return found


class Intercepted:
    """`fn`, except that a call with a traced argument returns ``handle(fn, args, kwargs)``.
    It compares and hashes equal to `fn`, so that code comparing functions
    (``node.target == tocha.relu``) while the wrappers are installed still works."""

    def __init__(
        self,
        fn: Callable[..., Any],
        is_traced: Callable[[Any], bool],
        handle: Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any],
    ) -> None:
        functools.update_wrapper(self, fn)
        self.__fx_original__ = fn
        self._is_traced = is_traced
        self._handle = handle

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if contains(args, self._is_traced) or contains(kwargs, self._is_traced):
            return self._handle(self.__fx_original__, args, kwargs)
        return self.__fx_original__(*args, **kwargs)

    def __eq__(self, other: object) -> bool:
        return getattr(other, "__fx_original__", other) is self.__fx_original__

    def __hash__(self) -> int:
        return hash(self.__fx_original__)

    def __repr__(self) -> str:
        return repr(self.__fx_original__)


def make_wrapper(
    fn: Callable[..., Any],
    is_traced: Callable[[Any], bool],
    handle: Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any],
) -> Callable[..., Any]:
    """An `Intercepted` `fn`."""
    return Intercepted(fn, is_traced, handle)


def intercept_functions(
    patcher: Patcher,
    is_traced: Callable[[Any], bool],
    handle: Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any],
    globals_dicts: Iterable[dict[str, Any]] = (),
    extra_functions: Iterable[Callable[..., Any]] = (),
    handle_method: Callable[[str, tuple[Any, ...], dict[str, Any]], Any] | None = None,
    classes: Iterable[type] = (),
) -> None:
    """Install the wrappers: in the public namespaces, in each of `globals_dicts` (names
    bound to a public function or to one of `extra_functions`), in the attributes of
    `classes` that hold a public function (``_conv = staticmethod(F.conv2d)``), and on
    Tensor's methods.
    A Tensor method (a binary operator included) called on a real tensor with a traced
    argument calls ``handle_method(method_name, (tensor, *args), kwargs)``; without
    `handle_method`, operators answer NotImplemented (so the traced operand's reflected
    operator runs). Indexing a tensor with a traced index calls `handle` with
    ``operator.getitem``/``operator.setitem``. `patcher` undoes it all."""
    wrappers: dict[int, Callable[..., Any]] = {}

    def wrapper_for(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn = getattr(fn, "__fx_original__", fn)
        w = wrappers.get(id(fn))
        if w is None:
            w = wrappers[id(fn)] = make_wrapper(fn, is_traced, handle)
        return w

    alias = torch_alias()
    for module, name, fn in public_functions():
        patcher.patch(vars(module), name, wrapper_for(fn))
        if alias is not None and module is tocha:
            patcher.patch(vars(alias), name, wrapper_for(fn))
    extras = {id(f) for f in extra_functions}
    for g in globals_dicts:
        for name, value in list(g.items()):
            original = getattr(value, "__fx_original__", value)
            if id(original) in wrappers or id(original) in extras:
                patcher.patch(g, name, wrapper_for(original))
    for cls in classes:
        for name, value in list(vars(cls).items()):
            func = value.__func__ if isinstance(value, staticmethod) else value
            if callable(func) and id(getattr(func, "__fx_original__", func)) in wrappers:
                wrapped = wrapper_for(func)
                patcher.patch(cls, name, staticmethod(wrapped))
    for dunder, method_name in TENSOR_OPERATORS.items():
        if hasattr(tocha.Tensor, dunder):
            original = getattr(tocha.Tensor, dunder)
            as_method = method_name if handle_method is not None else None
            patcher.patch(
                tocha.Tensor, dunder, _operator(original, as_method, is_traced, handle_method)
            )
    for dunder, op in (("__getitem__", operator.getitem), ("__setitem__", operator.setitem)):
        patcher.patch(
            tocha.Tensor, dunder, _indexing(getattr(tocha.Tensor, dunder), op, is_traced, handle)
        )
    if handle_method is not None:
        for name, method in _tensor_methods():
            patcher.patch(tocha.Tensor, name, _method(method, name, is_traced, handle_method))


def _tensor_methods() -> list[tuple[str, Callable[..., Any]]]:
    """Tensor's public methods (plain functions defined on the class)."""
    found = []
    for cls in reversed(tocha.Tensor.__mro__):
        for name, value in vars(cls).items():
            if not name.startswith("_") and isinstance(value, FunctionType):
                found.append((name, value))
    return list(dict(found).items())


def _method(
    method: Callable[..., Any],
    name: str,
    is_traced: Callable[[Any], bool],
    handle_method: Callable[[str, tuple[Any, ...], dict[str, Any]], Any],
) -> Callable[..., Any]:
    @functools.wraps(method)
    def tensor_method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if contains(args, is_traced) or contains(kwargs, is_traced):
            return handle_method(name, (self, *args), kwargs)
        return method(self, *args, **kwargs)

    return tensor_method


def _indexing(
    method: Callable[..., Any],
    op: Callable[..., Any],
    is_traced: Callable[[Any], bool],
    handle: Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any],
) -> Callable[..., Any]:
    @functools.wraps(method)
    def indexing(self: Any, *args: Any) -> Any:
        if contains(args, is_traced):
            return handle(op, (self, *args), {})
        return method(self, *args)

    return indexing


def wrap_global(
    patcher: Patcher,
    globals_dict: dict[str, Any],
    name: str,
    is_traced: Callable[[Any], bool],
    handle: Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any],
) -> None:
    """Wrap the function `name` of a module's globals (or the builtin of that name, which
    the module then sees through its globals) so that traced calls go to `handle`."""
    fn = globals_dict.get(name, _MISSING)
    if fn is _MISSING:
        fn = getattr(builtins, name)
    fn = getattr(fn, "__fx_original__", fn)
    patcher.patch(globals_dict, name, make_wrapper(fn, is_traced, handle))


def _operator(
    method: Callable[..., Any],
    method_name: str | None,
    is_traced: Callable[[Any], bool],
    handle_method: Callable[[str, tuple[Any, ...], dict[str, Any]], Any] | None,
) -> Callable[..., Any]:
    @functools.wraps(method)
    def operator_method(self: Any, other: Any) -> Any:
        if is_traced(other):
            if method_name is None or handle_method is None:
                return NotImplemented
            return handle_method(method_name, (self, other), {})
        return method(self, other)

    return operator_method
