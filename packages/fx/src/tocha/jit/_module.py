"""Scripted functions and modules: `ScriptFunction`, `ScriptModule`, `RecursiveScriptModule`.

A `RecursiveScriptModule` holds its original module's parameters, buffers (the same tensor
objects), submodules (scripted in turn, or kept as themselves when they are built-in
``tocha.nn`` modules), plain-data attributes and compiled methods. Calling one of its
methods binds and checks the arguments (`bind`) and runs the method in `_interp`.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable
from typing import Any

import tocha.nn as nn

from . import _interp, _types
from ._compile import CompiledFunction
from ._graph import NativeGraph, ScriptGraph
from ._resolve import ResolutionError


def bind(fn: CompiledFunction, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The locals a call starts with, after TorchScript's argument checks.

    Raises RuntimeError, with PyTorch's messages, for too many or missing arguments and for
    a value that does not match its argument's (annotated or inferred) type.
    """
    params = fn.params
    offset = 1 if fn.method else 0
    declaration = fn.declaration()
    if len(args) > len(params):
        raise RuntimeError(
            f"{fn.name}() expected at most {len(params) + offset} argument(s) but received "
            f"{len(args) + offset} argument(s). Declaration: {declaration}"
        )
    local: dict[str, Any] = {}
    for position, (name, t, inferred) in enumerate(params):
        if position < len(args):
            value = args[position]
            if name in kwargs:
                raise RuntimeError(
                    f"{fn.name}() got multiple values for argument '{name}'. "
                    f"Declaration: {declaration}"
                )
        elif name in kwargs:
            value = kwargs[name]
        elif name in fn.defaults:
            value = copy.copy(fn.defaults[name])
        else:
            raise RuntimeError(
                f"{fn.name}() is missing value for argument '{name}'. Declaration: {declaration}"
            )
        if not _types.matches(t, value):
            raise RuntimeError(_type_error(fn, name, t, inferred, value, position + offset))
        local[name] = _types.convert(t, value)
    unknown = set(kwargs) - {name for name, _, _ in params}
    if unknown:
        raise RuntimeError(
            f"{fn.name}() Unknown keyword argument '{sorted(unknown)[0]}'. "
            f"Declaration: {declaration}"
        )
    return local


def _type_error(
    fn: CompiledFunction, name: str, t: tuple, inferred: bool, value: Any, position: int
) -> str:
    shown = _types.show(t) + (" (inferred)" if inferred else "")
    message = (
        f"{fn.name}() Expected a value of type '{shown}' for argument '{name}' but instead "
        f"found type '{_types.type_of(value)}'.\n"
    )
    if inferred:
        message += (
            f"Inferred '{name}' to be of type 'Tensor' because it was not annotated with an "
            "explicit type.\n"
        )
    return message + f"Position: {position}\nValue: {value!r}\nDeclaration: {fn.declaration()}"


class ScriptFunction:
    """A scripted function: call it like the original; ``.code`` and ``.graph`` show it.

    Example::

        @tocha.jit.script
        def f(x, n: int):
            for _ in range(n):
                x = x * 2
            return x
    """

    def __init__(self, compiled: CompiledFunction | None, qualified_name: str) -> None:
        self._compiled = compiled
        self.qualified_name = qualified_name

    @property
    def name(self) -> str:
        """The function's name."""
        return self._compiled.name

    @property
    def code(self) -> str:
        """The function's normalised source: no decorators, every argument annotated."""
        return self._compiled.code

    @property
    def graph(self) -> ScriptGraph:
        """A printable listing of the function (see `ScriptGraph`)."""
        return ScriptGraph(self._compiled)

    @property
    def schema(self) -> str:
        """The signature, as TorchScript prints it: ``f(Tensor x, int n) -> Tensor``."""
        return self._compiled.declaration()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self._compiled
        return _interp.run(compiled, bind(compiled, args, kwargs))

    def save(self, f: Any, _extra_files: dict | None = None) -> None:
        """Save the function to ``f`` (see `tocha.jit.save`)."""
        from ._serialize import save

        save(self, f, _extra_files)

    def __repr__(self) -> str:
        return f"<tocha.jit.ScriptFunction object {self.qualified_name}>"


class ScriptMethod:
    """A compiled method bound to its module."""

    def __init__(self, module: ScriptModule, compiled: CompiledFunction) -> None:
        self.module = module
        self._compiled = compiled

    @property
    def code(self) -> str:
        """The method's normalised source."""
        return self._compiled.code

    @property
    def graph(self) -> ScriptGraph:
        """A printable listing of the method (see `ScriptGraph`)."""
        return ScriptGraph(self._compiled)

    @property
    def name(self) -> str:
        """The method's name."""
        return self._compiled.name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self._compiled
        local = bind(compiled, args, kwargs)
        local["self"] = self.module
        return _interp.run(compiled, local)


