"""``tocha.utils._pytree``, as ``torch.utils._pytree``: nested containers (pytrees) taken
apart into their leaves and put back together.

A pytree is a leaf or a node: a tuple, list, dict, ``OrderedDict``, ``defaultdict``,
``deque``, named tuple, or a type given to `register_pytree_node`. Everything else (tensors,
numbers, None) is a leaf. `tree_flatten` lists the leaves depth first (a dict's values in
its key order) with a `TreeSpec` that `tree_unflatten` rebuilds the same structure from.

Example:
    >>> leaves, spec = tree_flatten({"a": (1, 2), "b": [3]})
    >>> leaves
    [1, 2, 3]
    >>> tree_unflatten([x * 10 for x in leaves], spec)
    {'a': (10, 20), 'b': [30]}
    >>> tree_map(lambda x: x + 1, [1, (2, 3)])
    [2, (3, 4)]
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = [
    "PyTree",
    "TreeSpec",
    "LeafSpec",
    "KeyEntry",
    "SequenceKey",
    "MappingKey",
    "GetAttrKey",
    "register_pytree_node",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_unflatten",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_iter",
    "tree_structure",
    "tree_map",
    "tree_map_",
    "tree_map_with_path",
    "tree_map_only",
    "tree_map_only_",
    "tree_all",
    "tree_any",
    "tree_all_only",
    "tree_any_only",
    "tree_is_leaf",
    "keystr",
    "treespec_pprint",
]

PyTree = Any
Context = Any
FlattenFunc = Callable[[PyTree], tuple[list, Context]]
UnflattenFunc = Callable[[Iterable, Context], PyTree]


# -- key paths --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The position of a child in a sequence: ``[idx]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The key of a child in a mapping: ``[key]``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute holding a child: ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


KeyEntry = Any
KeyPath = tuple


def keystr(kp: KeyPath) -> str:
    """A key path as Python would index with it: ``[0]['a'].b``."""
    return "".join(str(k) for k in kp)


# -- node types -------------------------------------------------------------------------------
class NodeDef(NamedTuple):
    """How one node type is flattened and rebuilt."""

    type: type
    flatten_fn: FlattenFunc
    unflatten_fn: UnflattenFunc
    flatten_with_keys_fn: Callable | None


SUPPORTED_NODES: dict[type, NodeDef] = {}


def register_pytree_node(
    cls: type,
    flatten_fn: FlattenFunc,
    unflatten_fn: UnflattenFunc,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: Callable | None = None,
    from_dumpable_context: Callable | None = None,
    flatten_with_keys_fn: Callable | None = None,
) -> None:
    """Make `cls` a node: ``flatten_fn(x) -> (children, context)`` takes one apart and
    ``unflatten_fn(children, context)`` rebuilds it; ``flatten_with_keys_fn(x) ->
    ([(key, child), ...], context)`` names its children for key paths. ValueError when `cls`
    is already a node. (The serialization arguments are accepted; tocha does not serialize
    specs.)"""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _tuple_flatten(d: tuple) -> tuple[list, Context]:
    return list(d), None


def _tuple_flatten_with_keys(d: tuple):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _list_flatten(d: list) -> tuple[list, Context]:
    return list(d), None


def _dict_flatten(d: dict) -> tuple[list, Context]:
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d: dict):
    """A mapping's children, each named by its `MappingKey` (for `register_pytree_node`'s
    ``flatten_with_keys_fn``, as PyTorch's)."""
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _namedtuple_flatten(d: tuple) -> tuple[list, Context]:
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d: tuple):
    return [(GetAttrKey(name), v) for name, v in zip(d._fields, d)], type(d)


def _ordereddict_flatten(d: collections.OrderedDict) -> tuple[list, Context]:
    return list(d.values()), list(d.keys())


def _defaultdict_flatten(d: collections.defaultdict) -> tuple[list, Context]:
    return list(d.values()), (d.default_factory, list(d.keys()))


def _defaultdict_flatten_with_keys(d: collections.defaultdict):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _deque_flatten(d: collections.deque) -> tuple[list, Context]:
    return list(d), d.maxlen


_BUILTIN = (
    NodeDef(tuple, _tuple_flatten, lambda values, _: tuple(values), _tuple_flatten_with_keys),
    NodeDef(list, _list_flatten, lambda values, _: list(values), _tuple_flatten_with_keys),
    NodeDef(
        dict, _dict_flatten, lambda values, keys: dict(zip(keys, values)), _dict_flatten_with_keys
    ),
    NodeDef(
        collections.OrderedDict,
        _ordereddict_flatten,
        lambda values, keys: collections.OrderedDict(zip(keys, values)),
        _dict_flatten_with_keys,
    ),
    NodeDef(
        collections.defaultdict,
        _defaultdict_flatten,
        lambda values, context: collections.defaultdict(context[0], zip(context[1], values)),
        _defaultdict_flatten_with_keys,
    ),
    NodeDef(
        collections.deque,
        _deque_flatten,
        lambda values, maxlen: collections.deque(values, maxlen=maxlen),
        _tuple_flatten_with_keys,
    ),
)
SUPPORTED_NODES.update((node.type, node) for node in _BUILTIN)
_NAMEDTUPLE = NodeDef(
    tuple, _namedtuple_flatten, lambda values, cls: cls(*values), _namedtuple_flatten_with_keys
)


