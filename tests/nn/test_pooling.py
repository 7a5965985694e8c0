"""Pooling layers against torch.nn: max (with indices), average, adaptive, power-average
pooling and max unpooling in 1, 2 and 3-D (outputs, indices, input gradients, train and
eval), float64 gradcheck (reverse and forward mode) and gradgradcheck (and forward over
reverse) of the functional forms, forward-mode tangents against torch.autograd.forward_ad,
output-size rules (ceil_mode edge cases), errors and reprs."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tests.nn.forward_ad import assert_tangents_match, check_forward_over_reverse
from tocha.autograd import gradcheck, gradgradcheck

LAYERS = [
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 10)),
    ("MaxPool1d", (2,), {"dilation": 2, "return_indices": True}, (3, 9)),
    (
        "MaxPool2d",
        (3,),
        {"stride": 2, "padding": 1, "ceil_mode": True, "return_indices": True},
        (2, 3, 9, 8),
    ),
    ("MaxPool2d", ((2, 3),), {"stride": (2, 1), "dilation": (2, 1)}, (3, 9, 8)),
    ("MaxPool2d", (2,), {"ceil_mode": True}, (2, 2, 5, 5)),
    ("MaxPool3d", (2,), {"stride": 2, "padding": 1, "return_indices": True}, (1, 2, 5, 6, 7)),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 10)),
    ("AvgPool1d", (3,), {"count_include_pad": False, "padding": 1}, (3, 10)),
    (
        "AvgPool2d",
        (3,),
        {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
        (2, 3, 9, 8),
    ),
    (
        "AvgPool2d",
        ((2, 3),),
        {"stride": (1, 2), "padding": (1, 1), "divisor_override": 4},
        (3, 7, 8),
    ),
    ("AvgPool2d", (2,), {"ceil_mode": True}, (2, 2, 5, 5)),
    ("AvgPool3d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (1, 2, 5, 6, 7)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool2d", ((4, 3),), {}, (2, 3, 9, 8)),
    ("AdaptiveAvgPool2d", ((None, 5),), {}, (3, 9, 8)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 5, 5)),
    ("AdaptiveAvgPool3d", ((2, 3, 4),), {}, (1, 2, 5, 6, 7)),
    ("AdaptiveMaxPool1d", (4,), {"return_indices": True}, (2, 3, 10)),
    ("AdaptiveMaxPool2d", ((4, 3),), {"return_indices": True}, (2, 3, 9, 8)),
    ("AdaptiveMaxPool2d", (5,), {}, (3, 7, 12)),
    ("AdaptiveMaxPool3d", (3,), {}, (1, 2, 5, 6, 7)),
    ("LPPool1d", (2, 3), {"stride": 2}, (2, 3, 10)),
    ("LPPool2d", (2, 3), {"stride": 2, "ceil_mode": True}, (2, 3, 9, 8)),
    ("LPPool2d", (1.5, (2, 3)), {}, (3, 9, 8)),
]


def _to_numpy(t):
    return t.detach().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS)
def test_pool_layer_matches_torch(torch, name, args, kwargs, shape, train, dtype):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    ours.train(train)
    theirs.train(train)
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    if name.startswith("LP"):
        x = np.abs(x) + 0.1
    xt = torch.from_numpy(x).requires_grad_()
    xo = tocha.from_numpy(x.copy()).requires_grad_()
    out_t, out_o = theirs(xt), ours(xo)
    if kwargs.get("return_indices"):
        (out_t, idx_t), (out_o, idx_o) = out_t, out_o
        assert idx_o.dtype == tocha.int64
        np.testing.assert_array_equal(idx_o.numpy(), idx_t.numpy())
    assert tuple(out_o.shape) == tuple(out_t.shape) and out_o.dtype == getattr(tocha, dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(_to_numpy(out_o), _to_numpy(out_t), rtol=tol, atol=tol)
    g = np.random.default_rng(1).standard_normal(tuple(out_t.shape)).astype(dtype)
    out_t.backward(torch.from_numpy(g))
    out_o.backward(tocha.from_numpy(g))
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS)
def test_pool_repr_matches_torch(torch, name, args, kwargs, shape):
    assert repr(getattr(nn, name)(*args, **kwargs)) == repr(
        getattr(torch.nn, name)(*args, **kwargs)
    )


FUNCTIONAL = [
    ("max_pool1d", (3, 2, 1), {"ceil_mode": True}),
    ("max_pool2d", (3, 2, 1), {"dilation": (1, 2)}),
    ("max_pool3d", (2,), {"padding": 1}),
    ("avg_pool1d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}),
    ("avg_pool2d", (3, 2, 1), {"ceil_mode": True}),
    ("avg_pool2d", (2,), {"divisor_override": 3}),
    ("avg_pool3d", (2, 1, 1), {"count_include_pad": False}),
    ("adaptive_avg_pool1d", (3,), {}),
    ("adaptive_avg_pool2d", ((3, 2),), {}),
    ("adaptive_avg_pool3d", (2,), {}),
    ("adaptive_max_pool1d", (3,), {}),
    ("adaptive_max_pool2d", ((3, 2),), {}),
    ("adaptive_max_pool3d", (2,), {}),
    ("lp_pool1d", (2.0, 2), {}),
    ("lp_pool2d", (3.0, 2), {"stride": 1}),
]

_SHAPES = {"1d": (2, 2, 7), "2d": (2, 2, 5, 6), "3d": (1, 2, 4, 3, 5)}


def _pool_input(name):
    x = np.random.default_rng(0).standard_normal(_SHAPES[name[-2:]])
    return np.abs(x) + 0.5 if name.startswith("lp") else x


@pytest.mark.parametrize("name,args,kwargs", FUNCTIONAL)
def test_pool_gradcheck(name, args, kwargs):
    xt = tocha.from_numpy(_pool_input(name)).requires_grad_()

    def f(t):
        return getattr(F, name)(t, *args, **kwargs)

    assert gradcheck(f, (xt,), check_forward_ad=True)
    assert gradgradcheck(f, (xt,))
    assert check_forward_over_reverse(f, (xt,))


@pytest.mark.parametrize("name,args,kwargs", FUNCTIONAL)
def test_pool_forward_ad_matches_torch(torch, name, args, kwargs):
    assert_tangents_match(
        torch,
        lambda lib, t: getattr(lib.nn.functional, name)(t, *args, **kwargs),
        [_pool_input(name)],
    )


def test_max_pool_indices_and_unpool_forward_ad_match_torch(torch):
    def fn(lib, x):
        out, idx = lib.nn.functional.max_pool2d(x, 2, return_indices=True)
        return out, lib.nn.functional.max_unpool2d(out, idx, 2, output_size=x.shape)

    assert_tangents_match(torch, fn, [np.random.default_rng(0).standard_normal((2, 3, 6, 7))])


def test_max_unpool_matches_torch(torch):
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 7))
    for lib, mod in ((tocha, nn), (torch, torch.nn)):
        t = lib.from_numpy(x.copy())
        out, idx = mod.MaxPool2d(2, return_indices=True)(t)
        src = out.detach().clone().requires_grad_()
        up = mod.MaxUnpool2d(2)(src, idx, output_size=t.shape)
        up.backward(lib.from_numpy(np.arange(up.numel(), dtype=np.float64).reshape(up.shape)))
        if lib is tocha:
            ours = (up.detach().numpy(), src.grad.numpy())
        else:
            theirs = (up.detach().numpy(), src.grad.numpy())
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    for nd in (1, 3):
        shape = (2, 2, 6) if nd == 1 else (1, 2, 4, 4, 6)
        x = np.random.default_rng(1).standard_normal(shape)
        o, i = getattr(F, f"max_pool{nd}d")(tocha.from_numpy(x), 2, return_indices=True)
        up = getattr(F, f"max_unpool{nd}d")(o, i, 2)
        ot, it = getattr(torch.nn.functional, f"max_pool{nd}d")(
            torch.from_numpy(x), 2, return_indices=True
        )
        upt = getattr(torch.nn.functional, f"max_unpool{nd}d")(ot, it, 2)
        np.testing.assert_array_equal(up.numpy(), upt.numpy())


@pytest.mark.parametrize("size", range(4, 12))
@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 2, 1), (3, 3, 1), (2, 3, 1), (5, 4, 2)])
def test_ceil_mode_output_sizes(torch, size, k, s, p):
    x = np.random.default_rng(0).standard_normal((1, 1, size, size + 1))
    for fn in ("max_pool2d", "avg_pool2d"):
        ours = getattr(F, fn)(tocha.from_numpy(x), k, s, p, ceil_mode=True)
        theirs = getattr(torch.nn.functional, fn)(torch.from_numpy(x), k, s, p, ceil_mode=True)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def _x(*shape):
    return np.zeros(shape, np.float32)


ERRORS = [
    ("max_pool2d", (_x(2, 4, 8, 8), 3), {"padding": 2}),
    ("max_pool2d", (_x(8), 3), {}),
    ("max_pool2d", (_x(2, 4, 8, 8), 9), {}),
    ("max_pool2d", (_x(2, 4, 8, 8), 0), {}),
    ("max_pool2d", (_x(2, 4, 8, 8), 2), {"dilation": 0}),
    ("max_pool2d", (_x(2, 4, 8, 8), 2), {"padding": -1}),
    ("max_pool2d", (_x(2, 4, 8, 8), (2, 2, 2)), {}),
    ("max_pool1d", (_x(8), 3), {}),
    ("max_pool1d", (_x(2, 3, 4), 2), {"padding": 2}),
    ("max_pool3d", (_x(8, 8), 3), {}),
    ("avg_pool2d", (_x(2, 4, 8, 8), 3), {"padding": 2}),
    ("avg_pool2d", (_x(2, 4, 8, 8), 9), {}),
    ("avg_pool2d", (_x(2, 4, 8, 8), 3), {"divisor_override": 0}),
    ("avg_pool1d", (_x(8), 3), {}),
    ("avg_pool3d", (_x(8, 8), 3), {}),
    ("adaptive_avg_pool1d", (_x(8), 3), {}),
    ("adaptive_avg_pool2d", (_x(8), 3), {}),
    ("adaptive_avg_pool3d", (_x(8), 3), {}),
    ("adaptive_max_pool1d", (_x(8), 3), {}),
    ("adaptive_max_pool2d", (_x(8), 3), {}),
    ("adaptive_max_pool3d", (_x(8), 3), {}),
    ("lp_pool2d", (_x(2, 4, 8, 8), 2, 9), {}),
]


@pytest.mark.parametrize("name,args,kwargs", ERRORS)
def test_pool_errors_match_torch(torch, name, args, kwargs):
    def convert(lib):
        return [lib.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]

    with pytest.raises(Exception) as theirs:
        getattr(torch.nn.functional, name)(*convert(torch), **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        getattr(F, name)(*convert(tocha), **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("output_size", [(3, 3), (3,), (2, 4, 20, 20)])
def test_max_unpool_output_size_errors(torch, output_size):
    x, idx = np.zeros((2, 4, 8, 8), np.float32), np.zeros((2, 4, 8, 8), np.int64)
    with pytest.raises(ValueError) as theirs:
        torch.nn.functional.max_unpool2d(
            torch.from_numpy(x), torch.from_numpy(idx), 2, output_size=output_size
        )
    with pytest.raises(ValueError) as ours:
        F.max_unpool2d(tocha.from_numpy(x), tocha.from_numpy(idx), 2, output_size=output_size)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda F, x: F.adaptive_avg_pool2d(x, 2),
        lambda F, x: F.adaptive_avg_pool2d(x, (3, 2)),
        lambda F, x: F.adaptive_avg_pool1d(x[0], 3),
        lambda F, x: F.interpolate(x, size=(2, 2), mode="area"),
    ],
    ids=["pool2d", "pool2d_overlapping", "pool1d", "area"],
)
def test_adaptive_average_keeps_inf_and_nan_in_their_windows(torch, call):
    values = np.arange(20.0).reshape(1, 1, 4, 5)
    values[0, 0, 0, 0] = np.inf
    values[0, 0, 3, 4] = np.nan
    want = call(torch.nn.functional, torch.tensor(values)).numpy()
    got = call(F, tocha.tensor(values)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
