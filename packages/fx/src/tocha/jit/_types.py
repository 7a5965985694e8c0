"""TorchScript's types, read from annotations in the source, and the checks made at call time.

A type is a small tuple: ``("Tensor",)``, ``("int",)``, ``("Optional", T)``,
``("List", T)``, ``("Tuple", T1, T2, ...)``, ``("Dict", K, V)``, ``("Any",)``.
It is written back as TorchScript writes it (``Optional[Tensor]``).
"""

from __future__ import annotations

import ast
import types
import typing
from typing import Any

import tocha

Type = tuple

TENSOR: Type = ("Tensor",)
ANY: Type = ("Any",)
_SCALARS = {"int", "float", "bool", "str", "Tensor", "Any", "NoneType", "complex", "number"}
_NAMES = {
    "Tensor": "Tensor",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "str": "str",
    "Any": "Any",
    "complex": "complex",
    "None": "NoneType",
    "NoneType": "NoneType",
    "Number": "number",
}
_GENERICS = {
    "Optional": "Optional",
    "List": "List",
    "list": "List",
    "Tuple": "Tuple",
    "tuple": "Tuple",
    "Dict": "Dict",
    "dict": "Dict",
    "Final": "Final",
    "Union": "Union",
}


class TypeAnnotationError(ValueError):
    """An annotation that does not name a TorchScript type."""


def parse(node: ast.expr | None) -> Type | None:
    """The type an annotation's AST names; None when there is no annotation."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        if node.value is None:
            return ("NoneType",)
        if isinstance(node.value, str):
            return parse(ast.parse(node.value, mode="eval").body)
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name in _NAMES:
            return (_NAMES[name],)
        if name in ("List", "list", "Tuple", "tuple", "Dict", "dict"):
            return (_GENERICS[name], ANY) if name[0] in "Ll" else (_GENERICS[name],)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([parse(node.left), parse(node.right)])
    if isinstance(node, ast.Subscript):
        base = node.value
        name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
        kind = _GENERICS.get(name or "")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        args = [parse(item) for item in items]
        if kind == "Final":
            return args[0]
        if kind == "Optional" and len(args) == 1:
            return ("Optional", args[0])
        if kind == "Union":
            return _union(args)
        if kind == "List" and len(args) == 1:
            return ("List", args[0])
        if kind == "Tuple":
            if len(args) == 1 and args[0] == ("Tuple",):
                return ("Tuple",)
            return ("Tuple", *args)
        if kind == "Dict" and len(args) == 2:
            return ("Dict", args[0], args[1])
    raise TypeAnnotationError(f"Unknown type annotation: '{ast.unparse(node)}'")


def _union(args: list) -> Type:
    rest = [a for a in args if a != ("NoneType",)]
    if len(rest) == 1 and len(rest) < len(args):
        return ("Optional", rest[0])
    if len(rest) == 1:
        return rest[0]
    return ("Union", *args)


def from_python(annotation: Any) -> Type:
    """The type a runtime annotation object names (``List[int]``, ``tocha.Tensor``...)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is None or annotation is type(None):
        return ("NoneType",)
    if origin is None:
        if annotation is tocha.Tensor:
            return TENSOR
        name = getattr(annotation, "__name__", getattr(annotation, "_name", None))
        if name in _NAMES:
            return (_NAMES[name],)
        if name in ("list", "List"):
            return ("List", ANY)
        if name in ("dict", "Dict"):
            return ("Dict", ANY, ANY)
        if name in ("tuple", "Tuple"):
            return ("Tuple",)
        raise TypeAnnotationError(f"Unknown type annotation: '{annotation!r}'")
    inner = [from_python(a) for a in args if a is not Ellipsis]
    if origin is typing.Union or origin is types.UnionType:
        return _union(inner)
    kind = _GENERICS.get(getattr(origin, "__name__", ""), None)
    if kind == "List":
        return ("List", inner[0])
    if kind == "Dict":
        return ("Dict", inner[0], inner[1])
    if kind == "Tuple":
        return ("Tuple", *inner)
    raise TypeAnnotationError(f"Unknown type annotation: '{annotation!r}'")


