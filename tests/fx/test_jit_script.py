"""tocha.jit.script against torch.jit.script's recorded answers (fixtures/jit_script_cases.json,
written by scripts/record_jit_fixtures.py) and against eager tocha."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tocha
import tocha.jit as jit
import tocha.nn as nn
from tocha.jit.frontend import FrontendError, NotSupportedError, UnsupportedNodeError

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "jit_script_cases.json").read_text())
HEADER = (
    FIXTURE["header"]
    .replace("import torch.nn.functional as F", "import tocha.nn.functional as F")
    .replace("import torch.nn as nn", "import tocha.nn as nn")
    .replace("import torch\n", "import tocha as torch\n")
)


def load_source(source: str, tmp_path: Path, name: str):
    """Import ``source`` (with tocha as torch) from a real file, so that its source is found."""
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def to_tocha(spec):
    if isinstance(spec, dict):
        return tocha.tensor(spec["tensor"], dtype=tocha.float32)
    return spec


def assert_same(ours, expected) -> None:
    if isinstance(expected, dict):
        assert isinstance(ours, tocha.Tensor)
        assert list(ours.shape) == expected["shape"]
        np.testing.assert_allclose(ours.detach().numpy(), expected["tensor"], rtol=1e-5, atol=1e-6)
    elif isinstance(expected, list):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(expected)
        for a, b in zip(ours, expected):
            assert_same(a, b)
    else:
        assert type(ours) is type(expected) and ours == pytest.approx(expected)


def fill_parameters(module: nn.Module) -> None:
    rng = np.random.default_rng(0)
    with tocha.no_grad():
        for _, p in module.named_parameters():
            p.copy_(tocha.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32)))


@pytest.mark.parametrize("name", list(FIXTURE["functions"]), ids=list(FIXTURE["functions"]))
def test_function_matches_torch_and_eager(name, tmp_path):
    case = FIXTURE["functions"][name]
    module = load_source(case["source"], tmp_path, f"jit_case_{name}")
    function = getattr(module, name)
    scripted = jit.script(function)
    assert isinstance(scripted, jit.ScriptFunction)
    for args, expected in zip(case["inputs"], case["outputs"]):
        assert_same(scripted(*[to_tocha(a) for a in args]), expected)
        assert_same(function(*[to_tocha(a) for a in args]), expected)


@pytest.mark.parametrize("name", list(FIXTURE["modules"]), ids=list(FIXTURE["modules"]))
def test_module_matches_torch(name, tmp_path):
    case = FIXTURE["modules"][name]
    source = load_source(case["source"], tmp_path, f"jit_module_{name}")
    model = getattr(source, case["class"])()
    fill_parameters(model)
    model.eval()
    scripted = jit.script(model)
    assert isinstance(scripted, jit.RecursiveScriptModule)
    assert scripted.original_name == case["class"]
    assert list(scripted.state_dict()) == list(model.state_dict())
    for args, expected in zip(case["inputs"], case["outputs"]):
        assert_same(scripted(*[to_tocha(a) for a in args]), expected)


def test_raise_is_a_jit_error_with_torch_message(tmp_path):
    case = FIXTURE["functions"]["raise_and_assert"]
    scripted = jit.script(load_source(case["source"], tmp_path, "jit_raise").raise_and_assert)
    with pytest.raises(jit.Error) as info:
        scripted(tocha.ones(1), 11)
    expected = case["raised"]["message"].strip().splitlines()
    lines = str(info.value).strip().splitlines()
    assert lines[0] == expected[0] and lines[-1] == expected[-1]
    assert "line 11, in raise_and_assert" in str(info.value)
    with pytest.raises(jit.Error, match="builtins.AssertionError: n must be non-negative"):
        scripted(tocha.ones(1), -1)


@pytest.mark.parametrize("name", list(FIXTURE["refused"]), ids=list(FIXTURE["refused"]))
def test_refused_like_torch(name, tmp_path):
    case = FIXTURE["refused"][name]
    module = load_source(case["source"], tmp_path, f"jit_refused_{name}")
    with pytest.raises(Exception) as info:
        jit.script(module.refused)
    error = info.value
    assert type(error).__name__ == case["class"]
    expected_module = case["module"].replace("torch", "tocha")
    assert type(error).__module__ == expected_module
    lines = [line for line in str(error).splitlines() if line.strip()]
    assert lines[0] == case["first_line"]
    assert f"jit_refused_{name}.py" in str(error) and "<--- HERE" in str(error)


@pytest.mark.parametrize("name", list(FIXTURE["type_errors"]), ids=list(FIXTURE["type_errors"]))
def test_argument_checks_like_torch(name, tmp_path):
    case = FIXTURE["type_errors"][name]
    source = FIXTURE["functions"][case["function"]]["source"]
    function = getattr(load_source(source, tmp_path, f"jit_types_{name}"), case["function"])
    with pytest.raises(RuntimeError) as info:
        jit.script(function)(*[to_tocha(a) for a in case["args"]])
    expected = case["message"].split("\nCast error details")[0]
    assert str(info.value) == expected


REFUSED_HERE = {
    "del": ("def f(x):\n    y = x\n    del y\n    return x\n", UnsupportedNodeError,
            "del statements"),
    "import": ("def f(x):\n    import os\n    return x\n", UnsupportedNodeError,
               "import statements"),
    "genexp": ("def f(x):\n    return sum(a for a in [1])\n", UnsupportedNodeError, "generator"),
    "set": ("def f(x):\n    s = {1, 2}\n    return x\n", UnsupportedNodeError, "set literals"),
    "walrus": ("def f(x):\n    if (y := x):\n        pass\n    return x\n", UnsupportedNodeError,
               "assignment expressions"),
    "starred": ("def f(x):\n    return max(*[1, 2])\n", UnsupportedNodeError, "starred"),
    "kwargs_call": ("def f(x):\n    return x.sum(**{})\n", UnsupportedNodeError, "**"),
    "with_other": ("def f(x):\n    with torch.enable_grad(), x:\n        pass\n    return x\n",
                   UnsupportedNodeError, "with statements"),
    "with_module_context": ("import contextlib\n\ndef f(x):\n"
                            "    with contextlib.suppress(ValueError):\n        pass\n"
                            "    return x\n", UnsupportedNodeError, "with statements"),
    "for_else": ("def f(x):\n    for i in range(2):\n        pass\n    else:\n        pass\n"
                 "    return x\n", UnsupportedNodeError, "else branches"),
    "dunder": ("def f(x):\n    return x.__class__\n", RuntimeError, "'__class__'"),
    "globals": ("def f(x):\n    return f.__globals__\n", RuntimeError, "'__globals__'"),
    "kwonly_default": ("def f(x, *, k=1):\n    return x\n", NotSupportedError,
                       "keyword-only arguments"),
    "two_generators": ("def f(x):\n    return [a for a in [1] for b in [2]]\n", NotSupportedError,
                       "single generator"),
    "unknown_name": ("def f(x):\n    return undefined_thing(x)\n", FrontendError,
                     "undefined value undefined_thing"),
    "python_object": ("import collections\nQ = collections.deque()\n\ndef f(x):\n"
                      "    return Q\n", RuntimeError, "Python value of type 'deque'"),
    "module_os": ("import os\n\ndef f(x):\n    p = os.path\n    return x\n", RuntimeError,
                  "Python module 'os'"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(REFUSED_HERE), ids=list(REFUSED_HERE))
def test_refused_constructs_name_construct_and_line(name, tmp_path):
    source, error, words = REFUSED_HERE[name]
    module = load_source(source, tmp_path, f"jit_refused_here_{name}")
    with pytest.raises(error) as info:
        jit.script(module.f)
    message = str(info.value)
    assert words in message and "line " in message and "<--- HERE" in message


def test_unscriptable_callee_is_reported(tmp_path):
    source = (
        "def bad(x):\n    try:\n        return x\n    finally:\n        pass\n\n"
        "def f(x):\n    return bad(x)\n"
    )
    module = load_source(source, tmp_path, "jit_callee")
    with pytest.raises(UnsupportedNodeError, match="try blocks") as info:
        jit.script(module.f)
    assert "'bad' is being compiled since it was called from 'f'" in str(info.value)


MODULE_SOURCE = """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x) + self.offset()

    def offset(self) -> float:
        return 0.5


