"""tocha-onednn's layer norm, group norm and batch norm kernels against tocha's built-in ones,
forward and backward, with and without affine parameters; the calls they decline; gradients
end to end through the provider against the built-in float64 ones."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
pytest.importorskip("tocha.nn")
import tocha  # noqa: E402
import tocha.nn.functional as F  # noqa: E402
from tests.onednn.spies import provided  # noqa: E402
from tocha_onednn import _norm  # noqa: E402


@pytest.fixture(autouse=True)
def every_size(monkeypatch):
    """The kernels serve small inputs too (they leave them to NumPy by default), and batch
    norm at one thread (left to NumPy by default)."""
    monkeypatch.setattr(_norm, "SMALL", 0)
    monkeypatch.setattr(_norm, "GROUP_AFFINE_SMALL", 0)
    monkeypatch.setattr(_norm, "BATCH_MIN_THREADS", 1)


RNG = np.random.default_rng(1)


def pair(op_name, factory):
    return provided(_norm, op_name, factory)


def close(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(b).max())))


def f32(*shape):
    return RNG.standard_normal(shape, dtype=np.float32)


LAYER = [
    ("rows", (64, 32), 1),
    ("seq", (4, 10, 24), 1),
    ("two-dims", (3, 5, 6, 7), 2),
    ("one-row", (1, 9), 1),
]


@pytest.mark.parametrize("affine", ["wb", ""], ids=["affine", "plain"])
@pytest.mark.parametrize("shape,nd", [c[1:] for c in LAYER], ids=[c[0] for c in LAYER])
def test_layer_norm_matches_built_in(shape, nd, affine):
    x = f32(*shape)
    params = [f32(*shape[len(shape) - nd :]) for _ in affine]
    forward, generic, spy = pair("native_layer_norm", "layer_norm")
    out = forward(x, *params, nd, 1e-5, affine)
    ref = generic(x, *params, nd, 1e-5, affine)
    close(out, ref)
    g = f32(*shape)
    backward, generic_b, spy_b = pair("native_layer_norm_backward", "layer_norm_backward")
    args = (g, x, ref[1], ref[2], *params[:1], nd, affine)
    close(backward(*args), generic_b(*args))
    assert spy.calls == spy_b.calls == 0


BATCH = [("2d", (16, 5)), ("conv", (4, 3, 6, 7)), ("1d", (3, 4, 11)), ("3d", (2, 3, 4, 3, 5))]


@pytest.mark.parametrize("affine", ["wb", ""], ids=["affine", "plain"])
@pytest.mark.parametrize("shape", [c[1] for c in BATCH], ids=[c[0] for c in BATCH])
def test_batch_norm_matches_built_in(shape, affine):
    x = f32(*shape) * 3 + 1
    params = [f32(shape[1]) for _ in affine]
    forward, generic, spy = pair("native_batch_norm", "batch_norm")
    out = forward(x, *params, 1e-5, affine)
    ref = generic(x, *params, 1e-5, affine)
    close(out, ref)
    g = f32(*shape)
    backward, generic_b, spy_b = pair("native_batch_norm_backward", "batch_norm_backward")
    args = (g, x, ref[1], ref[2], *params[:1], affine)
    close(backward(*args), generic_b(*args))
    assert spy.calls == spy_b.calls == 0


GROUP = [
    ("conv", (4, 6, 5, 7), 3),
    ("one-group", (3, 4, 9), 1),
    ("per-channel", (2, 8, 3, 3), 8),
    ("no-spatial", (5, 6), 2),
    ("3d", (2, 4, 3, 2, 5), 2),
]


@pytest.mark.parametrize("affine", ["wb", "w", "b", ""])
@pytest.mark.parametrize("shape,groups", [c[1:] for c in GROUP], ids=[c[0] for c in GROUP])
def test_group_norm_matches_built_in(shape, groups, affine):
    x = f32(*shape) * 2 + 3
    params = [f32(shape[1]) for _ in affine]
    forward, generic, spy = pair("native_group_norm", "group_norm")
    out = forward(x, *params, groups, 1e-5, affine)
    ref = generic(x, *params, groups, 1e-5, affine)
    close(out, ref)
    g = f32(*shape)
    backward, generic_b, spy_b = pair("native_group_norm_backward", "group_norm_backward")
    weight = params[:1] if "w" in affine else []
    args = (g, x, ref[1], ref[2], *weight, groups, affine)
    close(backward(*args), generic_b(*args))
    assert spy.calls == spy_b.calls == 0


GROUP_F64 = [
    ("conv", (4, 6, 5, 7), 3),
    ("bench-like", (4, 16, 8, 8), 4),
    ("many-groups", (2, 64, 4, 4), 32),
    ("per-channel", (3, 8, 3, 3), 8),
    ("one-group", (2, 5, 40), 1),
    ("no-spatial", (6, 8), 4),
    ("one-sample", (1, 12, 6, 6), 3),
]


def _group_norm_pair(x, params, g, groups, affine):
    """Forward then backward of group norm: ``(y, mean, rstd, gx, [gw], [gb])``, by the
    provided kernels and the built-in ones, and the spies of both."""
    forward, generic, spy = pair("native_group_norm", "group_norm")
    backward, generic_b, spy_b = pair("native_group_norm_backward", "group_norm_backward")
    weight = params[:1] if "w" in affine else []
    results = []
    for fwd, bwd, cast in ((forward, backward, np.float32), (generic, generic_b, np.float64)):
        y, mean, rstd = fwd(x.astype(cast), *[p.astype(cast) for p in params], groups, 1e-5, affine)
        args = (g.astype(cast), x.astype(cast), mean, rstd, *[p.astype(cast) for p in weight])
        results.append((y, mean, rstd, *bwd(*args, groups, affine)))
    return results, (spy, spy_b)


@pytest.mark.parametrize("affine", ["wb", "w", "b", ""])
@pytest.mark.parametrize("shape,groups", [c[1:] for c in GROUP_F64], ids=[c[0] for c in GROUP_F64])
def test_group_norm_matches_float64(shape, groups, affine):
    """Outputs, statistics and all gradients against the built-in kernel in float64, on
    data whose mean is far from 0."""
    x = f32(*shape) * 2 + 3
    params = [f32(shape[1]) for _ in affine]
    (ours, ref), spies = _group_norm_pair(x, params, f32(*shape), groups, affine)
    assert all(spy.calls == 0 for spy in spies)
    assert len(ours) == len(ref)
    for got, want in zip(ours, ref):
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(
            got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max()))
        )


@pytest.mark.parametrize("zeros", [slice(None, None, 3), slice(None)], ids=["some", "all"])
def test_group_norm_backward_with_zero_weights(monkeypatch, zeros):
    """A weight of 0 takes the two-pass input gradient (p = b / a is infinite), silently,
    and matches float64; nonzero weights take the one-pass one."""
    shape, groups = (3, 8, 6, 5), 4
    x, g, w, b = f32(*shape), f32(*shape), f32(shape[1]), f32(shape[1])
    buffers = []
    scratch = _norm._buffer
    monkeypatch.setattr(_norm, "_buffer", lambda s: buffers.append(s) or scratch(s))
    _group_norm_pair(x, [w, b], g, groups, "wb")
    assert buffers == []
    w[zeros] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (ours, ref), spies = _group_norm_pair(x, [w, b], g, groups, "wb")
    assert buffers == [shape] and all(spy.calls == 0 for spy in spies)
    for got, want in zip(ours, ref):
        np.testing.assert_allclose(
            got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max()))
        )


@pytest.mark.parametrize("rows", [(512, 1024), (48, 1), (6, 35)])
def test_group_norm_chains_run_jit_kernels(rows):
    """The binary primitives of group norm run oneDNN's jit kernels, not its reference one
    (which takes milliseconds on a (512, 1024) array)."""
    for ops in (_norm._affine_ops("wb"), _norm._FUSED, _norm._LINEAR, _norm._SCALE_ADD):
        assert _norm._chain(rows, ops, 1).impl.startswith("jit")


def test_small_affine_group_norm_runs_the_built_in_kernel(monkeypatch):
    """Under GROUP_AFFINE_SMALL elements an affine group norm is the built-in kernel's, a
    plain one still oneDNN's."""
    monkeypatch.setattr(_norm, "GROUP_AFFINE_SMALL", 4096)
    small, large, w = f32(2, 8, 8, 16), f32(2, 8, 16, 16), f32(8)
    _, (spy, spy_b) = _group_norm_pair(small, [w], small, 4, "w")
    assert spy.calls == spy_b.calls == 1
    _, (spy, spy_b) = _group_norm_pair(large, [w], large, 4, "w")
    _, (plain, plain_b) = _group_norm_pair(small, [], small, 4, "")
    assert spy.calls == spy_b.calls == plain.calls == plain_b.calls == 0


