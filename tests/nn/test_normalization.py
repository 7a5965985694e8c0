"""Normalization layers against torch.nn: LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm,
BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d with identical weights (outputs, input and parameter
gradients, running statistics, train and eval), float64 gradcheck (reverse and forward mode)
and gradgradcheck (and forward over reverse) of every functional form, forward-mode tangents
against torch.autograd.forward_ad, errors and reprs."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tests.nn.forward_ad import assert_tangents_match, check_forward_over_reverse
from tocha.autograd import gradcheck, gradgradcheck

LAYERS = [
    ("LayerNorm", (5,), {}, (3, 4, 5)),
    ("LayerNorm", ((4, 5),), {"eps": 1e-3}, (2, 3, 4, 5)),
    ("LayerNorm", (5,), {"bias": False}, (4, 5)),
    ("LayerNorm", (5,), {"elementwise_affine": False}, (2, 5)),
    ("GroupNorm", (2, 6), {}, (3, 6, 4)),
    ("GroupNorm", (3, 6), {"affine": False}, (2, 6, 3, 3)),
    ("GroupNorm", (1, 4), {"bias": False, "eps": 1e-3}, (2, 4, 5)),
    ("RMSNorm", (5,), {}, (3, 4, 5)),
    ("RMSNorm", ((4, 5),), {"eps": 1e-4, "elementwise_affine": False}, (2, 4, 5)),
    ("LocalResponseNorm", (3,), {}, (2, 6, 5)),
    ("LocalResponseNorm", (2,), {"alpha": 0.1, "beta": 0.5, "k": 2.0}, (2, 5, 3, 4)),
    ("BatchNorm1d", (4,), {}, (6, 4)),
    ("BatchNorm1d", (4,), {"momentum": None}, (3, 4, 5)),
    ("BatchNorm1d", (4,), {"affine": False}, (3, 4, 5)),
    ("BatchNorm2d", (3,), {}, (4, 3, 5, 6)),
    ("BatchNorm2d", (3,), {"bias": False, "momentum": 0.3}, (2, 3, 4, 4)),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, (2, 3, 4, 4)),
    ("BatchNorm3d", (2,), {"eps": 1e-3}, (2, 2, 3, 4, 3)),
    ("InstanceNorm1d", (4,), {}, (3, 4, 6)),
    ("InstanceNorm1d", (4,), {"affine": True, "track_running_stats": True}, (3, 4, 6)),
    ("InstanceNorm1d", (4,), {"affine": True}, (4, 6)),
    ("InstanceNorm2d", (3,), {"track_running_stats": True, "momentum": 0.2}, (2, 3, 4, 5)),
    ("InstanceNorm2d", (3,), {"affine": True}, (3, 4, 5)),
    ("InstanceNorm3d", (2,), {"affine": True, "track_running_stats": True}, (2, 2, 3, 2, 3)),
]


def _to_tocha(t):
    return tocha.from_numpy(t.detach().numpy().copy())


def _randomize(theirs, torch) -> None:
    """Non-trivial weights and running statistics, so that eval mode tests something."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype))
        for name, b in theirs.named_buffers():
            if name == "running_mean":
                b.copy_(torch.randn(b.shape, generator=gen, dtype=b.dtype))
            elif name == "running_var":
                b.copy_(torch.rand(b.shape, generator=gen, dtype=b.dtype) + 0.5)


