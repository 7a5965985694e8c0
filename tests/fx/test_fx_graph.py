"""tocha.fx's Graph, Node and GraphModule built by hand: structure, printing, code
generation, editing, lint and dead-code elimination."""

import copy
import operator
import pickle

import numpy as np
import pytest

import tocha
import tocha.fx as fx
from tocha import nn


def _add_relu_graph():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    add = g.call_function(operator.add, (x, y))
    relu = g.call_function(tocha.relu, (add,))
    g.output(relu)
    return g, (x, y, add, relu)


def test_building_a_graph_links_users_and_names():
    g, (x, y, add, relu) = _add_relu_graph()
    assert [n.op for n in g.nodes] == ["placeholder", "placeholder", "call_function",
                                       "call_function", "output"]  # fmt: skip
    assert [n.name for n in g.nodes] == ["x", "y", "add", "relu", "output"]
    assert list(x.users) == [add]
    assert add.all_input_nodes == [x, y]
    assert add.next is relu and relu.prev is add
    assert len(g.nodes) == 5
    add2 = g.create_node("call_function", operator.add, (add, add))
    assert add2.name == "add_1"
    assert list(add.users) == [relu, add2]


def test_graph_str_matches_torch_format():
    g, _ = _add_relu_graph()
    text = str(g)
    assert text.splitlines()[0] == "graph():"
    assert "    %x : [num_users=1] = placeholder[target=x]" in text
    assert (
        "    %add : [num_users=1] = call_function[target=operator.add](args = (%x, %y), "
        "kwargs = {})" in text
    )
    assert "%relu : [num_users=1] = call_function[target=tocha.relu](args = (%add,)" in text
    assert text.splitlines()[-1] == "    return relu"


def test_graph_module_code_runs_like_eager():
    g, _ = _add_relu_graph()
    gm = fx.GraphModule(nn.Module(), g)
    assert "def forward(self, x, y):" in gm.code
    assert "add = x + y" in gm.code
    assert "relu = tocha.relu(add)" in gm.code
    a, b = tocha.randn(3, 4), tocha.randn(3, 4)
    np.testing.assert_allclose(gm(a, b).numpy(), np.maximum(a.numpy() + b.numpy(), 0))


def test_args_setter_updates_users_and_recompile_changes_forward():
    g, (x, y, add, relu) = _add_relu_graph()
    gm = fx.GraphModule(nn.Module(), g)
    relu.args = (x,)
    assert add not in list(x.users) or relu in x.users
    assert relu not in add.users
    gm.graph.eliminate_dead_code()
    assert [n.name for n in gm.graph.nodes] == ["x", "y", "relu", "output"]
    gm.recompile()
    a = tocha.tensor([-1.0, 2.0])
    np.testing.assert_allclose(gm(a, a).numpy(), [0.0, 2.0])


def test_inserting_before_and_after():
    g, (x, y, add, relu) = _add_relu_graph()
    with g.inserting_after(add):
        neg = g.call_function(operator.neg, (add,))
    relu.replace_input_with(add, neg)
    with g.inserting_before(relu):
        mul = g.call_function(operator.mul, (neg, 2))
    relu.args = (mul,)
    assert [n.name for n in g.nodes] == ["x", "y", "add", "neg", "mul", "relu", "output"]
    gm = fx.GraphModule({}, g)
    a = tocha.tensor([1.0, -3.0])
    np.testing.assert_allclose(gm(a, a).numpy(), [0.0, 12.0])
    g.lint()


def test_replace_all_uses_with_and_erase():
    g, (x, y, add, relu) = _add_relu_graph()
    with g.inserting_after(add):
        sub = g.call_function(operator.sub, (x, y))
    changed = add.replace_all_uses_with(sub)
    assert changed == [relu]
    assert relu.args == (sub,)
    g.erase_node(add)
    assert "add" not in [n.name for n in g.nodes]
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(sub)
    with pytest.raises(TypeError):
        sub.replace_all_uses_with("relu")


def test_replace_all_uses_with_delete_user_cb_and_propagate_meta():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(tocha.relu, (x,))
    b = g.call_function(tocha.sigmoid, (x,))
    g.output((a, b))
    x.meta["val"] = 1
    y = g.placeholder("y")
    changed = x.replace_all_uses_with(y, lambda user: user is a, propagate_meta=True)
    assert changed == [a]
    assert a.args == (y,) and b.args == (x,)
    assert y.meta == {"val": 1}


