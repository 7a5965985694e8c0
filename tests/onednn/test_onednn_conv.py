"""tocha-onednn's convolution kernels against tocha's built-in ones.

Each provided kernel is called beside the op's generic kernel on the same NumPy arrays, over
many shapes and arguments (1-3 spatial dims, stride, asymmetric padding, dilation, groups,
depthwise, bias), and must agree within float32 tolerances without declining. The calls it
must decline (float64, empty tensors, shapes oneDNN refuses) reach the built-in kernel. End
to end, conv layers' gradients through the provider match the built-in float64 ones.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
pytest.importorskip("tocha.nn")
import tocha  # noqa: E402
import tocha.nn.functional as F  # noqa: E402
from tests.onednn.spies import provided  # noqa: E402
from tocha_onednn import _conv  # noqa: E402

RNG = np.random.default_rng(0)


def kernels(op_name, factory):
    return provided(_conv, op_name, factory)


def out_size(size, k, stride, pads, dilation):
    return tuple(
        (n + lo + hi - d * (kk - 1) - 1) // s + 1
        for n, kk, s, (lo, hi), d in zip(size, k, stride, pads, dilation)
    )


# (label, batch, in channels, out channels, size, kernel, stride, pads, dilation, groups)
CASES = [
    ("2d-basic", 4, 3, 16, (8, 8), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    ("2d-nopad", 2, 5, 7, (9, 7), (3, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
    ("2d-stride2-odd", 3, 4, 6, (11, 10), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 1),
    ("2d-asym-pad", 2, 3, 5, (7, 8), (3, 3), (1, 2), ((0, 2), (1, 0)), (1, 1), 1),
    ("2d-dilated", 2, 3, 4, (12, 12), (3, 3), (1, 1), ((2, 2), (2, 2)), (2, 2), 1),
    ("2d-groups", 2, 8, 12, (6, 6), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 4),
    ("2d-depthwise", 2, 8, 8, (10, 10), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 8),
    ("2d-1x1", 5, 16, 32, (4, 4), (1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
    ("2d-resnet-stem", 2, 3, 8, (32, 32), (7, 7), (2, 2), ((3, 3), (3, 3)), (1, 1), 1),
    ("1d", 3, 4, 6, (20,), (5,), (2,), ((2, 2),), (1,), 1),
    ("1d-groups-dilated", 2, 6, 4, (17,), (3,), (1,), ((1, 3),), (3,), 2),
    ("3d", 2, 3, 4, (5, 6, 7), (3, 3, 3), (1, 2, 1), ((1, 1), (0, 0), (1, 1)), (1, 1, 1), 1),
]
IDS = [case[0] for case in CASES]


def operands(case, bias):
    _, n, c, o, size, k, stride, pads, dilation, groups = case
    x = RNG.standard_normal((n, c, *size), dtype=np.float32)
    w = RNG.standard_normal((o, c // groups, *k), dtype=np.float32)
    b = (RNG.standard_normal(o, dtype=np.float32),) if bias else ()
    osize = out_size(size, k, stride, pads, dilation)
    return x, w, b, osize


def close(a, b):
    scale = max(1.0, float(np.abs(b).max()))
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5 * scale)


@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_matches_built_in(case, bias):
    x, w, b, osize = operands(case, bias)
    provided, generic, spy = kernels("convolution", "convolution")
    stride, pads, dilation, groups = case[6:]
    args = (*b, stride, pads, dilation, groups, osize, (True, True))
    out = provided(x, w, *args)
    assert spy.calls == 0
    assert out.dtype == np.float32 and out.flags.c_contiguous
    close(out, generic(x, w, *args))


@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_transpose_matches_built_in(case, bias):
    x, w, b, osize = operands(case, bias)
    stride, pads, dilation, groups = case[6:]
    g = RNG.standard_normal((x.shape[0], w.shape[0], *osize), dtype=np.float32)
    # conv_transpose's weight is (in, out / groups, *k): a convolution's (out, in / groups)
    bt = (RNG.standard_normal(w.shape[1] * groups, dtype=np.float32),) if bias else ()
    provided, generic, spy = kernels("convolution_transpose", "convolution_transpose")
    args = (*bt, stride, pads, dilation, groups, x.shape[2:], (True, True))
    out = provided(g, w, *args)
    assert spy.calls == 0
    assert out.shape == x.shape
    close(out, generic(g, w, *args))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_weight_gradient_matches_built_in(case):
    x, w, _, osize = operands(case, False)
    stride, pads, dilation, groups = case[6:]
    g = RNG.standard_normal((x.shape[0], w.shape[0], *osize), dtype=np.float32)
    provided, generic, spy = kernels("convolution_backward_weight", "convolution_backward_weight")
    args = (stride, pads, dilation, groups, w.shape[2:])
    out = provided(x, g, *args)
    assert spy.calls == 0
    assert out.shape == w.shape
    close(out, generic(x, g, *args))


def test_strided_views_are_taken():
    x, w, _, osize = operands(CASES[0], False)
    provided, generic, spy = kernels("convolution", "convolution")
    xt = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    args = (CASES[0][6], CASES[0][7], CASES[0][8], 1, osize, (True, True))
    close(provided(xt, w[:, :, ::-1, :], *args), generic(xt, w[:, :, ::-1, :], *args))
    assert spy.calls == 0


def test_float64_and_empty_inputs_are_declined():
    x, w, _, osize = operands(CASES[0], False)
    provided, generic, spy = kernels("convolution", "convolution")
    args = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1, osize, (True, True))
    out = provided(x.astype(np.float64), w.astype(np.float64), *args)
    assert spy.calls == 1 and out.dtype == np.float64
    empty = np.zeros((0, *x.shape[1:]), np.float32)
    assert provided(empty, w, *args).shape == (0, w.shape[0], *osize)
    assert spy.calls == 2


def test_shapes_onednn_refuses_are_declined():
    # a transposed convolution whose output padding reaches past the stride (allowed by the
    # dilation) has no convolution of the same geometry: oneDNN refuses it.
    g = RNG.standard_normal((1, 2, 4), dtype=np.float32)
    w = RNG.standard_normal((2, 3, 3), dtype=np.float32)
    provided, generic, spy = kernels("convolution_transpose", "convolution_transpose")
    args = ((1,), ((0, 0),), (2,), 1, (9,), (True, True))
    close(provided(g, w, *args), generic(g, w, *args))
    assert spy.calls == 1


# -- end to end: the public functions with the provider on and off ---------------------------
def _grads(fn, tensors):
    out = fn(*tensors)
    out.backward(tocha.ones_like(out))
    return [out.detach().numpy().copy()] + [t.grad.numpy().copy() for t in tensors]


LAYERS = [
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), (2, 3, 15), (4, 3, 3), 4),
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1), (2, 3, 9, 9), (5, 3, 3, 3), 5),
    (
        "conv2d-groups",
        lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=(0, 1), groups=2),
        (2, 4, 9, 8),
        (6, 2, 3, 3),
        6,
    ),
    ("conv3d", lambda x, w, b: F.conv3d(x, w, b, padding=1), (1, 2, 4, 5, 5), (3, 2, 3, 3, 3), 3),
    (
        "conv_transpose2d",
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        (2, 4, 5, 5),
        (4, 3, 3, 3),
        3,
    ),
]


@pytest.mark.parametrize(
    "fn,xshape,wshape,out_channels", [c[1:] for c in LAYERS], ids=[c[0] for c in LAYERS]
)
def test_gradients_through_the_provider_match_built_in_float64(fn, xshape, wshape, out_channels):
    x = RNG.standard_normal(xshape)
    w = RNG.standard_normal(wshape)
    b = RNG.standard_normal(out_channels)
    ours = _grads(fn, [tocha.tensor(a, dtype=tocha.float32, requires_grad=True) for a in (x, w, b)])
    tocha.backends.set_kernel_provider_enabled("onednn", False)
    try:
        ref = _grads(fn, [tocha.tensor(a, requires_grad=True) for a in (x, w, b)])
    finally:
        tocha.backends.set_kernel_provider_enabled("onednn", True)
    assert tocha.backends.provided_kernels()["convolution"] == "onednn"
    for got, want in zip(ours, ref):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max()))


def test_gradcheck_through_the_provider_in_float32():
    x = tocha.randn(1, 2, 5, 5, requires_grad=True)
    w = tocha.randn(3, 2, 3, 3, requires_grad=True)
    assert tocha.autograd.gradcheck(
        lambda x, w: F.conv2d(x, w, padding=1, stride=2),
        (x, w),
        eps=1e-2,
        atol=1e-2,
        rtol=1e-2,
        fast_mode=True,
    )


def test_thread_count_follows_set_num_threads():
    before = tocha.get_num_threads()
    x, w, _, osize = operands(CASES[0], False)
    provided, generic, _ = kernels("convolution", "convolution")
    args = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1, osize, (True, True))
    try:
        for n in (1, 2):
            tocha.set_num_threads(n)
            close(provided(x, w, *args), generic(x, w, *args))
            assert any(key[-1] == n for key in _conv._cache.plans)
    finally:
        tocha.set_num_threads(before)


def test_plans_are_cached():
    x, w, _, osize = operands(CASES[1], False)
    provided, _, _ = kernels("convolution", "convolution")
    args = ((1, 1), ((0, 0), (0, 0)), (1, 1), 1, osize, (True, True))
    provided(x, w, *args)
    count = len(_conv._cache.plans)
    provided(x + 1, w, *args)
    assert len(_conv._cache.plans) == count
    assert math.isfinite(float(provided(x, w, *args).sum()))


def test_concurrent_calls_from_threads_agree():
    from concurrent.futures import ThreadPoolExecutor

    x, w, _, osize = operands(CASES[2], False)
    provided, generic, spy = kernels("convolution", "convolution")
    stride, pads, dilation, groups = CASES[2][6:]
    args = (stride, pads, dilation, groups, osize, (True, True))
    want = generic(x, w, *args)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: provided(x, w, *args), range(16)))
    for got in results:
        close(got, want)
    assert spy.calls == 0


def test_backends_mkldnn_switches_the_provider():
    mkldnn = tocha.backends.mkldnn
    assert mkldnn.is_available() and mkldnn.enabled is True
    with mkldnn.flags(enabled=False):
        assert mkldnn.enabled is False
        assert "convolution" not in tocha.backends.provided_kernels()
    assert mkldnn.enabled is True
    mkldnn.enabled = False
    try:
        assert tocha.backends.kernel_providers()["onednn"]["enabled"] is False
    finally:
        mkldnn.enabled = True
    assert tocha.backends.provided_kernels()["convolution"] == "onednn"


def test_the_plan_cache_is_bounded():
    from tocha_onednn._plan import Cache

    cache = Cache(limit=3)
    for key in range(5):
        assert cache.get(key, lambda key=key: f"plan {key}") == f"plan {key}"
    assert list(cache.plans) == [2, 3, 4]
