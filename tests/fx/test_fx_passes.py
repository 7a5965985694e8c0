"""Passes over traced graphs: Interpreter, Transformer, replace_pattern, ShapeProp."""

import operator

import numpy as np
import pytest

import tocha
import tocha.fx as fx
import tocha.nn.functional as F
from tocha import nn
from tocha.fx.passes.shape_prop import ShapeProp, TensorMetadata


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return tocha.relu(self.lin(x)) + F.relu(x)


def test_interpreter_runs_like_the_module():
    gm = fx.symbolic_trace(Net())
    x = tocha.randn(3, 4)
    np.testing.assert_allclose(
        fx.Interpreter(gm).run(x).detach().numpy(), gm(x).detach().numpy(), rtol=1e-6
    )
    assert fx.Interpreter(gm).boxed_run([x]).shape == (3, 4)


def test_interpreter_overrides_see_every_node():
    class Negate(fx.Interpreter):
        def call_function(self, target, args, kwargs):
            if target is tocha.relu:
                return -tocha.relu(*args, **kwargs)
            return super().call_function(target, args, kwargs)

    seen = []

    class Recorder(fx.Interpreter):
        def run_node(self, n):
            seen.append(n.op)
            return super().run_node(n)

    gm = fx.symbolic_trace(Net())
    x = tocha.randn(3, 4)
    lin = gm.lin(x)
    np.testing.assert_allclose(
        Negate(gm).run(x).detach().numpy(),
        (-tocha.relu(lin) + tocha.relu(x)).detach().numpy(),
        rtol=1e-6,
    )
    Recorder(gm).run(x)
    assert seen == ["placeholder", "call_module", "call_function", "call_function",
                    "call_function", "output"]  # fmt: skip


def test_interpreter_missing_argument():
    gm = fx.symbolic_trace(Net())
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        fx.Interpreter(gm).run()


def test_transformer_swapping_relu_for_gelu():
    class ReluToGelu(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target in (tocha.relu, F.relu):
                target = F.gelu
            return super().call_function(target, args, kwargs)

    module = Net()
    gm = fx.symbolic_trace(module)
    new = ReluToGelu(gm).transform()
    assert isinstance(new, fx.GraphModule)
    targets = [n.target for n in new.graph.nodes if n.op == "call_function"]
    assert targets == [F.gelu, F.gelu, operator.add]
    x = tocha.randn(3, 4)
    expected = F.gelu(module.lin(x)) + F.gelu(x)
    np.testing.assert_allclose(new(x).detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    # the original is untouched
    np.testing.assert_allclose(gm(x).detach().numpy(), module(x).detach().numpy(), rtol=1e-6)


def test_transformer_identity_keeps_structure():
    gm = fx.symbolic_trace(Net())
    new = fx.Transformer(gm).transform()
    assert [(n.op, n.name) for n in new.graph.nodes] == [(n.op, n.name) for n in gm.graph.nodes]


def test_replace_pattern():
    class M(nn.Module):
        def forward(self, x, w1, w2):
            a = tocha.cat([w1, w2]).sum()
            b = tocha.cat([w1, w2]).sum()
            return x + tocha.max(a) + tocha.max(b)

    def pattern(w1, w2):
        return tocha.cat([w1, w2]).sum()

    def replacement(w1, w2):
        return tocha.stack([w1, w2])

    gm = fx.symbolic_trace(M())
    matches = fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    assert all(isinstance(m, fx.subgraph_rewriter.Match) for m in matches)
    assert all(m.anchor.op == "call_method" and m.anchor.target == "sum" for m in matches)
    assert all(len(m.nodes_map) == 4 for m in matches)
    names = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert tocha.cat not in names and names.count(tocha.stack) == 2
    x, w1, w2 = tocha.randn(2), tocha.randn(2), tocha.randn(2)
    stacked = tocha.stack([w1, w2])
    expected = x + tocha.max(stacked) + tocha.max(stacked)
    np.testing.assert_allclose(gm(x, w1, w2).numpy(), expected.numpy(), rtol=1e-6)
    gm.graph.lint()


def test_replace_pattern_skips_when_inner_value_is_used_elsewhere():
    def f(x):
        a = x + 1
        return tocha.relu(a), a

    def pattern(x):
        return tocha.relu(x + 1)

    def replacement(x):
        return tocha.sigmoid(x)

    gm = fx.symbolic_trace(f)
    assert fx.replace_pattern(gm, pattern, replacement) == []


def test_shape_prop_fills_tensor_meta():
    gm = fx.symbolic_trace(
        nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 2))
    )
    out = ShapeProp(gm).propagate(tocha.randn(2, 3, 6, 6))
    assert out.shape == (2, 2)
    metas = {n.name: n.meta["tensor_meta"] for n in gm.graph.nodes}
    assert metas["input_1"] == TensorMetadata(
        tocha.Size([2, 3, 6, 6]), tocha.float32, False, (108, 36, 6, 1),
        tocha.contiguous_format, False, {},
    )  # fmt: skip
    assert metas["_0"].shape == (2, 4, 4, 4) and metas["_0"].requires_grad
    assert metas["_2"].shape == (2, 64) and metas["_2"].stride == (64, 1)
    assert metas["output"].shape == (2, 2)
    assert TensorMetadata._fields == (
        "shape", "dtype", "requires_grad", "stride", "memory_format", "is_quantized", "qparams",
    )  # fmt: skip
    assert gm.graph.find_nodes(op="output")[0].meta["type"] is tocha.Tensor