class ScriptModule(nn.Module):
    """Base class of scripted and traced modules: a Module whose methods are compiled."""

    def __init__(self) -> None:
        super().__init__()
        self._methods: dict[str, Any] = {}
        self._script_attrs: set[str] = set()
        self._native: nn.Module | None = None
        self.original_name = type(self).__name__
        self.qualified_name = self.original_name

    def __getattr__(self, name: str) -> Any:
        methods = self.__dict__.get("_methods")
        if methods is not None and name in methods:
            return self._bound(name)
        return super().__getattr__(name)

    def _bound(self, name: str) -> Any:
        method = self._methods[name]
        if isinstance(method, CompiledFunction):
            return ScriptMethod(self, method)
        return types.MethodType(method, self)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self._native is not None:
            return self._native(*args, **kwargs)
        if "forward" not in self._methods:
            raise RuntimeError(f"Method 'forward' is not defined on '{self.original_name}'")
        return self._bound("forward")(*args, **kwargs)

    def __getitem__(self, index: Any) -> Any:
        if self._native is None or not hasattr(self._native, "__getitem__"):
            raise TypeError(f"'{self.original_name}' object is not subscriptable")
        return self._native[index]

    def __iter__(self) -> Any:
        if self._native is None or not hasattr(self._native, "__iter__"):
            raise TypeError(f"'{self.original_name}' object is not iterable")
        return iter(self._native)

    def train(self, mode: bool = True) -> ScriptModule:
        super().train(mode)
        if self._native is not None:
            self._native.train(mode)
        return self

    def script_attribute(self, name: str) -> Any:
        """``self.name`` as scripted code may read it: members, attributes, methods."""
        if name in self._methods:
            return self._bound(name)
        if name in self._parameters or name in self._buffers or name in self._modules:
            return getattr(self, name)
        if name in self._script_attrs or name == "training":
            return self.__dict__[name]
        raise ResolutionError(f"Module '{self.original_name}' has no attribute '{name}'")

    def script_set_attribute(self, name: str, value: Any) -> None:
        """``self.name = value`` from scripted code: only existing attributes and buffers."""
        if name in self._script_attrs or name in self._buffers or name == "training":
            setattr(self, name, value)
            return
        raise ResolutionError(
            f"Module '{self.original_name}' has no attribute '{name}' that scripted code may set"
        )

    def compiled(self) -> ScriptModule:
        """This module with its methods compiled: itself, unless it is an instance of a
        subclass of ScriptModule (PyTorch's older API), which is scripted now."""
        if self._methods or self._native is not None or type(self) in _OWN_CLASSES:
            return self
        from ._script import script_instance

        return script_instance(self)

    @property
    def code(self) -> str:
        """The normalised source of ``forward``."""
        return self.compiled()._method_code("forward")

    def _method_code(self, name: str) -> str:
        method = self._methods.get(name)
        if isinstance(method, CompiledFunction):
            return method.code
        if self._native is not None and name == "forward":
            cls = type(self._native)
            call = f"tocha.nn.{cls.__name__}.forward(self, *args)"
            return f"def forward(self, *args):\n    return {call}\n"
        raise RuntimeError(f"Method '{name}' is not defined on '{self.original_name}'")

    @property
    def graph(self) -> ScriptGraph | NativeGraph:
        """A printable listing of ``forward`` (see `ScriptGraph`; `NativeGraph` for a
        built-in module)."""
        if self._native is not None:
            return NativeGraph(self._native, self.qualified_name)
        method = self.compiled()._methods.get("forward")
        if not isinstance(method, CompiledFunction):
            raise RuntimeError(f"Method 'forward' of '{self.original_name}' has no graph")
        return ScriptGraph(method)

    def save(self, f: Any, _extra_files: dict | None = None) -> None:
        """Save the module to ``f`` (see `tocha.jit.save`)."""
        from ._serialize import save

        save(self, f, _extra_files)

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"


class RecursiveScriptModule(ScriptModule):
    """The module `tocha.jit.script` and `tocha.jit.load` return for an ``nn.Module``."""

    def __init__(self, original_name: str, qualified_name: str) -> None:
        super().__init__()
        self.original_name = original_name
        self.qualified_name = qualified_name


def reserved(name: str) -> bool:
    """Whether ``name`` belongs to the machinery of a scripted module (``save``, ``_methods``,
    ``forward``...), so that no module attribute may take it."""
    return name in _RESERVED or hasattr(RecursiveScriptModule, name)


def wrap_native(module: nn.Module) -> RecursiveScriptModule:
    """A scripted module running a built-in ``tocha.nn`` module, sharing its state."""
    wrapper = RecursiveScriptModule(type(module).__name__, f"tocha.nn.{type(module).__name__}")
    wrapper.__dict__["_native"] = module
    wrapper._parameters = module._parameters
    wrapper._buffers = module._buffers
    wrapper._modules = module._modules
    wrapper._non_persistent_buffers_set = module._non_persistent_buffers_set
    wrapper.training = module.training
    return wrapper


def function_name(fn: Callable) -> str:
    """The qualified name a scripted Python function is saved under."""
    return f"{fn.__module__}.{fn.__qualname__}"


_RESERVED = frozenset(vars(RecursiveScriptModule("", "")))
_OWN_CLASSES = (ScriptModule, RecursiveScriptModule)