def show(t: Type) -> str:
    """TorchScript's spelling of a type: ``Optional[List[int]]``."""
    if t[0] in _SCALARS:
        return t[0]
    if t[0] == "Tuple" and len(t) == 1:
        return "Tuple[()]"
    return f"{t[0]}[{', '.join(show(a) for a in t[1:])}]"


def schema(t: Type) -> str:
    """A type as a schema writes it: ``Tensor?``, ``int[]``, ``(int, Tensor)``."""
    kind = t[0]
    if kind == "Optional":
        return schema(t[1]) + "?"
    if kind == "List":
        return schema(t[1]) + "[]"
    if kind == "Tuple":
        return f"({', '.join(schema(a) for a in t[1:])})"
    if kind == "Dict":
        return f"Dict({schema(t[1])}, {schema(t[2])})"
    return show(t)


def schema_default(value: Any) -> str:
    """A default value as a schema writes it: ``None``, ``2.``, ``[1, 2]``."""
    if isinstance(value, float) and value.is_integer():
        return f"{value:.0f}."
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return f"[{', '.join(schema_default(v) for v in value)}]"
    return repr(value)


def type_of(value: Any) -> str:
    """TorchScript's name for the type of a Python value, for error messages."""
    if isinstance(value, tocha.Tensor):
        return "Tensor"
    if value is None:
        return "NoneType"
    if isinstance(value, (bool, int, float, str, complex)):
        return type(value).__name__
    if isinstance(value, list):
        return f"List[{type_of(value[0]) if value else 'Tensor'}]"
    if isinstance(value, tuple):
        return f"Tuple[{', '.join(type_of(v) for v in value)}]"
    if isinstance(value, dict):
        if not value:
            return "Dict[str, Tensor]"
        key, item = next(iter(value.items()))
        return f"Dict[{type_of(key)}, {type_of(item)}]"
    return type(value).__name__


def matches(t: Type, value: Any) -> bool:
    """Whether ``value`` can be passed where TorchScript expects ``t``."""
    kind = t[0]
    if kind == "Any":
        return True
    if kind == "Tensor":
        return isinstance(value, tocha.Tensor)
    if kind == "NoneType":
        return value is None
    if kind in ("bool", "int", "float") and _one_element(value):
        return True
    if kind == "bool":
        return isinstance(value, int)
    if kind == "int":
        return isinstance(value, int)
    if kind == "float":
        return isinstance(value, (int, float))
    if kind == "number":
        return isinstance(value, (int, float, complex))
    if kind == "complex":
        return isinstance(value, (int, float, complex))
    if kind == "str":
        return isinstance(value, str)
    if kind == "Optional":
        return value is None or matches(t[1], value)
    if kind == "Union":
        return any(matches(a, value) for a in t[1:])
    if kind == "List":
        return isinstance(value, (list, tuple)) and all(matches(t[1], v) for v in value)
    if kind == "Tuple":
        if not isinstance(value, (tuple, list)):
            return False
        return len(t) == 1 or (
            len(value) == len(t) - 1 and all(matches(a, v) for a, v in zip(t[1:], value))
        )
    if kind == "Dict":
        return isinstance(value, dict) and all(
            matches(t[1], k) and matches(t[2], v) for k, v in value.items()
        )
    return False


def _one_element(value: Any) -> bool:
    return isinstance(value, tocha.Tensor) and value.numel() == 1


def convert(t: Type, value: Any) -> Any:
    """``value`` as TorchScript holds it for ``t``: a one-element tensor or a Python number
    becomes the ``int``/``float``/``bool`` due, a tuple given for a list a list (and back)."""
    kind = t[0]
    if kind in ("int", "float", "bool") and not isinstance(value, str):
        scalar = value.item() if _one_element(value) else value
        return {"int": int, "float": float, "bool": bool}[kind](scalar)
    if kind == "List" and isinstance(value, tuple):
        return list(value)
    if kind == "Tuple" and isinstance(value, list):
        return tuple(value)
    return value
