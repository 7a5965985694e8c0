"""Building graphs from Proxies outside ``symbolic_trace`` (torch.fx's GraphAppendingTracer
pattern): tocha's functions hand a call on a Proxy to ``Proxy.__torch_function__``, through
``tocha.overrides``; graphs and values are torch 2.13's, recorded by hand."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import tocha
import tocha.fx as fx
from tocha.fx.proxy import GraphAppendingTracer
from tocha.overrides import handle_torch_function, has_torch_function_unary


def _graph(*names):
    graph = fx.Graph()
    tracer = GraphAppendingTracer(graph)
    return graph, [fx.Proxy(graph.placeholder(n), tracer) for n in names]


def _calls(graph):
    return [(n.op, n.target) for n in graph.nodes if n.op not in ("placeholder", "output")]


def test_the_documented_pattern_appends_nodes():
    graph, (x,) = _graph("x")
    y = tocha.relu(x) + x.sum()
    graph.output(y.node)
    assert _calls(graph) == [
        ("call_function", tocha.relu),
        ("call_method", "sum"),
        ("call_function", operator.add),
    ]
    assert [n.name for n in graph.nodes] == ["x", "relu", "sum_1", "add", "output"]
    gm = fx.GraphModule(tocha.nn.Module(), graph)
    assert gm(tocha.tensor([-1.0, 2.0])).tolist() == [1.0, 3.0]


def test_functions_taking_lists_keywords_and_several_proxies():
    graph, (x, w) = _graph("x", "w")
    y = tocha.cat([x, w], dim=0)
    z = tocha.matmul(y, y.t())
    z = tocha.add(z, 1, alpha=2)
    z = tocha.where(z > 3, z, tocha.zeros_like(z))
    graph.output(z.node)
    assert _calls(graph) == [
        ("call_function", tocha.cat),
        ("call_method", "t"),
        ("call_function", tocha.matmul),
        ("call_function", tocha.add),
        ("call_function", operator.gt),
        ("call_function", tocha.zeros_like),
        ("call_function", tocha.where),
    ]
    cat = next(iter(graph.nodes)).next.next
    assert cat.kwargs == {"dim": 0}
    assert [a.name for a in cat.args[0]] == ["x", "w"]
    gm = fx.GraphModule(tocha.nn.Module(), graph)
    a, b = tocha.ones(2, 3), tocha.ones(1, 3)
    expected = tocha.cat([a, b]) @ tocha.cat([a, b]).t() + 2
    np.testing.assert_allclose(gm(a, b).numpy(), expected.numpy())


def test_a_proxy_tells_it_overrides():
    _, (x,) = _graph("x")
    assert has_torch_function_unary(x)
    assert not has_torch_function_unary(tocha.ones(1))


def test_any_tensor_like_type_receives_the_call():
    seen = []

    class TensorLike:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func, types, args, kwargs))
            return "handled"

    t = TensorLike()
    assert tocha.relu(t) == "handled"
    assert tocha.add(t, 2, alpha=3) == "handled"
    assert tocha.stack([tocha.ones(1), t]) == "handled"
    assert seen[0] == (tocha.relu, (TensorLike,), (t,), {})
    assert seen[1][2:] == ((t, 2), {"alpha": 3})
    assert seen[2][0] is tocha.stack
    assert handle_torch_function(tocha.relu, (t,), t) == "handled"


def test_not_implemented_everywhere_raises_type_error():
    class Refusing:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(TypeError, match="relu"):
        tocha.relu(Refusing())


def test_other_bad_arguments_raise_as_before():
    with pytest.raises(TypeError, match=r"relu\(\): argument 'input' .* must be Tensor, not str"):
        tocha.relu("x")


def test_symbolic_trace_is_unchanged():
    class M(tocha.nn.Module):
        def forward(self, x):
            return tocha.relu(x) + x.sum()

    gm = fx.symbolic_trace(M())
    assert _calls(gm.graph) == [
        ("call_function", tocha.relu),
        ("call_method", "sum"),
        ("call_function", operator.add),
    ]


def test_functions_on_tensors_are_the_functions_they_wrap():
    # the fast path runs the function itself: same results, same signature, same name
    import inspect

    assert tocha.relu.__name__ == "relu"
    assert str(inspect.signature(tocha.add)) == str(inspect.signature(tocha.add.__wrapped__))
    assert tocha.add(tocha.ones(2), tocha.ones(2)).tolist() == [2.0, 2.0]