def test_shape_prop_against_torch(torch):
    gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU()))
    torch.fx.passes.shape_prop.ShapeProp(gm).propagate(torch.randn(2, 3))
    expected = [
        (n.name, tuple(n.meta["tensor_meta"].shape), n.meta["tensor_meta"].stride,
         n.meta["tensor_meta"].requires_grad)
        for n in gm.graph.nodes
    ]  # fmt: skip
    mine = fx.symbolic_trace(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))
    ShapeProp(mine).propagate(tocha.randn(2, 3))
    got = [
        (n.name, tuple(n.meta["tensor_meta"].shape), n.meta["tensor_meta"].stride,
         n.meta["tensor_meta"].requires_grad)
        for n in mine.graph.nodes
    ]  # fmt: skip
    assert got == expected


def test_transformer_overrides_may_call_tocha_functions_on_proxies():
    class NegSigmSwap(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target == tocha.sigmoid:  # as in torch.fx's docs; `is` sees the stand-in
                return tocha.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *rest = args
                return call_self.sigmoid(*rest, **kwargs)
            return super().call_method(target, args, kwargs)

    def fn(x):
        return tocha.sigmoid(x).neg()

    gm = fx.symbolic_trace(fn)
    transformed = NegSigmSwap(gm).transform()
    x = tocha.randn(3, 4)
    np.testing.assert_allclose(transformed(x).numpy(), tocha.neg(x).sigmoid().numpy(), rtol=1e-6)
    assert tocha.neg(tocha.ones(1)).item() == -1.0


def test_replace_pattern_with_several_outputs():
    def f(x, y):
        a = tocha.relu(x)
        b = tocha.sigmoid(x)
        return a * 2 + y, b - y

    def pattern(x):
        return tocha.relu(x), tocha.sigmoid(x)

    def replacement(x):
        return tocha.tanh(x), tocha.neg(x)

    gm = fx.symbolic_trace(f)
    matches = fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 1
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][:2] == [
        tocha.tanh,
        tocha.neg,
    ]
    gm.graph.lint()
    x, y = tocha.randn(3), tocha.randn(3)
    first, second = gm(x, y)
    np.testing.assert_allclose(first.numpy(), (tocha.tanh(x) * 2 + y).numpy(), rtol=1e-6)
    np.testing.assert_allclose(second.numpy(), (-x - y).numpy(), rtol=1e-6)


def test_replace_pattern_output_count_must_agree():
    def f(x):
        return tocha.relu(x), tocha.sigmoid(x)

    gm = fx.symbolic_trace(f)
    with pytest.raises(RuntimeError, match="returns 1 values where the pattern returns 2"):
        fx.replace_pattern(gm, lambda x: (tocha.relu(x), tocha.sigmoid(x)), lambda x: x.tanh())


def test_replace_pattern_places_the_replacement_before_the_first_reader():
    # torch 2.13: each replacement goes right before the first node reading the match
    class M(tocha.nn.Module):
        def forward(self, x, y):
            a = tocha.mul(x, y)
            b = tocha.mul(x, y)
            return tocha.neg(tocha.relu(a)) * b

    gm = tocha.fx.symbolic_trace(M())
    matches = tocha.fx.subgraph_rewriter.replace_pattern(
        gm, lambda a, b: tocha.mul(a, b), lambda a, b: tocha.sub(a, b)
    )
    assert len(matches) == 2
    order = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert order == [tocha.sub, tocha.relu, tocha.neg, tocha.sub, operator.mul]
    x, y = tocha.tensor([1.0, 2.0]), tocha.tensor([3.0, -4.0])
    assert gm(x, y).tolist() == [-0.0 * -2.0, -6.0 * 6.0]