class Net(nn.Module):
    scale: float = 3.0

    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), nn.ReLU(), Block())
        self.extra = nn.ModuleDict({"a": nn.Linear(3, 1)})
        self.register_buffer("count", torch.zeros(1))
        self.names = ["x", "y"]

    def forward(self, x, times: int = 1):
        for _ in range(times):
            x = self.blocks(x)
        with torch.no_grad():
            self.count += 1
        return self.extra["a"](x) * self.scale, len(self.names)

    @torch.jit.export
    def twice(self, x):
        return x * 2

    @torch.jit.ignore
    def python_only(self, x):
        return x.numpy()

    @torch.jit.unused
    def not_used(self, x):
        return x.numpy()

    @torch.jit.export
    def calls_ignored(self, x):
        return self.python_only(x)

    @torch.jit.export
    def calls_unused(self, x):
        return self.not_used(x)
"""


@pytest.fixture
def net_module(tmp_path):
    return load_source(MODULE_SOURCE, tmp_path, "jit_net")


def test_nested_modules_sequential_moduledict_and_buffers(net_module):
    model = net_module.Net()
    scripted = jit.script(model)
    x = tocha.randn(2, 3)
    expected = model(x, 2)
    got = scripted(x, 2)
    np.testing.assert_allclose(got[0].detach().numpy(), expected[0].detach().numpy(), rtol=1e-6)
    assert got[1] == 2
    assert scripted.count.item() == 2  # the buffer is shared with the original module
    assert scripted.blocks[0].original_name == "Block"
    assert isinstance(scripted.blocks[1], nn.ReLU)
    assert scripted.blocks[0].fc.weight is model.blocks[0].fc.weight
    np.testing.assert_allclose(scripted.twice(x).numpy(), (x * 2).numpy())
    assert "def forward(self, x: Tensor, times: int=1)" in scripted.code
    assert str(scripted.graph).startswith("graph(%self : __torch__.jit_net.Net, %x : Tensor")


def test_train_eval_parameters_like_a_module(net_module):
    scripted = jit.script(net_module.Net())
    assert scripted.training
    scripted.eval()
    assert not scripted.training and not scripted.blocks[0].fc.training
    names = [name for name, _ in scripted.named_parameters()]
    assert names[0] == "blocks.0.fc.weight"
    assert scripted.to(tocha.float64).blocks[0].fc.weight.dtype == tocha.float64


def test_ignore_and_unused(net_module, tmp_path):
    scripted = jit.script(net_module.Net())
    x = tocha.ones(2)
    assert isinstance(scripted.calls_ignored(x), np.ndarray)
    with pytest.raises(jit.Error, match="annotated to be ignored"):
        scripted.calls_unused(x)
    assert "raise RuntimeError(" in scripted.not_used.code
    with pytest.raises(RuntimeError, match="Could not export Python function call 'python_only'"):
        jit.save(scripted, tmp_path / "m.pt")


def test_module_method_checks_attributes_at_script_time(tmp_path):
    source = "class M(nn.Module):\n    def forward(self, x):\n        return x * self.missing\n"
    module = load_source(source, tmp_path, "jit_missing_attr")
    with pytest.raises(FrontendError, match="Module 'M' has no attribute 'missing'"):
        jit.script(module.M())


def test_is_scripting_and_annotate(tmp_path):
    source = (
        "def f(x):\n    if torch.jit.is_scripting():\n        return x + 1\n"
        "    return x\n\n"
        "def g(n: int):\n    out = torch.jit.annotate(List[int], [])\n"
        "    for i in range(n):\n        out.append(i * i)\n    return out\n"
    )
    module = load_source(source, tmp_path, "jit_is_scripting")
    assert not jit.is_scripting()
    assert jit.script(module.f)(tocha.zeros(1)).item() == 1.0
    assert module.f(tocha.zeros(1)).item() == 0.0
    assert jit.script(module.g)(4) == [0, 1, 4, 9]
    assert jit.annotate(int, 3) == 3 and jit.Attribute([1], list) == [1]


def test_script_of_builtin_module_and_idempotence():
    linear = nn.Linear(3, 2)
    scripted = jit.script(linear)
    assert isinstance(scripted, jit.RecursiveScriptModule)
    assert scripted.original_name == "Linear"
    x = tocha.randn(4, 3)
    np.testing.assert_allclose(scripted(x).detach().numpy(), linear(x).detach().numpy())
    assert list(scripted.state_dict()) == ["weight", "bias"]
    assert jit.script(scripted) is scripted


def test_script_rejects_non_scriptable_objects():
    with pytest.raises(RuntimeError):
        jit.script(3)
    with pytest.raises(NotSupportedError):
        jit.script(nn.Linear)


def test_f_strings_and_print(tmp_path, capsys):
    source = 'def f(x, n: int):\n    print(f"n={n:03d}", n)\n    return f"{n}!"\n'
    module = load_source(source, tmp_path, "jit_fstring")
    assert jit.script(module.f)(tocha.ones(1), 7) == "7!"
    assert capsys.readouterr().out == "n=007 7\n"


def test_floats_accept_ints_and_lists_are_checked(tmp_path):
    source = (
        "def f(x, a: float, sizes: List[int], opt: Optional[int] = None) -> float:\n"
        "    return a + sum(sizes) + (0 if opt is None else opt)\n"
    )
    f = jit.script(load_source(source, tmp_path, "jit_types_more").f)
    value = f(tocha.ones(1), 2, [1, 2])
    assert value == 5.0 and isinstance(value, float)
    assert f(tocha.ones(1), 2, [1], opt=3) == 6.0
    with pytest.raises(RuntimeError, match="Expected a value of type 'List\\[int\\]'"):
        f(tocha.ones(1), 2.0, [1.5])
    with pytest.raises(RuntimeError, match="Unknown keyword argument 'nope'"):
        f(tocha.ones(1), 2.0, [1], nope=1)


def test_failing_operation_reports_where_like_torch(tmp_path):
    source = "def f(x, y):\n    z = x + 1\n    return torch.mm(z, y)\n"
    f = jit.script(load_source(source, tmp_path, "jit_op_failure").f)
    with pytest.raises(RuntimeError) as info:
        f(tocha.ones(2, 3), tocha.ones(2, 3))
    lines = str(info.value).splitlines()
    assert lines[0] == "The following operation failed in the TorchScript interpreter."
    assert ", in f" in lines[2] and "torch.mm(z, y)" in lines[3]
    assert lines[-1].startswith("RuntimeError: mat1 and mat2 shapes cannot be multiplied")


def test_gradients_flow_through_scripted_modules(net_module):
    model = net_module.Net()
    scripted = jit.script(model)
    x = tocha.randn(2, 3, requires_grad=True)
    scripted(x)[0].sum().backward()
    assert x.grad is not None and model.blocks[0].fc.weight.grad is not None


def test_str_format_and_moduledict_iteration(tmp_path):
    source = (
        "class Heads(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.heads = nn.ModuleDict({'a': nn.Linear(2, 1), 'b': nn.Linear(2, 1)})\n\n"
        "    def forward(self, x):\n"
        "        names: List[str] = []\n"
        "        total = torch.zeros(x.shape[0], 1)\n"
        "        for name, head in self.heads.items():\n"
        "            names.append('{}:{:>3}'.format(name, len(names)))\n"
        "            total = total + head(x)\n"
        "        return total, names\n"
    )
    model = load_source(source, tmp_path, "jit_heads").Heads()
    x = tocha.randn(3, 2)
    got, names = jit.script(model)(x)
    assert names == ["a:  0", "b:  1"]
    np.testing.assert_allclose(got.detach().numpy(), model(x)[0].detach().numpy(), rtol=1e-6)


def test_format_fields_reading_attributes_are_refused(tmp_path):
    source = "def f(x):\n    return '{0.dtype}'.format(x)\n"
    with pytest.raises(RuntimeError, match="format field"):
        jit.script(load_source(source, tmp_path, "jit_format_attr").f)(tocha.ones(1))


def test_jit_isinstance():
    assert jit.isinstance([1, 2], list[int]) and not jit.isinstance([1.5], list[int])
    assert jit.isinstance(None, tocha.Tensor | None)
    assert jit.isinstance({"a": tocha.ones(1)}, dict[str, tocha.Tensor])
    assert jit.isinstance((1, tocha.ones(1)), tuple[int, tocha.Tensor])
    assert not jit.isinstance((1, 2), tuple[int, tocha.Tensor])


def test_fork_and_wait_in_scripted_code(tmp_path):
    source = (
        "def double(x):\n    return x * 2\n\n"
        "def f(x):\n    fut = torch.jit.fork(double, x)\n    return torch.jit.wait(fut) + 1\n"
    )
    f = jit.script(load_source(source, tmp_path, "jit_fork").f)
    np.testing.assert_allclose(f(tocha.ones(2)).numpy(), [3.0, 3.0])
    assert jit.fork(tocha.neg, tocha.ones(1)).wait().item() == -1.0


def test_fusion_settings_and_markers():
    previous = jit.set_fusion_strategy([("DYNAMIC", 3)])
    assert jit.set_fusion_strategy(previous) == [("DYNAMIC", 3)]
    with pytest.raises(RuntimeError):
        jit.set_fusion_strategy([("OTHER", 1)])
    jit.enable_onednn_fusion(True)
    assert jit.onednn_fusion_enabled()
    jit.enable_onednn_fusion(False)
    with jit.strict_fusion():
        pass

    def g(x):
        return x

    assert jit.script_if_tracing(g) is g and jit.interface(g) is g


class LegacyScriptModule(jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.scale = 3.0

    @jit.script_method
    def forward(self, x):
        return self.fc(x) * self.scale


def test_subclass_of_script_module_with_script_method(tmp_path):
    model = LegacyScriptModule()
    x = tocha.randn(4, 2)
    expected = model.fc(x) * 3.0
    np.testing.assert_allclose(model(x).detach().numpy(), expected.detach().numpy())
    assert "self.fc(x) * self.scale" in model.code
    jit.save(model, tmp_path / "legacy.pt")
    loaded = jit.load(tmp_path / "legacy.pt")
    assert loaded.original_name == "LegacyScriptModule"
    np.testing.assert_allclose(loaded(x).detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    frozen = jit.freeze(model.eval())
    np.testing.assert_allclose(frozen(x).numpy(), expected.detach().numpy(), rtol=1e-6)


def test_defaults_must_match_the_argument_type(tmp_path):
    source = (
        "def f(x, n=2):\n    return x * n\n\n"
        "def g(x, m: float = 2, k: Optional[int] = None):\n    return x * m\n"
    )
    module = load_source(source, tmp_path, "jit_defaults")
    with pytest.raises(
        RuntimeError,
        match='Expected a default value of type Tensor \\(inferred\\) on parameter "n"',
    ):
        jit.script(module.f)
    assert jit.script(module.g)(tocha.ones(1)).item() == 2.0


@pytest.mark.parametrize(
    "kind,value,expected",
    [
        ("int", tocha.tensor(3), 3),
        ("int", tocha.tensor(2.5), 2),
        ("int", tocha.tensor([1]), 1),
        ("int", True, 1),
        ("float", tocha.tensor(2.5), 2.5),
        ("float", 1, 1.0),
        ("bool", tocha.tensor(3), True),
        ("bool", 1, True),
    ],
    ids=["int-0d", "int-0d-float", "int-1elem", "int-bool", "float-0d", "float-int",
         "bool-0d", "bool-int"],
)  # fmt: skip
def test_scalar_arguments_convert_like_torch(tmp_path, kind, value, expected):
    # torch.jit.script turns one-element tensors and numbers into the scalar type due
    source = f"def f(x, n: {kind}):\n    return n\n"
    f = jit.script(load_source(source, tmp_path, f"jit_scalar_{kind}").f)
    got = f(tocha.ones(1), value)
    assert type(got) is type(expected) and got == expected


def test_tuple_arguments_accept_lists(tmp_path):
    source = "def f(x, t: Tuple[int, int]):\n    return t[0] + t[1]\n"
    assert jit.script(load_source(source, tmp_path, "jit_tuple_arg").f)(tocha.ones(1), [1, 2]) == 3


def test_scripted_sequential_is_indexable_and_iterable():
    scripted = jit.script(nn.Sequential(nn.Linear(2, 2), nn.ReLU()))
    assert isinstance(scripted[0], nn.Linear) and isinstance(scripted[1], nn.ReLU)
    assert [type(m).__name__ for m in scripted] == ["Linear", "ReLU"]
    with pytest.raises(TypeError, match="not subscriptable"):
        jit.script(nn.Linear(2, 2))[0]
