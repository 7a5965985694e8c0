"""Padding and resampling against torch.nn: F.pad in every mode, the padding layers,
interpolate/Upsample in every mode, pixel (un)shuffle, channel shuffle, grid_sample and
affine_grid (values and gradients), float64 gradcheck (reverse and forward mode) and
gradgradcheck (and forward over reverse), forward-mode tangents against
torch.autograd.forward_ad, errors and reprs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tests.nn.forward_ad import assert_tangents_match, check_forward_over_reverse
from tocha.autograd import gradcheck, gradgradcheck


def _run(lib, fn, arrays):
    """`fn(lib, *tensors)` on float tensors requiring grad: the output and input gradients
    for a fixed random output gradient."""
    args = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, *args)
    g = np.random.default_rng(7).standard_normal(tuple(out.shape)).astype(arrays[0].dtype)
    grads = lib.autograd.grad(out, args, lib.from_numpy(g), allow_unused=True)
    return [out.detach().numpy()] + [None if gr is None else gr.numpy() for gr in grads]


def _compare(torch, fn, shapes, dtype="float64", tol=None, scale=1.0):
    rng = np.random.default_rng(0)
    arrays = [(rng.standard_normal(s) * scale).astype(dtype) for s in shapes]
    tol = tol or (1e-5 if dtype == "float32" else 1e-10)
    ours, theirs = _run(tocha, fn, arrays), _run(torch, fn, arrays)
    assert ours[0].shape == theirs[0].shape
    assert ours[0].dtype == theirs[0].dtype
    for o, t in zip(ours, theirs):
        if t is None or o is None:  # no gradient: None or zeros alike
            assert not (o if t is None else t).any()
        else:
            np.testing.assert_allclose(o, t, rtol=tol, atol=tol)
    return arrays


# -- F.pad -------------------------------------------------------------------------------------
PADS = [
    ((2, 3, 4), (1, 2), "constant", 0.5),
    ((2, 3, 4), (-1, 2, 0, 1, 1, -1), "constant", None),
    ((3, 4), (2, 1, 1, 0), "constant", 2.0),
    ((2, 3, 5), (2, 3), "reflect", None),
    ((3, 5), (4, 1), "reflect", None),
    ((1, 2, 4, 5), (1, 3, 2, 3), "reflect", None),
    ((2, 3, 4, 5), (-1, 2, 1, -2), "reflect", None),
    ((1, 2, 3, 4, 3), (1, 2, 2, 1, 1, 2), "reflect", None),
    ((2, 3, 4), (5, 1), "replicate", None),
    ((2, 4, 3), (1, 2, 3, 0), "replicate", None),
    ((3, 4, 3, 2), (1, 1, 2, 0, 1, 3), "replicate", None),
    ((2, 3, 4), (3, 4), "circular", None),
    ((2, 2, 4, 3), (-1, 2, 1, -2), "circular", None),
    ((1, 2, 3, 3, 2), (1, 1, 0, 2, 2, 1), "circular", None),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,pad,mode,value", PADS)
def test_pad_matches_torch(torch, shape, pad, mode, value, dtype):
    _compare(torch, lambda lib, x: lib.nn.functional.pad(x, pad, mode, value), [shape], dtype)


@pytest.mark.parametrize("shape,pad,mode,value", PADS)
def test_pad_gradcheck(shape, pad, mode, value):
    x = tocha.from_numpy(np.random.default_rng(0).standard_normal(shape)).requires_grad_()
    assert gradcheck(
        lambda t: tocha.nn.functional.pad(t, pad, mode, value), (x,), check_forward_ad=True
    )
    assert gradgradcheck(lambda t: tocha.nn.functional.pad(t, pad, mode, value), (x,))
    assert check_forward_over_reverse(lambda t: tocha.nn.functional.pad(t, pad, mode, value), (x,))


@pytest.mark.parametrize("shape,pad,mode,value", PADS)
def test_pad_forward_ad_matches_torch(torch, shape, pad, mode, value):
    assert_tangents_match(
        torch,
        lambda lib, x: lib.nn.functional.pad(x, pad, mode, value),
        [np.random.default_rng(0).standard_normal(shape)],
    )


def test_pad_integer_input_casts_value(torch):
    x = np.arange(4).reshape(2, 2)
    ours = tocha.nn.functional.pad(tocha.from_numpy(x), (1, 1), value=1.5)
    theirs = torch.nn.functional.pad(torch.from_numpy(x), (1, 1), value=1.5)
    assert ours.tolist() == theirs.tolist() and ours.dtype == tocha.int64


PAD_LAYERS = [
    ("ZeroPad1d", (2,), (2, 3, 4)),
    ("ZeroPad2d", ((1, 0, 2, -1),), (2, 3, 4)),
    ("ZeroPad3d", (1,), (1, 2, 2, 3, 2)),
    ("ConstantPad1d", ((1, 2), 3.5), (3, 4)),
    ("ConstantPad2d", (1, -1.0), (2, 3, 4)),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 2), (2, 3, 2, 2)),
    ("ReflectionPad1d", (2,), (2, 3, 4)),
    ("ReflectionPad2d", ((1, 2, 0, 1),), (2, 3, 4)),
    ("ReflectionPad3d", (1,), (1, 2, 2, 3, 2)),
    ("ReplicationPad1d", ((3, 1),), (2, 4)),
    ("ReplicationPad2d", (2,), (1, 2, 3, 4)),
    ("ReplicationPad3d", (1,), (2, 2, 3, 2)),
    ("CircularPad1d", (2,), (2, 3, 4)),
    ("CircularPad2d", ((1, 2, 2, 0),), (2, 3, 4)),
    ("CircularPad3d", (1,), (1, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("name,args,shape", PAD_LAYERS)
def test_padding_layer_matches_torch(torch, name, args, shape):
    _compare(torch, lambda lib, x: getattr(lib.nn, name)(*args)(x), [shape])
    assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


# -- interpolate -------------------------------------------------------------------------------
INTERPOLATIONS = [
    ((2, 3, 5), {"size": 9}),
    ((2, 3, 6), {"size": 4}),
    ((2, 3, 5), {"scale_factor": 2}),
    ((2, 3, 5), {"scale_factor": 1.7}),
    ((2, 3, 5), {"scale_factor": 1.7, "recompute_scale_factor": True}),
    ((2, 3, 4, 5), {"size": (7, 3)}),
    ((1, 2, 4, 5), {"scale_factor": (2, 0.6)}),
    ((1, 2, 3, 4, 5), {"size": (5, 2, 7)}),
    ((1, 2, 3, 4, 2), {"scale_factor": 2}),
]
MODES = {
    3: ["nearest", "nearest-exact", "linear", "area"],
    4: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
    5: ["nearest", "nearest-exact", "trilinear", "area"],
}
INTERP_CASES = [
    (shape, kwargs, mode, corners)
    for shape, kwargs in INTERPOLATIONS
    for mode in MODES[len(shape)]
    for corners in ((None,) if mode in ("nearest", "nearest-exact", "area") else (False, True))
    if not (mode == "area" and kwargs.get("recompute_scale_factor"))
]


def _interp(shape, kwargs, mode, corners):
    def fn(lib, x):
        return lib.nn.functional.interpolate(x, mode=mode, align_corners=corners, **kwargs)

    return fn


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,kwargs,mode,corners", INTERP_CASES)
def test_interpolate_matches_torch(torch, shape, kwargs, mode, corners, dtype):
    _compare(torch, _interp(shape, kwargs, mode, corners), [shape], dtype)


@pytest.mark.parametrize("shape,kwargs,mode,corners", INTERP_CASES[::3])
def test_interpolate_gradcheck(shape, kwargs, mode, corners):
    x = tocha.from_numpy(np.random.default_rng(0).standard_normal(shape)).requires_grad_()
    fn = _interp(shape, kwargs, mode, corners)
    assert gradcheck(lambda t: fn(tocha, t), (x,), check_forward_ad=True)
    assert gradgradcheck(lambda t: fn(tocha, t), (x,))
    assert check_forward_over_reverse(lambda t: fn(tocha, t), (x,))


@pytest.mark.parametrize("shape,kwargs,mode,corners", INTERP_CASES[::3])
def test_interpolate_forward_ad_matches_torch(torch, shape, kwargs, mode, corners):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_tangents_match(
            torch,
            _interp(shape, kwargs, mode, corners),
            [np.random.default_rng(0).standard_normal(shape)],
        )


UPSAMPLE_LAYERS = [
    ("Upsample", {"scale_factor": 2}, (1, 2, 3, 3)),
    ("Upsample", {"size": (3, 5), "mode": "bilinear"}, (1, 2, 4, 4)),
    (
        "Upsample",
        {"scale_factor": (2.0, 1.5), "mode": "bicubic", "align_corners": True},
        (1, 2, 4, 4),
    ),
    ("Upsample", {"size": 7, "mode": "linear"}, (2, 2, 4)),
    ("UpsamplingNearest2d", {"scale_factor": 3}, (1, 2, 2, 3)),
    ("UpsamplingBilinear2d", {"size": (5, 4)}, (1, 2, 2, 3)),
]


@pytest.mark.parametrize("name,kwargs,shape", UPSAMPLE_LAYERS)
def test_upsample_layer_matches_torch(torch, name, kwargs, shape):
    _compare(torch, lambda lib, x: getattr(lib.nn, name)(**kwargs)(x), [shape])
    assert repr(getattr(nn, name)(**kwargs)) == repr(getattr(torch.nn, name)(**kwargs))


@pytest.mark.parametrize("fn", ["upsample", "upsample_nearest", "upsample_bilinear"])
def test_deprecated_upsample_warns(torch, fn):
    x = tocha.randn(1, 1, 2, 2)
    with pytest.warns(UserWarning, match=f"`nn.functional.{fn}` is deprecated"):
        out = getattr(tocha.nn.functional, fn)(x, size=4)
    assert tuple(out.shape) == (1, 1, 4, 4)


# -- shuffles ----------------------------------------------------------------------------------
SHUFFLES = [
    ("pixel_shuffle", (2, 8, 3, 2), 2),
    ("pixel_shuffle", (2, 1, 9, 2, 3), 3),
    ("pixel_shuffle", (4, 2, 2), 2),
    ("pixel_unshuffle", (2, 2, 4, 6), 2),
    ("pixel_unshuffle", (3, 3, 6), 3),
    ("channel_shuffle", (2, 6, 3), 3),
    ("channel_shuffle", (2, 6, 2, 2), 2),
]


@pytest.mark.parametrize("name,shape,factor", SHUFFLES)
def test_shuffle_matches_torch(torch, name, shape, factor):
    _compare(torch, lambda lib, x: getattr(lib.nn.functional, name)(x, factor), [shape])
    x = tocha.from_numpy(np.random.default_rng(0).standard_normal(shape)).requires_grad_()
    assert gradcheck(
        lambda t: getattr(tocha.nn.functional, name)(t, factor), (x,), check_forward_ad=True
    )
    assert_tangents_match(
        torch,
        lambda lib, t: getattr(lib.nn.functional, name)(t, factor),
        [np.random.default_rng(0).standard_normal(shape)],
    )


@pytest.mark.parametrize(
    "name,arg", [("PixelShuffle", 2), ("PixelUnshuffle", 3), ("ChannelShuffle", 3)]
)
def test_shuffle_layers_match_torch(torch, name, arg):
    assert repr(getattr(nn, name)(arg)) == repr(getattr(torch.nn, name)(arg))
    shape = {
        "PixelShuffle": (1, 8, 2, 3),
        "PixelUnshuffle": (1, 2, 6, 3),
        "ChannelShuffle": (2, 6, 2, 2),
    }[name]
    _compare(torch, lambda lib, x: getattr(lib.nn, name)(arg)(x), [shape])


# -- grid_sample and affine_grid ---------------------------------------------------------------
GRIDS = [
    (mode, padding, corners, dims)
    for mode in ("bilinear", "nearest", "bicubic")
    for padding in ("zeros", "border", "reflection")
    for corners in (False, True)
    for dims in (2, 3)
    if not (mode == "bicubic" and dims == 3)
]


@pytest.mark.parametrize("mode,padding,corners,dims", GRIDS)
def test_grid_sample_matches_torch(torch, mode, padding, corners, dims):
    shapes = [(2, 3, 4, 5), (2, 3, 4, 2)] if dims == 2 else [(2, 2, 3, 4, 3), (2, 2, 3, 2, 3)]

    def fn(lib, x, grid):
        return lib.nn.functional.grid_sample(x, grid, mode, padding, corners)

    # coordinates up to 1.6: points outside the input exercise the padding modes
    arrays = _compare(torch, fn, shapes, scale=0.8)
    if mode != "nearest":
        x, g = (tocha.from_numpy(a).requires_grad_() for a in arrays)
        assert gradcheck(lambda a, b: fn(tocha, a, b), (x, g), check_forward_ad=True)


def test_grid_sample_nearest_gives_the_grid_a_zero_gradient():
    """As PyTorch's: the grid is in the graph (autograd.grad needs no allow_unused) and its
    gradient is zero."""
    x = tocha.randn(1, 2, 4, 4, requires_grad=True)
    grid = (tocha.rand(1, 3, 3, 2) * 2 - 1).requires_grad_()
    out = tocha.nn.functional.grid_sample(x, grid, mode="nearest", align_corners=False)
    gx, ggrid = tocha.autograd.grad(out.sum(), (x, grid))
    assert not ggrid.any() and gx.abs().sum() > 0


@pytest.mark.filterwarnings("ignore:Since version 1.3.0")
@pytest.mark.parametrize("corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 1), (1, 2, 3, 4, 2)])
def test_affine_grid_matches_torch(torch, size, corners):
    theta = (2, len(size) - 2, len(size) - 1)
    size = (2,) + size[1:]
    _compare(torch, lambda lib, t: lib.nn.functional.affine_grid(t, size, corners), [theta])
    t = tocha.from_numpy(np.random.default_rng(0).standard_normal(theta)).requires_grad_()
    assert gradcheck(
        lambda a: tocha.nn.functional.affine_grid(a, size, corners), (t,), check_forward_ad=True
    )
    assert_tangents_match(
        torch,
        lambda lib, a: lib.nn.functional.affine_grid(a, size, corners),
        [np.random.default_rng(0).standard_normal(theta)],
    )


def test_align_corners_default_warns():
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        tocha.nn.functional.affine_grid(tocha.randn(1, 2, 3), (1, 1, 2, 2))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        tocha.nn.functional.grid_sample(tocha.randn(1, 1, 2, 2), tocha.randn(1, 2, 2, 2))


# -- errors ------------------------------------------------------------------------------------
ERRORS = [
    ("F.pad(x(1, 2, 3), (3, 3), mode='reflect')", RuntimeError),
    ("F.pad(x(1, 1, 2, 2), (1, 1, 3, 3), mode='reflect')", RuntimeError),
    ("F.pad(x(1, 2, 3), (1,))", RuntimeError),
    ("F.pad(x(1, 2, 3), (1, 1, 1, 1, 1, 1, 1, 1))", RuntimeError),
    ("F.pad(x(1, 2, 3), (1, 1, 1, 1, 1, 1), mode='reflect')", NotImplementedError),
    ("F.pad(x(3), (1, 1), mode='replicate')", NotImplementedError),
    ("F.pad(x(1, 2, 3), (4, 4), mode='circular')", RuntimeError),
    ("F.pad(x(1, 2, 3), (1, 1), mode='foo')", NotImplementedError),
    ("F.pad(x(1, 2, 3), (1, 1), mode='reflect', value=2.0)", RuntimeError),
    ("F.pad(x(1, 2, 3), (-4, 1))", RuntimeError),
    ("F.pad(x(2, 0), (1, 1), mode='reflect')", RuntimeError),
    ("nn.CircularPad2d(1)(x(3, 3))", ValueError),
    ("F.interpolate(x(1, 2, 3), size=2, scale_factor=2)", ValueError),
    ("F.interpolate(x(1, 2, 3))", ValueError),
    ("F.interpolate(x(1, 2, 3), size=(2, 2))", ValueError),
    ("F.interpolate(x(1, 2, 3), scale_factor=(2, 2))", ValueError),
    ("F.interpolate(x(1, 2, 3), size=2, align_corners=True)", ValueError),
    ("F.interpolate(x(1, 2, 3), size=2, mode='bilinear')", NotImplementedError),
    ("F.interpolate(x(1, 2, 3, 3), size=2, mode='trilinear')", NotImplementedError),
    ("F.interpolate(x(1, 2, 3), size=2, mode='foo')", NotImplementedError),
    ("F.interpolate(x(3), size=2)", NotImplementedError),
    ("F.interpolate(x(1, 2, 3), size=2, recompute_scale_factor=True)", ValueError),
    ("F.interpolate(x(1, 2, 3), size=2, mode='linear', antialias=True)", ValueError),
    ("F.pixel_shuffle(x(1, 3, 2, 2), 2)", RuntimeError),
    ("F.pixel_shuffle(x(3, 2), 2)", RuntimeError),
    ("F.pixel_shuffle(x(1, 4, 2, 2), 0)", RuntimeError),
    ("F.pixel_unshuffle(x(1, 3, 3, 2), 2)", RuntimeError),
    ("F.pixel_unshuffle(x(1, 4, 2, 3), 2)", RuntimeError),
    ("F.channel_shuffle(x(1, 3, 2, 2), 2)", RuntimeError),
    ("F.channel_shuffle(x(2, 4), 2)", RuntimeError),
    ("F.channel_shuffle(x(2, 4, 2), 0)", RuntimeError),
    ("F.affine_grid(x(1, 3, 3), (1, 1, 4, 4), align_corners=False)", ValueError),
    ("F.affine_grid(x(1, 2, 3), (1, 1, 4), align_corners=False)", NotImplementedError),
    ("F.affine_grid(x(1, 2, 3), (1, 1, 0, 4), align_corners=False)", ValueError),
    ("F.grid_sample(x(1, 1, 4, 4), x(1, 3, 3, 2), mode='foo')", ValueError),
    ("F.grid_sample(x(1, 1, 4, 4), x(1, 3, 3, 2), padding_mode='foo')", ValueError),
    ("F.grid_sample(x(1, 1, 4, 4), x(1, 3, 3, 3), align_corners=False)", RuntimeError),
    ("F.grid_sample(x(2, 1, 4, 4), x(1, 3, 3, 2), align_corners=False)", RuntimeError),
    ("F.grid_sample(x(1, 1, 2, 2), x(1, 2, 2, 2, 2), align_corners=False)", RuntimeError),
    (
        "F.grid_sample(x(1, 1, 2, 2, 2), x(1, 1, 1, 1, 3), mode='bicubic', align_corners=False)",
        RuntimeError,
    ),
]


@pytest.mark.parametrize("expr,kind", ERRORS)
def test_padding_sampling_errors_match_torch(torch, expr, kind):
    messages = []
    for lib in (torch, tocha):
        env = {
            "F": lib.nn.functional,
            "nn": lib.nn,
            "x": lambda *s, lib=lib: lib.from_numpy(np.zeros(s, dtype="float32")),
        }
        with pytest.raises(kind) as info:
            eval(expr, env)
        messages.append(str(info.value).replace("torch.Size", "tocha.Size"))
    assert messages[1] == messages[0]
