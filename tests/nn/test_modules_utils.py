"""tocha.nn.modules.utils against torch.nn.modules.utils: the size parsers programs import
(``_pair`` and kin) and `consume_prefix_in_state_dict_if_present`, which strips a wrapper's
key prefix from a state dict and its metadata."""

from __future__ import annotations

from collections import OrderedDict

import pytest

import tocha
from tocha.nn.modules import utils


@pytest.mark.parametrize(
    "name, value",
    [
        ("_single", 3),
        ("_single", [4]),
        ("_pair", 3),
        ("_pair", 2.5),
        ("_pair", (1, 2)),
        ("_pair", [1, 2, 3]),
        ("_pair", "ab"),
        ("_triple", 0),
        ("_triple", (1, 2)),
        ("_quadruple", 1),
    ],
)
def test_size_parsers_match_torch(torch, name, value):
    assert getattr(utils, name)(value) == getattr(torch.nn.modules.utils, name)(value)


def _state_dict():
    state = OrderedDict(
        [("a.b.x", 1), ("module.0.w", 2), ("b", 3), ("_orig_mod.l.weight", 4), ("module", 5)]
    )
    state._metadata = OrderedDict(
        [
            ("", {"v": 0}),
            ("a", {"v": 1}),
            ("a.b", {"v": 2}),
            ("module", {"v": 3}),
            ("module.0", {"v": 4}),
            ("_orig_mod", {"v": 5}),
        ]
    )
    return state


# PyTorch's answers (keys, then metadata keys, after the call), recorded by hand: the call
# changes its argument in place, which the oracle's tapes cannot replay.
CONSUMED = {
    "module.": (
        ["a.b.x", "b", "_orig_mod.l.weight", "module", "0.w"],
        ["", "a", "a.b", "_orig_mod", "0"],
    ),
    "_orig_mod.": (
        ["a.b.x", "module.0.w", "b", "module", "l.weight"],
        ["", "a", "a.b", "module", "module.0"],
    ),
    "a.b.": (
        ["module.0.w", "b", "_orig_mod.l.weight", "module", "x"],
        ["", "a", "a.b", "module", "module.0", "_orig_mod"],
    ),
    "a": (
        ["module.0.w", "b", "_orig_mod.l.weight", "module", ".b.x"],
        ["", "module", "module.0", "_orig_mod", ".b"],
    ),
    "": (
        ["a.b.x", "module.0.w", "b", "_orig_mod.l.weight", "module"],
        ["", "a", "a.b", "module", "module.0", "_orig_mod"],
    ),
}


@pytest.mark.parametrize("prefix", list(CONSUMED))
def test_consume_prefix_renames_keys_and_metadata(prefix):
    state = _state_dict()
    values = {key.removeprefix(prefix): value for key, value in state.items()}
    assert utils.consume_prefix_in_state_dict_if_present(state, prefix) is None
    keys, metadata_keys = CONSUMED[prefix]
    assert list(state) == keys
    assert list(state._metadata) == metadata_keys
    assert all(state[key] == values[key] for key in keys)


@pytest.mark.parametrize("prefix", [*CONSUMED, "absent."])
def test_consume_prefix_matches_live_torch(prefix):
    torch = pytest.importorskip("torch")
    ours, theirs = _state_dict(), _state_dict()
    utils.consume_prefix_in_state_dict_if_present(ours, prefix)
    torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(theirs, prefix)
    assert list(ours.items()) == list(theirs.items())
    assert list(ours._metadata.items()) == list(theirs._metadata.items())


def test_consume_prefix_lets_a_wrapped_model_load_unwrapped():
    model = tocha.nn.Sequential(tocha.nn.Linear(2, 3))
    state = tocha.nn.DataParallel(model).state_dict()
    assert list(state) == ["module.0.weight", "module.0.bias"]
    utils.consume_prefix_in_state_dict_if_present(state, "module.")
    fresh = tocha.nn.Sequential(tocha.nn.Linear(2, 3))
    fresh.load_state_dict(state)
    assert tocha.equal(fresh[0].weight, model[0].weight)
    assert list(state._metadata) == ["", "0"]


def test_convolution_sizes_take_any_scalar_as_torch(torch):
    ours = tocha.nn.MaxPool2d(2, stride=(1, 2))
    theirs = torch.nn.MaxPool2d(2, stride=(1, 2))
    assert (ours.kernel_size, ours.stride) == (theirs.kernel_size, theirs.stride)
    conv, their_conv = tocha.nn.Conv2d(1, 1, [3, 1]), torch.nn.Conv2d(1, 1, [3, 1])
    assert conv.kernel_size == their_conv.kernel_size
    assert conv.padding == their_conv.padding
