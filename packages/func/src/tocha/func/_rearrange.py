"""`rearrange`: einops' pattern language for reordering, grouping and splitting dims.

A pattern ``"left -> right"`` names each dim of the input on the left and of the result on
the right: a name is one axis, ``(a b)`` a dim made of several axes (the first varying
slowest), ``1`` or ``()`` a dim of size 1, ``...`` the dims the pattern does not name.
Both sides name the same axes; the input is reshaped into its axes, they are permuted
into the right side's order, and grouped again into the result's dims.
"""

from __future__ import annotations

import math
import re

import tocha
from tocha import Tensor

__all__ = ["rearrange"]

_ELLIPSIS = "..."
_TOKEN = re.compile(r"\.\.\.|\(|\)|[^\s()]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def rearrange(tensor, pattern: str, **axes_lengths: int) -> Tensor:
    """`tensor` (or a sequence of tensors, stacked along a new first dim) with its dims
    reordered, grouped and split as `pattern` says (einops' ``rearrange``); `axes_lengths`
    give the sizes of axes that splitting a dim cannot infer."""
    if not isinstance(tensor, Tensor):
        tensor = tocha.stack(list(tensor))
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    left_text, right_text = pattern.split("->")
    left, right = _parse(left_text), _parse(right_text)
    if any(dim != _ELLIPSIS and _ELLIPSIS in dim for dim in left):
        raise ValueError("Ellipsis inside parenthesis in the left side is not allowed")
    left_names = _axis_names(left)
    right_names = _axis_names(right)
    one_sided = set(left_names) ^ set(right_names)
    if one_sided:
        raise ValueError(
            f"Identifiers only on one side of rearrange expression (should be on both): {one_sided}"
        )
    unknown = set(axes_lengths) - set(left_names)
    if unknown:
        raise ValueError(f"Identifiers not found in rearrange expression: {unknown}")
    hidden = max(tensor.dim() - _ellipsis_free(left), 0)  # the dims the ellipsis stands for
    left, right = _expand_ellipsis(left, hidden), _expand_ellipsis(right, hidden)
    sizes = _bind(left, tuple(tensor.shape), axes_lengths)
    axes = [name for group in left for name in group if name is not None]
    order = [name for group in right for name in group if name is not None]
    split = tensor.reshape([sizes[name] for name in axes])
    moved = split.permute([axes.index(name) for name in order])
    result_shape = [math.prod(sizes[name] for name in group if name is not None) for group in right]
    return moved.reshape(result_shape)


def _parse(side: str) -> list:
    """A side's dims, each a list of axis names (None for a size-1 axis) or, for an
    ellipsis standing alone, the ellipsis itself (grouped, it is an atom of its dim)."""
    dims: list = []
    group: list | None = None
    for token in _TOKEN.findall(side):
        if token == "(":
            if group is not None:
                raise ValueError("Nested parentheses are not allowed in a rearrange pattern")
            group = []
        elif token == ")":
            if group is None:
                raise ValueError("Unmatched ')' in rearrange pattern")
            dims.append(group)
            group = None
        else:
            atom = _atom(token)
            if group is not None:
                group.append(atom)
            else:
                dims.append(atom if atom == _ELLIPSIS else [atom])
    if group is not None:
        raise ValueError("Unmatched '(' in rearrange pattern")
    seen: set = set()
    for name in _axis_names(dims):
        if name in seen:
            raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
        seen.add(name)
    return dims


def _atom(token: str):
    if token == _ELLIPSIS:
        return _ELLIPSIS
    if token.isdigit():
        if int(token) != 1:
            raise ValueError("rearrange only supports unnamed axes of size 1")
        return None
    if not _NAME.match(token):
        raise ValueError(f"Invalid axis identifier: {token}")
    if token.startswith("_") or token.endswith("_"):
        raise ValueError(
            f"Invalid axis identifier: {token}\naxis name should should not start or end with "
            "underscore"
        )
    return token


def _axis_names(dims: list) -> list:
    return [a for dim in dims if dim != _ELLIPSIS for a in dim if a not in (None, _ELLIPSIS)]


def _ellipsis_free(dims: list) -> int:
    """How many of `dims` do not hold the ellipsis."""
    return sum(1 for dim in dims if dim != _ELLIPSIS and _ELLIPSIS not in dim)


def _expand_ellipsis(dims: list, count: int) -> list:
    """`dims` with the ellipsis replaced by `count` axes of its own (named so that no pattern
    name can clash), grouped where the ellipsis was."""
    expanded = []
    for dim in dims:
        if dim == _ELLIPSIS:
            expanded.extend([[f"...{k}"] for k in range(count)])
        elif _ELLIPSIS not in dim:
            expanded.append(dim)
        else:
            at = dim.index(_ELLIPSIS)
            expanded.append(dim[:at] + [f"...{k}" for k in range(count)] + dim[at + 1 :])
    return expanded


def _bind(dims: list, shape: tuple, axes_lengths: dict) -> dict:
    """The size of every axis of the left side, from the input's shape and `axes_lengths`."""
    if len(dims) != len(shape):
        raise ValueError(
            f"Number of dimensions in pattern ({len(dims)}) must be equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    sizes: dict = {}
    for dim, size in zip(dims, shape):
        known = 1
        unknown = []
        for name in dim:
            if name is None:
                continue
            if name in axes_lengths:
                sizes[name] = axes_lengths[name]
                known *= axes_lengths[name]
            else:
                unknown.append(name)
        if len(unknown) > 1:
            raise ValueError(
                f"cannot infer the sizes of two dimensions at once {unknown[0]} and {unknown[1]}"
            )
        if unknown:
            if known == 0 or size % known:
                pack = tuple(sizes.get(name, "?") for name in dim if name is not None)
                raise ValueError(
                    f"inferred dimension does not evenly fit into larger dimension: {size} vs "
                    f"{pack}"
                )
            sizes[unknown[0]] = size // known
        elif known != size:
            pack = "(" + ", ".join(n for n in dim if n is not None) + ",)"
            raise ValueError(
                f"Dimension sizes to do not match ({size} != {known}) when matching dimension "
                f"pack {pack}"
            )
    return sizes
