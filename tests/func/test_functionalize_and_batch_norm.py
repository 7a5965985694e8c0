"""tocha.func.functionalize and replace_all_batch_norm_modules_, as torch.func's."""

from __future__ import annotations

import pytest

import tocha
from tocha.func import functionalize, replace_all_batch_norm_modules_, vmap
from tocha.fx.experimental.proxy_tensor import make_fx


def _mutating(x):
    y = x * 2
    y.add_(1)
    x.mul_(3)
    return y


def test_functionalize_keeps_outputs_and_input_mutations():
    x = tocha.ones(2)
    assert functionalize(_mutating)(x).tolist() == [3.0, 3.0]
    assert x.tolist() == [3.0, 3.0]


def test_traced_functionalized_graph_has_no_in_place_op_but_the_copy_back():
    graph = make_fx(functionalize(_mutating, remove="mutations_and_views"))(tocha.ones(2))
    targets = [n.target for n in graph.graph.nodes if n.op == "call_function"]
    names = [getattr(t, "__name__", str(t)).rsplit(".", 1)[-1] for t in targets]
    assert names == ["mul", "add", "mul", "copy_"]
    x = tocha.full((2,), 2.0)
    assert graph(x).tolist() == [5.0, 5.0] and x.tolist() == [6.0, 6.0]


def test_functionalize_refuses_an_unknown_remove():
    with pytest.raises(RuntimeError, match="received invalid argument for remove=bad"):
        functionalize(_mutating, remove="bad")


def test_replace_all_batch_norm_modules():
    model = tocha.nn.Sequential(
        tocha.nn.BatchNorm1d(3), tocha.nn.Linear(3, 3), tocha.nn.BatchNorm1d(3)
    )
    assert replace_all_batch_norm_modules_(model) is model
    for bn in (model[0], model[2]):
        assert bn.running_mean is None and bn.running_var is None
        assert bn.num_batches_tracked is None and not bn.track_running_stats
    assert list(model.state_dict()) == [
        "0.weight",
        "0.bias",
        "1.weight",
        "1.bias",
        "2.weight",
        "2.bias",
    ]
    model.eval()
    x = tocha.randn(4, 5, 3)
    batched = vmap(model)(x)
    for i in range(4):
        assert tocha.allclose(batched[i], model(x[i]), atol=1e-6)
