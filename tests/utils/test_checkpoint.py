"""tocha.utils.checkpoint against PyTorch: outputs and gradients in both modes, warnings and
errors, random state replay, checkpoint_sequential, and the memory a checkpointed deep MLP
saves."""

from __future__ import annotations

import itertools
import tracemalloc
import warnings

import numpy as np
import pytest

import tocha

pytest.importorskip("tocha.autograd")
nn = pytest.importorskip("tocha.nn")

import tocha.utils.checkpoint  # noqa: E402
from tocha.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential  # noqa: E402

MODES = [pytest.param(True, id="reentrant"), pytest.param(False, id="non_reentrant")]
RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal((3, 4))
WIDE = RNG.standard_normal((64, 16))


def _normal(message: str) -> str:
    return message.replace("torch.", "tocha.")


FUNCTIONS = [
    ("sin_exp", lambda t, u: (t.sin() * u).exp().sum(1)),
    ("tuple_with_non_tensors", lambda t, u: ((t * u).tanh(), 3, "a", None)),
    ("two_tensors", lambda t, u: ((t * u).sigmoid(), (t - u).relu())),
    ("matmul", lambda t, u: (t @ u.mT).softmax(-1)),
]


def _grads(lib, fn, mode, u_requires_grad):
    x = lib.tensor(X, requires_grad=True)
    u = lib.tensor(Y, requires_grad=u_requires_grad)
    out = lib.utils.checkpoint.checkpoint(fn, x, u, use_reentrant=mode)
    outputs = out if isinstance(out, tuple) else (out,)
    tensors = [o for o in outputs if not isinstance(o, (int, str, type(None)))]
    total = sum(o.sum() for o in tensors)
    total.backward()
    values = [o.detach().numpy() for o in tensors]
    others = [o for o in outputs if isinstance(o, (int, str, type(None)))]
    return values, others, x.grad.numpy(), None if u.grad is None else u.grad.numpy()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("u_requires_grad", [True, False], ids=["both_grad", "one_grad"])
@pytest.mark.parametrize("fn", [f for _, f in FUNCTIONS], ids=[n for n, _ in FUNCTIONS])
def test_outputs_and_gradients_match_torch(fn, u_requires_grad, mode, torch):
    theirs = _grads(torch, fn, mode, u_requires_grad)
    ours = _grads(tocha, fn, mode, u_requires_grad)
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6, atol=1e-7)
    assert (ours[3] is None) == (theirs[3] is None)
    if ours[3] is not None:
        np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6, atol=1e-7)


def _warned(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category.__name__, _normal(str(w.message))) for w in caught]


def test_missing_use_reentrant_warns_and_picks_reentrant(torch):
    for lib in (torch, tocha):
        x = lib.tensor(X, requires_grad=True)
        out, caught = _warned(
            lambda lib=lib, x=x: lib.utils.checkpoint.checkpoint(lambda t: t.sin(), x)
        )
        seq, seq_caught = _warned(
            lambda lib=lib, x=x: lib.utils.checkpoint.checkpoint_sequential(
                [lambda t: t.sin()], 1, x
            )
        )
        if lib is torch:
            expected = caught, seq_caught, out.grad_fn.name()
        else:
            assert (caught, seq_caught, out.grad_fn.name()) == expected


def test_no_input_requiring_grad_warns_in_reentrant_mode(torch):
    found = []
    for lib in (torch, tocha):
        x = lib.tensor(X)
        out, caught = _warned(
            lambda lib=lib, x=x: lib.utils.checkpoint.checkpoint(
                lambda t: t.sin(), x, use_reentrant=True
            )
        )
        found.append((caught, out.requires_grad))
    assert found[0] == found[1]


