"""interpolate's antialiased modes (bilinear, bicubic, lanczos), its uint8 kernels (fixed-point
weights, rounded after each dim, as PyTorch's), and the dtypes PyTorch's resampling and
adaptive average pooling refuse; against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn.functional as F

RESIZES = [
    ((16, 20), {"size": (5, 7)}),
    ((16, 20), {"size": (33, 41)}),
    ((9, 13), {"scale_factor": 0.37}),
    ((9, 13), {"size": (4, 30), "align_corners": True}),
    ((32, 32), {"size": (8, 8), "align_corners": True}),
    ((7, 7), {"scale_factor": 2.5}),
]


def _image(shape, dtype: str) -> np.ndarray:
    values = np.random.default_rng(sum(shape)).standard_normal((2, 3, *shape)) * 60 + 128
    return values.clip(0, 255).astype(np.uint8) if dtype == "uint8" else values.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "uint8"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("shape, kwargs", RESIZES)
def test_antialiased_resize_matches_torch(torch, mode, dtype, shape, kwargs):
    if mode == "lanczos" and "align_corners" in kwargs:
        pytest.skip("lanczos takes no align_corners")
    x = _image(shape, dtype)
    got = F.interpolate(tocha.from_numpy(x), mode=mode, antialias=True, **kwargs)
    want = torch.nn.functional.interpolate(torch.from_numpy(x), mode=mode, antialias=True, **kwargs)
    assert got.dtype == getattr(tocha, dtype)
    if dtype == "uint8":
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    else:  # values of a few hundred: float32's rounding of sums of them
        atol = 1e-3 if dtype == "float32" else 1e-9
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=atol)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(10, 13), (40, 33)])
def test_uint8_bilinear_and_bicubic_round_as_torch(torch, mode, align_corners, size):
    x = _image((21, 17), "uint8")
    got = F.interpolate(tocha.from_numpy(x), size=size, mode=mode, align_corners=align_corners)
    want = torch.nn.functional.interpolate(
        torch.from_numpy(x), size=size, mode=mode, align_corners=align_corners
    )
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_antialiased_resize_is_differentiable():
    x = tocha.randn(1, 2, 9, 11, dtype=tocha.float64, requires_grad=True)
    for mode in ("bilinear", "bicubic", "lanczos"):
        assert tocha.autograd.gradcheck(
            lambda t, mode=mode: F.interpolate(t, size=(4, 5), mode=mode, antialias=True), (x,)
        )


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as exc:  # noqa: BLE001 - the type and message are what is compared
        return type(exc).__name__, str(exc)
    return None


REFUSED = [
    ("nearest", (1, 2, 4), "int64"),
    ("nearest", (2, 3, 5, 5), "int64"),
    ("nearest", (1, 2, 4, 4, 4), "bool"),
    ("linear", (1, 2, 4), "uint8"),
    ("bilinear", (1, 2, 4, 4), "int32"),
    ("bicubic", (1, 2, 4, 4), "complex64"),
    ("trilinear", (1, 1, 2, 2, 2), "uint8"),
    ("area", (1, 2, 4, 4), "uint8"),
    ("area", (1, 2, 4, 4, 4), "int64"),
]


@pytest.mark.parametrize("mode, shape, dtype", REFUSED)
def test_resampling_refuses_the_dtypes_torch_refuses(torch, mode, shape, dtype):
    def run(lib):
        x = lib.ones(shape, dtype=getattr(lib, dtype))
        lib.nn.functional.interpolate(x, scale_factor=2, mode=mode)

    want = _error(torch, run)
    assert want is not None and _error(tocha, run) == want


@pytest.mark.parametrize("dtype", ["int64", "float16", "bfloat16"])
def test_antialias_refuses_the_dtypes_torch_refuses(torch, dtype):
    def run(lib):
        x = lib.ones(1, 2, 4, 4, dtype=getattr(lib, dtype))
        lib.nn.functional.interpolate(x, size=(2, 2), mode="bilinear", antialias=True)

    want = _error(torch, run)
    assert want is not None and _error(tocha, run) == want


def test_lanczos_needs_antialias(torch):
    def run(lib):
        lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4), size=(2, 2), mode="lanczos")

    assert (
        _error(tocha, run)
        == _error(torch, run)
        == (
            "ValueError",
            "Lanczos mode requires antialias=True",
        )
    )


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("output_size", [1, 2])
@pytest.mark.parametrize("dtype", ["int64", "complex64"])
def test_adaptive_avg_pool_dtype_errors(torch, nd, output_size, dtype):
    def run(lib):
        x = lib.ones((1, 2) + (4,) * nd, dtype=getattr(lib, dtype))
        return getattr(lib.nn.functional, f"adaptive_avg_pool{nd}d")(x, output_size)

    assert _error(tocha, run) == _error(torch, run)
