"""tocha.utils._pytree (``torch.utils._pytree`` under the torch alias) against PyTorch's:
leaves, structure, key paths, mapping, node registration and errors."""

from __future__ import annotations

import collections

import pytest

import tocha.utils._pytree as pytree

Point = collections.namedtuple("Point", "x y")
TREES = {
    "nested": {"a": (1, [2, None]), "b": Point(3, 4), "c": collections.OrderedDict(z=5), "d": ()},
    "leaf": 7,
    "list": [1, (2,), [], {"k": [3]}],
    "tuple1": (1,),
}


@pytest.mark.parametrize("name", list(TREES), ids=list(TREES))
def test_flatten_matches_torch(torch, name):
    tree = TREES[name]
    leaves, spec = pytree.tree_flatten(tree)
    want_leaves, want_spec = torch.utils._pytree.tree_flatten(tree)
    assert leaves == list(want_leaves)
    assert pytree.treespec_pprint(spec) == torch.utils._pytree.treespec_pprint(want_spec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == (
        want_spec.num_leaves,
        want_spec.num_nodes,
        want_spec.num_children,
    )
    assert pytree.tree_unflatten(leaves, spec) == tree
    paths = [pytree.keystr(k) for k, _ in pytree.tree_flatten_with_path(tree)[0]]
    want_paths = [
        torch.utils._pytree.keystr(k)
        for k, _ in torch.utils._pytree.tree_flatten_with_path(tree)[0]
    ]
    assert paths == want_paths
    assert pytree.tree_leaves(tree) == list(torch.utils._pytree.tree_leaves(tree))


def test_map_and_map_only_match_torch(torch):
    tree, other = [1, (2,), {"a": 3}], [10, (20,), {"a": 30}]
    add = lambda x, y: x + y  # noqa: E731
    assert pytree.tree_map(add, tree, other) == torch.utils._pytree.tree_map(add, tree, other)
    mixed = [1, "a", 2.5, (3,)]
    times = lambda x: x * 10  # noqa: E731
    assert pytree.tree_map_only(int, times, mixed) == torch.utils._pytree.tree_map_only(
        int, times, mixed
    )
    assert pytree.tree_all(lambda x: x > 0, tree) == torch.utils._pytree.tree_all(
        lambda x: x > 0, tree
    )
    assert pytree.tree_any_only(str, lambda s: s == "a", mixed)


def test_structure_mismatch_errors_match_torch(torch):
    with pytest.raises(ValueError) as got:
        pytree.tree_map(lambda x, y: x, [1, 2], [1])
    with pytest.raises(ValueError) as want:
        torch.utils._pytree.tree_map(lambda x, y: x, [1, 2], [1])
    assert str(got.value) == str(want.value)
    with pytest.raises(
        ValueError, match="`leaves` has length 1 but the spec refers to a pytree that holds 2"
    ):
        pytree.tree_unflatten([1], pytree.tree_structure([1, 2]))
    with pytest.raises(TypeError, match="Expected `treespec` to be instance of TreeSpec"):
        pytree.tree_unflatten([1], [1])


class Box:
    def __init__(self, items, label):
        self.items, self.label = items, label


def test_registered_node_round_trips_and_names_its_children():
    pytree.register_pytree_node(
        Box,
        lambda b: (b.items, b.label),
        lambda items, label: Box(list(items), label),
        flatten_with_keys_fn=lambda b: (
            [(pytree.SequenceKey(i), x) for i, x in enumerate(b.items)],
            b.label,
        ),
    )
    try:
        tree = {"box": Box([1, (2, 3)], "L")}
        leaves, spec = pytree.tree_flatten(tree)
        assert leaves == [1, 2, 3]
        back = pytree.tree_unflatten([x * 2 for x in leaves], spec)
        assert back["box"].items == [2, (4, 6)] and back["box"].label == "L"
        assert [pytree.keystr(k) for k, _ in pytree.tree_leaves_with_path(tree)] == [
            "['box'][0]",
            "['box'][1][0]",
            "['box'][1][1]",
        ]
        with pytest.raises(ValueError, match="already registered as pytree node"):
            pytree.register_pytree_node(Box, lambda b: ([], None), lambda c, x: Box([], x))
    finally:
        del pytree.SUPPORTED_NODES[Box]


def test_is_leaf_stops_the_descent_and_unknown_names_raise():
    leaves = pytree.tree_leaves([(1, 2), [3]], is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3]
    assert pytree.tree_is_leaf(None) and not pytree.tree_is_leaf([])
    with pytest.raises(AttributeError, match="no_such_function"):
        pytree.no_such_function  # noqa: B018
