"""`script`: compile a function or an ``nn.Module`` instance to the scriptable subset."""

from __future__ import annotations

import ast
import inspect
import types
from collections.abc import Callable
from typing import Any

import tocha
import tocha.nn as nn

from ._class import script_class
from ._compile import CompiledFunction, compile_python
from ._decorators import ignored, is_exported, is_unused
from ._module import (
    RecursiveScriptModule,
    ScriptFunction,
    ScriptModule,
    function_name,
    reserved,
    wrap_native,
)
from .frontend import NotSupportedError

_FUNCTIONS: dict[Callable, ScriptFunction] = {}
_COMPILING: set[Callable] = set()
_INFRA = frozenset(vars(nn.Module()))


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:  # fmt: skip
    """Compile ``obj`` (a function or an ``nn.Module`` instance) to TorchScript's subset.

    The source is checked when ``script`` is called: a construct outside the subset raises
    ``tocha.jit.frontend.UnsupportedNodeError`` (or ``NotSupportedError``/``RuntimeError``)
    naming it and its line. Unannotated arguments are Tensors; argument types are checked
    at each call. Built-in ``tocha.nn`` submodules are kept as themselves.

    Args:
        obj: a Python function, an ``nn.Module`` instance, or something already scripted.

    Returns:
        A `ScriptFunction` for a function, a `RecursiveScriptModule` for a module.

    Example::

        >>> @tocha.jit.script
        ... def f(x, n: int):
        ...     return x * n
        >>> f(tocha.ones(2), 3)
        tensor([3., 3.])
    """
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, nn.Module):
        converted = _convert(obj)
        return converted if isinstance(converted, ScriptModule) else wrap_native(converted)
    if isinstance(obj, type):
        if issubclass(obj, nn.Module):
            raise NotSupportedError(
                None,
                None,
                f"scripting classes is not supported; script an instance ({obj.__name__})",
            )
        return script_class(obj, script_function)
    if isinstance(obj, types.FunctionType):
        return script_function(obj)
    if isinstance(obj, (types.MethodType, types.BuiltinFunctionType)) or callable(obj):
        raise RuntimeError(f"Type '{type(obj).__name__}' cannot be compiled: {obj!r}")
    raise RuntimeError(f"Type '{type(obj).__name__}' cannot be compiled")


def script_instance(module: ScriptModule) -> RecursiveScriptModule:
    """The compiled form of an instance of a user's subclass of ScriptModule."""
    return _script_module(module)


def script_function(fn: types.FunctionType) -> ScriptFunction:
    """The scripted form of a Python function, compiled once and cached."""
    if fn in _FUNCTIONS:
        return _FUNCTIONS[fn]
    if fn in _COMPILING:
        raise RuntimeError(f"Recursive calls are not supported in TorchScript: '{fn.__name__}'")
    _COMPILING.add(fn)
    try:
        name = function_name(fn)
        compiled = compile_python(
            fn, method=False, qualname=name, script_function=script_function,
            unused=is_unused(fn),
        )  # fmt: skip
    finally:
        _COMPILING.discard(fn)
    _FUNCTIONS[fn] = scripted = ScriptFunction(compiled, name)
    return scripted


def trusted(cls: type) -> bool:
    """Whether ``cls`` is a built-in module published in ``tocha.nn`` (its code is trusted)."""
    return cls.__module__.startswith("tocha.nn.") and getattr(nn, cls.__name__, None) is cls


def _convert(module: nn.Module) -> nn.Module:
    if isinstance(module, ScriptModule):
        return module
    if not trusted(type(module)):
        return _script_module(module)
    children = {n: None if c is None else _convert(c) for n, c in module._modules.items()}
    if all(children[n] is c for n, c in module._modules.items()):
        return module
    copy = type(module).__new__(type(module))
    copy.__dict__.update(module.__dict__)
    copy.__dict__["_modules"] = children
    return copy


def _is_data(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_is_data(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, (str, int)) and _is_data(v) for k, v in value.items())
    return isinstance(value, (bool, int, float, str, type(None), tocha.Tensor, tocha.dtype,
                              tocha.device))  # fmt: skip


def _script_module(module: nn.Module) -> RecursiveScriptModule:
    cls = type(module)
    qualname = f"{cls.__module__}.{cls.__qualname__}"
    scripted = RecursiveScriptModule(cls.__name__, qualname)
    scripted.training = module.training
    scripted._parameters.update(module._parameters)
    scripted._buffers.update(module._buffers)
    scripted._non_persistent_buffers_set.update(module._non_persistent_buffers_set)
    for name, child in module._modules.items():
        scripted._modules[name] = None if child is None else _convert(child)
    for name, value in _attributes(module).items():
        scripted.__dict__[name] = value
        scripted._script_attrs.add(name)
    _compile_methods(module, scripted)
    return scripted


def _attributes(module: nn.Module) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for klass in reversed(type(module).__mro__):
        if klass is object or issubclass(nn.Module, klass):
            continue
        for name, value in vars(klass).items():
            if not name.startswith("__") and _is_data(value):
                found[name] = value
    for name, value in vars(module).items():
        if name not in _INFRA and _is_data(value):
            found[name] = value
    return {name: value for name, value in found.items() if not reserved(name)}


def _compile_methods(module: nn.Module, scripted: RecursiveScriptModule) -> None:
    cls = type(module)
    pending = [n for n, v in inspect.getmembers(cls) if is_exported(v)]
    if getattr(cls, "forward", None) is not getattr(nn.Module, "forward", None):
        pending.insert(0, "forward")
    qualname = f"{cls.__module__}.{cls.__qualname__}"
    while pending:
        name = pending.pop(0)
        if name in scripted._methods:
            continue
        fn = getattr(cls, name)
        if ignored(fn):
            scripted._methods[name] = fn
            continue
        compiled = compile_python(
            fn, method=True, qualname=f"{qualname}.{name}", script_function=script_function,
            unused=is_unused(fn),
        )  # fmt: skip
        scripted._methods[name] = compiled
        pending.extend(_self_references(compiled, module, scripted))


def _self_references(
    compiled: CompiledFunction, module: nn.Module, scripted: RecursiveScriptModule
) -> list[str]:
    """The methods ``compiled`` calls on ``self``; an unknown attribute is an error now."""
    self_name = compiled.tree.args.args[0].arg if compiled.tree.args.args else "self"
    methods = []
    for node in ast.walk(compiled.tree):
        if not (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == self_name
        ):
            continue
        name = node.attr
        members = (scripted._parameters, scripted._buffers, scripted._modules,
                   scripted._script_attrs, scripted._methods)  # fmt: skip
        if name == "training" or any(name in m for m in members):
            continue
        value = inspect.getattr_static(type(module), name, None)
        if isinstance(value, types.FunctionType) and not hasattr(nn.Module, name):
            methods.append(name)
            continue
        from .frontend import FrontendError

        raise FrontendError(
            compiled.source, node, f"Module '{scripted.original_name}' has no attribute '{name}'"
        )
    return methods
