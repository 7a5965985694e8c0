"""Readable names: a callable's public dotted name, and the unique Python identifiers of a
graph's nodes and of the globals its generated code refers to."""

from __future__ import annotations

import builtins
import keyword
import re
import sys
from typing import Any

_PUBLIC_NAMESPACES = (
    "tocha",
    "tocha.nn.functional",
    "tocha.linalg",
    "tocha.fft",
    "tocha.special",
)
_qualified_cache: dict[int, tuple[Any, str]] = {}

# Names the generated code relies on besides Python's builtins.
_CUSTOM_BUILTINS = ("tocha", "device", "inf", "nan", "NoneType", "operator", "builtins")
_RESERVED = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | frozenset(_CUSTOM_BUILTINS)


def qualified_name(obj: Any) -> str:
    """The dotted name a user would write for `obj`: ``tocha.relu``,
    ``tocha.nn.functional.relu``, ``operator.add``, ``builtins.getattr`` or, for a function
    found nowhere public, its ``__module__`` and ``__qualname__``."""
    cached = _qualified_cache.get(id(obj))
    if cached is not None and cached[0] is obj:
        return cached[1]
    name = _find_qualified_name(obj)
    _qualified_cache[id(obj)] = (obj, name)
    return name


def _find_qualified_name(obj: Any) -> str:
    short = getattr(obj, "__name__", None)
    if short is None:
        return repr(obj)
    if getattr(builtins, short, None) is obj:
        return f"builtins.{short}"
    if not short.startswith("_") and _provided_by_tocha(short) is obj:
        return f"tocha.{short}"
    for namespace in _PUBLIC_NAMESPACES:
        module = sys.modules.get(namespace)
        if module is not None and module.__dict__.get(short) is obj:
            return f"{namespace}.{short}"
    module_name = getattr(obj, "__module__", None) or "builtins"
    if module_name == "_operator":
        module_name = "operator"
    qualname = getattr(obj, "__qualname__", short)
    return f"{module_name}.{qualname}"


def _provided_by_tocha(short: str) -> Any:
    """``tocha.<short>``, also when tocha provides it on first access (``tocha.conv2d`` is
    ``tocha.nn.functional.conv2d``, as ``torch.conv2d`` is torch's), so that a function is
    named the same whether or not it was reached through ``tocha`` before."""
    import tocha

    try:
        return getattr(tocha, short)
    except (AttributeError, ImportError):
        return None


def snake_case(name: str) -> str:
    """Lower case with an underscore where a capital follows a lower-case letter, as
    torch.fx names nodes: ``MyModule`` -> ``my_module``, ``ReLU`` -> ``re_lu``,
    ``Conv2d`` -> ``conv2d``."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", name).lower()


def sanitize(candidate: str) -> str:
    """A valid identifier made from `candidate`: dots and other symbols become underscores and
    a leading digit gets an underscore."""
    candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate)
    if not candidate:
        candidate = "_unnamed"
    if candidate[0].isdigit():
        candidate = f"_{candidate}"
    return candidate


class Namespace:
    """Hands out unique identifiers: ``add``, ``add_1``, ``add_2``... never a Python keyword,
    builtin or a name the generated code uses (``tocha``, ``operator``)."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._next_suffix: dict[str, int] = {}
        self._by_object: dict[int, str] = {}

    def create_name(self, candidate: str, obj: Any = None) -> str:
        """A fresh identifier close to `candidate`; the same `obj` gets the same name again."""
        if obj is not None and id(obj) in self._by_object:
            return self._by_object[id(obj)]
        candidate = sanitize(candidate)
        match = re.match(r"(.*)_(\d+)$", candidate)
        base, number = (match.group(1), int(match.group(2))) if match else (candidate, None)
        name = candidate
        if name in self._used or name in _RESERVED:
            suffix = self._next_suffix.get(base, 1) if number is None else number
            while True:
                name = f"{base}_{suffix}"
                suffix += 1
                if name not in self._used and name not in _RESERVED:
                    break
            self._next_suffix[base] = suffix
        self._used.add(name)
        if obj is not None:
            self._by_object[id(obj)] = name
        return name

    def associate(self, name: str, obj: Any) -> None:
        """Record that `obj` already goes by `name`."""
        self._used.add(name)
        self._by_object[id(obj)] = name

    def release(self, name: str) -> None:
        """Free `name` (its node was erased); counters keep going so names stay distinct."""
        self._used.discard(name)