ARGUMENT_ERRORS = [
    ("kwargs_reentrant", {"use_reentrant": True, "k": 2, "j": 3}),
    ("context_fn_reentrant", {"use_reentrant": True, "context_fn": "noop"}),
    ("debug_reentrant", {"use_reentrant": True, "debug": True}),
    ("determinism_check", {"use_reentrant": False, "determinism_check": "foo"}),
]


@pytest.mark.parametrize(
    "options", [o for _, o in ARGUMENT_ERRORS], ids=[n for n, _ in ARGUMENT_ERRORS]
)
def test_argument_errors_match_torch(options, torch):
    messages = []
    for lib in (torch, tocha):
        resolved = dict(options)
        if resolved.get("context_fn") == "noop":
            resolved["context_fn"] = lambda: (None, None)
        x = lib.tensor(X, requires_grad=True)
        with pytest.raises(ValueError) as info:
            lib.utils.checkpoint.checkpoint(lambda t, **k: t.sin(), x, **resolved)
        messages.append(_normal(str(info.value)))
    assert messages[0] == messages[1]


def test_reentrant_output_without_grad_raises_like_torch(torch):
    messages = []
    for lib in (torch, tocha):
        x = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: t.detach(), x, use_reentrant=True)
        assert out.requires_grad
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _changing(first, later):
    calls = itertools.count()
    return lambda t: first(t) if next(calls) == 0 else later(t)


RECOMPUTATION_ERRORS = [
    ("fewer_tensors", lambda: _changing(lambda t: t.sin().sin(), lambda t: t.sin())),
    ("other_shapes", lambda: _changing(lambda t: t.sin(), lambda t: t[:2].sin())),
]


@pytest.mark.parametrize(
    "make", [m for _, m in RECOMPUTATION_ERRORS], ids=[n for n, _ in RECOMPUTATION_ERRORS]
)
def test_recomputation_errors_match_torch(make, torch):
    found = []
    for lib in (torch, tocha):
        x = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(make(), x, use_reentrant=False)
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        found.append((type(info.value).__name__, _normal(str(info.value)).split("\nTip: ")[0]))
    assert found[0] == found[1]


def test_determinism_check_none_skips_the_metadata_check():
    x = tocha.tensor(X, requires_grad=True)
    fn = _changing(lambda t: t.sin(), lambda t: t[:2].sin())
    out = checkpoint(fn, x, use_reentrant=False, determinism_check="none")
    with pytest.raises(RuntimeError):  # sin's formula gets a tensor of the wrong shape
        out.sum().backward()
    fn = _changing(lambda t: t.sin(), lambda t: t[:2].sin())
    out = checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="position 0"):
        out.sum().backward()


# -- random state, keyword arguments, parameters ---------------------------------------------
def _dropout_grads(mode, preserve_rng_state=True):
    layer = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.5))
    layer.load_state_dict({k: tocha.ones_like(v) * 0.1 for k, v in layer.state_dict().items()})
    x = tocha.tensor(WIDE, dtype=tocha.float32, requires_grad=True)

    def run(t):
        h = layer(t)
        return h * h  # saves the dropped-out values: the recomputation must draw them again

    tocha.manual_seed(7)
    if mode is None:
        out = run(x)
    else:
        out = checkpoint(run, x, use_reentrant=mode, preserve_rng_state=preserve_rng_state)
    out.sum().backward()
    after = tocha.rand(4)  # the caller's random stream goes on as without checkpointing
    return x.grad.numpy(), layer[0].weight.grad.numpy(), after.numpy()


@pytest.mark.parametrize("mode", MODES)
def test_dropout_is_replayed(mode):
    plain = _dropout_grads(None)
    checkpointed = _dropout_grads(mode)
    for a, b in zip(plain, checkpointed):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    other = _dropout_grads(mode, preserve_rng_state=False)
    assert not np.allclose(plain[0], other[0])


