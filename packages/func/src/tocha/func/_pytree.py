"""Nested containers of tensors (pytrees): tuples, lists, dicts and named tuples (also
tocha's return types, such as ``max``'s).

`tree_flatten` lists a tree's leaves (anything that is not one of those containers) in a
fixed order and gives the spec that `tree_unflatten` rebuilds the same structure from.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class TreeSpec(NamedTuple):
    """A tree's structure: its container type (None for a leaf), the context that rebuilds
    it (dict keys, the named-tuple class) and the specs of its children."""

    kind: Any
    context: Any
    children: tuple

    @property
    def num_leaves(self) -> int:
        if self.kind is None:
            return 1
        return sum(child.num_leaves for child in self.children)


LEAF = TreeSpec(None, None, ())


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """The leaves of `tree`, depth first, and its spec."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves: list) -> TreeSpec:
    kind = type(tree)
    if kind is tuple or kind is list:  # the common containers, checked first
        return TreeSpec(kind, None, tuple([_flatten(v, leaves) for v in tree]))
    if isinstance(tree, dict):
        keys = list(tree)
        return TreeSpec(dict, keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if _is_namedtuple(tree):
        return TreeSpec("namedtuple", type(tree), tuple(_flatten(v, leaves) for v in tree))
    if isinstance(tree, (tuple, list)):
        return TreeSpec(type(tree), None, tuple(_flatten(v, leaves) for v in tree))
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec: TreeSpec):
    """The tree of structure `spec` holding `leaves` (as many as the spec has)."""
    leaves = list(leaves)
    it = iter(leaves)
    try:
        tree = _build(spec, it)
        complete = next(it, it) is it  # every leaf used
    except StopIteration:  # too few leaves
        complete = False
    if not complete:
        raise ValueError(
            f"tree_unflatten(leaves, spec): `leaves` has length {len(leaves)} but the spec "
            f"refers to a pytree that holds {spec.num_leaves} items"
        )
    return tree


def _build(spec: TreeSpec, it):
    if spec.kind is None:
        return next(it)
    children = [_build(child, it) for child in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.context, children))
    if spec.kind == "namedtuple":
        kind = spec.context
        return kind._make(children) if hasattr(kind, "_make") else kind(children)
    return spec.kind(children)


def tree_map(fn, tree):
    """`tree` with `fn` applied to each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix, tree, what: str) -> list:
    """One entry of `prefix` per leaf of `tree`: a prefix tree (a leaf of it covers a whole
    subtree, as vmap's in_dims) spread over the leaves. ValueError naming `what` when the
    structures do not match."""
    out: list = []
    _spread(prefix, tree, out, what)
    return out


def _spread(prefix, tree, out: list, what: str) -> None:
    prefix_is_leaf = not isinstance(prefix, (tuple, list, dict))
    if prefix_is_leaf:
        out.extend([prefix] * tree_flatten(tree)[1].num_leaves)
        return
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            raise ValueError(f"{what}: the structure of {what} does not match the inputs")
        for k in tree:
            _spread(prefix[k], tree[k], out, what)
        return
    if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
        raise ValueError(f"{what}: the structure of {what} does not match the inputs")
    for p, t in zip(prefix, tree):
        _spread(p, t, out, what)
