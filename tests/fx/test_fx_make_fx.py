"""tocha.fx.experimental.proxy_tensor.make_fx: a function traced on real values into a graph of
tocha's primitives, through autograd when the function asks for gradients."""

from __future__ import annotations

import pytest

import tocha
from tocha.export import ops
from tocha.fx.experimental.proxy_tensor import DataDependentValueChanged, make_fx


def _targets(gm):
    return [n.target.name for n in gm.graph.nodes if isinstance(n.target, ops.Primitive)]


def test_records_the_primitives_and_recomputes_on_new_values():
    gm = make_fx(lambda x, y: (x * y).sin().sum())(tocha.randn(3), tocha.randn(3))
    assert _targets(gm) == ["mul", "sin", "sum"]
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["arg0_1", "arg1_1"]
    x, y = tocha.randn(3), tocha.randn(3)
    tocha.testing.assert_close(gm(x, y), (x * y).sin().sum())


def test_traces_through_the_backward_of_autograd_grad():
    w = tocha.randn(4, requires_grad=True)

    def f(x):
        loss = (x * w).tanh().sum()
        return tocha.autograd.grad(loss, w)[0]

    gm = make_fx(f)(tocha.randn(4))
    assert "tanh" in _targets(gm) and _targets(gm).count("mul") >= 2
    x = tocha.randn(4)
    tocha.testing.assert_close(gm(x), x * (1 - (x * w).tanh() ** 2))


def test_outputs_keep_structure_and_constants_are_attributes():
    c = tocha.arange(3.0)
    gm = make_fx(lambda x: {"a": x + c, "b": [x.exp(), 2]})(tocha.zeros(3))
    assert any(n.op == "get_attr" for n in gm.graph.nodes)
    assert tocha.equal(gm._tensor_constant0, c)
    out = gm(tocha.ones(3))
    tocha.testing.assert_close(out["a"], 1 + c)
    assert out["b"][1] == 2


def test_a_write_into_an_input_is_copied_back():
    gm = make_fx(lambda x: x.add_(1).mul(2))(tocha.zeros(2))
    assert gm.graph.nodes and any(n.target is tocha.Tensor.copy_ for n in gm.graph.nodes)
    x = tocha.ones(2)
    tocha.testing.assert_close(gm(x), tocha.full((2,), 4.0))
    tocha.testing.assert_close(x, tocha.full((2,), 2.0))


def test_values_read_into_python_are_checked_when_the_graph_runs():
    def f(x):
        return x * 2 if x.sum() > 0 else x * 3

    gm = make_fx(f)(tocha.ones(2))
    tocha.testing.assert_close(gm(tocha.full((2,), 5.0)), tocha.full((2,), 10.0))
    with pytest.raises(DataDependentValueChanged, match="__bool__"):
        gm(-tocha.ones(2))


def test_only_real_tracing_without_decompositions():
    with pytest.raises(NotImplementedError, match="fake"):
        make_fx(lambda x: x, tracing_mode="fake")
    with pytest.raises(NotImplementedError, match="decomposition"):
        make_fx(lambda x: x, decomposition_table={tocha.sin: None})