def test_non_reentrant_kwargs_parameters_and_autograd_grad():
    layer = nn.Linear(4, 4)
    x = tocha.tensor(X, dtype=tocha.float32)  # not requiring grad: the weight still gets one
    out = checkpoint(lambda t, scale=1.0: layer(t) * scale, x, scale=3.0, use_reentrant=False)
    (grad,) = tocha.autograd.grad(out.sum(), [layer.weight])
    expected = layer(x) * 3.0
    (want,) = tocha.autograd.grad(expected.sum(), [layer.weight])
    np.testing.assert_allclose(grad.numpy(), want.numpy(), rtol=1e-6)


def test_non_reentrant_backward_twice_recomputes():
    x = tocha.tensor(X, requires_grad=True)
    out = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False)
    out.sum().backward(retain_graph=True)
    first = x.grad.clone()
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy())


def test_context_fn_wraps_forward_and_recomputation():
    entered = []

    class Mark:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            entered.append(self.name)

        def __exit__(self, *exc):
            return False

    x = tocha.tensor(X, requires_grad=True)
    out = checkpoint(
        lambda t: t.sin().cos(),
        x,
        use_reentrant=False,
        context_fn=lambda: (Mark("forward"), Mark("recompute")),
    )
    assert entered == ["forward"]
    out.sum().backward()
    assert entered == ["forward", "recompute"]


@pytest.mark.parametrize("mode", MODES)
def test_no_grad_mode_runs_the_function(mode):
    x = tocha.tensor(X, requires_grad=True)
    with tocha.no_grad():
        out = checkpoint(lambda t: t.sin(), x, use_reentrant=mode)
    assert not out.requires_grad
    np.testing.assert_allclose(out.numpy(), np.sin(X))


@pytest.mark.parametrize("mode", MODES)
def test_checkpoint_sequential_matches_the_plain_model(mode):
    tocha.manual_seed(0)
    model = nn.Sequential(*(m for _ in range(3) for m in (nn.Linear(4, 4), nn.ReLU())))
    x = tocha.tensor(X, dtype=tocha.float32, requires_grad=True)
    model(x).sum().backward()
    plain = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    out = checkpoint_sequential(model, 3, x, use_reentrant=mode)
    out.sum().backward()
    for want, p in zip(plain, [*model.parameters(), x]):
        np.testing.assert_allclose(p.grad.numpy(), want.numpy(), rtol=1e-6)
    functions = list(model.children())
    np.testing.assert_allclose(
        checkpoint_sequential(functions, 2, x, use_reentrant=mode).detach().numpy(),
        out.detach().numpy(),
    )


# -- memory ---------------------------------------------------------------------------------------
DEPTH, WIDTH, BATCH, SEGMENT = 48, 32, 1024, 8


def _mlp_step(layers, x, mode):
    """Peak traced memory of one forward and backward, and the gradients."""
    for layer in layers:
        layer.zero_grad()
    x.grad = None

    def segment(start):
        def run(h):
            for layer in layers[start : start + SEGMENT]:
                h = layer(h).relu()
            return h

        return run

    tracemalloc.start()
    try:
        h = x
        for start in range(0, DEPTH, SEGMENT):
            h = (
                segment(start)(h)
                if mode is None
                else checkpoint(segment(start), h, use_reentrant=mode)
            )
        h.pow(2).mean().backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    grads = [p.grad.numpy().copy() for layer in layers for p in layer.parameters()]
    return peak, grads + [x.grad.numpy().copy()]


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param(True, id="reentrant"),
        pytest.param(False, id="non_reentrant"),
    ],
)
def test_checkpointing_halves_the_peak_memory_of_a_deep_mlp(mode):
    tocha.manual_seed(0)
    layers = [nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH)]
    x = tocha.randn(BATCH, WIDTH, requires_grad=True)
    plain_peak, plain_grads = _mlp_step(layers, x, None)
    peak, grads = _mlp_step(layers, x, mode)
    for want, got in zip(plain_grads, grads):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)
    assert peak < plain_peak / 2, (peak, plain_peak)
