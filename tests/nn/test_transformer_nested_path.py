"""TransformerEncoder where PyTorch runs its nested-tensor fast path: which layers allow it
(`use_nested_tensor`, with PyTorch's warning naming the reason), and, in inference with a
left-aligned padding mask, padded positions of the output at 0, as PyTorch gives them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha

X = np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32)
PADDING = np.array([[False, False, True, True], [False] * 4])

LAYERS = {
    "plain": {},
    "norm_first": {"norm_first": True},
    "sequence_first": {"batch_first": False},
    "odd_heads": {"nhead": 1},
    "no_bias": {"bias": False},
    "gelu": {"activation": "gelu"},
    "four_heads": {"nhead": 4},
}


def _encoder(lib, layer_kwargs, **kwargs):
    options = {"d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0}
    options["batch_first"] = True
    options.update(layer_kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layer = lib.nn.TransformerEncoderLayer(**options)
        encoder = lib.nn.TransformerEncoder(layer, 2, **kwargs)
    messages = [str(w.message) for w in caught if "enable_nested_tensor" in str(w.message)]
    return encoder, messages


def _pair(torch, layer_kwargs, **kwargs):
    ours, our_warnings = _encoder(tocha, layer_kwargs, **kwargs)
    theirs, their_warnings = _encoder(torch, layer_kwargs, **kwargs)
    state = {k: torch.from_numpy(v.detach().numpy().copy()) for k, v in ours.state_dict().items()}
    theirs.load_state_dict(state)
    return ours, theirs, our_warnings, their_warnings


def _run(lib, encoder, padding, **kwargs):
    batch_first = encoder.layers[0].self_attn.batch_first
    x = lib.from_numpy(X.copy() if batch_first else X.transpose(1, 0, 2).copy())
    out = encoder(x, src_key_padding_mask=lib.from_numpy(padding.copy()), **kwargs)
    out = out.detach().numpy()
    return out if batch_first else out.transpose(1, 0, 2)


@pytest.mark.parametrize("name", list(LAYERS))
def test_warnings_and_inference_outputs_match_torch(torch, name):
    ours, theirs, our_warnings, their_warnings = _pair(torch, LAYERS[name])
    assert our_warnings == their_warnings
    assert ours.use_nested_tensor == theirs.use_nested_tensor
    ours.eval()
    theirs.eval()
    with tocha.no_grad():
        got = _run(tocha, ours, PADDING)
    with torch.no_grad():
        want = _run(torch, theirs, PADDING)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "case",
    ["training", "grad_enabled", "mask", "not_left_aligned", "no_nested", "inference_mode"],
)
def test_when_the_padded_outputs_are_zero(torch, case):
    kwargs = {"enable_nested_tensor": False} if case == "no_nested" else {}
    ours, theirs, _, _ = _pair(torch, {}, **kwargs)
    results = []
    for lib, encoder in ((tocha, ours), (torch, theirs)):
        encoder.train(case == "training")
        padding = PADDING
        call = {}
        if case == "not_left_aligned":
            padding = np.array([[False, True, False, True], [False] * 4])
        if case == "mask":
            call["mask"] = lib.zeros(4, 4, dtype=lib.bool)
        if case == "grad_enabled":
            results.append(_run(lib, encoder, padding, **call))
            continue
        context = lib.inference_mode() if case == "inference_mode" else lib.no_grad()
        with context:
            results.append(_run(lib, encoder, padding, **call))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-4, atol=1e-5)
