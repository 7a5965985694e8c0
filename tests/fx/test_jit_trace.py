"""tocha.jit.trace: traced modules and functions against eager tocha and torch.jit.trace,
check_trace's warnings and errors, and traced models saved and loaded without their class."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import tocha
import tocha.jit as jit
import tocha.nn as nn


def _to_tocha(t):
    return tocha.from_numpy(t.detach().numpy().copy())


def _pair(torch, name, args, kwargs):
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(nn, name)(*args, **kwargs)
    ours.load_state_dict({k: _to_tocha(v) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _first(out):
    return out[0] if isinstance(out, tuple) else out


LAYERS = [
    ("Linear", (4, 3), {}, (2, 4), (5, 4)),
    ("Conv2d", (2, 3, 3), {"padding": 1, "stride": 2}, (1, 2, 6, 6), (2, 2, 6, 6)),
    ("BatchNorm2d", (2,), {}, (3, 2, 4, 4), (3, 2, 4, 4)),
    ("LSTM", (3, 5), {"batch_first": True}, (2, 4, 3), (2, 4, 3)),
    ("GRU", (3, 4), {"num_layers": 2}, (4, 2, 3), (4, 2, 3)),
]


CASES = [
    (how, *row)
    for how in ("trace", "script")
    for row in LAYERS
    if how == "trace" or row[0] not in ("LSTM", "GRU")
]  # torch scripts RNNs without a `forward`


@pytest.mark.parametrize(
    "how,name,args,kwargs,example,other", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
def test_builtin_layers_match_torch_jit(torch, how, name, args, kwargs, example, other):
    ours, theirs = _pair(torch, name, args, kwargs)
    ours.eval()
    theirs.eval()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(example).astype(np.float32)
    y = rng.standard_normal(other).astype(np.float32)
    if how == "trace":
        compiled_t = torch.jit.trace(theirs, torch.from_numpy(x))
        compiled_o = jit.trace(ours, tocha.from_numpy(x))
    else:
        compiled_t = torch.jit.script(theirs)
        compiled_o = jit.script(ours)
    assert compiled_o.original_name == compiled_t.original_name
    out_t = _first(compiled_t(torch.from_numpy(y)))
    out_o = _first(compiled_o(tocha.from_numpy(y)))
    assert tuple(out_o.shape) == tuple(out_t.shape)
    np.testing.assert_allclose(out_o.detach().numpy(), out_t.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert sorted(compiled_o.state_dict()) == sorted(compiled_t.state_dict())


def test_freeze_in_training_mode_raises_like_torch(torch):
    with pytest.raises(RuntimeError) as theirs:
        torch.jit.freeze(torch.jit.script(torch.nn.Linear(2, 2)))
    with pytest.raises(RuntimeError) as ours:
        jit.freeze(jit.script(nn.Linear(2, 2)))
    assert str(ours.value) == str(theirs.value)


def test_trace_of_a_non_tensor_input_raises_like_torch(torch):
    with pytest.raises(RuntimeError) as theirs:
        torch.jit.trace(torch.nn.Identity(), (3,))
    with pytest.raises(RuntimeError) as ours:
        jit.trace(nn.Identity(), (3,))
    assert str(ours.value) == str(theirs.value)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.bn = nn.BatchNorm2d(2)
        self.lstm = nn.LSTM(2, 3, batch_first=True)
        self.heads = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 2)])
        self.scale = tocha.tensor([2.0, 0.5])

    def forward(self, x):
        y = tocha.relu(self.bn(self.conv(x)))
        seq = y.mean(dim=2).transpose(1, 2)
        out, (h, _) = self.lstm(seq)
        total = self.heads[0](out[:, -1]) + self.heads[1](h[0])
        return total * self.scale, h


def test_traced_module_matches_eager_and_keeps_structure():
    model = Net().eval()
    x = tocha.randn(2, 1, 4, 4)
    traced = jit.trace(model, x)
    assert isinstance(traced, jit.ScriptModule) and traced.original_name == "Net"
    assert list(traced.state_dict()) == list(model.state_dict())
    assert traced.heads[0].weight is model.heads[0].weight
    x2 = tocha.randn(2, 1, 4, 4)
    for got, want in zip(traced(x2), model(x2)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5)
    assert "tocha.nn.functional.linear(" in traced.code
    assert traced.code.startswith("def forward(self, x: Tensor):")
    assert "ops.rnn_layer(" in traced.code
    assert str(traced.graph).startswith("graph(%self : __torch__.")


def test_traced_module_shares_training_state_updates():
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    traced = jit.trace(model, tocha.randn(4, 3), check_trace=False)
    before = model[1].running_mean.clone()
    traced(tocha.randn(4, 3) + 5)
    assert not np.allclose(model[1].running_mean.numpy(), before.numpy())
    assert int(model[1].num_batches_tracked) == 1


def add_scaled(a, b):
    return a + 2 * b.relu(), a.sum()


def test_trace_function():
    a, b = tocha.randn(3), tocha.randn(3)
    traced = jit.trace(add_scaled, (a, b))
    assert isinstance(traced, jit.ScriptFunction)
    a2, b2 = tocha.randn(3), tocha.randn(3)
    for got, want in zip(traced(a2, b2), add_scaled(a2, b2)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert traced.code.startswith("def add_scaled(a: Tensor, b: Tensor):")
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor"):
        traced(1, b2)


def noisy(x):
    return x + tocha.rand(3)


def test_check_trace_warns_for_random_ops():
    with pytest.warns(jit.TracerWarning) as record:
        jit.trace(noisy, tocha.zeros(3))
    messages = [str(w.message) for w in record]
    assert any(m.startswith("Trace had nondeterministic nodes") for m in messages)
    assert any(m.startswith("Output nr 1. of the traced function does not match") for m in messages)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jit.trace(noisy, tocha.zeros(3), check_trace=False)


def by_size(x):
    if x.shape[0] > 2:
        return x * 2
    return x - 1


def test_check_inputs_taking_another_branch_fail_the_check():
    jit.trace(by_size, tocha.ones(3), check_inputs=[(tocha.ones(4),)])
    with pytest.raises(jit.TracingCheckError, match="Graphs differed across invocations"):
        jit.trace(by_size, tocha.ones(3), check_inputs=[(tocha.ones(1),)])


def data_branch(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def test_data_dependent_branches_are_specialised():
    with pytest.warns(jit.TracerWarning, match="Converting a tensor to a Python boolean"):
        jit.trace(data_branch, tocha.ones(2))


def as_list(x):
    return [x, x + 1]


def test_strict_refuses_list_outputs():
    with pytest.raises(RuntimeError, match="Encountering a list at the output of the tracer"):
        jit.trace(as_list, tocha.ones(2))
    traced = jit.trace(as_list, tocha.ones(2), strict=False)
    assert isinstance(traced(tocha.ones(2)), list)


def sees_tracing(x):
    return x + (1 if jit.is_tracing() else 0)


def test_is_tracing():
    assert not jit.is_tracing()
    traced = jit.trace(sees_tracing, tocha.zeros(1), check_trace=False)
    assert traced(tocha.zeros(1)).item() == 1.0


def test_trace_module_forward():
    model = nn.Linear(2, 2)
    traced = jit.trace_module(model, {"forward": tocha.ones(1, 2)})
    np.testing.assert_allclose(
        traced(tocha.ones(3, 2)).detach().numpy(), model(tocha.ones(3, 2)).detach().numpy()
    )


CHILD = """
import sys
import numpy as np
import tocha, tocha.jit
m = tocha.jit.load(sys.argv[1])
x, expected = tocha.load(sys.argv[2])
assert "test_jit_trace" not in sys.modules
for got, want in zip(m(x), expected):
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
print("ok", m.original_name)
"""


def test_traced_model_round_trips_in_a_fresh_process(tmp_path):
    model = Net().eval()
    traced = jit.trace(model, tocha.randn(2, 1, 4, 4))
    path = tmp_path / "traced.pt"
    jit.save(traced, path)
    x = tocha.randn(2, 1, 4, 4)
    tocha.save((x, model(x)), tmp_path / "io.pt")
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(tmp_path / "io.pt")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "ok Net" in result.stdout
    loaded = jit.load(path)
    assert loaded.code == traced.code


class TwoMethods(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 3)

    def forward(self, x):
        return self.conv(x)

    def weighted_kernel_sum(self, weight):
        return weight * self.conv.weight


def test_trace_module_traces_several_methods(tmp_path):
    # torch.jit.trace_module's documented example
    n = TwoMethods()
    example_weight = tocha.rand(1, 1, 3, 3)
    example_forward_input = tocha.rand(1, 1, 3, 3)
    inputs = {"forward": example_forward_input, "weighted_kernel_sum": example_weight}
    module = jit.trace_module(n, inputs)
    w = tocha.rand(1, 1, 3, 3)
    np.testing.assert_allclose(
        module.weighted_kernel_sum(w).detach().numpy(),
        n.weighted_kernel_sum(w).detach().numpy(),
    )
    assert "forward" not in n.__dict__  # the module is left as it was
    jit.save(module, tmp_path / "m.pt")
    loaded = jit.load(tmp_path / "m.pt")
    np.testing.assert_allclose(
        loaded.weighted_kernel_sum(w).detach().numpy(),
        n.weighted_kernel_sum(w).detach().numpy(),
    )
    x = tocha.rand(1, 1, 5, 5)
    np.testing.assert_allclose(loaded(x).detach().numpy(), n(x).detach().numpy(), rtol=1e-6)


def test_dropout_is_random_in_training_only():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    x = tocha.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jit.trace(model.eval(), x)
    with pytest.warns(jit.TracerWarning) as record:
        jit.trace(model.train(), x)
    assert any("Did you forget call .eval() on your model" in str(w.message) for w in record)


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x, mask):
        return self.fc(x) * mask


def test_trace_with_example_kwarg_inputs():
    model = Gate()
    x, mask = tocha.randn(2, 3), (tocha.rand(2, 3) > 0.5).float()
    traced = jit.trace(model, example_kwarg_inputs={"x": x, "mask": mask})
    x2 = tocha.randn(2, 3)
    np.testing.assert_allclose(
        traced(mask=mask, x=x2).detach().numpy(), model(x2, mask).detach().numpy(), rtol=1e-6
    )
    traced_fn = jit.trace(add_scaled, example_kwarg_inputs={"a": x, "b": x2})
    np.testing.assert_allclose(traced_fn(b=x2, a=x)[0].numpy(), add_scaled(x, x2)[0].numpy())


def test_a_scripted_submodule_stays_a_call_in_a_trace(tmp_path):
    """The TorchScript tutorial's mix: a traced module holding a scripted loop keeps the
    loop (it follows the input's length), saved and loaded too."""

    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)

        def forward(self, x, h):
            new_h = tocha.tanh(self.linear(x) + h)
            return new_h, new_h

    class Loop(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = jit.trace(Cell(), (tocha.rand(3, 4), tocha.rand(3, 4)))

        def forward(self, xs):
            h, y = tocha.zeros(3, 4), tocha.zeros(3, 4)
            for i in range(xs.size(0)):
                y, h = self.cell(xs[i], h)
            return y, h

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.loop = jit.script(Loop())

        def forward(self, xs):
            y, h = self.loop(xs)
            return tocha.relu(y)

    model = Wrap()
    traced = jit.trace(model, (tocha.rand(10, 3, 4),))
    assert "self.loop(" in traced.code
    xs = tocha.rand(5, 3, 4)
    tocha.testing.assert_close(traced(xs), model(xs))
    path = tmp_path / "wrapped.pt"
    traced.save(str(path))
    tocha.testing.assert_close(jit.load(str(path))(xs), model(xs))
