"""The compiler's linear-activation pass: in inference graphs ``act(linear(x, w, b))``
becomes one ``linear_pointwise`` with the same values; a linear map with other uses, and
graphs that compute gradients, stay as they are."""

from __future__ import annotations

import pytest

import tocha
import tocha.nn.functional as F
from tocha.compiler import _passes

ACTIVATIONS = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"),
    "tanh": tocha.tanh,
    "sigmoid": tocha.sigmoid,
    "silu": F.silu,
}


@pytest.fixture
def graphs(monkeypatch):
    """The primitives of each graph the compiler optimizes, after the passes."""
    seen = []
    optimize = _passes.optimize

    def spy(gm):
        optimize(gm)
        seen.append([n.target.name for n in gm.graph.nodes if n.op == "call_function"])

    monkeypatch.setattr(_passes, "optimize", spy)
    return seen


def _operands():
    gen = tocha.Generator().manual_seed(0)
    return tocha.randn(6, 8, generator=gen), tocha.randn(5, 8, generator=gen), tocha.randn(5)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_inference_graph_fuses_and_agrees(graphs, name):
    act = ACTIVATIONS[name]

    def fn(x, w, b):
        return act(F.linear(x, w, b)) * 2

    x, w, b = _operands()
    with tocha.no_grad():
        got = tocha.compile(fn)(x, w, b)
    assert "linear_pointwise" in graphs[-1] and "linear" not in graphs[-1]
    tocha.testing.assert_close(got, fn(x, w, b), rtol=1e-5, atol=1e-5)


def test_a_linear_map_with_other_uses_stays(graphs):
    x, w, b = _operands()
    with tocha.no_grad():
        tocha.compile(lambda x, w, b: (lambda z: F.relu(z) + z)(F.linear(x, w, b)))(x, w, b)
    assert "linear_pointwise" not in graphs[-1]


def test_training_graphs_stay(graphs):
    x, w, b = _operands()
    w.requires_grad_()
    tocha.compile(lambda x, w, b: F.relu(F.linear(x, w, b)))(x, w, b).sum().backward()
    assert all("linear_pointwise" not in g for g in graphs)
    assert w.grad is not None
