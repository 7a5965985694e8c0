"""Symbolic tracing against torch.fx: the graphs of the modules below are compared node by
node with torch's, recorded in fixtures/fx_trace_graphs.json by
scripts/record_fx_fixtures.py (which defines the same modules with torch), and the
generated code must compute what the eager module computes."""

import builtins
import json
import operator
from pathlib import Path

import numpy as np
import pytest

import tocha
import tocha.fx
import tocha.nn.functional as F
from tocha import nn

FIXTURES = json.loads((Path(__file__).parent / "fixtures" / "fx_trace_graphs.json").read_text())


def describe(graph, lib=tocha) -> list[list]:
    """The nodes as ``[name, op, target, args, kwargs]`` rows, spelled as the fixture
    script spells them (``lib.relu``)."""
    namespaces = [
        ("lib.nn.functional", lib.nn.functional),
        ("lib.linalg", lib.linalg),
        ("lib.special", lib.special),
        ("lib.fft", lib.fft),
        ("lib", lib),
        ("operator", operator),
        ("builtins", builtins),
    ]

    def target(t):
        if isinstance(t, str):
            return t
        name = getattr(t, "__name__", None)
        for prefix, ns in namespaces:
            if name and ns.__dict__.get(name) is t:
                return f"{prefix}.{name}"
        return name or repr(t)

    def enc(a):
        if isinstance(a, tocha.fx.Node):
            return f"%{a.name}"
        if isinstance(a, tuple):
            inner = ", ".join(enc(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(enc(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {enc(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({enc(a.start)}, {enc(a.stop)}, {enc(a.step)})"
        if isinstance(a, float):
            return repr(float(a))
        return repr(a).replace("tocha.", "lib.")

    return [
        [n.name, n.op, target(n.target), [enc(a) for a in n.args],
         {k: enc(v) for k, v in n.kwargs.items()}]
        for n in graph.nodes
    ]  # fmt: skip


def assert_same_graph(graph, expected):
    got = describe(graph)
    assert [row[:4] for row in got] == [_normalise(row)[:4] for row in expected]
    for (name, op, _, _, kwargs), want in zip(got, expected):
        if op == "call_function":
            # torch's functions also pass their defaults on (F.relu's inplace=False).
            assert kwargs.items() <= want[4].items(), name
        else:
            assert kwargs == want[4], name


def _normalise(row):
    # torch._assert has no public tocha twin; tocha.fx records its own check function.
    return [row[0], row[1], "_assert" if row[2] == "lib._assert" else row[2], *row[3:]]


def my_scale(x, k):
    return x * k


tocha.fx.wrap("my_scale")


class ResBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        x = tocha.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


class ViewSize(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 2)

    def forward(self, x):
        return self.fc(x.view(x.size(0), -1))


class Params(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(tocha.randn(4, 3))
        self.scale = nn.Parameter(tocha.ones(3))
        self.register_buffer("shift", tocha.zeros(3))

    def forward(self, x):
        y = tocha.matmul(x, self.weight) * self.scale
        return self.shift + y


class Cat(nn.Module):
    def forward(self, x):
        return tocha.cat([x, x * 2, tocha.sigmoid(x)], dim=1)


class GetItem(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        n = x.shape[-1]
        return a[0] + b[:, 1:2], x[..., None], n


class Kwargs(nn.Module):
    def forward(self, x):
        s = tocha.sum(x, dim=1, keepdim=True)
        m = x.mean(dim=-1)
        return F.softmax(x, dim=-1) + s, tocha.clamp(m, min=0.0, max=1.0)


class Wrapped(nn.Module):
    def forward(self, x):
        return my_scale(x, 3.0) + 1


class MyAct(nn.Module):
    def forward(self, x):
        return tocha.tanh(x) * 2


class WithCustom(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = MyAct()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return self.act(self.lin(x))


class Concrete(nn.Module):
    def forward(self, x, flag=True, y=None):
        if flag:
            x = x * 2
        if y is not None:
            x = x + y
        return x


class Constants(nn.Module):
    def forward(self, x):
        return x + tocha.ones(3), tocha.arange(3)


class Methods(nn.Module):
    def forward(self, x):
        y = x.transpose(0, 1).contiguous().reshape(-1)
        return y.unsqueeze(0).float(), x.t(), x.permute(1, 0)


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.layers = nn.Sequential(nn.Linear(3, 3), nn.ReLU())

    def forward(self, x):
        return self.layers(self.lin(x))


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Inner()

    def forward(self, x):
        return self.sub(x) - x


class Scalars(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", tocha.ones(3))

    def forward(self, x):
        y = 2 * x - 1
        z = (1 - y) / 2 + y**2
        return -z, self.b + x, x @ x.t(), abs(x), x > 0


class LeafTracer(tocha.fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, MyAct) or super().is_leaf_module(m, qualname)


# name -> (module factory, example input shape, concrete_args)
CASES = {
    "resnet_block": (ResBlock, (2, 4, 5, 5), None),
    "mlp": (MLP, (2, 3, 4), None),
    "view_size": (ViewSize, (2, 3, 4), None),
    "params": (Params, (2, 4), None),
    "cat": (Cat, (2, 3), None),
    "getitem": (GetItem, (4, 6), None),
    "kwargs": (Kwargs, (2, 5), None),
    "wrapped": (Wrapped, (3,), None),
    "custom_traced_through": (WithCustom, (2, 3), None),
    "concrete_args": (Concrete, (3,), {"flag": False, "y": None}),
    "constants": (Constants, (3,), None),
    "methods": (Methods, (2, 3), None),
    "nested": (Nested, (2, 3), None),
    "scalars": (Scalars, (3,), None),
}


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in _flat(item)]
    return [value]


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
def test_graph_matches_torch_fx(name):
    factory, shape, concrete = CASES[name]
    module = factory().eval()
    gm = tocha.fx.symbolic_trace(module, concrete_args=concrete)
    assert_same_graph(gm.graph, FIXTURES[name])
    gm.graph.lint()
    args = (tocha.randn(*shape),) if concrete is None else (tocha.randn(*shape), False, None)
    expected = module(*args)
    for got, want in zip(_flat(gm(*args)), _flat(expected), strict=True):
        if isinstance(want, tocha.Tensor):
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5)
        else:
            assert got == want


def test_leaf_module_override_matches_torch_fx():
    root = WithCustom()
    graph = LeafTracer().trace(root)
    assert_same_graph(graph, FIXTURES["leaf_override"])
    gm = tocha.fx.GraphModule(root, graph)
    assert isinstance(gm.act, MyAct)
    x = tocha.randn(2, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(), root(x).detach().numpy(), rtol=1e-6)


def test_generated_code_reads_like_torch():
    code = tocha.fx.symbolic_trace(MLP()).code
    assert "def forward(self, x):" in code
    assert "flatten = tocha.flatten(x, 1);  x = None" in code
    assert "relu = tocha.nn.functional.relu(fc1)" in code
    assert code.rstrip().endswith("return fc2")
    nested = tocha.fx.symbolic_trace(Nested()).code
    assert 'sub_layers_0 = getattr(self.sub.layers, "0")(sub_lin)' in nested


def test_concrete_args_check_later_calls():
    gm = tocha.fx.symbolic_trace(Concrete(), concrete_args={"flag": False, "y": None})
    assert "def forward(self, x, flag_1 = True, y_1 = None):" in gm.code
    x = tocha.ones(3)
    np.testing.assert_allclose(gm(x, False).numpy(), [1.0, 1.0, 1.0])
    with pytest.raises(AssertionError, match="y has been specialized to have value None"):
        gm(x, False, tocha.ones(3))
    # As in torch, the placeholder keeps the parameter's default (True), which fails the check.
    with pytest.raises(AssertionError, match="flag has been specialized to have value False"):
        gm(x)


def test_control_flow_raises_trace_error():
    class Branchy(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    with pytest.raises(
        tocha.fx.TraceError,
        match="symbolically traced variables cannot be used as inputs to control flow",
    ):
        tocha.fx.symbolic_trace(Branchy())


def test_iteration_and_len_refused():
    class Loop(nn.Module):
        def forward(self, x):
            return [row for row in x]

    class Len(nn.Module):
        def forward(self, x):
            return x * len(x)

    with pytest.raises(tocha.fx.TraceError, match="Proxy object cannot be iterated"):
        tocha.fx.symbolic_trace(Loop())
    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing"):
        tocha.fx.symbolic_trace(Len())


def test_tracing_restores_eager_functions():
    before = (tocha.relu, F.relu, tocha.Tensor.__add__, nn.Module.__call__)
    tocha.fx.symbolic_trace(MLP())
    with pytest.raises(tocha.fx.TraceError):
        tocha.fx.symbolic_trace(Concrete())
    assert (tocha.relu, F.relu, tocha.Tensor.__add__, nn.Module.__call__) == before
    assert not tocha.fx.is_fx_tracing()


def test_trace_a_function_and_varargs():
    def f(x, *rest):
        return tocha.relu(x) + rest[0]

    gm = tocha.fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.nodes if n.op == "placeholder"] == ["x", "*rest"]
    assert "def forward(self, x, *rest):" in gm.code
    a, b = tocha.randn(3), tocha.randn(3)
    np.testing.assert_allclose(gm(a, b).numpy(), (tocha.relu(a) + b).numpy())


def test_param_shapes_constant():
    class UsesShape(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(tocha.ones(2, 3))

        def forward(self, x):
            return x.reshape(-1, self.w.shape[1]) + self.w.size(1)

    default = tocha.fx.Tracer().trace(UsesShape())
    assert any(n.target is getattr for n in default.nodes)
    constant = tocha.fx.Tracer(param_shapes_constant=True).trace(UsesShape())
    assert not any(n.target is getattr for n in constant.nodes)
    reshape = next(n for n in constant.nodes if n.target == "reshape")
    assert reshape.args[1:] == (-1, 3)


def test_tracer_hooks_and_nn_module_stack():
    tracer = tocha.fx.Tracer()
    graph = tracer.trace(Nested())
    lin = next(n for n in graph.nodes if n.name == "sub_lin")
    assert list(lin.meta["nn_module_stack"]) == ["sub", "sub.lin"]
    assert tracer.path_of_module(tracer.root.sub.lin) == "sub.lin"
    with pytest.raises(NameError, match="module is not installed as a submodule"):
        tracer.path_of_module(nn.ReLU())
    with pytest.raises(NotImplementedError, match="argument of type"):
        tracer.create_arg(object())


def test_wrap_must_be_module_level():
    with pytest.raises(NotImplementedError, match="top level of a module"):
        tocha.fx.wrap("my_scale")


def test_builtin_sequential_against_torch(torch):
    seq = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
    gm = torch.fx.symbolic_trace(seq)
    expected = [(n.op, str(n.target), n.name) for n in gm.graph.nodes]
    mine = tocha.fx.symbolic_trace(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))
    assert [(n.op, str(n.target), n.name) for n in mine.graph.nodes] == expected


def test_builtin_cnn_against_torch(torch):
    def build(lib):
        return lib.nn.Sequential(
            lib.nn.Conv2d(3, 4, 3),
            lib.nn.BatchNorm2d(4),
            lib.nn.ReLU(),
            lib.nn.MaxPool2d(2),
            lib.nn.Flatten(),
            lib.nn.Linear(4, 2),
        )

    gm = torch.fx.symbolic_trace(build(torch))
    expected = [(n.op, str(n.target), n.name, len(n.users)) for n in gm.graph.nodes]
    mine = tocha.fx.symbolic_trace(build(tocha))
    assert [(n.op, str(n.target), n.name, len(n.users)) for n in mine.graph.nodes] == expected
    assert str(mine.graph) == str(gm.graph)


def doubled(x):
    return x * 2


tocha.fx.wrap(doubled)


def test_wrap_a_function_object():
    def f(x):
        return doubled(tocha.relu(x))

    gm = tocha.fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [tocha.relu, doubled]
    x = tocha.randn(4)
    np.testing.assert_allclose(gm(x).numpy(), (tocha.relu(x) * 2).numpy())
    assert doubled(tocha.ones(1)).item() == 2.0  # eager calls are untouched


def test_keyword_only_and_var_keyword_parameters_like_torch():
    def f(x, *, k=2):
        return x * k

    gm = tocha.fx.symbolic_trace(f)
    assert "def forward(self, x, k = 2):" in gm.code
    np.testing.assert_allclose(gm(tocha.ones(2)).numpy(), [2.0, 2.0])

    def g(x, *args, **kw):
        return x + args[0] + kw["a"]

    gm = tocha.fx.symbolic_trace(g)
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["x", "_args", "_kw"]
    assert "def forward(self, x, *args, **kw):" in gm.code
    one = tocha.ones(1)
    np.testing.assert_allclose(gm(one, one, a=one).numpy(), [3.0])


def test_setitem_is_recorded_and_kept():
    def f(x):
        y = x.clone()
        y[0] = 5.0
        return y

    gm = tocha.fx.symbolic_trace(f)
    setitem = next(n for n in gm.graph.nodes if n.target is operator.setitem)
    assert setitem.is_impure()
    gm.graph.eliminate_dead_code()
    assert setitem in list(gm.graph.nodes)
    gm.recompile()
    np.testing.assert_allclose(gm(tocha.zeros(2)).numpy(), [5.0, 0.0])


def test_retracing_a_graph_module():
    gm = tocha.fx.symbolic_trace(Nested())
    again = tocha.fx.symbolic_trace(gm)
    assert [n.target for n in again.graph.nodes] == [n.target for n in gm.graph.nodes]
    x = tocha.randn(2, 3)
    np.testing.assert_allclose(again(x).detach().numpy(), gm(x).detach().numpy())


def test_to_folder(tmp_path, monkeypatch):
    module = MLP()
    gm = tocha.fx.symbolic_trace(module)
    gm.to_folder(tmp_path / "mlp_pkg", "FxMLP")
    monkeypatch.syspath_prepend(str(tmp_path))
    from mlp_pkg import FxMLP

    x = tocha.randn(2, 3, 4)
    np.testing.assert_allclose(FxMLP()(x).detach().numpy(), module(x).detach().numpy(), rtol=1e-6)


def test_tensor_methods_and_indexing_with_traced_arguments():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", tocha.arange(4.0))

        def forward(self, x):
            return self.b.to(x.dtype), self.b.expand_as(x), self.b[x.argmax()], self.b * x

    gm = tocha.fx.symbolic_trace(M())
    rows = [(n.op, n.target) for n in gm.graph.nodes if n.op in ("call_method", "call_function")]
    assert rows == [
        ("call_function", getattr), ("call_method", "to"), ("call_method", "expand_as"),
        ("call_method", "argmax"), ("call_function", operator.getitem), ("call_method", "mul"),
    ]  # fmt: skip
    x = tocha.tensor([[0.0, 2.0, 1.0, 0.5]])
    to, expanded, picked, product = gm(x)
    np.testing.assert_allclose(expanded.numpy(), [[0.0, 1.0, 2.0, 3.0]])
    assert picked.item() == 1.0
    np.testing.assert_allclose(product.numpy(), [[0.0, 2.0, 2.0, 1.5]])
    assert tocha.arange(3.0)[tocha.tensor(1)].item() == 1.0  # eager indexing restored


def test_math_functions_are_autowrapped():
    import math

    class Scaled(nn.Module):
        def forward(self, q):
            return q / math.sqrt(q.size(-1))

    gm = tocha.fx.symbolic_trace(Scaled())
    assert math.sqrt in [n.target for n in gm.graph.nodes]
    np.testing.assert_allclose(gm(tocha.ones(4)).numpy(), [0.5] * 4)
    assert math.sqrt(4) == 2.0


def test_user_subclass_of_a_builtin_is_traced_through():
    class MyLinear(nn.Linear):
        pass

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = MyLinear(3, 2)
            self.acts = nn.ModuleList([nn.ReLU(), nn.Tanh()])

        def forward(self, x):
            x = self.lin(x)
            for act in self.acts:
                x = act(x)
            return x

    module = M()
    gm = tocha.fx.symbolic_trace(module)
    assert [(n.op, n.target if isinstance(n.target, str) else n.target.__name__)
            for n in gm.graph.nodes] == [
        ("placeholder", "x"), ("get_attr", "lin.weight"), ("get_attr", "lin.bias"),
        ("call_function", "linear"), ("call_module", "acts.0"), ("call_module", "acts.1"),
        ("output", "output"),
    ]  # fmt: skip
    x = tocha.randn(4, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(), module(x).detach().numpy(), rtol=1e-6)


def test_graph_appending_tracer_builds_graphs_from_proxies():
    from tocha.fx.proxy import GraphAppendingTracer

    graph = tocha.fx.Graph()
    x = tocha.fx.Proxy(graph.placeholder("x"), GraphAppendingTracer(graph))
    y = (x * 2).relu() + x.shape[0]
    graph.output(y.node)
    gm = tocha.fx.GraphModule({}, graph)
    np.testing.assert_allclose(gm(tocha.tensor([-1.0, 2.0])).numpy(), [2.0, 6.0])


CODE = json.loads((Path(__file__).parent / "fixtures" / "fx_trace_code.json").read_text())


@pytest.mark.parametrize("name", sorted(CODE), ids=sorted(CODE))
def test_generated_code_matches_torch_fx(name):
    factory, _, concrete = CASES[name]
    gm = tocha.fx.symbolic_trace(factory(), concrete_args=concrete)
    assert gm.code.strip() == CODE[name].replace("torch.", "tocha.")


def test_annotations_become_node_types_as_in_torch():
    def f(x: tocha.Tensor, n: int = 3) -> tocha.Tensor:
        return x * n

    gm = tocha.fx.symbolic_trace(f)
    assert str(gm.graph).splitlines()[:3] == [
        "graph():",
        "    %x : tocha.Tensor [num_users=1] = placeholder[target=x]",
        "    %n : int [num_users=1] = placeholder[target=n](default=3)",
    ]
    assert "def forward(self, x : tocha.Tensor, n : int = 3) -> tocha.Tensor:" in gm.code
    np.testing.assert_allclose(gm(tocha.ones(2)).numpy(), [3.0, 3.0])


@pytest.mark.parametrize(
    "build",
    [lambda: nn.Linear(3, 4), lambda: nn.Conv2d(3, 4, 3), lambda: nn.MaxPool2d(2),
     lambda: nn.LayerNorm(6), lambda: nn.GELU()],
    ids=["linear", "conv2d", "max_pool2d", "layer_norm", "gelu"],
)  # fmt: skip
def test_tracing_a_builtin_as_the_root_reaches_its_functional_form(build):
    module = build()
    gm = tocha.fx.symbolic_trace(module)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert len(calls) == 1 and calls[0].target.__module__.startswith("tocha.nn")
    x = tocha.randn(1, 3, 6, 6) if isinstance(module, (nn.Conv2d, nn.MaxPool2d)) else None
    x = tocha.randn(2, 3) if isinstance(module, (nn.Linear, nn.GELU)) else x
    x = tocha.randn(2, 6) if isinstance(module, nn.LayerNorm) else x
    np.testing.assert_allclose(gm(x).detach().numpy(), module(x).detach().numpy(), rtol=1e-6)


def test_pickling_a_traced_module_drops_meta_like_torch():
    import pickle

    gm = tocha.fx.symbolic_trace(Nested())
    next(iter(gm.graph.nodes)).meta["unpicklable"] = lambda: None
    x = tocha.randn(2, 3)
    loaded = pickle.loads(pickle.dumps(gm))
    assert loaded.code == gm.code
    assert all(not n.meta for n in loaded.graph.nodes)
    np.testing.assert_allclose(loaded(x).detach().numpy(), gm(x).detach().numpy())


def halve(x):
    return x / 2


def test_autowrap_functions_are_recorded_as_calls():
    def f(x):
        return halve(tocha.relu(x))

    graph = tocha.fx.Tracer(autowrap_functions=(halve,)).trace(f)
    assert [n.target for n in graph.nodes if n.op == "call_function"] == [tocha.relu, halve]
    plain = tocha.fx.Tracer().trace(f)
    assert [n.target for n in plain.nodes if n.op == "call_function"] == [
        tocha.relu,
        operator.truediv,
    ]


def test_linalg_fft_special_calls_are_recorded_by_their_public_names():
    def f(x):
        return tocha.linalg.norm(x), tocha.fft.fft(x).real, tocha.special.expit(x)

    gm = tocha.fx.symbolic_trace(f)
    calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    # the attribute read (.real) becomes a node when first used, as in torch.fx
    assert calls == [tocha.linalg.norm, tocha.fft.fft, tocha.special.expit, getattr]
    assert "tocha.linalg.norm(x)" in gm.code and "tocha.fft.fft(x)" in gm.code
    x = tocha.randn(4)
    for got, want in zip(gm(x), f(x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