def _is_namedtuple_class(cls: type) -> bool:
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def _node_of(tree: PyTree, is_leaf: Callable | None) -> NodeDef | None:
    """The `NodeDef` of `tree`, None for a leaf."""
    if is_leaf is not None and is_leaf(tree):
        return None
    cls = type(tree)
    node = SUPPORTED_NODES.get(cls)
    if node is None and _is_namedtuple_class(cls):
        return _NAMEDTUPLE
    return node


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether `tree` is a leaf (not a node, or `is_leaf` says so)."""
    return _node_of(tree, is_leaf) is None


# -- specs ------------------------------------------------------------------------------------
class TreeSpec:
    """A pytree's structure: its node `type` (None for a leaf), the `context` that rebuilds
    it (a dict's keys, a named tuple's class) and its `children_specs`."""

    def __init__(self, type: Any, context: Context, children_specs: list[TreeSpec]) -> None:  # noqa: A002
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self) -> bool:
        """Whether this is a leaf's spec."""
        return self.type is None

    def children(self) -> list[TreeSpec]:
        return list(self.children_specs)

    def child(self, index: int) -> TreeSpec:
        return self.children_specs[index]

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The tree of this structure holding `leaves` (`tree_unflatten`)."""
        return tree_unflatten(leaves, self)

    def flatten_up_to(self, tree: PyTree) -> list[PyTree]:
        """The subtrees of `tree` where this structure has its leaves; ValueError where `tree`
        does not have this structure down to them."""
        out: list = []
        _flatten_up_to(self, tree, out)
        return out

    def _node(self) -> NodeDef:
        return _NAMEDTUPLE if self.type is namedtuple_type else SUPPORTED_NODES[self.type]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (
            self.type == other.type
            and self.context == other.context
            and self.children_specs == other.children_specs
        )

    def __hash__(self) -> int:
        return hash((self.type, self.num_nodes, self.num_leaves))

    def __repr__(self) -> str:
        if self.is_leaf():
            return "*"
        children = ", ".join(repr(c) for c in self.children_specs)
        return f"TreeSpec({self.type.__name__}, {self.context!r}, [{children}])"


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_nodes = 1
        self.num_leaves = 1


namedtuple_type = collections.namedtuple  # the spec type of every named tuple


def treespec_pprint(treespec: TreeSpec) -> str:
    """A spec written as its tree with ``*`` for each leaf: ``([*, *], {'a': *})``."""
    return _pprint(treespec)


def _pprint(spec: TreeSpec) -> str:
    if spec.is_leaf():
        return "*"
    parts = [_pprint(c) for c in spec.children_specs]
    if spec.type is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(spec.context, parts)) + "}"
    if spec.type is collections.OrderedDict:
        items = ", ".join(f"({k!r}, {p})" for k, p in zip(spec.context, parts))
        return f"OrderedDict([{items}])"
    if spec.type is list:
        return "[" + ", ".join(parts) + "]"
    if spec.type is tuple:
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if spec.type is namedtuple_type:
        fields = ", ".join(f"{f}={p}" for f, p in zip(spec.context._fields, parts))
        return f"{spec.context.__name__}({fields})"
    return f"{spec.type.__name__}(" + ", ".join(parts) + ")"


# -- flatten and unflatten --------------------------------------------------------------------
def _flatten(tree: PyTree, is_leaf: Callable | None, leaves: list) -> TreeSpec:
    node = _node_of(tree, is_leaf)
    if node is None:
        leaves.append(tree)
        return _LEAF
    children, context = node.flatten_fn(tree)
    spec_type = namedtuple_type if node is _NAMEDTUPLE else node.type
    return TreeSpec(spec_type, context, [_flatten(c, is_leaf, leaves) for c in children])


_LEAF = LeafSpec()


def tree_flatten(
    tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> tuple[list[Any], TreeSpec]:
    """The leaves of `tree` (depth first) and its `TreeSpec`. `is_leaf(subtree)` returning
    True stops the descent there."""
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The tree of structure `treespec` holding `leaves` in order. ValueError when their
    number is not the spec's; TypeError when `treespec` is not a TreeSpec."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of "
            f"TreeSpec but got item of type {type(treespec)}."
        )
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
            f"but the spec refers to a pytree that holds {treespec.num_leaves} items "
            f"({treespec})."
        )
    return _unflatten(treespec, iter(leaves))


def _unflatten(spec: TreeSpec, leaves) -> PyTree:
    if spec.is_leaf():
        return next(leaves)
    children = [_unflatten(c, leaves) for c in spec.children_specs]
    return spec._node().unflatten_fn(children, spec.context)


def _flatten_up_to(spec: TreeSpec, tree: PyTree, out: list) -> None:
    if spec.is_leaf():
        out.append(tree)
        return
    node = _node_of(tree, None)
    spec_type = None if node is None else namedtuple_type if node is _NAMEDTUPLE else node.type
    if spec_type is not spec.type:
        expected = spec.type.__name__ if spec.type is not namedtuple_type else "namedtuple"
        raise ValueError(f"Node type mismatch; expected {expected}, but got {type(tree).__name__}.")
    children, context = node.flatten_fn(tree)
    if len(children) != spec.num_children:
        raise ValueError(
            f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}."
        )
    if context != spec.context:
        raise ValueError(f"Node context mismatch; expected {spec.context!r}, but got {context!r}.")
    for child_spec, child in zip(spec.children_specs, children):
        _flatten_up_to(child_spec, child, out)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list[Any]:
    """The leaves of `tree`, depth first."""
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None):
    """The leaves of `tree`, depth first, one at a time."""
    node = _node_of(tree, is_leaf)
    if node is None:
        yield tree
        return
    for child in node.flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> TreeSpec:
    """The `TreeSpec` of `tree`."""
    return tree_flatten(tree, is_leaf)[1]


def tree_flatten_with_path(
    tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> tuple[list[tuple[KeyPath, Any]], TreeSpec]:
    """The ``(key path, leaf)`` pairs of `tree` and its spec. ValueError for a node type
    registered without ``flatten_with_keys_fn``."""
    return list(_paths(tree, is_leaf, ())), tree_structure(tree, is_leaf)


def tree_leaves_with_path(
    tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> list[tuple[KeyPath, Any]]:
    """The ``(key path, leaf)`` pairs of `tree`, depth first."""
    return list(_paths(tree, is_leaf, ()))


def _paths(tree: PyTree, is_leaf: Callable | None, prefix: KeyPath):
    node = _node_of(tree, is_leaf)
    if node is None:
        yield prefix, tree
        return
    if node.flatten_with_keys_fn is None:
        raise ValueError(
            f"Did not find a flatten_with_keys_fn for type: {node.type}. "
            "Please pass a flatten_with_keys_fn argument to register_pytree_node."
        )
    for key, child in node.flatten_with_keys_fn(tree)[0]:
        yield from _paths(child, is_leaf, (*prefix, key))


# -- mapping ----------------------------------------------------------------------------------
def tree_map(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """`tree` with each leaf ``x`` replaced by ``func(x, *ys)``, where ``ys`` are the subtrees
    of `rests` at the same place (each must have `tree`'s structure down to its leaves)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def tree_map_(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """Call ``func`` on each leaf (with `rests`' subtrees, as `tree_map`) for its effect;
    returns `tree`."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def tree_map_with_path(
    func: Callable[..., Any],
    tree: PyTree,
    *rests: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """As `tree_map`, with each leaf's key path as ``func``'s first argument."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(path, x, *ys) for (path, x), *ys in zip(pairs, *others))


def _matcher(type_or_types_or_pred) -> Callable[[Any], bool]:
    if isinstance(type_or_types_or_pred, (type, tuple)):
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def _only(type_or_types_or_pred, func: Callable) -> Callable:
    matches = _matcher(type_or_types_or_pred)
    return lambda x: func(x) if matches(x) else x


def tree_map_only(
    type_or_types_or_pred,
    func: Callable[[Any], Any],
    tree: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """As `tree_map` on the leaves that are instances of the type(s) (or satisfy the
    predicate); other leaves are kept."""
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(
    type_or_types_or_pred,
    func: Callable[[Any], Any],
    tree: PyTree,
    is_leaf: Callable[[PyTree], bool] | None = None,
) -> PyTree:
    """As `tree_map_` on the leaves of the type(s) (or satisfying the predicate)."""
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(
    pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> bool:
    """Whether `pred` holds for every leaf."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(
    pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
) -> bool:
    """Whether `pred` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(
    type_or_types, pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable | None = None
) -> bool:
    """Whether `pred` holds for every leaf of the type(s)."""
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(
    type_or_types, pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable | None = None
) -> bool:
    """Whether `pred` holds for some leaf of the type(s)."""
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))
