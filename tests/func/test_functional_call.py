"""functional_call and stack_module_state: replacing a module's tensors for one call (dicts,
tied weights, strict, restoring), differentiating through it, per-sample gradients and
model ensembles with vmap, and errors as torch.func's."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.func as tf
import tocha.nn as nn
import tocha.nn.functional as F


def _t(*shape, seed=0):
    return tocha.from_numpy(np.random.default_rng(seed).standard_normal(shape))


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False)
        self.b = nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


class Counter(nn.Module):
    """A module whose forward adds to its buffer in place, as BatchNorm's running stats."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2).double()
        self.register_buffer("seen", tocha.zeros(2, dtype=tocha.float64))

    def forward(self, x):
        self.seen.add_(1)
        return self.lin(x) + self.seen


def _linear():
    tocha.manual_seed(0)
    return nn.Linear(3, 2).double()


# -- functional_call ------------------------------------------------------------------------
def test_replaced_tensors_are_used_and_the_module_is_restored():
    m = _linear()
    weight, bias = m.weight, m.bias
    w, b = _t(2, 3), _t(2, seed=1)
    x = _t(4, 3, seed=2)
    _close(tf.functional_call(m, {"weight": w, "bias": b}, (x,)), x @ w.T + b)
    _close(tf.functional_call(m, {"weight": w, "bias": b}, x), x @ w.T + b)
    _close(tf.functional_call(m, {"weight": w}, (), {"input": x}), x @ w.T + bias)
    assert m.weight is weight and m.bias is bias
    assert isinstance(m.weight, nn.Parameter)


def test_a_sequence_of_dicts():
    m, x = _linear(), _t(4, 3, seed=2)
    w, b = _t(2, 3), _t(2, seed=1)
    for dicts in (({"weight": w}, {"bias": b}), [{"weight": w}, {"bias": b}]):
        _close(tf.functional_call(m, dicts, (x,)), x @ w.T + b)


def test_the_module_is_restored_when_forward_raises():
    class Boom(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(tocha.ones(2))

        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    w = m.w
    with pytest.raises(ValueError, match="boom"):
        tf.functional_call(m, {"w": tocha.zeros(2)}, (tocha.ones(2),))
    assert m.w is w and m._parameters["w"] is w


def test_inside_the_call_the_given_tensor_is_registered():
    seen = {}

    class Probe(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(tocha.ones(2))

        def forward(self, x):
            seen["w"] = self.w
            seen["names"] = [n for n, _ in self.named_parameters()]
            return x * self.w

    given = tocha.zeros(2)
    tf.functional_call(Probe(), {"w": given}, (tocha.ones(2),))
    assert seen["w"] is given and seen["names"] == ["w"]


def test_buffers_written_in_place_write_into_the_given_tensor():
    m = Counter()
    given = tocha.zeros(2, dtype=tocha.float64)
    tf.functional_call(m, {"seen": given}, (_t(1, 2),))
    _close(given, tocha.ones(2, dtype=tocha.float64))
    _close(m.seen, tocha.zeros(2, dtype=tocha.float64))


def test_tied_weights():
    m, x = Tied().double(), _t(1, 2)
    w = _t(2, 2, seed=3)
    expected = x @ w.T @ w.T
    _close(tf.functional_call(m, {"a.weight": w}, (x,)), expected)
    _close(tf.functional_call(m, {"b.weight": w}, (x,)), expected)
    _close(tf.functional_call(m, {"a.weight": w, "b.weight": w}, (x,)), expected)
    _close(tf.functional_call(m, {"a.weight": w}, (x,), strict=True), expected)
    untied = tf.functional_call(m, {"a.weight": w}, (x,), tie_weights=False)
    _close(untied, x @ w.T @ m.a.weight.T)
    with pytest.raises(ValueError, match="which are tied"):
        tf.functional_call(m, {"a.weight": w, "b.weight": w.clone()}, (x,))


def test_gradients_flow_to_the_given_tensors():
    m, x = _linear(), _t(4, 3, seed=2)
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p):
        return tf.functional_call(m, p, (x,)).pow(2).sum()

    grads = tf.grad(loss)(params)
    out = x @ params["weight"].T + params["bias"]
    _close(grads["weight"], 2 * out.T @ x)
    _close(grads["bias"], 2 * out.sum(0))
    assert m.weight.grad is None


class _SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.fc = nn.Linear(3 * 3 * 3, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(x.flatten(1))


def test_per_sample_gradients_equal_a_loop_of_backward():
    tocha.manual_seed(0)
    model = _SmallCNN().double()
    data, targets = _t(5, 1, 8, 8), tocha.tensor([0, 3, 1, 2, 3])
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss(p, b, x, t):
        out = tf.functional_call(model, (p, b), (x.unsqueeze(0),))
        return F.cross_entropy(out, t.unsqueeze(0))

    per_sample = tf.vmap(tf.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
    for i in range(5):
        model.zero_grad()
        F.cross_entropy(model(data[i : i + 1]), targets[i : i + 1]).backward()
        for name, p in model.named_parameters():
            _close(per_sample[name][i], p.grad)


# -- stack_module_state ---------------------------------------------------------------------
def _models(n=3, cls=lambda: nn.Linear(3, 2)):
    tocha.manual_seed(0)
    return [cls().double() for _ in range(n)]


def test_stack_module_state_stacks_leaves():
    models = _models()
    params, buffers = tf.stack_module_state(models)
    assert set(params) == {"weight", "bias"} and buffers == {}
    assert params["weight"].shape == (3, 2, 3)
    for name, p in params.items():
        assert p.is_leaf and p.requires_grad and p.grad_fn is None
        for i, m in enumerate(models):
            _close(p[i], getattr(m, name))
    frozen = _models()
    for m in frozen:
        m.weight.requires_grad_(False)
    params, _ = tf.stack_module_state(frozen)
    assert not params["weight"].requires_grad and params["bias"].requires_grad


def test_stack_module_state_buffers_and_tied_weights():
    bns = _models(2, lambda: nn.BatchNorm1d(3))
    _, buffers = tf.stack_module_state(bns)
    assert set(buffers) == {"running_mean", "running_var", "num_batches_tracked"}
    assert buffers["running_var"].shape == (2, 3) and buffers["num_batches_tracked"].shape == (2,)
    params, _ = tf.stack_module_state([Tied(), Tied()])
    assert list(params) == ["a.weight"]


@pytest.mark.parametrize("same_minibatch", [False, True])
def test_ensemble_with_vmap_equals_the_loop(same_minibatch):
    models = _models(4, lambda: nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2)))
    params, buffers = tf.stack_module_state(models)
    base = models[0]

    def call(p, b, x):
        return tf.functional_call(base, (p, b), (x,))

    if same_minibatch:
        x = _t(6, 3, seed=4)
        got = tf.vmap(call, in_dims=(0, 0, None))(params, buffers, x)
        expected = [m(x) for m in models]
    else:
        x = _t(4, 6, 3, seed=4)
        got = tf.vmap(call)(params, buffers, x)
        expected = [m(x[i]) for i, m in enumerate(models)]
    for i, e in enumerate(expected):
        _close(got[i], e)


def test_ensemble_gradients_reach_the_stacked_parameters():
    models = _models(3)
    params, buffers = tf.stack_module_state(models)
    x = _t(3, 4, 3, seed=5)
    out = tf.vmap(lambda p, b, xi: tf.functional_call(models[0], (p, b), (xi,)))(params, buffers, x)
    out.pow(2).sum().backward()
    for i, m in enumerate(models):
        m(x[i]).pow(2).sum().backward()
        _close(params["weight"].grad[i], m.weight.grad)


# -- errors as torch.func's -----------------------------------------------------------------
def _linear_of(lib):
    return lib.nn.Linear(2, 2)


def _tied_of(lib):
    tied = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.Linear(2, 2, bias=False))
    tied[1].weight = tied[0].weight
    return tied