def test_node_update_arg_kwarg_prepend_append():
    g, (x, y, add, relu) = _add_relu_graph()
    add.update_arg(1, 3.0)
    assert add.args == (x, 3.0) and y.users == {}
    relu.update_kwarg("inplace", False)
    assert relu.kwargs == {"inplace": False}
    relu.append(add)  # moves add after relu: out of order, lint notices
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    relu.prepend(add)
    g.lint()


def test_find_nodes_and_print_tabular(capsys):
    g, (x, y, add, relu) = _add_relu_graph()
    assert g.find_nodes(op="placeholder") == [x, y]
    assert g.find_nodes(op="call_function", target=tocha.relu) == [relu]
    g.print_tabular()
    out = capsys.readouterr().out
    assert "opcode" in out and "operator.add" in out and "tocha.relu" in out


def test_lint_errors():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(x)
    gm = fx.GraphModule(nn.Module(), g)
    with pytest.warns(UserWarning, match="no underlying reference"):
        with g.inserting_before(g.output_node()):
            g.get_attr("missing")
    with pytest.raises(RuntimeError, match="nonexistent attribute missing"):
        gm.graph.lint()
    other = fx.Graph()
    foreign = other.placeholder("z")
    g2 = fx.Graph()
    p = g2.placeholder("p")
    g2.output((p, foreign))
    with pytest.raises(RuntimeError, match="does not belong to this Graph"):
        g2.lint()


def test_eliminate_dead_code_keeps_impure_nodes():
    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(tocha.relu, (x,))
    g.call_method("add_", (x, 1))
    g.call_function(tocha.rand, (3,))
    g.output(x)
    assert g.eliminate_dead_code()
    assert [n.op + ":" + str(n.target) for n in g.nodes if n.op != "call_function"] == [
        "placeholder:x", "call_method:add_", "output:output"
    ]  # fmt: skip
    assert [n.target for n in g.nodes if n.op == "call_function"] == [tocha.rand]
    assert not g.eliminate_dead_code()


def test_graph_copy_node_copy_and_deepcopy():
    g, _ = _add_relu_graph()
    g2 = copy.deepcopy(g)
    assert [n.name for n in g2.nodes] == [n.name for n in g.nodes]
    assert all(n.graph is g2 for n in g2.nodes)
    g3 = fx.Graph()
    env = {}
    out = g3.graph_copy(g, env)
    g3.output(out)
    assert str(g3) == str(g)


def test_get_attr_call_module_and_dotted_targets():
    root = nn.Module()
    root.layer1 = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    root.scale = nn.Parameter(tocha.tensor(2.0))
    g = fx.Graph()
    x = g.placeholder("x")
    h = g.call_module("layer1.0", (x,))
    s = g.get_attr("scale")
    g.output(g.call_function(operator.mul, (h, s)))
    gm = fx.GraphModule(root, g)
    assert [n.name for n in g.nodes] == ["x", "layer1_0", "scale", "mul", "output"]
    assert 'getattr(self.layer1, "0")(x)' in gm.code
    assert set(dict(gm.named_parameters())) == {"layer1.0.weight", "layer1.0.bias", "scale"}
    a = tocha.randn(2, 3)
    np.testing.assert_allclose(
        gm(a).detach().numpy(), (root.layer1[0](a) * 2).detach().numpy(), rtol=1e-6
    )
    assert not hasattr(gm.layer1, "1")


def test_graph_module_from_dict_and_missing_target():
    g = fx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("w")
    g.output(g.call_function(operator.add, (x, w)))
    gm = fx.GraphModule({"w": tocha.ones(2)}, g)
    np.testing.assert_allclose(gm(tocha.zeros(2)).numpy(), [1.0, 1.0])
    with pytest.raises(RuntimeError, match="not provided in ``root``"):
        fx.GraphModule({}, g)


def test_placeholder_defaults_and_varargs_in_code():
    g = fx.Graph()
    x = g.placeholder("x")
    k = g.placeholder("k", default_value=2)
    g.output(g.call_function(operator.mul, (x, k)))
    gm = fx.GraphModule({}, g)
    assert "def forward(self, x, k = 2):" in gm.code
    np.testing.assert_allclose(gm(tocha.ones(2)).numpy(), [2.0, 2.0])
    np.testing.assert_allclose(gm(tocha.ones(2), 3).numpy(), [3.0, 3.0])