def test_group_norm_declines_what_does_not_fit():
    forward, _, spy = pair("native_group_norm", "group_norm")
    backward, _, spy_b = pair("native_group_norm_backward", "group_norm_backward")
    x, w = f32(2, 4, 3), f32(4)
    y, mean, rstd = forward(x.astype(np.float64), 2, 1e-5, "")
    forward(x, w.astype(np.float64), 2, 1e-5, "w")
    forward(np.empty((0, 4, 3), np.float32), 2, 1e-5, "")
    assert spy.calls == 3
    backward(x.astype(np.float64), x.astype(np.float64), mean, rstd, 2, "")
    assert spy_b.calls == 1


def test_group_norm_declines_strided_inputs():
    forward, generic, spy = pair("native_group_norm", "group_norm")
    backward, generic_b, spy_b = pair("native_group_norm_backward", "group_norm_backward")
    x = f32(3, 4, 6, 5).transpose(0, 1, 3, 2)
    y, mean, rstd = forward(x, 2, 1e-5, "")
    close((y, mean, rstd), generic(x, 2, 1e-5, ""))
    backward(x, np.ascontiguousarray(x), mean, rstd, 2, "")
    assert spy.calls == spy_b.calls == 1


def test_declined_calls_reach_the_built_in_kernels():
    forward, _, spy = pair("native_layer_norm", "layer_norm")
    x = f32(4, 6)
    forward(x.astype(np.float64), 1, 1e-5, "")
    forward(x, f32(6), 1, 1e-5, "w")
    assert spy.calls == 2
    bn, _, bn_spy = pair("native_batch_norm", "batch_norm")
    bn(x.astype(np.float64), 1e-5, "")
    bn(f32(2, 3, 2, 2, 2, 2), 1e-5, "")
    assert bn_spy.calls == 2


