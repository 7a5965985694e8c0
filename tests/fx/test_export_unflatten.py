"""tocha.export: each node's ``nn_module_stack`` and ``unflatten`` rebuilding the module
hierarchy; the expected stacks and module names are torch 2.13's, recorded by hand."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tocha.export import export, unflatten
from tocha.export.unflatten import InterpreterModule, UnflattenedModule


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Linear(4, 4)
        self.register_buffer("scale", tocha.ones(4) * 2)

    def forward(self, x):
        return tocha.relu(self.conv(x)) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = Block()
        self.layer2 = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.p = nn.Parameter(tocha.ones(4))

    def forward(self, x):
        y = self.layer1(x) + self.p
        return self.layer2(y).sum(dim=-1)


class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.w = nn.Parameter(tocha.ones(4))

    def forward(self, x):
        h = self.lin(self.lin(x))
        return h * self.lin.bias, h + self.w


def _net():
    tocha.manual_seed(0)
    return Net()


def _type(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def test_nodes_carry_the_module_calls_they_were_made_in():
    ep = export(_net(), (tocha.randn(2, 4),))
    stacks = {n.name: n.meta.get("nn_module_stack") for n in ep.graph.nodes}
    root = ("", _type(Net))
    assert all(stacks[n.name] is None for n in ep.graph.nodes if n.op != "call_function")
    assert stacks["linear"] == {
        "L__self__": root,
        "L__self__layer1": ("layer1", _type(Block)),
        "L__self__layer1.conv": ("layer1.conv", _type(nn.Linear)),
    }
    assert (
        stacks["relu"]
        == stacks["mul"]
        == {
            "L__self__": root,
            "L__self__layer1": ("layer1", _type(Block)),
        }
    )
    assert stacks["add"] == stacks["sum_1"] == {"L__self__": root}
    assert list(stacks["relu_1"].items())[-1] == ("L__self__layer2.1", ("layer2.1", _type(nn.ReLU)))
    assert _type(nn.Linear) == "tocha.nn.modules.linear.Linear"


def test_a_second_call_of_a_module_is_keyed_apart():
    ep = export(Shared(), (tocha.randn(2, 4),))
    stacks = [n.meta["nn_module_stack"] for n in ep.graph.nodes if n.op == "call_function"]
    assert [list(s) for s in stacks] == [
        ["L__self__", "L__self__lin"],
        ["L__self__", "L__self__lin@1"],
        ["L__self__"],
        ["L__self__"],
    ]
    assert stacks[1]["L__self__lin@1"] == ("lin", _type(nn.Linear))


def test_unflatten_rebuilds_the_hierarchy():
    net = _net()
    ep = export(net, (tocha.randn(2, 4),))
    unflat = unflatten(ep)
    assert isinstance(unflat, UnflattenedModule)
    assert [(name, type(m).__name__) for name, m in unflat.named_modules()] == [
        ("", "UnflattenedModule"),
        ("layer1", "InterpreterModule"),
        ("layer1.conv", "InterpreterModule"),
        ("layer2", "InterpreterModule"),
        ("layer2.0", "InterpreterModule"),
        ("layer2.1", "InterpreterModule"),
    ]
    assert isinstance(unflat.layer1.conv, InterpreterModule)
    assert [k for k, _ in unflat.named_parameters()] == [
        "p",
        "layer1.conv.weight",
        "layer1.conv.bias",
        "layer2.0.weight",
        "layer2.0.bias",
    ]
    assert [k for k, _ in unflat.named_buffers()] == ["layer1.scale"]
    assert sorted(unflat.state_dict()) == sorted(net.state_dict())
    x = tocha.randn(2, 4)
    np.testing.assert_allclose(unflat(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)


def test_each_submodule_has_its_own_graph():
    unflat = unflatten(export(_net(), (tocha.randn(2, 4),)))
    ops = lambda g: [(n.op, getattr(n.target, "__name__", n.target)) for n in g.nodes]  # noqa: E731
    assert ops(unflat.graph) == [
        ("placeholder", "x"),
        ("call_module", "layer1"),
        ("get_attr", "p"),
        ("call_function", "add"),
        ("call_module", "layer2"),
        ("call_function", "sum"),
        ("output", "output"),
    ]
    assert ops(unflat.layer1.graph) == [
        ("placeholder", "x"),
        ("call_module", "conv"),
        ("call_function", "relu"),
        ("get_attr", "scale"),
        ("call_function", "mul"),
        ("output", "output"),
    ]
    assert ops(unflat.layer1.conv.graph) == [
        ("placeholder", "x"),
        ("get_attr", "weight"),
        ("get_attr", "bias"),
        ("call_function", "linear"),
        ("output", "output"),
    ]
    x = tocha.randn(2, 4)
    np.testing.assert_allclose(
        unflat.layer1.conv(x).detach().numpy(),
        tocha.nn.functional.linear(x, unflat.layer1.conv.weight, unflat.layer1.conv.bias)
        .detach()
        .numpy(),
    )


def test_a_module_called_twice_is_one_submodule_called_twice():
    mod = Shared()
    unflat = unflatten(export(mod, (tocha.randn(2, 4),)))
    assert [name for name, _ in unflat.named_modules()] == ["", "lin"]
    calls = [n for n in unflat.graph.nodes if n.op == "call_module"]
    assert [n.target for n in calls] == ["lin", "lin"]
    x = tocha.randn(2, 4)
    for got, want in zip(unflat(x), mod(x)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)


def test_a_submodule_with_several_outputs_and_inputs():
    class Pair(nn.Module):
        def forward(self, a, b):
            return a + b, a * b

    class Top(nn.Module):
        def __init__(self):
            super().__init__()
            self.pair = Pair()

        def forward(self, a, b):
            s, p = self.pair(a, b)
            return s - p

    mod = Top()
    a, b = tocha.randn(3), tocha.randn(3)
    unflat = unflatten(export(mod, (a, b)))
    kinds = [n.op for n in unflat.pair.graph.nodes]
    assert kinds.count("placeholder") == 2
    assert len(list(unflat.pair.graph.nodes)[-1].args[0]) == 2
    np.testing.assert_allclose(unflat(a, b).detach().numpy(), mod(a, b).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(
        unflat(a, b=b).detach().numpy(), mod(a, b).detach().numpy(), rtol=1e-6
    )


def test_unflatten_refuses_what_is_not_an_exported_program():
    with pytest.raises(TypeError, match="ExportedProgram"):
        unflatten(Net())


def test_nn_module_stack_names_torch_classes_under_the_torch_alias(tmp_path):
    program = textwrap.dedent(
        """
        import torch

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Linear(4, 4)

            def forward(self, x):
                return torch.relu(self.conv(x))

        ep = torch.export.export(Block(), (torch.randn(2, 4),))
        linear = next(n for n in ep.graph.nodes if n.op == "call_function")
        print(linear.meta["nn_module_stack"])
        """
    )
    script = tmp_path / "prog.py"
    script.write_text(program)
    out = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(script)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "{'L__self__': ('', '__main__.Block'), "
        "'L__self__conv': ('conv', 'torch.nn.modules.linear.Linear')}"
    )


def test_decomposed_nodes_keep_the_module_calls_and_unflatten():
    class WithNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.bn = nn.BatchNorm1d(4)

        def forward(self, x):
            return tocha.nn.functional.gelu(self.bn(self.lin(x)))

    mod = WithNorm()
    ep = export(mod, (tocha.randn(3, 4),))
    decomposed = ep.run_decompositions()
    paths = [
        [p for p, _ in n.meta["nn_module_stack"].values()]
        for n in decomposed.graph.nodes
        if n.op == "call_function"
    ]
    assert paths[0] == ["", "lin"]
    assert paths[-1] == [""]
    assert ["", "bn"] in paths
    unflat = unflatten(decomposed)
    assert [name for name, _ in unflat.named_modules()] == ["", "lin", "bn"]
    x = tocha.randn(3, 4)
    np.testing.assert_allclose(
        unflat(x).detach().numpy(), ep.module()(x).detach().numpy(), rtol=1e-5, atol=1e-6
    )


def test_save_and_load_keep_the_module_calls(tmp_path):
    net = _net()
    ep = export(net, (tocha.randn(2, 4),))
    path = tmp_path / "net.pt2"
    tocha.export.save(ep, path)
    loaded = tocha.export.load(path)
    stacks = [n.meta.get("nn_module_stack") for n in loaded.graph.nodes]
    assert stacks == [n.meta.get("nn_module_stack") for n in ep.graph.nodes]
    unflat = unflatten(loaded)
    assert [name for name, _ in unflat.named_modules()][:3] == ["", "layer1", "layer1.conv"]
    x = tocha.randn(2, 4)
    np.testing.assert_allclose(unflat(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)


def test_a_program_saved_under_the_torch_alias_loads(tmp_path):
    program = textwrap.dedent(
        f"""
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 3)

            def forward(self, x):
                return self.lin(x).relu().to(torch.float64)

        ep = torch.export.export(Net(), (torch.randn(2, 3),))
        torch.export.save(ep, {str(tmp_path / "net.pt2")!r})
        loaded = torch.export.load({str(tmp_path / "net.pt2")!r})
        x = torch.randn(2, 3)
        print(torch.equal(loaded.module()(x), ep.module()(x)))
        """
    )
    script = tmp_path / "prog.py"
    script.write_text(program)
    out = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(script)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
