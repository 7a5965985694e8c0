"""Layouts: how nested inputs and outputs map to a graph's flat placeholders and outputs.

A layout is JSON: ``{"leaf": i}`` (the i-th flat value), ``{"tuple": [...]}``,
``{"list": [...]}``, ``{"dict": [[key, layout], ...]}`` or ``{"const": value}`` (a
non-tensor input, kept as it was given).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import tocha

__all__ = ["flatten", "input_checks", "rebuild", "template"]


def flatten(names: list[str], values: list[Any]) -> list[tuple[str, Any, bool]]:
    """Every leaf of the inputs as ``(name, value, is_tensor)``; nested leaves are named
    ``<name>_<index>``."""
    leaves: list[tuple[str, Any, bool]] = []

    def walk(path: str, label: str, value: Any) -> None:
        if isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                walk(f"{path}_{i}", f"{label}[{i}]", v)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(f"{path}_{k}", f"{label}[{k!r}]", v)
        else:
            leaves.append((path, value, isinstance(value, tocha.Tensor), label))

    for name, value in zip(names, values):
        walk(name, name, value)
    return [(p, v, t) for p, v, t, _ in leaves], [label for *_, label in leaves]


def template(
    value: Any, counter: Iterator[int], leaves: list | None = None, all_leaves: bool = False
) -> Any:
    """`value`'s layout; its leaves (tensors, or every non-container when `all_leaves`) are
    numbered from `counter` and appended to `leaves`."""
    if isinstance(value, tuple):
        return {"tuple": [template(v, counter, leaves, all_leaves) for v in value]}
    if isinstance(value, list):
        return {"list": [template(v, counter, leaves, all_leaves) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[k, template(v, counter, leaves, all_leaves)] for k, v in value.items()]}
    if all_leaves or isinstance(value, tocha.Tensor):
        if leaves is not None:
            leaves.append(value)
        return {"leaf": next(counter)}
    return {"const": value}


def rebuild(layout: Any, leaves: list[Any]) -> Any:
    """The nested value `layout` describes, its leaves taken from `leaves`."""
    if "leaf" in layout:
        return leaves[layout["leaf"]]
    if "tuple" in layout:
        return tuple(rebuild(v, leaves) for v in layout["tuple"])
    if "list" in layout:
        return [rebuild(v, leaves) for v in layout["list"]]
    if "dict" in layout:
        return {k: rebuild(v, leaves) for k, v in layout["dict"]}
    return layout["const"]


def input_checks(flat: Any, dynamic: list[dict]) -> list[list]:
    """For each input leaf, in order: a tensor's label (``x``, ``x[0]``), its sizes with None
    where dynamic, and the ``[min, max, symbol]`` of each dynamic dimension (max None when
    unbounded; dimensions of one symbol must be equal); a non-tensor's label, None and
    ``{"equals": value}``."""
    leaves, labels = flat
    checks = []
    tensors = 0
    for (_, value, is_tensor), label in zip(leaves, labels):
        if not is_tensor:
            checks.append([label, None, {"equals": value}])
            continue
        dims = dynamic[tensors] if tensors < len(dynamic) else {}
        tensors += 1
        dims = {d: dim for d, dim in dims.items() if not dim.specialized}
        sizes = [None if d in dims else s for d, s in enumerate(value.shape)]
        ranges = {}
        for d, dim in dims.items():
            upper = dim.range.upper
            bound = upper if isinstance(upper, int) else None
            ranges[str(d)] = [dim.range.lower, bound, str(dim.symbol)]
        checks.append([label, sizes, ranges])
    return checks