def _grads(fn, arrays, dtype):
    tensors = [tocha.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    out = fn(*tensors)
    out.backward(tocha.tensor(np.cos(np.arange(out.numel())).reshape(out.shape), dtype=dtype))
    return [out.detach().numpy()] + [t.grad.numpy() for t in tensors]


MODELS = [
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (8,), w, b), (5, 3, 8), 8),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (6, 4, 5), 4),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), (3, 4, 5, 2), 4),
]


@pytest.mark.parametrize("fn,shape,c", [m[1:] for m in MODELS], ids=[m[0] for m in MODELS])
def test_gradients_through_the_provider_match_built_in_float64(fn, shape, c):
    arrays = [RNG.standard_normal(shape), RNG.standard_normal(c), RNG.standard_normal(c)]
    ours = _grads(fn, arrays, tocha.float32)
    provided = tocha.backends.provided_kernels()
    assert provided["native_layer_norm"] == provided["native_group_norm"] == "onednn"
    ref = _grads(fn, arrays, tocha.float64)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(b).max()))


def test_batch_norm_at_one_thread_runs_the_builtin_kernel(monkeypatch):
    monkeypatch.setattr(_norm, "BATCH_MIN_THREADS", 2)
    x, w, b = f32(4, 3, 5, 5), f32(3), f32(3)
    forward, generic, spy = pair("native_batch_norm", "batch_norm")
    backward, generic_bwd, spy_bwd = pair("native_batch_norm_backward", "batch_norm_backward")
    previous = tocha.get_num_threads()
    tocha.set_num_threads(1)
    try:
        y, mean, invstd = forward(x, w, b, 1e-5, "wb")
        backward(f32(4, 3, 5, 5), x, mean, invstd, w, "wb")
        assert spy.calls == spy_bwd.calls == 1
        tocha.set_num_threads(2)
        forward(x, w, b, 1e-5, "wb")
        assert spy.calls == 1
    finally:
        tocha.set_num_threads(previous)