def _pair(torch, name, args, kwargs, dtype):
    theirs = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    ours = getattr(nn, name)(*args, **kwargs).to(getattr(tocha, dtype))
    _randomize(theirs, torch)
    ours.load_state_dict({k: _to_tocha(v) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _close(ours, theirs, dtype, tol=None):
    tol = tol or (2e-4 if dtype == "float32" else 1e-10)
    assert ours.dtype == theirs_dtype(theirs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def theirs_dtype(t):
    return getattr(tocha, str(t.dtype).split(".")[1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS)
def test_norm_layer_matches_torch(torch, name, args, kwargs, shape, train, dtype):
    ours, theirs = _pair(torch, name, args, kwargs, dtype)
    ours.train(train)
    theirs.train(train)
    rng = np.random.default_rng(0)
    for _ in range(2):
        x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
        xt = torch.from_numpy(x).requires_grad_()
        xo = tocha.from_numpy(x.copy()).requires_grad_()
        out_t, out_o = theirs(xt), ours(xo)
        assert tuple(out_o.shape) == tuple(out_t.shape)
        _close(out_o, out_t, dtype)
        g = rng.standard_normal(tuple(out_t.shape)).astype(dtype)
        out_t.backward(torch.from_numpy(g))
        out_o.backward(tocha.from_numpy(g))
        _close(xo.grad, xt.grad, dtype)
        for (_, p_o), (_, p_t) in zip(ours.named_parameters(), theirs.named_parameters()):
            _close(p_o.grad, p_t.grad, dtype)
        for (key, b_o), (_, b_t) in zip(ours.named_buffers(), theirs.named_buffers()):
            assert b_o.dtype == theirs_dtype(b_t), key
            np.testing.assert_allclose(b_o.numpy(), b_t.numpy(), rtol=1e-5, atol=1e-6)


def test_batch_norm_cumulative_average_and_eval(torch):
    ours, theirs = _pair(torch, "BatchNorm1d", (3,), {"momentum": None}, "float64")
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = rng.standard_normal((5, 3))
        ours(tocha.from_numpy(x))
        theirs(torch.from_numpy(x))
    assert int(ours.num_batches_tracked) == 4
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-12)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal((2, 3))
    _close(ours(tocha.from_numpy(x)), theirs(torch.from_numpy(x)), "float64")


def test_batch_norm_state_dict_keys_and_reset(torch):
    bn = nn.BatchNorm2d(3)
    assert list(bn.state_dict()) == list(torch.nn.BatchNorm2d(3).state_dict())
    assert bn.num_batches_tracked.dtype == tocha.int64
    bn(tocha.randn(4, 3, 2, 2))
    bn.reset_running_stats()
    assert int(bn.num_batches_tracked) == 0
    assert bn.running_var.tolist() == [1.0, 1.0, 1.0]
    bn.num_batches_tracked.fill_(7)
    old = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    bn.load_state_dict(old)  # a checkpoint from before version 2 keeps the count
    assert int(bn.num_batches_tracked) == 7
    assert list(nn.InstanceNorm1d(3, track_running_stats=True).state_dict()) == [
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]


def test_batch_norm_eval_without_running_stats_uses_batch(torch):
    ours, theirs = _pair(torch, "BatchNorm2d", (3,), {"track_running_stats": False}, "float64")
    ours.eval()
    theirs.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 2))
    _close(ours(tocha.from_numpy(x)), theirs(torch.from_numpy(x)), "float64")


def test_layer_norm_is_one_node():
    x = tocha.randn(2, 3, requires_grad=True)
    w = tocha.ones(3, requires_grad=True)
    out = F.layer_norm(x, (3,), w, tocha.zeros(3, requires_grad=True))
    assert out.grad_fn.name() == "NativeLayerNormBackward0"
    assert {type(e).__name__ for e, _ in out.grad_fn.next_functions} == {"AccumulateGrad"}


# -- functional gradcheck and gradgradcheck --------------------------------------------------
def _t64(rng, *shape, positive=False):
    a = rng.standard_normal(shape)
    return tocha.from_numpy(np.abs(a) + 0.5 if positive else a).requires_grad_()


def _functional_cases():
    """(name, fn(lib, *tensors), float64 inputs): `lib` is tocha or torch."""
    rng = np.random.default_rng(0)
    x4, x3 = _t64(rng, 2, 3, 3, 2), _t64(rng, 3, 4, 5)
    w3, b3 = _t64(rng, 3), _t64(rng, 3)
    w45, b45 = _t64(rng, 4, 5), _t64(rng, 4, 5)
    rm, rv = rng.standard_normal(3), np.abs(rng.standard_normal(3)) + 0.5

    def stats(lib):
        return lib.from_numpy(rm.copy()), lib.from_numpy(rv.copy())

    return [
        (
            "layer_norm",
            lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (4, 5), w, b),
            (x3, w45, b45),
        ),
        ("layer_norm_plain", lambda lib, x: lib.nn.functional.layer_norm(x, (5,), eps=1e-3), (x3,)),
        (
            "layer_norm_weight",
            lambda lib, x, w: lib.nn.functional.layer_norm(x, (4, 5), w),
            (x3, w45),
        ),
        (
            "layer_norm_bias",
            lambda lib, x, b: lib.nn.functional.layer_norm(x, (4, 5), None, b),
            (x3, b45),
        ),
        (
            "batch_norm_train",
            lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, True),
            (x4, w3, b3),
        ),
        (
            "batch_norm_plain",
            lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True),
            (x4,),
        ),
        (
            "batch_norm_eval",
            lambda lib, x, w, b: lib.nn.functional.batch_norm(x, *stats(lib), w, b),
            (x4, w3, b3),
        ),
        (
            "batch_norm_running",
            lambda lib, x: lib.nn.functional.batch_norm(
                x, *stats(lib), training=True, momentum=0.3
            ),
            (x4,),
        ),
        (
            "instance_norm",
            lambda lib, x, w, b: lib.nn.functional.instance_norm(x, weight=w, bias=b),
            (x4, w3, b3),
        ),
        ("group_norm", lambda lib, x, w, b: lib.nn.functional.group_norm(x, 1, w, b), (x4, w3, b3)),
        ("group_norm_3", lambda lib, x: lib.nn.functional.group_norm(x, 3), (x4,)),
        ("rms_norm", lambda lib, x, w: lib.nn.functional.rms_norm(x, (4, 5), w), (x3, w45)),
        (
            "local_response_norm",
            lambda lib, x: lib.nn.functional.local_response_norm(x, 3, 0.5, 0.7, 1.5),
            (x4,),
        ),
    ]


@pytest.mark.parametrize("case", _functional_cases(), ids=lambda c: c[0])
def test_norm_gradcheck(case):
    _, fn, inputs = case
    assert gradcheck(lambda *a: fn(tocha, *a), inputs, check_forward_ad=True)
    assert gradgradcheck(lambda *a: fn(tocha, *a), inputs)
    assert check_forward_over_reverse(lambda *a: fn(tocha, *a), inputs)


