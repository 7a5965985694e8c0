"""Convolutions and sliding blocks against torch.nn: Conv1d/2d/3d, ConvTranspose1d/2d/3d,
Fold/Unfold with identical weights (outputs, input and parameter gradients, train and eval),
float64 gradcheck (reverse and forward mode) and gradgradcheck (and forward over reverse) of
every functional form, forward-mode tangents against torch.autograd.forward_ad, errors, reprs,
initialisation."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tests.nn.forward_ad import assert_tangents_match, check_forward_over_reverse
from tocha.autograd import gradcheck, gradgradcheck

LAYERS = [
    ("Conv1d", (4, 6, 3), {}, (2, 4, 9)),
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 2, "dilation": 2, "groups": 2}, (2, 4, 11)),
    ("Conv1d", (4, 6, 4), {"padding": "same", "padding_mode": "reflect"}, (4, 9)),
    ("Conv2d", (3, 16, 3), {"padding": 1}, (2, 3, 8, 8)),
    (
        "Conv2d",
        (4, 6, (3, 2)),
        {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "groups": 2, "bias": False},
        (2, 4, 9, 8),
    ),
    ("Conv2d", (4, 4, 3), {"groups": 4, "padding": "valid"}, (2, 4, 6, 7)),
    ("Conv2d", (4, 6, (4, 3)), {"padding": "same", "dilation": (1, 2)}, (2, 4, 7, 8)),
    ("Conv2d", (3, 5, 3), {"padding": 1, "padding_mode": "reflect"}, (2, 3, 6, 5)),
    ("Conv2d", (3, 5, 3), {"padding": (2, 1), "padding_mode": "replicate"}, (3, 6, 5)),
    (
        "Conv2d",
        (3, 5, 3),
        {"padding": (1, 2), "padding_mode": "circular", "stride": 2},
        (2, 3, 6, 5),
    ),
    ("Conv2d", (3, 5, 1), {}, (2, 3, 4, 4)),
    ("Conv3d", (2, 4, 3), {"padding": 1, "stride": (1, 2, 1)}, (2, 2, 5, 6, 4)),
    ("Conv3d", (2, 4, 2), {"padding_mode": "circular", "padding": 1}, (2, 5, 4, 3)),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 4, 7)),
    ("ConvTranspose2d", (4, 6, 3), {}, (2, 4, 5, 5)),
    (
        "ConvTranspose2d",
        (4, 6, (3, 2)),
        {"stride": (2, 1), "padding": 1, "groups": 2, "output_padding": (1, 0), "dilation": (1, 2)},
        (2, 4, 5, 6),
    ),
    (
        "ConvTranspose2d",
        (4, 2, 3),
        {"stride": 1, "dilation": 2, "output_padding": 1, "bias": False},
        (4, 5, 5),
    ),
    ("ConvTranspose3d", (2, 4, 3), {"stride": 2, "padding": 1}, (1, 2, 3, 4, 3)),
]


def _to_tocha(t):
    return tocha.from_numpy(t.detach().numpy().copy())


def _pair(torch, name, args, kwargs, dtype):
    theirs = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    ours = getattr(nn, name)(*args, **kwargs).to(getattr(tocha, dtype))
    ours.load_state_dict({k: _to_tocha(v) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _close(ours, theirs, dtype):
    tol = 1e-4 if dtype == "float32" else 1e-10
    assert ours.dtype == getattr(tocha, dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS)
def test_layer_matches_torch(torch, name, args, kwargs, shape, train, dtype):
    ours, theirs = _pair(torch, name, args, kwargs, dtype)
    ours.train(train)
    theirs.train(train)
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    xt = torch.from_numpy(x).requires_grad_()
    xo = tocha.from_numpy(x.copy()).requires_grad_()
    out_t, out_o = theirs(xt), ours(xo)
    assert tuple(out_o.shape) == tuple(out_t.shape)
    _close(out_o, out_t, dtype)
    g = np.random.default_rng(1).standard_normal(tuple(out_t.shape)).astype(dtype)
    out_t.backward(torch.from_numpy(g))
    out_o.backward(tocha.from_numpy(g))
    _close(xo.grad, xt.grad, dtype)
    for p_o, p_t in zip(ours.parameters(), theirs.parameters()):
        _close(p_o.grad, p_t.grad, dtype)


def test_conv_output_is_contiguous():
    out = nn.Conv2d(3, 4, 3, padding=1)(tocha.randn(2, 3, 5, 5))
    assert out.is_contiguous()


def test_conv_transpose_output_size(torch):
    ours, theirs = _pair(torch, "ConvTranspose2d", (4, 6, 3), {"stride": 2}, "float64")
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 5))
    out_o = ours(tocha.from_numpy(x), output_size=[12, 12])
    out_t = theirs(torch.from_numpy(x), output_size=[12, 12])
    _close(out_o, out_t, "float64")
    with pytest.raises(
        ValueError,
        match=r"requested an output size of \[100, 100\], but valid "
        r"sizes range from \[11, 11\] to \[12, 12\]",
    ):
        ours(tocha.from_numpy(x), output_size=[100, 100])


# -- gradcheck of the functional forms ------------------------------------------------------
def _t64(rng, *shape):
    return tocha.from_numpy(rng.standard_normal(shape)).requires_grad_()


FUNCTIONAL = [
    ("conv1d", (2, 4, 7), (6, 2, 3), 6, {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}),
    (
        "conv2d",
        (2, 4, 6, 5),
        (6, 2, 3, 2),
        6,
        {"stride": (2, 1), "padding": 1, "dilation": (1, 2), "groups": 2},
    ),
    ("conv2d", (1, 3, 5, 5), (2, 3, 2, 2), None, {"padding": "same"}),
    ("conv3d", (1, 2, 4, 3, 4), (3, 2, 2, 2, 2), 3, {"padding": (1, 0, 1)}),
    (
        "conv_transpose1d",
        (2, 4, 5),
        (4, 3, 3),
        6,
        {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2},
    ),
    (
        "conv_transpose2d",
        (2, 4, 4, 3),
        (4, 3, 3, 2),
        6,
        {"stride": (2, 1), "padding": 1, "groups": 2, "dilation": (1, 2)},
    ),
    ("conv_transpose2d", (1, 2, 3, 3), (2, 2, 3, 3), None, {"dilation": 2, "output_padding": 1}),
    ("conv_transpose3d", (1, 2, 3, 2, 3), (2, 2, 2, 2, 2), 2, {"stride": 2}),
]


@pytest.mark.parametrize("name,xs,ws,bias,kwargs", FUNCTIONAL)
def test_conv_gradcheck(name, xs, ws, bias, kwargs):
    rng = np.random.default_rng(0)
    inputs = (_t64(rng, *xs), _t64(rng, *ws)) + ((_t64(rng, bias),) if bias else ())
    fn = getattr(F, name)

    def f(*args):
        return fn(*args, **kwargs)

    assert gradcheck(f, inputs, check_forward_ad=True)
    assert gradgradcheck(f, inputs)
    assert check_forward_over_reverse(f, inputs)


@pytest.mark.parametrize("name,xs,ws,bias,kwargs", FUNCTIONAL)
def test_conv_functional_matches_torch(torch, name, xs, ws, bias, kwargs):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in (xs, ws) + ((bias,) if bias else ())]
    ours = getattr(F, name)(*map(tocha.from_numpy, arrays), **kwargs)
    theirs = getattr(torch.nn.functional, name)(*map(torch.from_numpy, arrays), **kwargs)
    _close(ours, theirs, "float64")


@pytest.mark.parametrize("name,xs,ws,bias,kwargs", FUNCTIONAL)
def test_conv_forward_ad_matches_torch(torch, name, xs, ws, bias, kwargs):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in (xs, ws) + ((bias,) if bias else ())]
    assert_tangents_match(
        torch, lambda lib, *t: getattr(lib.nn.functional, name)(*t, **kwargs), arrays
    )


def test_conv_double_backward_matches_torch(torch):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 5, 5)), rng.standard_normal((4, 3, 3, 3))
    results = []
    for lib in (tocha, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        wt = lib.from_numpy(w.copy()).requires_grad_()
        out = lib.nn.functional.conv2d(xt, wt, stride=2, padding=1)
        (gx,) = lib.autograd.grad(out.pow(2).sum(), xt, create_graph=True)
        gx.pow(2).sum().backward()
        results.append((xt.grad.numpy(), wt.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


# -- fold and unfold ------------------------------------------------------------------------
BLOCKS = [
    ((2, 3, 6, 5), {"kernel_size": (2, 3), "dilation": (1, 2), "padding": 1, "stride": (2, 1)}),
    ((3, 5, 5), {"kernel_size": 2}),
    ((1, 2, 4, 4), {"kernel_size": 3, "padding": 1}),
]


@pytest.mark.parametrize("shape,kwargs", BLOCKS)
def test_unfold_fold_match_torch(torch, shape, kwargs):
    x = np.random.default_rng(0).standard_normal(shape)
    cols_o = nn.Unfold(**kwargs)(tocha.from_numpy(x))
    cols_t = torch.nn.Unfold(**kwargs)(torch.from_numpy(x))
    _close(cols_o, cols_t, "float64")
    size = shape[-2:]
    back_o = nn.Fold(size, **kwargs)(cols_o)
    back_t = torch.nn.Fold(size, **kwargs)(cols_t)
    _close(back_o, back_t, "float64")
    x_grad = tocha.from_numpy(x).requires_grad_()
    assert gradcheck(lambda t: F.unfold(t, **kwargs), (x_grad,), check_forward_ad=True)
    c = tocha.from_numpy(cols_t.numpy().copy()).requires_grad_()
    assert gradcheck(lambda t: F.fold(t, size, **kwargs), (c,), check_forward_ad=True)
    assert gradgradcheck(lambda t: F.fold(t, size, **kwargs), (c,))
    assert check_forward_over_reverse(lambda t: F.fold(t, size, **kwargs), (c,))
    assert_tangents_match(torch, lambda lib, t: lib.nn.functional.unfold(t, **kwargs), [x])
    assert_tangents_match(
        torch, lambda lib, t: lib.nn.functional.fold(t, size, **kwargs), [cols_t.numpy().copy()]
    )


# -- errors ---------------------------------------------------------------------------------
def _x(*shape, dtype="float32"):
    return np.zeros(shape, dtype=dtype)


ERRORS = [
    ("conv2d", (_x(3, 8), _x(6, 4, 3, 3)), {}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 3, 3, 3)), {}),
    ("conv2d", (_x(2, 4, 2, 2), _x(6, 4, 3, 3)), {}),
    ("conv2d", (_x(2, 4, 8, 8), _x(5, 2, 3, 3)), {"groups": 2}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 3, 3, 3)), {"groups": 3}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3)), {"stride": 2, "padding": "same"}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3)), {"padding": "foo"}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3)), {"padding": -1}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3)), {"stride": 0}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3)), {"dilation": 0}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3)), {"groups": 0}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3), _x(5)), {}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3)), {"stride": (1, 1, 1)}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3, dtype="float64")), {}),
    ("conv2d", (_x(2, 4, 8, 8), _x(6, 4, 3, 3), _x(6, dtype="float64")), {}),
    ("conv1d", (_x(2, 4, 8, 8), _x(6, 4, 3)), {}),
    ("conv3d", (_x(2, 4, 8), _x(6, 4, 3, 3, 3)), {}),
    ("conv_transpose2d", (_x(2, 4, 8, 8), _x(4, 3, 3, 3)), {"output_padding": 1}),
    ("conv_transpose1d", (_x(2, 4, 8), _x(4, 3, 3)), {"output_padding": 1}),
    ("conv_transpose3d", (_x(1, 4, 2, 2, 2), _x(4, 3, 3, 3, 3)), {"output_padding": 1}),
    ("conv_transpose2d", (_x(2, 4, 8, 8), _x(3, 3, 3, 3)), {}),
    ("conv_transpose2d", (_x(3, 8), _x(3, 3, 3, 3)), {}),
    ("unfold", (_x(2, 3, 4, 4, 4),), {"kernel_size": 2}),
    ("fold", (_x(2, 12, 8),), {"output_size": (4, 4), "kernel_size": 2}),
    ("fold", (_x(2, 11, 9),), {"output_size": (4, 4), "kernel_size": 2}),
]


@pytest.mark.parametrize("name,arrays,kwargs", ERRORS)
def test_conv_errors_match_torch(torch, name, arrays, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(torch.nn.functional, name)(*map(torch.from_numpy, arrays), **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        getattr(F, name)(*map(tocha.from_numpy, arrays), **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "name,args,kwargs",
    [
        ("Conv2d", (4, 6, 3), {"padding": "same", "stride": 2}),
        ("Conv2d", (4, 6, 3), {"padding": "foo"}),
        ("Conv2d", (4, 6, 3), {"padding_mode": "foo"}),
        ("Conv2d", (4, 6, 3), {"groups": 4}),
        ("Conv2d", (5, 6, 3), {"groups": 2}),
        ("Conv2d", (4, 6, 3), {"groups": 0}),
        ("ConvTranspose2d", (4, 6, 3), {"padding_mode": "reflect"}),
        ("ConvTranspose1d", (4, 6, 3), {"padding_mode": "circular"}),
    ],
)
def test_conv_constructor_errors_match_torch(torch, name, args, kwargs):
    with pytest.raises(ValueError) as theirs:
        getattr(torch.nn, name)(*args, **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(nn, name)(*args, **kwargs)
    assert _sets_sorted(str(ours.value)) == _sets_sorted(str(theirs.value))


def _sets_sorted(message: str) -> str:
    """`message` with the items of each printed set sorted (a set prints in hash order)."""
    return re.sub(
        r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m[1].split(", "))) + "}", message
    )


# -- repr and initialisation ----------------------------------------------------------------
@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS)
def test_conv_repr_matches_torch(torch, name, args, kwargs, shape):
    assert repr(getattr(nn, name)(*args, **kwargs)) == repr(
        getattr(torch.nn, name)(*args, **kwargs)
    )
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert ours._reversed_padding_repeated_twice == theirs._reversed_padding_repeated_twice


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS[:3] + LAYERS[-3:])
def test_fold_repr_matches_torch(torch, name, args, kwargs, shape):
    for ours, theirs in (
        (nn.Fold((4, 5), 2, padding=1), torch.nn.Fold((4, 5), 2, padding=1)),
        (nn.Unfold((2, 3), stride=2), torch.nn.Unfold((2, 3), stride=2)),
    ):
        assert repr(ours) == repr(theirs)


def test_conv_default_init_bounds():
    layer = nn.Conv2d(16, 32, 3, groups=2)
    fan_in = 8 * 9
    bound = 1 / math.sqrt(fan_in)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert w.shape == (32, 8, 3, 3) and b.shape == (32,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert w.std() > bound / 2
    transposed = nn.ConvTranspose2d(16, 32, 3, groups=2)
    assert tuple(transposed.weight.shape) == (16, 16, 3, 3)
    assert np.abs(transposed.bias.detach().numpy()).max() <= 1 / math.sqrt(16 * 9)