ERRORS = {
    "not_a_dict": lambda fn, lib: fn.functional_call(_linear_of(lib), 3, lib.ones(1, 2)),
    "not_dicts": lambda fn, lib: fn.functional_call(_linear_of(lib), (3,), lib.ones(1, 2)),
    "repeated_key": lambda fn, lib: fn.functional_call(
        _linear_of(lib), ({"weight": lib.ones(2, 2)}, {"weight": lib.ones(2, 2)}), lib.ones(1, 2)
    ),
    "strict_missing": lambda fn, lib: fn.functional_call(
        _linear_of(lib), {"weight": lib.ones(2, 2)}, lib.ones(1, 2), strict=True
    ),
    "strict_both": lambda fn, lib: fn.functional_call(
        _linear_of(lib),
        {"weight": lib.ones(2, 2), "z": lib.ones(1), "a": lib.ones(1)},
        lib.ones(1, 2),
        strict=True,
    ),
    "missing_submodule": lambda fn, lib: fn.functional_call(
        _linear_of(lib), {"foo.bar": lib.ones(1)}, lib.ones(1, 2)
    ),
    "tied_twice": lambda fn, lib: fn.functional_call(
        _tied_of(lib), {"0.weight": lib.eye(2), "1.weight": lib.eye(2) * 2}, lib.ones(1, 2)
    ),
    "stack_none": lambda fn, lib: fn.stack_module_state([]),
    "stack_modes": lambda fn, lib: fn.stack_module_state(
        [lib.nn.Linear(2, 3), lib.nn.Linear(2, 3).eval()]
    ),
    "stack_classes": lambda fn, lib: fn.stack_module_state(
        [lib.nn.Linear(2, 2), lib.nn.Bilinear(2, 2, 2)]
    ),
    "stack_sizes": lambda fn, lib: fn.stack_module_state(
        [lib.nn.Linear(2, 3), lib.nn.Linear(2, 4)]
    ),
    "stack_requires_grad": lambda fn, lib: fn.stack_module_state(
        [lib.nn.Linear(2, 2).requires_grad_(False), lib.nn.Linear(2, 2)]
    ),
}


def _error(call, lib):
    with pytest.raises(Exception) as error:
        call(lib.func, lib)
    return type(error.value), str(error.value).replace("torch.", "tocha.")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(torch, name):
    assert _error(ERRORS[name], tocha) == _error(ERRORS[name], torch)