@pytest.mark.parametrize("case", _functional_cases(), ids=lambda c: c[0])
def test_norm_forward_ad_matches_torch(torch, case):
    _, fn, inputs = case
    assert_tangents_match(torch, fn, [t.detach().numpy() for t in inputs])


@pytest.mark.parametrize("case", _functional_cases(), ids=lambda c: c[0])
def test_norm_functional_and_double_backward_match_torch(torch, case):
    """Values, and second derivatives through the tocha-ops form of the fused backwards."""
    name, fn, inputs = case
    results = []
    for lib in (tocha, torch):
        args = [lib.from_numpy(t.detach().numpy().copy()).requires_grad_() for t in inputs]
        out = fn(lib, *args)
        grads = lib.autograd.grad((out * out.detach().sin()).sum(), args, create_graph=True)
        if name != "layer_norm_bias":  # torch's own double backward fails there
            sum(g.pow(2).sum() for g in grads).backward()
        results.append(
            [out.detach().numpy()]
            + [g.detach().numpy() for g in grads]
            + [None if a.grad is None else a.grad.numpy() for a in args]
        )
    for ours, theirs in zip(*results):
        if theirs is None:
            assert ours is None or not ours.any()
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-8)


# -- errors, messages and reprs --------------------------------------------------------------
ERRORS = [
    ("F.layer_norm(x(2, 3), (4,))", RuntimeError),
    ("F.layer_norm(x(2, 3), (3,), x(4))", RuntimeError),
    ("F.rms_norm(x(2, 3), (4,))", RuntimeError),
    ("F.group_norm(x(2, 6, 4), 4)", RuntimeError),
    ("F.batch_norm(x(1, 4), None, None, training=True)", ValueError),
    ("F.batch_norm(x(2, 4), None, None, training=False)", RuntimeError),
    ("F.batch_norm(x(2, 4), x(3), x(3), training=False)", RuntimeError),
    ("F.batch_norm(x(2, 4), None, None, training=True, eps=0.0)", ValueError),
    ("F.instance_norm(x(2, 3, 1))", ValueError),
    ("F.local_response_norm(x(2, 3), 2)", ValueError),
    ("nn.BatchNorm2d(3)(x(2, 3))", ValueError),
    ("nn.BatchNorm1d(3)(x(2, 3, 4, 5))", ValueError),
    ("nn.BatchNorm3d(3)(x(2, 3, 4, 5))", ValueError),
    ("nn.InstanceNorm2d(3)(x(2, 3))", ValueError),
    ("nn.InstanceNorm2d(3, affine=True)(x(2, 4, 5, 5))", ValueError),
    ("nn.GroupNorm(4, 6)", ValueError),
]


def _message(text: str) -> str:
    return text.replace("torch.Size", "tocha.Size")


@pytest.mark.parametrize("expr,kind", ERRORS)
def test_norm_errors_match_torch(torch, expr, kind):
    messages = []
    for lib in (torch, tocha):
        env = {
            "F": lib.nn.functional,
            "nn": lib.nn,
            "x": lambda *s, lib=lib: lib.from_numpy(np.zeros(s, dtype="float32")),
        }
        with pytest.raises(kind) as info:
            eval(expr, env)
        messages.append(_message(str(info.value)))
    assert messages[1] == messages[0]


def test_instance_norm_feature_mismatch_warns(torch):
    with pytest.warns(UserWarning, match=re.escape("input's size at dim=1 does not match")):
        nn.InstanceNorm2d(3)(tocha.randn(2, 4, 5, 5))


REPRS = [
    "LayerNorm(4)",
    "LayerNorm((4, 5), elementwise_affine=False, bias=False)",
    "LayerNorm([4], bias=False, eps=1e-3)",
    "GroupNorm(2, 4)",
    "GroupNorm(2, 4, affine=False)",
    "GroupNorm(2, 4, bias=False)",
    "RMSNorm(4)",
    "RMSNorm([3, 4], eps=1e-3, elementwise_affine=False)",
    "LocalResponseNorm(3)",
    "LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2)",
    "BatchNorm1d(3)",
    "BatchNorm2d(3)",
    "BatchNorm3d(3, momentum=None, affine=False, track_running_stats=False)",
    "BatchNorm2d(3, bias=False)",
    "InstanceNorm1d(3)",
    "InstanceNorm2d(3, affine=True)",
    "InstanceNorm3d(3, track_running_stats=True)",
]


@pytest.mark.parametrize("expr", REPRS)
def test_norm_repr_matches_torch(torch, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(eval("nn." + expr)) == repr(eval("torch.nn." + expr))


def test_batch_norm_of_one_value_per_channel_names_the_size_as_torch():
    with pytest.raises(
        ValueError,
        match=r"Expected more than 1 value per channel when training, got input size "
        r"torch\.Size\(\[1, 3\]\)",
    ):
        tocha.nn.functional.batch_norm(tocha.randn(1, 3), None, None, training=True)
