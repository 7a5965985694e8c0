"""tocha-onednn's pooling kernels (max with indices, average forward and backward; 1 to 3
spatial dims, stride, padding, dilation, ceil mode, padding counted or not) against tocha's
built-in kernels, the calls they decline, and gradients end to end against the built-in
float64 ones."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
pytest.importorskip("tocha.nn")
import tocha  # noqa: E402
import tocha.nn.functional as F  # noqa: E402
from tests.onednn.spies import provided  # noqa: E402
from tocha_onednn import _pool  # noqa: E402

RNG = np.random.default_rng(5)


def pair(name):
    return provided(_pool, name, name)


def out_size(n, k, s, p, d, ceil):
    span = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = span // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def geometry(shape, k, s, p, d, ceil):
    nd = len(shape) - 2
    k, s, p, d = (v if isinstance(v, tuple) else (v,) * nd for v in (k, s, p, d))
    out = tuple(out_size(*a, ceil) for a in zip(shape[2:], k, s, p, d))
    return k, s, tuple((q, q) for q in p), d, out


CASES = [
    ((2, 3, 9), 3, 2, 1, 1, False),
    ((2, 3, 10), 2, 1, 0, 2, True),
    ((2, 3, 10, 11), 3, 2, 1, 1, True),
    ((2, 16, 8, 8), 2, 2, 0, 1, False),
    ((1, 5, 7, 9), (3, 2), (2, 1), (1, 0), (2, 1), True),
    ((3, 8, 12, 12), 3, 1, 1, 1, False),
    ((2, 4, 5, 6, 7), 2, 2, 1, 1, True),
    ((1, 2, 6, 6, 6), 3, 2, 1, 1, False),
]


@pytest.mark.parametrize("shape,k,s,p,d,ceil", CASES)
@pytest.mark.parametrize("values", ["normal", "ties"])
def test_max_pool_matches_builtin(shape, k, s, p, d, ceil, values):
    ksize, stride, pads, dilation, out = geometry(shape, k, s, p, d, ceil)
    if values == "ties":  # equal maxima in a window: the first one's index, as PyTorch
        x = RNG.integers(0, 3, shape).astype(np.float32)
    else:
        x = RNG.standard_normal(shape, dtype=np.float32)
    provided, generic, spy = pair("max_pool")
    got, want = (
        provided(x, ksize, stride, pads, dilation, out),
        generic(x, ksize, stride, pads, dilation, out),
    )
    assert spy.calls == 0
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1].dtype == np.int64
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("shape,k,s,p,d,ceil", [c for c in CASES if c[4] == 1])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool_matches_builtin(shape, k, s, p, d, ceil, count_include_pad):
    ksize, stride, pads, _, out = geometry(shape, k, s, p, d, ceil)
    x = RNG.standard_normal(shape, dtype=np.float32)
    forward, generic, spy = pair("avg_pool")
    backward, generic_bwd, spy_bwd = pair("avg_pool_backward")
    args = (ksize, stride, pads, out, count_include_pad, None)
    got = forward(x, *args)
    np.testing.assert_allclose(got, generic(x, *args), rtol=1e-5, atol=1e-6)
    g = RNG.standard_normal(got.shape, dtype=np.float32)
    bargs = (shape[2:], ksize, stride, pads, count_include_pad, None)
    np.testing.assert_allclose(backward(g, *bargs), generic_bwd(g, *bargs), rtol=1e-5, atol=1e-6)
    # padding counted in a ceil-mode window that reaches past it: PyTorch's divisor, built-in
    declined = count_include_pad and any(
        (o - 1) * st + kk > n + 2 * lo
        for n, kk, st, (lo, _), o in zip(shape[2:], ksize, stride, pads, out)
    )
    assert spy.calls == spy_bwd.calls == int(declined)


def test_declined_calls_run_the_builtin_kernel():
    ksize, stride, pads, dilation, out = geometry((2, 3, 8, 8), 2, 2, 0, 1, False)
    x = RNG.standard_normal((2, 3, 8, 8), dtype=np.float32)
    provided, generic, spy = pair("max_pool")
    nan = np.where(x > 1, np.nan, x).astype(np.float32)
    for bad in (x.astype(np.float64), nan, np.full_like(x, -np.inf)):
        got, want = (
            provided(bad, ksize, stride, pads, dilation, out),
            generic(bad, ksize, stride, pads, dilation, out),
        )
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert spy.calls == 3
    forward, generic, spy = pair("avg_pool")
    got = forward(x, ksize, stride, pads, out, True, 3)  # a divisor override
    np.testing.assert_allclose(got, generic(x, ksize, stride, pads, out, True, 3))
    assert spy.calls == 1


def _grads(fn, x, provider: bool, dtype):
    tocha.backends.set_kernel_provider_enabled("onednn", provider)
    try:
        xt = tocha.tensor(x, dtype=dtype, requires_grad=True)
        out = fn(xt)
        (out * tocha.arange(out.numel(), dtype=dtype).reshape(out.shape).cos()).sum().backward()
        return out.detach().double().numpy(), xt.grad.double().numpy()
    finally:
        tocha.backends.set_kernel_provider_enabled("onednn", True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
        lambda x: F.max_pool1d(x.flatten(2), 4, 3, 2, dilation=2),
        lambda x: F.max_pool3d(x.unsqueeze(2).expand(-1, -1, 3, -1, -1), 2, 1),
        lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
        lambda x: F.avg_pool2d(x, 2, ceil_mode=True),
        lambda x: F.avg_pool1d(x.flatten(2), 5, 3, 2),
    ],
)
def test_gradients_through_provider_match_builtin_float64(fn):
    x = RNG.standard_normal((2, 4, 9, 9))
    got, want = _grads(fn, x, True, tocha.float32), _grads(fn, x, False, tocha.float64)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
