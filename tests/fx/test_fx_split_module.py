"""tocha.fx.passes.split_module against torch.fx's documented behaviour: one GraphModule per
partition, inputs and outputs threaded between them, the partitions called in dependency
order, and a cycle between partitions refused."""

from __future__ import annotations

import pytest

import tocha
import tocha.fx as fx
import tocha.nn as nn
from tocha.fx.passes.split_module import split_module


class MyModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.param = nn.Parameter(tocha.rand(3, 4))
        self.linear = nn.Linear(4, 5)
        self.seq = nn.Sequential(nn.Linear(5, 5))

    def forward(self, x, y):
        z = self.linear(x + self.param).clamp(min=0.0, max=1.0)
        w = self.linear(y).clamp(min=0.0, max=1.0)
        return self.seq(z + w), w


PARTITION = {"add": 0, "linear": 0, "clamp": 0, "linear_1": 1, "clamp_1": 1}


def _traced():
    model = MyModule()
    return model, fx.symbolic_trace(model)


def test_partitions_become_submodules_called_in_dependency_order():
    model, traced = _traced()
    names: dict[str, str] = {}
    split = split_module(traced, model, lambda n: PARTITION.get(n.name, 2), qualname_map=names)
    # the last partition found without dependencies is called first, as in torch.fx
    assert [name for name, _ in split.named_children()] == ["submod_1", "submod_0", "submod_2"]
    assert names == {
        "submod_0.linear": "linear",
        "submod_1.linear": "linear",
        "submod_2.seq_0": "seq.0",
    }
    code = split.code
    assert "submod_1 = self.submod_1(y)" in code
    assert "submod_0 = self.submod_0(x, param)" in code
    assert "submod_2 = self.submod_2(submod_0, submod_1)" in code
    assert "return (submod_2, submod_1)" in code
    sub0 = split.submod_0
    assert [n.name for n in sub0.graph.nodes] == ["x", "param", "add", "linear", "clamp", "output"]
    assert sub0.linear is model.linear  # modules are shared, not copied
    x, y = tocha.randn(3, 4), tocha.randn(3, 4)
    for got, want in zip(split(x, y), model(x, y)):
        tocha.testing.assert_close(got, want)


def test_several_outputs_are_unpacked_and_options():
    model, traced = _traced()
    split = split_module(traced, model, lambda n: 0, keep_original_node_name=True)
    assert "getitem = submod_0[0]" in split.code and "getitem_1 = submod_0[1]" in split.code
    assert "return (seq_0, clamp_1)" in split.submod_0.code
    affixed = split_module(traced, model, lambda n: 1, partition_affix="foo")
    assert [name for name, _ in affixed.named_children()] == ["submod_foo_1"]
    single = split_module(traced, model, lambda n: PARTITION.get(n.name, 2), tuple_return=True)
    assert "getitem" in single.code
    x, y = tocha.randn(3, 4), tocha.randn(3, 4)
    for module in (split, affixed, single):
        for got, want in zip(module(x, y), model(x, y)):
            tocha.testing.assert_close(got, want)


def test_a_cycle_between_partitions_raises():
    model, traced = _traced()
    with pytest.raises(RuntimeError, match="cycle exists between partitions!"):
        split_module(traced, model, lambda n: 1 if n.name == "linear" else 0)