def test_deepcopy_and_pickle_graph_module():
    root = nn.Module()
    root.lin = nn.Linear(4, 2)
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(tocha.relu, (g.call_module("lin", (x,)),)))
    gm = fx.GraphModule(root, g, class_name="MyNet")
    a = tocha.randn(3, 4)
    expected = gm(a).detach().numpy()
    for other in (copy.deepcopy(gm), pickle.loads(pickle.dumps(gm))):
        assert type(other).__name__ == "MyNet"
        assert other.code == gm.code
        np.testing.assert_allclose(other(a).detach().numpy(), expected)
        assert other.lin.weight is not gm.lin.weight
    gm2 = copy.deepcopy(gm)
    with tocha.no_grad():
        gm2.lin.weight.zero_()
    assert not np.allclose(gm(a).detach().numpy(), gm2(a).detach().numpy()) or np.all(expected == 0)


def test_state_dict_round_trip(tmp_path):
    root = nn.Module()
    root.lin = nn.Linear(4, 2)
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("lin", (x,)))
    gm = fx.GraphModule(root, g)
    tocha.save(gm.state_dict(), tmp_path / "sd.pt")
    sd = tocha.load(tmp_path / "sd.pt")
    assert set(sd) == {"lin.weight", "lin.bias"}
    gm.load_state_dict(sd)


def test_submodule_management():
    root = nn.Module()
    root.a = nn.ReLU()
    root.b = nn.Sigmoid()
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("a", (x,)))
    gm = fx.GraphModule(root, g)
    assert gm.add_submodule("extra.inner", nn.Tanh())
    assert isinstance(gm.get_submodule("extra.inner"), nn.Tanh)
    gm.delete_all_unused_submodules()
    assert [name for name, _ in gm.named_modules()] == ["", "a"]
    assert gm.delete_submodule("a")
    assert not gm.delete_submodule("a")


def test_print_readable_and_str():
    g, _ = _add_relu_graph()
    gm = fx.GraphModule(nn.Module(), g, class_name="Net")
    text = gm.print_readable(print_output=False)
    assert text.startswith("class Net(tocha.nn.Module):")
    assert "    def forward(self, x, y):" in text
    assert gm.code in str(gm)


def test_map_arg_and_map_aggregate():
    g, (x, y, add, relu) = _add_relu_graph()
    mapped = fx.map_arg((x, [y, 1], {"k": add}), lambda n: n.name)
    assert mapped == ("x", ["y", 1], {"k": "add"})
    assert fx.map_aggregate((1, [2, (3,)]), lambda v: v * 10) == (10, [20, (30,)])
    with pytest.raises(TypeError, match="'immutable_dict' object does not support mutation"):
        relu.kwargs["new"] = 1
    g.call_function(tocha.cat, ([x, y],))
    with pytest.raises(TypeError, match="'immutable_list' object does not support mutation"):
        list(g.nodes)[-1].args[0].append(x)


def test_bad_ops_and_targets():
    g = fx.Graph()
    with pytest.raises(AssertionError, match="op 'bad' is not in _legal_ops"):
        g.create_node("bad", "x")
    with pytest.raises(ValueError, match="target nope has type str but a Callable is expected"):
        g.call_function("nope")


def test_replace_all_uses_with_reaches_the_replacement_too_as_in_torch():
    g, (x, y, add, relu) = _add_relu_graph()
    with g.inserting_after(add):
        neg = g.call_function(operator.neg, (add,))
    # torch.fx rewires every user, the replacement included: delete_user_cb guards it.
    assert add.replace_all_uses_with(neg, lambda user: user is not neg) == [relu]
    assert neg.args == (add,) and relu.args == (neg,)


def test_node_format_and_is_impure():
    g, (x, y, add, relu) = _add_relu_graph()
    assert add.format_node() == (
        "%add : [num_users=1] = call_function[target=operator.add](args = (%x, %y), kwargs = {})"
    )
    assert g.output_node().format_node() == "return relu"
    assert x.is_impure() and not add.is_impure()
    assert repr(add) == "add"


def test_erasing_while_iterating():
    g = fx.Graph()
    x = g.placeholder("x")
    for _ in range(3):
        g.call_function(tocha.relu, (x,))
    g.output(x)
    for node in g.nodes:
        if node.op == "call_function":
            g.erase_node(node)
    assert [n.op for n in g.nodes] == ["placeholder", "output"]
    assert len(g.nodes) == 2
    assert [n.name for n in reversed(g.nodes)] == ["output", "x"]


def test_print_tabular_without_tabulate(capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tabulate", None)
    g, _ = _add_relu_graph()
    g.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert lines[4].split()[:3] == ["call_function", "add", "operator.add"]
    assert len(lines) == 2 + len(g.nodes)
