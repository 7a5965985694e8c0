"""Channels-last networks against PyTorch: ``Module.to(memory_format=...)``, the memory
format of convolutions', poolings', normalizations' and pointwise ops' results on a
channels-last input, the layout of leaf gradients, and a training step of a small CNN that
gives the same values and gradients as in the contiguous format."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tests.nn.forward_ad import assert_tangents_match
from tocha.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
W = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3
B = RNG.standard_normal(4).astype(np.float32)
WL = RNG.standard_normal((5, 4)).astype(np.float32)
TARGET = np.array([1, 3])


def _cl(lib, array):
    return lib.tensor(array).contiguous(memory_format=lib.channels_last)


def layout(lib, t):
    """Strides and contiguity in both formats of a 4-D result (strides alone otherwise)."""
    if t.dim() != 4:
        return tuple(t.stride()), t.is_contiguous()
    return (
        tuple(t.stride()),
        t.is_contiguous(),
        t.is_contiguous(memory_format=lib.channels_last),
    )


OPS = {
    "conv2d": lambda lib, F, x: F.conv2d(x, lib.tensor(W), lib.tensor(B), padding=1),
    "conv2d_strided": lambda lib, F, x: F.conv2d(x, lib.tensor(W), stride=2),
    "conv2d_channels_last_weight": lambda lib, F, x: F.conv2d(x.contiguous(), _cl(lib, W)),
    "conv1x1": lambda lib, F, x: F.conv2d(x, lib.tensor(W[:, :, :1, :1])),
    "conv_transpose2d": lambda lib, F, x: F.conv_transpose2d(
        x, lib.tensor(W.transpose(1, 0, 2, 3).copy()), stride=2
    ),
    "batch_norm_train": lambda lib, F, x: F.batch_norm(x, None, None, training=True),
    "batch_norm_eval": lambda lib, F, x: F.batch_norm(
        x, lib.zeros(3), lib.ones(3), lib.ones(3), lib.zeros(3)
    ),
    "batch_norm_affine_train": lambda lib, F, x: F.batch_norm(
        x, lib.zeros(3), lib.ones(3), lib.tensor(B[:3]), lib.tensor(B[1:]), training=True
    ),
    "batch_norm_module": lambda lib, F, x: lib.nn.BatchNorm2d(3)(x),
    "resnet_block": lambda lib, F, x: F.relu(
        lib.nn.BatchNorm2d(3)(F.conv2d(x, lib.tensor(W[:3]), padding=1)) + x
    ),
    "relu": lambda lib, F, x: F.relu(x),
    "relu_inplace": lambda lib, F, x: F.relu(x.clone(), inplace=True),
    "sigmoid": lambda lib, F, x: lib.sigmoid(x),
    "silu": lambda lib, F, x: F.silu(x),
    "max_pool2d": lambda lib, F, x: F.max_pool2d(x, 2),
    "max_pool2d_indices": lambda lib, F, x: F.max_pool2d(x, 2, return_indices=True)[1],
    "avg_pool2d": lambda lib, F, x: F.avg_pool2d(x, 2),
    "adaptive_avg_pool2d_3": lambda lib, F, x: F.adaptive_avg_pool2d(x, 3),
    "adaptive_max_pool2d": lambda lib, F, x: F.adaptive_max_pool2d(x, 2),
    "group_norm": lambda lib, F, x: F.group_norm(x, 3),
    "add_bias": lambda lib, F, x: x + lib.ones(1, 3, 1, 1),
    "mul_scalar": lambda lib, F, x: x * 3,
    "add_channels_last": lambda lib, F, x: x + x,
    "dropout_eval": lambda lib, F, x: F.dropout(x, 0.5, training=False),
    "interpolate_nearest": lambda lib, F, x: F.interpolate(x, scale_factor=2),
    "interpolate_bilinear": lambda lib, F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "interpolate_bicubic": lambda lib, F, x: F.interpolate(x, size=(5, 5), mode="bicubic"),
    "upsample_bilinear_corners": lambda lib, F, x: F.interpolate(
        x, scale_factor=2, mode="bilinear", align_corners=True
    ),
    "pad_constant": lambda lib, F, x: F.pad(x, (1, 1, 1, 1)),
    "pad_reflect": lambda lib, F, x: F.pad(x, (1, 1, 1, 1), mode="reflect"),
    "pad_replicate": lambda lib, F, x: F.pad(x, (1, 2, 1, 2), mode="replicate"),
    "pad_circular": lambda lib, F, x: F.pad(x, (1, 1, 1, 1), mode="circular"),
    "pixel_unshuffle": lambda lib, F, x: F.pixel_unshuffle(x[:, :, :8, :8], 2),
    "pixel_shuffle": lambda lib, F, x: F.pixel_shuffle(lib.cat([x, x[:, :1]], 1), 2),
    "channel_shuffle": lambda lib, F, x: F.channel_shuffle(lib.cat([x, x[:, :1]], 1), 2),
    "max_unpool2d": lambda lib, F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
    "bce_none": lambda lib, F, x: F.binary_cross_entropy(
        lib.sigmoid(x), lib.sigmoid(lib.tensor(X)), reduction="none"
    ),
    "mse_none": lambda lib, F, x: F.mse_loss(x, lib.tensor(X), reduction="none"),
    "softmax_c": lambda lib, F, x: F.softmax(x, 1),
    "log_softmax_w": lambda lib, F, x: F.log_softmax(x, -1),
    "gelu": lambda lib, F, x: F.gelu(x),
    "hardswish": lambda lib, F, x: F.hardswish(x),
    "leaky_relu": lambda lib, F, x: F.leaky_relu(x),
    "clamp": lambda lib, F, x: x.clamp(0, 1),
    "cat_c": lambda lib, F, x: lib.cat([x, x], 1),
    "dropout2d_eval": lambda lib, F, x: F.dropout2d(x, 0.5, training=False),
    "add_contiguous": lambda lib, F, x: x + lib.tensor(X),
    "sum_dim": lambda lib, F, x: x.sum(1),
    "mean_hw": lambda lib, F, x: x.mean((2, 3)),
    "flatten": lambda lib, F, x: x.flatten(1),
}


@pytest.mark.parametrize("op", list(OPS))
def test_result_layout(torch, op):
    ours = OPS[op](tocha, tocha.nn.functional, _cl(tocha, X))
    theirs = OPS[op](torch, torch.nn.functional, _cl(torch, X))
    assert layout(tocha, ours) == layout(torch, theirs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_global_pool_is_channels_last(torch):
    ours = tocha.nn.functional.adaptive_avg_pool2d(_cl(tocha, X), 1)
    theirs = torch.nn.functional.adaptive_avg_pool2d(_cl(torch, X), 1)
    assert ours.is_contiguous(memory_format=tocha.channels_last)
    assert theirs.is_contiguous(memory_format=torch.channels_last)


GRADS = {
    "conv2d": lambda lib, F, x: F.conv2d(x, lib.tensor(W), padding=1),
    "relu": lambda lib, F, x: F.relu(x) * 2,
    "max_pool2d": lambda lib, F, x: F.max_pool2d(x, 2),
    "batch_norm": lambda lib, F, x: F.batch_norm(x, None, None, training=True) ** 2,
    "adaptive_avg_pool2d": lambda lib, F, x: F.adaptive_avg_pool2d(x, 1),
    "mul_contiguous": lambda lib, F, x: x * lib.tensor(X),
    "sum": lambda lib, F, x: x,
}


@pytest.mark.parametrize("op", list(GRADS))
@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_leaf_gradient_takes_the_leaf_layout(torch, op, fmt):
    def run(lib):
        x = lib.tensor(X).contiguous(memory_format=getattr(lib, fmt)).requires_grad_()
        GRADS[op](lib, lib.nn.functional, x).sum().backward()
        return layout(lib, x.grad), x.grad.numpy()

    (ours, ours_values), (theirs, theirs_values) = run(tocha), run(torch)
    assert ours == theirs
    np.testing.assert_allclose(ours_values, theirs_values, rtol=1e-4, atol=1e-5)


def _cnn():
    tocha.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, padding=1),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(6, 5),
    )


def _train_step(model, x):
    optimizer = tocha.optim.SGD(model.parameters(), lr=0.1)
    loss = nn.functional.cross_entropy(model(x), tocha.tensor(TARGET))
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    optimizer.step()
    return loss.item(), grads, [p.detach().clone() for p in model.parameters()]


def test_channels_last_training_step_matches_contiguous():
    contiguous, channels_last = _cnn(), _cnn()
    assert channels_last.to(memory_format=tocha.channels_last) is channels_last
    for p in channels_last.parameters():
        if p.dim() == 4:
            assert p.is_contiguous(memory_format=tocha.channels_last) and not p.is_contiguous()
    x = tocha.tensor(X)
    loss, grads, params = _train_step(contiguous, x)
    loss_cl, grads_cl, params_cl = _train_step(
        channels_last, x.contiguous(memory_format=tocha.channels_last)
    )
    assert loss_cl == pytest.approx(loss, rel=1e-5)
    for p, g, g_cl, q, q_cl in zip(channels_last.parameters(), grads, grads_cl, params, params_cl):
        np.testing.assert_allclose(g_cl.numpy(), g.numpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(q_cl.numpy(), q.numpy(), rtol=1e-4, atol=1e-6)
        if p.dim() == 4:  # a gradient takes its parameter's layout, as PyTorch's
            assert p.grad.is_contiguous(memory_format=tocha.channels_last)
            assert p.is_contiguous(memory_format=tocha.channels_last)
    assert channels_last[1].running_mean.is_contiguous()


def test_module_to_against_pytorch(torch):
    def run(lib):
        model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4))
        weight = model[0].weight
        model.to(lib.float64, memory_format=lib.channels_last)
        strides = [tuple(p.stride()) for p in model.parameters()]
        return strides, model[0].weight is weight, model[0].weight.dtype == lib.float64

    assert run(tocha) == run(torch)


@pytest.mark.parametrize("case", ["conv3d_channels_last", "conv2d_channels_last_3d"])
def test_module_to_refuses_a_rank_the_format_lacks(torch, case):
    def run(lib):
        layers = {
            "conv3d_channels_last": (lib.nn.Conv3d(2, 2, 1), lib.channels_last),
            "conv2d_channels_last_3d": (lib.nn.Conv2d(2, 2, 1), lib.channels_last_3d),
        }
        module, fmt = layers[case]
        try:
            module.to(memory_format=fmt)
        except RuntimeError as exc:
            return str(exc)
        return None

    assert run(tocha) == run(torch)


def test_state_dict_of_a_channels_last_module(torch):
    def run(lib):
        model = lib.nn.Conv2d(3, 4, 3).to(memory_format=lib.channels_last)
        fresh = lib.nn.Conv2d(3, 4, 3).to(memory_format=lib.channels_last)
        fresh.load_state_dict(model.state_dict())
        return tuple(model.state_dict()["weight"].stride()), tuple(fresh.weight.stride())

    assert run(tocha) == run(torch)


CONVERSIONS = {
    "contiguous_channels_last": lambda lib, x: x.contiguous(memory_format=lib.channels_last),
    "to_channels_last": lambda lib, x: x.to(memory_format=lib.channels_last),
    "clone_channels_last": lambda lib, x: x.clone(memory_format=lib.channels_last),
    "back_to_contiguous": lambda lib, x: (
        x.contiguous(memory_format=lib.channels_last).contiguous().exp()
    ),
    "mixed_add": lambda lib, x: x.contiguous(memory_format=lib.channels_last) * x,
    "pooled": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(
        x.contiguous(memory_format=lib.channels_last), 3
    ),
    "interpolated": lambda lib, x: lib.nn.functional.interpolate(
        x.contiguous(memory_format=lib.channels_last), scale_factor=2, mode="bilinear"
    ),
}


@pytest.mark.parametrize("case", list(CONVERSIONS))
def test_layout_changes_are_differentiable(case):
    x = tocha.tensor(X[:1, :, :5, :5].astype(np.float64), requires_grad=True)
    fn = CONVERSIONS[case]
    assert gradcheck(lambda t: fn(tocha, t), (x,), check_forward_ad=True)
    assert gradgradcheck(lambda t: fn(tocha, t), (x,))


@pytest.mark.parametrize("case", list(CONVERSIONS))
def test_layout_changes_tangents_match_torch(torch, case):
    assert_tangents_match(torch, CONVERSIONS[case], [X[:1, :, :5, :5].astype(np.float64)])


def test_deepcopy_and_pickle_of_a_channels_last_module():
    """PyTorch's copies keep the weight's channels-last strides (27, 1, 9, 3)."""
    import copy
    import pickle

    model = nn.Conv2d(3, 4, 3).to(memory_format=tocha.channels_last)
    for copied in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert copied.weight.stride() == (27, 1, 9, 3)
        assert isinstance(copied.weight, nn.Parameter)
        np.testing.assert_array_equal(copied.weight.detach().numpy(), model.weight.detach().numpy())


def test_meta_tensors_take_the_same_layouts():
    """A channels-last network on the meta device reports the strides it has on the CPU."""
    x = tocha.empty(2, 3, 8, 8, device="meta", memory_format=tocha.channels_last)
    weight = tocha.empty(4, 3, 3, 3, device="meta")
    F = tocha.nn.functional
    assert F.conv2d(x, weight).stride() == (144, 1, 24, 4)
    assert F.max_pool2d(x, 2).stride() == (48, 1, 12, 3)
    assert F.batch_norm(x, None, None, training=True).stride() == (192, 1, 24, 3)
