"""tocha.compile with tocha-compiler: what it returns, correctness against eager (forward,
gradients, optimizer steps), guards and recompilation, graph breaks, backends, logging."""

from __future__ import annotations

import copy
import logging
import warnings

import pytest

import tocha
import tocha._dynamo
import tocha.compiler
import tocha.nn as nn
import tocha.nn.functional as F
from tests.compiler.models import CASES

BACKENDS = ["inductor", "aot_eager", "eager"]


pytestmark = pytest.mark.usefixtures("fresh_compiler")


def test_compiling_a_module_returns_a_wrapper_holding_it():
    model = nn.Linear(3, 2)
    compiled = tocha.compile(model)
    assert isinstance(compiled, nn.Module) and type(compiled).__name__ == "OptimizedModule"
    assert compiled._orig_mod is model
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert compiled.in_features == 3 and compiled.weight is model.weight
    fresh = nn.Linear(3, 2)
    tocha.compile(fresh).load_state_dict(compiled.state_dict())
    assert tocha.equal(fresh.weight, model.weight)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_training_matches_eager_over_20_adamw_steps(name, backend):
    make_model, make_inputs, loss_of = CASES[name]
    tocha.manual_seed(0)
    model = make_model()
    reference = copy.deepcopy(model)
    compiled = tocha.compile(model, backend=backend)
    opt = tocha.optim.AdamW(model.parameters(), lr=1e-2)
    opt_ref = tocha.optim.AdamW(reference.parameters(), lr=1e-2)
    for step in range(20):
        tocha.manual_seed(100 + step)
        inputs = make_inputs()
        out = compiled(*inputs)
        tocha.manual_seed(100 + step)
        want = reference(*make_inputs())
        tocha.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
        loss, loss_ref = loss_of(out), loss_of(want)
        loss.backward()
        loss_ref.backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            tocha.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-5)
        opt.step()
        opt_ref.step()
        opt.zero_grad()
        opt_ref.zero_grad()
    for a, b in zip(model.state_dict().values(), reference.state_dict().values()):
        tocha.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_inference_under_no_grad_and_eval_matches_eager():
    make_model, make_inputs, _ = CASES["cnn"]
    model = make_model()
    compiled = tocha.compile(model)
    x = make_inputs()
    compiled(*x)
    model.eval()
    with tocha.no_grad():
        got = compiled(*x)
        assert got.grad_fn is None
        tocha.testing.assert_close(got, model(*x))


def test_a_new_shape_or_mode_recompiles_and_the_same_does_not(captures):
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    compiled = tocha.compile(model)
    compiled(tocha.randn(3, 4))
    compiled(tocha.randn(3, 4))
    assert captures() == 1
    compiled(tocha.randn(5, 4))
    assert captures() == 2
    model.eval()
    compiled(tocha.randn(5, 4))
    assert captures() == 3
    with tocha.no_grad():
        compiled(tocha.randn(5, 4))
    assert captures() == 4
    model.train()
    compiled(tocha.randn(3, 4))
    assert captures() == 4


def test_replacing_a_parameter_recompiles(captures):
    model = nn.Linear(2, 2)
    compiled = tocha.compile(model)
    x = tocha.randn(1, 2)
    compiled(x)
    model.weight = nn.Parameter(tocha.ones(2, 2))
    tocha.testing.assert_close(compiled(x), model(x))
    assert captures() == 2


