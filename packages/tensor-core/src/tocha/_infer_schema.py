"""``torch.library.infer_schema``: a custom operator's schema string from its function's
type annotations (``(Tensor x, SymInt n=3) -> Tensor``, ``Tensor(a0!)`` for an argument it
mutates)."""

from __future__ import annotations

import collections.abc
import inspect
import typing
from collections.abc import Callable, Iterable
from typing import Any, Optional, Union

__all__ = ["infer_schema"]


def _type_table() -> dict[Any, str]:
    import tocha

    table: dict[Any, str] = {}
    scalar = Union[int, float, bool]  # noqa: UP007 (PyTorch's key for Scalar)
    elements = [
        (tocha.Tensor, "Tensor", False),
        (int, "SymInt", True),
        (float, "float", True),
        (bool, "bool", True),
        (str, "str", False),
        (scalar, "Scalar", False),
        (tocha.dtype, "ScalarType", False),
        (tocha.device, "Device", False),
    ]
    for py, name, optional_list in elements:
        table[py] = name
        table[Optional[py]] = f"{name}?"  # noqa: UP045
        if py in (str, tocha.dtype, tocha.device):
            continue
        for seq in (typing.Sequence, typing.List, collections.abc.Sequence, list):  # noqa: UP006
            table[seq[py]] = f"{name}[]"
            if optional_list:
                table[Optional[seq[py]]] = f"{name}[]?"  # noqa: UP045
            if py is tocha.Tensor:
                table[seq[Optional[py]]] = "Tensor?[]"  # noqa: UP045
    table[int | float | bool] = "Scalar"
    table[Optional[int | float | bool]] = "Scalar?"  # noqa: UP045
    return table


def _return_table() -> dict[Any, str]:
    import tocha

    return {
        tocha.Tensor: "Tensor",
        typing.List[tocha.Tensor]: "Tensor[]",  # noqa: UP006
        list[tocha.Tensor]: "Tensor[]",
        int: "SymInt",
        float: "float",
        bool: "bool",
        int | float | bool: "Scalar",
    }


def infer_schema(
    prototype_function: Callable,
    /,
    *,
    mutates_args: str | Iterable[str],
    op_name: str | None = None,
    tags=(),
) -> str:
    """The schema string of a custom operator whose Python function is
    `prototype_function`, read from its annotations: each parameter needs one of the
    supported types (Tensor, int, float, bool, str, dtype, device, ``Union[int, float,
    bool]``, their Optional forms and Sequences of them); `mutates_args` names the Tensor
    arguments it writes to (``"unknown"``: all of them). With `op_name` the schema starts
    with that name. ValueError for a signature it cannot express."""
    import tocha

    sig = _signature(prototype_function)

    def error(what: str):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    if isinstance(mutates_args, str) and mutates_args != "unknown":
        raise ValueError(
            "mutates_args must either be a sequence of the names of the arguments that are "
            "mutated or the string 'unknown'. "
        )
    table = _type_table()
    names = set(sig.parameters)
    if mutates_args != "unknown":
        missing = set(mutates_args) - names
        if missing:
            error(
                f"{missing} in mutates_args were not found in the custom op's signature. "
                "mutates_args should contain the names of all args that the custom op "
                "mutates, or just the string 'unknown' if you don't know."
            )
    params, seen_kwonly = [], False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not seen_kwonly:
            params.append("*")
            seen_kwonly = True
        if param.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        spelled = table.get(param.annotation) if _hashable(param.annotation) else None
        if spelled is None:
            error(
                f"Parameter {name} has unsupported type {param.annotation}. "
                f"The valid types are: {table.keys()}."
            )
        mutated = mutates_args == "unknown" and spelled.startswith("Tensor")
        if mutates_args != "unknown" and name in mutates_args:
            if not spelled.startswith("Tensor"):
                error(
                    f"Parameter {name} is in mutable_args but only Tensors or collections "
                    "of Tensors can be mutated"
                )
            mutated = True
        if mutated:
            spelled = f"Tensor(a{idx}!)" + spelled[len("Tensor") :]
        text = f"{spelled} {name}"
        if param.default is not inspect.Parameter.empty:
            text += "=" + _default(param.default, name, error, tocha)
        params.append(text)
    ret = sig.return_annotation
    if ret is inspect.Signature.empty:
        error("No return type annotation was provided. Please add one.")
    returns = _returns(ret, error)
    head = op_name or ""
    return f"{head}({', '.join(params)}) -> {returns}"


def _signature(fn: Callable) -> inspect.Signature:
    try:
        return inspect.signature(fn, eval_str=True)
    except (NameError, TypeError, SyntaxError):
        return inspect.signature(fn)


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _default(value, name: str, error, tocha) -> str:
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tocha.dtype):
        return str(value).rsplit(".", 1)[-1]
    if isinstance(value, tocha.device):
        return f'"{value}"'
    error(
        f"Parameter {name} has an unsupported default value type {type(value)}. "
        "Please file an issue on GitHub so we can prioritize this."
    )


def _returns(ret, error) -> str:
    if ret is None or ret is type(None):
        return "()"
    table = _return_table()
    origin = typing.get_origin(ret)
    if origin is tuple:
        parts = []
        for item in typing.get_args(ret):
            spelled = table.get(item) if _hashable(item) else None
            if spelled is None:
                error(f"Return has unsupported type {item}. The valid types are: {table}.")
            parts.append(spelled)
        if len(parts) == 1:
            return f"(({parts[0]}))"
        return f"({', '.join(parts)})"
    spelled = table.get(ret) if _hashable(ret) else None
    if spelled is None:
        error(f"Return has unsupported type {ret}. The valid types are: {table}.")
    return spelled
