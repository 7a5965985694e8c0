"""The names scripted code may reach: the allowlist that makes running a loaded file safe.

Scripted code sees its locals, its module's attributes, the builtins in ``BUILTINS`` and
the public names of the modules in ``MODULES``. Every other object it meets (a tensor,
a list, a string) is the result of one of those, and ``get_attribute`` decides, by the
object's type, which of its attributes code may read: never one whose name starts with
``_``, never a module outside ``MODULES``, never a name in ``DENIED`` (file access, code
loading). A global name in a function is stored in a saved file as a *reference*: a path
into ``MODULES``, a builtin's name, a constant or another scripted function, so loading
a file resolves names through the same allowlist.
"""

from __future__ import annotations

import string
import sys
import types
from typing import Any

import tocha
import tocha.export.ops as export_ops
import tocha.nn as nn

from ._futures import Future

MODULES = (
    "tocha",
    "tocha.nn",
    "tocha.nn.functional",
    "tocha.nn.init",
    "tocha.linalg",
    "tocha.fft",
    "tocha.special",
    "tocha.jit",
    "tocha.export.ops",
    "math",
)
JIT_NAMES = frozenset(
    {"is_scripting", "is_tracing", "annotate", "Final", "isinstance", "fork", "wait"}
)
_CONTAINERS = (nn.ModuleDict, nn.ParameterDict, nn.ModuleList, nn.ParameterList, nn.Sequential)
_CONTAINER_METHODS = frozenset({"items", "keys", "values"})
DENIED = frozenset(
    {
        "save",
        "load",
        "from_file",
        "compile",
        "format",
        "format_map",
        "library",
        "serialization",
        "hub",
        "utils",
        "multiprocessing",
        "distributed",
        "backends",
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
        "set_default_device",
        "extend_path",
        "partial",
    }
)
EXCEPTIONS = (
    Exception,
    RuntimeError,
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    AssertionError,
    NotImplementedError,
    ZeroDivisionError,
    AttributeError,
    ArithmeticError,
    StopIteration,
)
BUILTINS: dict[str, Any] = {
    f.__name__: f
    for f in (
        range, len, int, float, bool, str, min, max, abs, isinstance, enumerate, zip,
        print, list, tuple, dict, sum, round, any, all, sorted, reversed, divmod, pow,
        chr, ord, complex, slice, *EXCEPTIONS,
    )
}  # fmt: skip
BUILTINS["None"] = None
BUILTINS["getattr"] = lambda obj, name: get_attribute(obj, name)
_PLAIN = (bool, int, float, complex, str, list, tuple, dict, type(None))


class ResolutionError(RuntimeError):
    """A name or attribute scripted code may not use."""


def module_allowed(module: types.ModuleType) -> bool:
    """Whether scripted code may hold ``module``."""
    return module.__name__ in MODULES


def _public(name: str) -> bool:
    return not name.startswith("_") and name not in DENIED


def get_attribute(obj: Any, name: str) -> Any:
    """``obj.name`` if scripted code may read it, else ResolutionError."""
    from ._module import ScriptModule

    if isinstance(obj, ScriptModule):
        return obj.script_attribute(name)
    from ._class import ScriptObject

    if isinstance(obj, ScriptObject):
        return obj.script_attribute(name)
    if isinstance(obj, str) and name == "format":
        return _safe_format(obj)
    if not _public(name):
        raise ResolutionError(f"attribute '{name}' of type '{type(obj).__name__}' is not supported")
    if isinstance(obj, types.ModuleType):
        if not module_allowed(obj) or (obj.__name__ == "tocha.jit" and name not in JIT_NAMES):
            raise ResolutionError(f"Module '{obj.__name__}' has no attribute '{name}'")
        value = getattr(obj, name)
        if obj.__name__ == "tocha.export.ops" and not isinstance(value, export_ops.Primitive):
            raise ResolutionError(f"Module '{obj.__name__}' has no attribute '{name}'")
        if isinstance(value, types.ModuleType) and not module_allowed(value):
            raise ResolutionError(f"Python module '{value.__name__}' is not supported")
        return value
    if isinstance(obj, nn.Module):
        if name in _CONTAINER_METHODS and isinstance(obj, _CONTAINERS):
            return getattr(obj, name)
        if name in obj._parameters or name in obj._buffers or name in obj._modules:
            return getattr(obj, name)
        if name == "forward" or (name in vars(obj) and isinstance(vars(obj)[name], _PLAIN)):
            return getattr(obj, name)
        raise ResolutionError(f"Module '{type(obj).__name__}' has no attribute '{name}'")
    if isinstance(
        obj, (tocha.Tensor, tocha.dtype, tocha.device, tocha.finfo, tocha.iinfo, Future, *_PLAIN)
    ):
        return getattr(obj, name)
    if isinstance(obj, type) and (obj is tocha.Tensor or obj in _PLAIN):
        return getattr(obj, name)
    if isinstance(obj, (types.BuiltinMethodType, types.MethodType, types.FunctionType)):
        raise ResolutionError(f"attribute '{name}' of a function is not supported")
    raise ResolutionError(f"attribute access on type '{type(obj).__name__}' is not supported")


def _safe_format(template: str) -> Any:
    """``template.format`` for fields that name arguments only: ``{0.attr}``/``{0[key]}``
    would read attributes of the arguments, so they are refused."""
    for _, field, spec, _ in string.Formatter().parse(template):
        for text in (field or "", spec or ""):
            if "." in text or "[" in text or "{" in text:
                raise ResolutionError(f"format field '{{{field}}}' is not supported")
    return template.format


_INDEX: dict[int, tuple[str, Any]] = {}


def _index() -> dict[int, tuple[str, Any]]:
    if not _INDEX:
        for module_name in MODULES:
            module = sys.modules.get(module_name) or __import__(module_name, fromlist=["_"])
            names = vars(module)
            if module_name == "tocha.jit":
                names = {n: names[n] for n in JIT_NAMES if n in names}
            for name, value in list(names.items()):
                if _public(name) and not isinstance(value, _PLAIN):
                    _INDEX.setdefault(id(value), (f"{module_name}.{name}", value))
            _INDEX.setdefault(id(module), (module_name, module))
        for name in ("Tensor",):
            for attr, value in vars(tocha.Tensor).items():
                if _public(attr) and callable(value):
                    _INDEX.setdefault(id(value), (f"tocha.{name}.{attr}", value))
    return _INDEX


def path_of(value: Any) -> str | None:
    """The allowlisted path naming ``value`` (``tocha.nn.functional.relu``), or None."""
    hit = _index().get(id(value))
    return hit[0] if hit is not None and hit[1] is value else None


def from_path(path: str) -> Any:
    """The object an allowlisted path names, reached through ``get_attribute``."""
    for module_name in sorted(MODULES, key=len, reverse=True):
        if path == module_name or path.startswith(module_name + "."):
            value: Any = __import__(module_name, fromlist=["_"])
            rest = path[len(module_name) + 1 :]
            for part in rest.split(".") if rest else ():
                value = get_attribute(value, part)
            return value
    raise ResolutionError(f"'{path}' is not a name scripted code may use")
