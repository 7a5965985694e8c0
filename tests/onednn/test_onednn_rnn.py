"""tocha-onednn's recurrent kernels (RNN_TANH, RNN_RELU, LSTM, GRU; one or two directions;
with and without bias) against tocha's built-in ``rnn_layer`` and ``rnn_layer_backward``, the
calls they decline, and nn.RNN/LSTM/GRU end to end (multi-layer, bidirectional, batch_first,
initial states) against the built-in float64 results."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tocha_onednn")
pytest.importorskip("tocha.nn")
import tocha  # noqa: E402
import tocha.nn as nn  # noqa: E402
from tests.onednn.spies import provided  # noqa: E402
from tocha.library import REGISTRY  # noqa: E402
from tocha_onednn import _rnn  # noqa: E402

RNG = np.random.default_rng(3)
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


@pytest.fixture(autouse=True)
def every_size(monkeypatch):
    """The kernels serve every width (GRU and vanilla RNN training leave wide layers to the
    built-in kernels by default)."""
    monkeypatch.setattr(_rnn, "WIDE", 1 << 30)


def kernels(name, factory):
    return provided(_rnn, name, factory)


def f32(*shape, scale=0.5):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def layer_inputs(mode, t, b, i, h, d, bias):
    lstm = mode == "LSTM"
    x = f32(t * b, i, scale=1.0)
    states = [f32(d, b, h) for _ in range(1 + lstm)]
    weights = []
    for _ in range(d):
        weights += [f32(GATES[mode] * h, i), f32(GATES[mode] * h, h)]
        if bias:
            weights += [f32(GATES[mode] * h), f32(GATES[mode] * h)]
    return [x, *states, *weights], (mode, (b,) * t, bias, d, False)


def close(got, want, tol=2e-5):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max())))


CASES = [
    (mode, t, b, i, h, d, bias)
    for mode in GATES
    for (t, b, i, h) in [(5, 3, 4, 6), (12, 1, 16, 16)]
    for d in (1, 2)
    for bias in (True, False)
]


@pytest.mark.parametrize("mode,t,b,i,h,d,bias", CASES)
def test_layer_forward_and_backward_match_builtin(mode, t, b, i, h, d, bias):
    arrays, params = layer_inputs(mode, t, b, i, h, d, bias)
    forward, generic, spy = kernels("rnn_layer", "rnn_layer")
    backward, generic_bwd, spy_bwd = kernels("rnn_layer_backward", "rnn_layer_backward")
    got, want = forward(*arrays, *params), generic(*arrays, *params)
    assert spy.calls == 0
    close(got[:-1], want[:-1])
    lstm = mode == "LSTM"
    grads = [f32(*got[0].shape, scale=1.0)] + [f32(*s.shape) for s in got[1 : 2 + lstm]]
    got_b = backward(*grads, *arrays, got[-1], *params)
    assert spy_bwd.calls == 0
    want_b = generic_bwd(*grads, *arrays, want[-1], *params)
    close(got_b, want_b, 1e-4)


@pytest.mark.parametrize("mode", list(GATES))
def test_inference_forward_has_no_workspace(mode):
    arrays, params = layer_inputs(mode, 6, 4, 5, 7, 2, True)
    forward, generic, spy = kernels("rnn_layer", "rnn_layer")
    with tocha.no_grad():
        got = forward(*arrays, *params)
    assert spy.calls == 0 and got[-1].size == 0
    close(got[:-1], generic(*arrays, *params)[:-1])


def test_declined_calls_run_the_builtin_kernel():
    forward, generic, spy = kernels("rnn_layer", "rnn_layer")
    arrays, (mode, sizes, bias, d, proj) = layer_inputs("LSTM", 5, 3, 4, 6, 1, True)
    x, rest = arrays[0], arrays[1:]
    declined = [
        ([a.astype(np.float64) for a in arrays], sizes),  # float64
        ([x[:11], *rest], (3, 3, 2, 2, 1)),  # a packed batch that shrinks over time
        ([x[:6], *rest], (3, 3)),  # fewer than MIN_STEPS steps (a cell)
    ]
    for n, (args, batch_sizes) in enumerate(declined, 1):
        params = (mode, batch_sizes, bias, d, proj)
        close(forward(*args, *params), generic(*args, *params))
        assert spy.calls == n


def test_wide_gru_training_is_left_to_builtin(monkeypatch):
    monkeypatch.setattr(_rnn, "WIDE", 8)
    forward, generic, spy = kernels("rnn_layer", "rnn_layer")
    arrays, params = layer_inputs("GRU", 5, 3, 4, 6, 1, True)
    forward(*arrays, *params)
    assert spy.calls == 1
    with tocha.no_grad():
        forward(*arrays, *params)
    assert spy.calls == 1
    arrays, params = layer_inputs("LSTM", 5, 3, 4, 6, 1, True)
    forward(*arrays, *params)
    assert spy.calls == 1


def test_backward_of_a_builtin_workspace_runs_the_builtin_kernel():
    arrays, params = layer_inputs("LSTM", 5, 3, 4, 6, 1, True)
    generic = REGISTRY["rnn_layer"].generic(np)
    backward, generic_bwd, spy = kernels("rnn_layer_backward", "rnn_layer_backward")
    y, hn, cn, ws = generic(*arrays, *params)
    grads = [np.ones_like(y), np.zeros_like(hn), np.zeros_like(cn)]
    close(backward(*grads, *arrays, ws, *params), generic_bwd(*grads, *arrays, ws, *params))
    assert spy.calls == 1


def test_workspace_table_forgets_freed_workspaces():
    forward, _, _ = kernels("rnn_layer", "rnn_layer")
    arrays, params = layer_inputs("RNN_TANH", 4, 2, 3, 5, 1, True)
    before = len(_rnn._workspaces)
    ws = forward(*arrays, *params)[-1]
    assert len(_rnn._workspaces) == before + 1
    assert _rnn._recall(ws) is not None and _rnn._recall(ws.copy()) is None
    del ws
    assert len(_rnn._workspaces) == before


def _run(module_factory, x, states, provider: bool, dtype):
    tocha.backends.set_kernel_provider_enabled("onednn", provider)
    try:
        tocha.manual_seed(0)
        m = module_factory().to(dtype)
        xt = tocha.tensor(x, dtype=dtype, requires_grad=True)
        st = [tocha.tensor(s, dtype=dtype, requires_grad=True) for s in states]
        hx = None if not st else (tuple(st) if len(st) == 2 else st[0])
        out, h = m(xt, hx)
        finals = h if isinstance(h, tuple) else (h,)
        loss = (out * out).sum() + sum((f * 0.5).sum() for f in finals)
        loss.backward()
        grads = [xt.grad] + [s.grad for s in st] + [p.grad for p in m.parameters()]
        return [t.detach().double().numpy() for t in (out, *finals, *grads)]
    finally:
        tocha.backends.set_kernel_provider_enabled("onednn", True)


MODULES = [
    ("LSTM", dict(num_layers=2, bidirectional=True), True),
    ("LSTM", dict(batch_first=True), False),
    ("GRU", dict(num_layers=2, batch_first=True, bias=False), True),
    ("GRU", dict(bidirectional=True), False),
    ("RNN", dict(nonlinearity="relu", num_layers=2), True),
    ("RNN", dict(bidirectional=True, batch_first=True), True),
]


@pytest.mark.parametrize("name,kwargs,with_states", MODULES)
def test_modules_match_builtin_float64(name, kwargs, with_states):
    d, layers = 1 + kwargs.get("bidirectional", False), kwargs.get("num_layers", 1)
    t, b, i, h = 7, 3, 5, 6
    x = RNG.standard_normal((b, t, i) if kwargs.get("batch_first") else (t, b, i))
    n_states = (2 if name == "LSTM" else 1) if with_states else 0
    states = [RNG.standard_normal((d * layers, b, h)) for _ in range(n_states)]
    factory = lambda: getattr(nn, name)(i, h, **kwargs)  # noqa: E731
    _rnn._cache.plans.clear()
    got = _run(factory, x, states, True, tocha.float32)
    want = _run(factory, x, states, False, tocha.float64)
    served = [key for key, plan in _rnn._cache.plans.items() if plan is not None]
    assert any(key[0] == "bwd" for key in served) and len(served) >= 2
    for a, b_ in zip(got, want):
        np.testing.assert_allclose(a, b_, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(b_).max()))