def test_gradients_accumulate_and_reach_hooks_as_in_eager():
    model = nn.Linear(3, 1)
    seen = []
    model.weight.register_hook(lambda g: seen.append(g.clone()))
    compiled = tocha.compile(model)
    x = tocha.randn(4, 3)
    for _ in range(3):
        compiled(x).sum().backward()
    expected = x.sum(0, keepdim=True) * 3
    tocha.testing.assert_close(model.weight.grad, expected)
    assert len(seen) == 3
    loss = compiled(x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    tocha.testing.assert_close(model.weight.grad, x.sum(0, keepdim=True) * 5)


def test_a_parameter_hook_runs_once_a_backward_with_dynamic_sizes_too():
    model = nn.Linear(3, 1)
    seen = []
    model.weight.register_hook(lambda g: seen.append(g.clone()))
    accumulated = []
    model.bias.register_post_accumulate_grad_hook(lambda p: accumulated.append(p.grad.clone()))
    compiled = tocha.compile(model, dynamic=True)
    for n in (4, 5, 6):
        compiled(tocha.randn(n, 3)).sum().backward()
    assert len(seen) == 3 and len(accumulated) == 3
    tocha.testing.assert_close(accumulated[-1], tocha.full((1,), 15.0))


def test_gradients_flow_to_inputs_and_to_tensors_read_from_outside():
    w = tocha.randn(3, requires_grad=True)

    def f(x):
        return (x * w).tanh().sum()

    compiled = tocha.compile(f)
    expected_w = tocha.zeros(3)
    for _ in range(2):
        x = tocha.randn(3, requires_grad=True)
        compiled(x).backward()
        x_ref = x.detach().requires_grad_()
        w_ref = w.detach().requires_grad_()
        (x_ref * w_ref).tanh().sum().backward()
        tocha.testing.assert_close(x.grad, x_ref.grad)
        expected_w += w_ref.grad
    tocha.testing.assert_close(w.grad, expected_w)


def test_an_input_the_function_follows_upstream_history():
    a = tocha.randn(3, requires_grad=True)
    compiled = tocha.compile(lambda x: (x * x).sum())
    compiled(a.exp()).backward()
    tocha.testing.assert_close(a.grad, 2 * a.exp() * a.exp())


def test_branching_on_a_tensor_is_guarded_by_its_value(captures):
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x * 3

    compiled = tocha.compile(f)
    pos, neg = tocha.ones(3), -tocha.ones(3)
    tocha.testing.assert_close(compiled(pos), pos * 2)
    tocha.testing.assert_close(compiled(pos), pos * 2)
    tocha.testing.assert_close(compiled(neg), neg * 3)
    tocha.testing.assert_close(compiled(pos), pos * 2)


def test_item_and_printing_break_the_graph_and_run_eagerly(caplog, capsys):
    caplog.set_level(logging.DEBUG, logger="tocha.compiler")

    def f(x):
        scale = x.max().item()
        print(x.sum())
        return x / scale

    compiled = tocha.compile(f)
    for x in (tocha.tensor([1.0, 2.0]), tocha.tensor([1.0, 4.0])):
        tocha.testing.assert_close(compiled(x), x / x.max())
    assert capsys.readouterr().out.count("tensor(") == 2
    assert any("graph break" in r.getMessage() for r in caplog.records)


def test_fullgraph_raises_at_the_break():
    compiled = tocha.compile(lambda x: x * x.sum().item(), fullgraph=True)
    with pytest.raises(tocha._dynamo.exc.Unsupported, match="item"):
        compiled(tocha.ones(2))


def test_the_cache_size_limit_falls_back_to_eager_with_one_warning(monkeypatch):
    monkeypatch.setattr(tocha._dynamo.config, "cache_size_limit", 2)
    compiled = tocha.compile(lambda x: x + 1)
    with pytest.warns(UserWarning, match="cache size limit"):
        for n in range(1, 6):
            tocha.testing.assert_close(compiled(tocha.zeros(n)), tocha.ones(n))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled(tocha.zeros(7))


def test_reset_and_disable(captures):
    compiled = tocha.compile(lambda x: x.sin())
    x = tocha.randn(3)
    compiled(x)
    tocha.compiler.reset()
    compiled(x)
    assert captures() == 2
    tocha._dynamo.reset()
    with tocha.compiler.disable():
        tocha.testing.assert_close(compiled(x), x.sin())
    assert captures() == 2
    assert tocha.compiler.disable(compiled)(x).shape == (3,)
    assert captures() == 2


def test_is_compiling_is_true_only_inside_a_capture():
    seen = []

    def f(x):
        seen.append(tocha.compiler.is_compiling())
        return x + 1

    compiled = tocha.compile(f)
    compiled(tocha.ones(1))
    compiled(tocha.ones(1))
    assert seen == [True] and not tocha.compiler.is_compiling()


def test_backends_by_name_by_callable_and_unknown():
    assert "inductor" in tocha.compiler.list_backends()
    assert {"eager", "aot_eager"} <= set(tocha._dynamo.list_backends(exclude_tags=()))
    received = []

    def backend(gm, example_inputs):
        received.append((gm, example_inputs))
        return gm.forward

    compiled = tocha.compile(lambda x: x.relu() * 2, backend=backend)
    x = tocha.randn(4)
    tocha.testing.assert_close(compiled(x), x.relu() * 2)
    tocha.testing.assert_close(compiled(x), x.relu() * 2)
    ((gm, example),) = received
    assert isinstance(gm, tocha.fx.GraphModule) and example[0] is x
    with pytest.raises(tocha._dynamo.exc.InvalidBackend, match="nonsense"):
        tocha.compile(lambda x: x, backend="nonsense")
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        tocha.compile(lambda x: x, mode="fastest")


def test_decorator_forms_and_disable_argument():
    @tocha.compile
    def f(x):
        return x * 2

    @tocha.compile(fullgraph=True, mode="reduce-overhead")
    def g(x):
        return x + 2

    x = tocha.ones(2)
    tocha.testing.assert_close(f(x), x * 2)
    tocha.testing.assert_close(g(x), x + 2)
    model = nn.Linear(1, 1)
    assert tocha.compile(model, disable=True) is model


def test_dropout_draws_as_eager_with_the_same_seed():
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
    compiled = tocha.compile(model)
    x = tocha.randn(4, 8)
    for seed in (1, 2, 3):
        tocha.manual_seed(seed)
        got = compiled(x)
        tocha.manual_seed(seed)
        tocha.testing.assert_close(got, model(x))


def test_outputs_keep_their_structure_and_non_tensor_values():
    def f(x):
        return {"double": x * 2, "pair": (x + 1, 3), "n": x.shape[0]}

    compiled = tocha.compile(f)
    for _ in range(2):
        out = compiled(tocha.ones(2))
        assert out["n"] == 2 and out["pair"][1] == 3
        tocha.testing.assert_close(out["pair"][0], tocha.full((2,), 2.0))


def test_logs_print_graphs_and_code(monkeypatch, caplog):
    monkeypatch.setenv("TOCHA_LOGS", "graph,code")
    caplog.set_level(logging.DEBUG, logger="tocha.compiler")
    tocha.compile(lambda x: (x * 2).exp())(tocha.ones(2))
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "captured" in text and "def " in text and "_forward" in text


def test_functional_cross_entropy_and_integer_inputs():
    emb = nn.Embedding(10, 4)
    compiled = tocha.compile(lambda idx, y: F.cross_entropy(emb(idx), y))
    for _ in range(2):
        idx, y = tocha.randint(0, 10, (6,)), tocha.randint(0, 4, (6,))
        loss = compiled(idx, y)
        tocha.testing.assert_close(loss, F.cross_entropy(emb(idx), y))
        loss.backward()


def test_a_backend_from_another_distribution_is_found_by_name():
    plugin = pytest.importorskip("tocha_testcompile")
    assert "counting" in tocha.compiler.list_backends()
    compiled = tocha.compile(lambda x: x.cos() + 1, backend="counting")
    x = tocha.randn(3)
    tocha.testing.assert_close(compiled(x), x.cos() + 1)
    tocha.testing.assert_close(compiled(x), x.cos() + 1)
    assert len(plugin.GRAPHS) >= 1 and isinstance(plugin.GRAPHS[-1][0], tocha.fx.GraphModule)


def test_a_step_with_backward_and_an_optimizer_inside_runs_eagerly_and_trains(caplog):
    caplog.set_level(logging.DEBUG, logger="tocha.compiler")
    tocha.manual_seed(0)
    model = nn.Linear(3, 1)
    reference = copy.deepcopy(model)
    opt = tocha.optim.SGD(model.parameters(), lr=0.1)
    opt_ref = tocha.optim.SGD(reference.parameters(), lr=0.1)

    def step(m, o, x):
        loss = m(x).square().mean()
        loss.backward()
        o.step()
        o.zero_grad()
        return loss

    compiled = tocha.compile(step)
    x = tocha.randn(8, 3)
    for _ in range(3):
        tocha.testing.assert_close(compiled(model, opt, x), step(reference, opt_ref, x))
    assert any("backward()" in r.getMessage() for r in caplog.records)
    tocha.testing.assert_close(model.weight, reference.weight)


def test_an_optimizer_step_alone_is_not_replayed_silently():
    model = nn.Linear(2, 1)
    opt = tocha.optim.SGD(model.parameters(), lr=0.5)
    compiled = tocha.compile(lambda: opt.step())
    model(tocha.ones(1, 2)).sum().backward()
    before = model.weight.detach().clone()
    for k in range(1, 4):
        compiled()
        tocha.testing.assert_close(model.weight, before - 0.5 * k)


def test_a_compiled_module_deep_copies_and_pickles():
    import io
    import pickle

    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    compiled = tocha.compile(model)
    x = tocha.randn(2, 3)
    compiled(x)
    twin = copy.deepcopy(compiled)
    assert twin._orig_mod is not model
    tocha.testing.assert_close(twin(x), compiled(x))
    buffer = io.BytesIO()
    pickle.dump(compiled, buffer)
    restored = pickle.loads(buffer.getvalue())
    tocha.testing.assert_close(restored(x), model(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_entries_keep_no_output_alive(backend):
    import gc
    import weakref

    compiled = tocha.compile(nn.Sequential(nn.Linear(4, 4), nn.Tanh()), backend=backend)
    x = tocha.randn(2, 4)
    for _ in range(2):
        out = compiled(x)
        ref = weakref.ref(out)
        del out
        gc.collect()
        assert ref() is None


def test_autocast_and_the_default_dtype_are_guarded(captures):
    compiled = tocha.compile(lambda a, b: a @ b)
    a, b = tocha.randn(4, 4), tocha.randn(4, 4)
    assert compiled(a, b).dtype == tocha.float32
    with tocha.autocast("cpu", dtype=tocha.bfloat16):
        assert compiled(a, b).dtype == tocha.bfloat16
    assert compiled(a, b).dtype == tocha.float32
    assert captures() == 2
    default = tocha.get_default_dtype()
    try:
        tocha.set_default_dtype(tocha.float64)
        ones = tocha.compile(lambda x: x + tocha.ones(4))
        assert ones(tocha.zeros(4, dtype=tocha.float64)).dtype == tocha.float64
    finally:
        tocha.set_default_dtype(default)


def test_under_vmap_and_forward_ad_the_function_runs_through_the_transforms():
    compiled = tocha.compile(lambda x: (x * x).sum())
    xs = tocha.randn(3, 4)
    tocha.testing.assert_close(tocha.vmap(compiled)(xs), (xs * xs).sum(1))
    import tocha.autograd.forward_ad as fwAD

    x, t = tocha.randn(4), tocha.randn(4)
    with fwAD.dual_level():
        out = compiled(fwAD.make_dual(x, t))
        tocha.testing.assert_close(fwAD.unpack_dual(out).tangent, (2 * x * t).sum())


def test_a_long_elementwise_chain_is_fused_and_small_ones_are_not(monkeypatch, caplog):
    monkeypatch.setenv("TOCHA_LOGS", "kernels")
    caplog.set_level(logging.DEBUG, logger="tocha.compiler")

    def chain(x, w, b):
        return ((x * w + b).tanh() * 0.5 + x).relu()

    compiled = tocha.compile(chain)
    small = [tocha.randn(100) for _ in range(3)]
    compiled(*small)
    assert not any("fused kernel" in r.getMessage() for r in caplog.records)
    x = tocha.randn(64, 512, requires_grad=True)
    w, b = tocha.randn(512, requires_grad=True), tocha.randn(512, requires_grad=True)
    for _ in range(2):
        out = compiled(x, w, b)
        out.sum().backward()
        x_ref, w_ref, b_ref = (t.detach().requires_grad_() for t in (x, w, b))
        want = chain(x_ref, w_ref, b_ref)
        want.sum().backward()
        tocha.testing.assert_close(out, want)
        for t, r in ((x, x_ref), (w, w_ref), (b, b_ref)):
            tocha.testing.assert_close(t.grad, r.grad, rtol=1e-5, atol=1e-4)
            t.grad = None
    assert any("fused kernel" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_and_its_backward_fuse_with_their_neighbours(approximate):
    def block(x, b):
        return F.gelu(x + b, approximate=approximate) * 2

    compiled = tocha.compile(block)
    for _ in range(2):
        x = tocha.randn(64, 256, requires_grad=True)
        b = tocha.randn(256, requires_grad=True)
        out = compiled(x, b)
        (out * out).sum().backward()
        x_ref, b_ref = x.detach().requires_grad_(), b.detach().requires_grad_()
        want = block(x_ref, b_ref)
        (want * want).sum().backward()
        tocha.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
        tocha.testing.assert_close(x.grad, x_ref.grad, rtol=1e-4, atol=1e-4)
        tocha.testing.assert_close(b.grad, b_ref.grad, rtol=1e-4, atol=1e-3)
