"""The public helpers of the recurrent layers (expected state sizes, checks, permute_hidden)
and MultiheadAttention.merge_masks, against torch.nn."""

from __future__ import annotations

import numpy as np
import pytest

import tocha


def _layer(lib, name):
    kwargs = {"proj_size": 2} if name == "LSTM" else {}
    return getattr(lib.nn, name)(3, 4, num_layers=2, bidirectional=True, batch_first=True, **kwargs)


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_expected_sizes(torch, name):
    def run(lib):
        layer = _layer(lib, name)
        x = lib.zeros(5, 7, 3)
        sizes = [
            layer.get_expected_hidden_size(x, None),
            layer.get_expected_hidden_size(x[0], lib.tensor([3, 2])),
        ]
        if name == "LSTM":
            sizes.append(layer.get_expected_cell_size(x, None))
        return sizes

    assert run(tocha) == run(torch)


def _bad_states(lib, name):
    if name == "LSTM":
        return [
            (lib.zeros(4, 5, 4), lib.zeros(4, 5, 4)),
            (lib.zeros(4, 5, 2), lib.zeros(4, 5, 2)),
        ]
    return [lib.zeros(4, 6, 4)]


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("which", [0, 1])
def test_check_forward_args_errors(torch, name, which):
    if which >= len(_bad_states(tocha, name)):
        pytest.skip("one hidden state only")

    def run(lib):
        _layer(lib, name).check_forward_args(
            lib.zeros(5, 7, 3), _bad_states(lib, name)[which], None
        )

    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)


def test_check_hidden_size_message(torch):
    def run(lib):
        _layer(lib, "GRU").check_hidden_size(lib.zeros(4, 5, 4), (1, 2, 3), "bad {} vs {}")

    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["GRU", "LSTM"])
def test_permute_hidden(torch, name):
    def run(lib):
        layer = _layer(lib, name)
        h = lib.arange(40.0).reshape(4, 5, 2)
        hx = (h, h + 100) if name == "LSTM" else h
        if lib is tocha:
            assert layer.permute_hidden(hx, None) is hx
        out = layer.permute_hidden(hx, lib.tensor([4, 3, 2, 1, 0]))
        return [t.numpy() for t in out] if name == "LSTM" else [out.numpy()]

    for a, b in zip(run(tocha), run(torch), strict=True):
        np.testing.assert_array_equal(a, b)


MASKS = ["none", "attn", "padding", "both", "float_both", "mixed", "3d", "3d_heads"]


def _masks(lib, case):
    padding = lib.tensor([[False, True, False], [False, False, True]])
    causal = lib.triu(lib.ones(3, 3, dtype=lib.bool), 1)
    float_causal = lib.triu(lib.full((3, 3), -1e9), 1)
    float_padding = lib.tensor([[0.0, -1e9, 0.0], [0.0, 0.0, -1e9]])
    return {
        "none": (None, None),
        "attn": (causal, None),
        "padding": (None, padding),
        "both": (causal, padding),
        "float_both": (float_causal, float_padding),
        "mixed": (causal, float_padding),
        "3d": (lib.zeros(2, 3, 3, dtype=lib.bool), None),
        "3d_heads": (lib.zeros(4, 3, 3, dtype=lib.bool), padding),
    }[case]


@pytest.mark.parametrize("case", MASKS)
def test_merge_masks(torch, case):
    def run(lib):
        mha = lib.nn.MultiheadAttention(4, 2)
        attn_mask, padding = _masks(lib, case)
        merged, kind = mha.merge_masks(attn_mask, padding, lib.zeros(2, 3, 4))
        if merged is None:
            return None, kind
        return (merged.numpy(), str(merged.dtype).split(".")[-1], merged is padding), kind

    ours, theirs = run(tocha), run(torch)
    assert ours[1] == theirs[1]
    if theirs[0] is None:
        assert ours[0] is None
    else:
        np.testing.assert_array_equal(ours[0][0], theirs[0][0])
        assert ours[0][1:] == theirs[0][1:]
