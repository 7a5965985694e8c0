"""Forward-mode AD through whole modules: the tangent of a module's outputs when its inputs
and parameters carry tangents (parameters replaced by dual tensors, as PyTorch's forward-AD
tutorial does), with grad mode on and under no_grad (tocha-nn's fused paths must not skip
the forward rules), against central finite differences and against torch.autograd.forward_ad
with identical weights; and the buffers a module updates take no tangent."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tests.nn.forward_ad import (
    assert_same_tangents,
    directions,
    module_tangents,
    parameter_directions,
)


def _eval(module):
    return module.eval()


def _with_statistics(module):
    """A module with running statistics other than their initial zeros and ones."""
    rng = np.random.default_rng(3)
    for name, buffer in module.named_buffers():
        if buffer.is_floating_point():
            values = rng.uniform(0.5, 1.5, tuple(buffer.shape))
            buffer.copy_(tocha.from_numpy(values if "var" in name else values - 1.0))
    return module


def _cnn(lib):
    nn_ = lib.nn
    return nn_.Sequential(
        nn_.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
        nn_.BatchNorm2d(3),
        nn_.ReLU(),
        nn_.MaxPool2d(2),
        nn_.Flatten(),
        nn_.Linear(12, 4),
        nn_.LogSoftmax(1),
    )


def _mlp(lib):
    nn_ = lib.nn
    return nn_.Sequential(nn_.Linear(5, 8), nn_.GELU("tanh"), nn_.LayerNorm(8), nn_.Linear(8, 3))


# (id, module from a library, input shapes, whether PyTorch needs its math attention kernel
# for forward mode (its fused CPU kernel has no forward rule), a final touch of tocha's module)
MODULES = [
    ("linear", lambda L: L.nn.Linear(3, 4), [(2, 3)], False, None),
    ("linear_no_bias", lambda L: L.nn.Linear(3, 4, bias=False), [(5, 2, 3)], False, None),
    ("conv2d", lambda L: L.nn.Conv2d(2, 4, 3, padding=1, groups=2), [(2, 2, 5, 4)], False, None),
    (
        "conv1d_circular",
        lambda L: L.nn.Conv1d(2, 3, 3, padding=1, padding_mode="circular", stride=2),
        [(2, 2, 7)],
        False,
        None,
    ),
    (
        "conv_transpose2d",
        lambda L: L.nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1),
        [(1, 2, 3, 3)],
        False,
        None,
    ),
    ("lstm", lambda L: L.nn.LSTM(3, 4, num_layers=2, bidirectional=True), [(4, 2, 3)], False, None),
    ("gru", lambda L: L.nn.GRU(3, 4, batch_first=True), [(2, 4, 3)], False, None),
    ("rnn_cell", lambda L: L.nn.RNNCell(3, 4), [(2, 3), (2, 4)], False, None),
    (
        "mha",
        lambda L: L.nn.MultiheadAttention(4, 2),
        [(3, 2, 4), (5, 2, 4), (5, 2, 4)],
        False,
        None,
    ),
    (
        "mha_kdim_batch_first",
        lambda L: L.nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True),
        [(2, 3, 4), (2, 5, 3), (2, 5, 5)],
        True,
        None,
    ),
    (
        "transformer_encoder_layer",
        lambda L: L.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0),
        [(3, 2, 4)],
        True,
        None,
    ),
    (
        "transformer_encoder_layer_eval",
        lambda L: L.nn.TransformerEncoderLayer(4, 2, 8, norm_first=True, batch_first=True),
        [(2, 3, 4)],
        True,
        _eval,
    ),
    (
        "transformer_decoder_layer",
        lambda L: L.nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0),
        [(3, 2, 4), (5, 2, 4)],
        True,
        None,
    ),
    ("batch_norm_train", lambda L: L.nn.BatchNorm2d(3), [(4, 3, 2, 2)], False, None),
    (
        "batch_norm_eval",
        lambda L: L.nn.BatchNorm1d(3),
        [(5, 3)],
        False,
        lambda m: _with_statistics(m).eval(),
    ),
    ("instance_norm", lambda L: L.nn.InstanceNorm1d(3, affine=True), [(2, 3, 4)], False, None),
    ("group_norm", lambda L: L.nn.GroupNorm(2, 4), [(2, 4, 3)], False, None),
    ("layer_norm", lambda L: L.nn.LayerNorm((3, 2)), [(4, 3, 2)], False, None),
    ("mlp", _mlp, [(4, 5)], False, None),
    ("cnn", _cnn, [(2, 2, 4, 4)], False, None),
]


def _build(lib, case):
    """Case's module in float64, built the same way every time (tocha's seeded)."""
    _, make, _, _, touch = case
    if lib is tocha:
        tocha.manual_seed(0)
    module = make(lib).double()
    if lib is tocha and touch is not None:
        with tocha.no_grad():
            touch(module)
    return module


def _inputs(case):
    rng = np.random.default_rng(1)
    return [rng.standard_normal(shape) for shape in case[2]]


def _outputs(module, arrays):
    out = module(*[tocha.from_numpy(a.copy()) for a in arrays])
    flat = out if isinstance(out, tuple) else (out,)
    return [t.numpy() for item in flat for t in (item if isinstance(item, tuple) else (item,))]


def _finite_differences(case, arrays, dirs, param_dirs, eps=1e-6) -> list:
    """The derivative of the module's outputs along the directions, by central differences
    (the parameters moved in place on fresh copies of the module)."""
    sides = []
    for sign in (1.0, -1.0):
        module = _build(tocha, case)
        with tocha.no_grad():
            for name, p in module.named_parameters():
                p.add_(tocha.from_numpy(param_dirs[name] * (sign * eps)))
            moved = [a + sign * eps * d for a, d in zip(arrays, dirs)]
            sides.append(_outputs(module, moved))
    return [(plus - minus) / (2 * eps) for plus, minus in zip(*sides)]


@pytest.mark.parametrize("grad_mode", ["grad", "no_grad"])
@pytest.mark.parametrize("case", MODULES, ids=[c[0] for c in MODULES])
def test_module_tangents_match_finite_differences(case, grad_mode):
    arrays = _inputs(case)
    dirs = directions(arrays)
    module = _build(tocha, case)
    param_dirs = parameter_directions(module)
    with tocha.set_grad_enabled(grad_mode == "grad"):
        mine = module_tangents(tocha, module, arrays, dirs, param_dirs)
    expected = _finite_differences(case, arrays, dirs, param_dirs)
    assert_same_tangents(mine, expected, rtol=1e-5, atol=1e-6)


# PyTorch runs this layer in evaluation through a fused kernel without forward-mode AD.
TORCH_FUSED_INFERENCE = {"transformer_encoder_layer_eval"}


@pytest.mark.parametrize("case", MODULES, ids=[c[0] for c in MODULES])
def test_module_tangents_match_torch(torch, case):
    if case[0] in TORCH_FUSED_INFERENCE:
        pytest.skip("PyTorch's fused inference path of this layer has no forward-mode AD")
    arrays = _inputs(case)
    dirs = directions(arrays)
    ours = _build(tocha, case)
    theirs = _build(torch, case)
    theirs.load_state_dict(
        {k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    )
    theirs.train(ours.training)
    param_dirs = parameter_directions(ours)
    mine = module_tangents(tocha, ours, arrays, dirs, param_dirs)
    if case[3]:
        attention = torch.nn.attention
        with attention.sdpa_kernel(attention.SDPBackend.MATH):
            expected = module_tangents(torch, theirs, arrays, dirs, param_dirs)
    else:
        expected = module_tangents(torch, theirs, arrays, dirs, param_dirs)
    assert_same_tangents(mine, expected)


@pytest.mark.parametrize("norm", ["BatchNorm1d", "InstanceNorm1d"])
def test_running_statistics_take_no_tangent(norm):
    module = getattr(nn, norm)(3, track_running_stats=True).double()
    forward_ad = tocha.autograd.forward_ad
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    with forward_ad.dual_level():
        module(forward_ad.make_dual(tocha.from_numpy(x), tocha.from_numpy(x)))
        for name, buffer in module.named_buffers():
            assert forward_ad.unpack_dual(buffer).tangent is None, name
        module.eval()
        out = module(tocha.from_numpy(x))
        assert forward_ad.unpack_dual(out).tangent is None
