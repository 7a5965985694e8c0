"""TorchScript classes: ``@torch.jit.script`` on a class checks and compiles its methods and
leaves the class itself as it was (Python code still uses it as a plain class). Scripted code
that names the class builds a `ScriptObject` instead: its ``__init__`` and methods run in the
interpreter, and its attributes are those ``__init__`` and the methods assign.

A function referring to a script class is not saved by `tocha.jit.save` (a file holds no
class definitions): saving one raises.
"""

from __future__ import annotations

import types
from typing import Any

from . import _interp
from ._compile import CompiledFunction, compile_python
from ._module import bind
from ._resolve import ResolutionError

__all__ = ["ScriptClass", "ScriptObject", "script_class", "script_class_of"]

_CLASSES: dict[type, ScriptClass] = {}


class ScriptClass:
    """The compiled form of a Python class: calling it makes a `ScriptObject`."""

    def __init__(self, cls: type, methods: dict[str, CompiledFunction]) -> None:
        self.cls = cls
        self.methods = methods
        self.qualified_name = f"__torch__.{cls.__qualname__}"

    def __call__(self, *args: Any, **kwargs: Any) -> ScriptObject:
        obj = ScriptObject(self)
        init = self.methods.get("__init__")
        if init is None:
            if args or kwargs:
                raise RuntimeError(f"{self.cls.__name__}() takes no arguments")
            return obj
        local = bind(init, args, kwargs)
        local["self"] = obj
        _interp.run(init, local)
        return obj

    def __repr__(self) -> str:
        return f"<tocha.jit.ScriptClass {self.qualified_name}>"


class ScriptObject:
    """An instance of a script class, made by scripted code."""

    def __init__(self, script_class: ScriptClass) -> None:
        self._class = script_class
        self._attributes: dict[str, Any] = {}

    def script_attribute(self, name: str) -> Any:
        """``self.name`` in scripted code: an attribute, else a bound method."""
        if name in self._attributes:
            return self._attributes[name]
        method = self._class.methods.get(name)
        if method is None:
            raise ResolutionError(
                f"Tried to access nonexistent attribute or method '{name}' of type "
                f"'{self._class.qualified_name}'."
            )
        return types.MethodType(_call_method, _Bound(self, method))

    def script_set_attribute(self, name: str, value: Any) -> None:
        self._attributes[name] = value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.script_attribute(name)
        except ResolutionError as error:
            raise AttributeError(str(error)) from None

    def __repr__(self) -> str:
        return f"<tocha.jit.ScriptObject of {self._class.qualified_name}>"


class _Bound:
    __slots__ = ("obj", "method")

    def __init__(self, obj: ScriptObject, method: CompiledFunction) -> None:
        self.obj = obj
        self.method = method


def _call_method(bound: _Bound, *args: Any, **kwargs: Any) -> Any:
    local = bind(bound.method, args, kwargs)
    local["self"] = bound.obj
    return _interp.run(bound.method, local)


def script_class(cls: type, script_function: Any) -> type:
    """Compile `cls`'s methods (once) and return `cls`, as ``torch.jit.script`` does."""
    if cls in _CLASSES:
        return cls
    methods: dict[str, CompiledFunction] = {}
    for name, value in vars(cls).items():
        if isinstance(value, types.FunctionType):
            methods[name] = compile_python(
                value,
                method=True,
                qualname=f"{cls.__qualname__}.{name}",
                script_function=script_function,
            )
    _CLASSES[cls] = ScriptClass(cls, methods)
    return cls


def script_class_of(value: Any) -> ScriptClass | None:
    """The script class compiled from `value` (a Python class), if any."""
    return _CLASSES.get(value) if isinstance(value, type) else None
