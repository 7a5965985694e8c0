"""Containers and Module plumbing against torch.nn: Sequential's ``*``/``*=``/``+=``,
ParameterDict's dict methods, the update errors of ModuleDict/ParameterDict,
``Module.set_submodule``, ``Module.compile``, ``skip_init`` errors and forward hooks
registered with ``always_call``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tocha.nn.modules import module as module_mod


def _seq(lib):
    return lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.ReLU())


def test_sequential_mul_repeats_the_same_modules(torch):
    for lib in (tocha, torch):
        s = _seq(lib)
        m = s * 2
        r = 3 * s
        assert len(m) == 4 and len(r) == 6
        assert m[0] is m[2] and m[0] is s[0] and r[4] is s[0]
    assert repr(_seq(tocha) * 2) == repr(_seq(torch) * 2)


def test_sequential_inplace_operators_keep_the_object(torch):
    ours, theirs = _seq(tocha), _seq(torch)
    o, t = ours, theirs
    ours *= 2
    theirs *= 2
    assert ours is o and theirs is t and repr(ours) == repr(theirs)
    ours += nn.Sequential(nn.Tanh())
    theirs += torch.nn.Sequential(torch.nn.Tanh())
    assert ours is o and repr(ours) == repr(theirs)


@pytest.mark.parametrize("factor", [0, -1, 1.5, "a"])
def test_sequential_mul_errors(torch, factor):
    with pytest.raises(Exception) as theirs:
        _seq(torch) * factor
    with pytest.raises(type(theirs.value)) as ours:
        _seq(tocha) * factor
    assert str(ours.value).replace("tocha", "torch") == str(theirs.value)


def test_sequential_iadd_rejects_a_list(torch):
    with pytest.raises(ValueError) as theirs:
        s = _seq(torch)
        s += [torch.nn.ReLU()]
    with pytest.raises(ValueError) as ours:
        s = _seq(tocha)
        s += [nn.ReLU()]
    assert str(ours.value) == str(theirs.value)


def _pdict(lib):
    return lib.nn.ParameterDict({"a": lib.ones(1), "b": lib.zeros(2)})


def test_parameter_dict_get_setdefault_popitem(torch):
    for lib in (tocha, torch):
        pd = _pdict(lib)
        assert pd.get("zz") is None and pd.get("zz", 3) == 3
        assert pd.get("a") is pd["a"]
        assert tuple(pd.setdefault("a", lib.zeros(5)).shape) == (1,)
        made = pd.setdefault("c", lib.zeros(3))
        assert made is pd["c"] and "Parameter" in repr(made)
        assert pd.setdefault("d") is None
        assert list(pd.keys()) == ["a", "b", "c", "d"]
        assert pd.popitem() == ("d", None)
        assert list(reversed(pd)) == ["c", "b", "a"]
        with pytest.raises(KeyError, match="dictionary is empty"):
            lib.nn.ParameterDict().popitem()
    assert repr(_pdict(tocha).fromkeys(["x"])) == repr(_pdict(torch).fromkeys(["x"]))


def test_parameter_dict_fromkeys_copy_and_union(torch):
    reprs = {}
    for lib in (tocha, torch):
        pd = _pdict(lib)
        f = pd.fromkeys(["x", "y"], lib.ones(2))
        assert f["x"] is not f["y"]
        c = pd.copy()
        assert c["a"] is pd["a"]
        u = pd | {"q": lib.ones(1)}
        assert repr(u).startswith("ParameterDict(") and list(u) == ["a", "b", "q"]
        left = {"q": lib.ones(1), "a": lib.zeros(7)} | pd
        assert isinstance(left, dict) and list(left) == ["q", "a", "b"]
        assert left["a"] is pd["a"]
        same = pd
        pd |= {"z": lib.ones(1)}
        assert pd is same and list(pd) == ["a", "b", "z"]
        reprs[lib] = repr(f) + repr(c) + repr(pd | lib.nn.ParameterDict({"w": lib.ones(1)}))
    assert reprs[tocha] == reprs[torch]


UPDATE_ARGS = {
    "int": lambda v: 5,
    "int-items": lambda v: [1],
    "triple": lambda v: [("a", v, 3)],
    "single": lambda v: [("a",)],
    "str": lambda v: "ab",
}


@pytest.mark.parametrize("kind", ["ParameterDict", "ModuleDict"])
@pytest.mark.parametrize("arg", list(UPDATE_ARGS))
def test_dict_update_errors(torch, kind, arg):
    def run(lib):
        value = lib.ones(1) if kind == "ParameterDict" else lib.nn.ReLU()
        getattr(lib.nn, kind)().update(UPDATE_ARGS[arg](value))

    with pytest.raises(Exception) as theirs:
        run(torch)
    with pytest.raises(type(theirs.value)) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)


def _tree(lib):
    return lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh()))


def test_set_submodule(torch):
    reprs = {}
    for lib in (tocha, torch):
        m = _tree(lib)
        m.set_submodule("1.0", lib.nn.GELU())
        m.set_submodule("0", lib.nn.Identity())
        m.set_submodule("1.new", lib.nn.ReLU())
        m.set_submodule("0.weight", lib.nn.ReLU())
        reprs[lib] = repr(m)
    assert reprs[tocha] == reprs[torch]


@pytest.mark.parametrize(
    "target,strict",
    [("1.zz", True), ("2.x", False), ("", False), ("0.weight", False), ("0.x.y", False)],
)
def test_set_submodule_errors(torch, target, strict):
    with pytest.raises(Exception) as theirs:
        _tree(torch).set_submodule(target, torch.nn.ReLU(), strict=strict)
    with pytest.raises(type(theirs.value)) as ours:
        _tree(tocha).set_submodule(target, nn.ReLU(), strict=strict)
    assert str(ours.value) == str(theirs.value)


def test_set_submodule_rejects_a_non_module(torch):
    with pytest.raises(ValueError) as theirs:
        _tree(torch).set_submodule("1.0", 5)
    with pytest.raises(ValueError) as ours:
        _tree(tocha).set_submodule("1.0", 5)
    assert str(ours.value) == str(theirs.value)


def test_module_compile_keeps_results_and_state():
    tocha.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    x = tocha.randn(4, 3)
    expected = m(x)
    keys = list(m.state_dict())
    assert m.compile() is None
    assert tocha.allclose(m(x), expected)
    assert list(m.state_dict()) == keys


class _NoDevice(nn.Module):
    pass


def test_skip_init_errors(torch):
    class TorchNoDevice(torch.nn.Module):
        pass

    for ours_cls, theirs_cls in [(_NoDevice, TorchNoDevice), (int, int)]:
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.utils.skip_init(theirs_cls, 2)
        with pytest.raises(RuntimeError) as ours:
            nn.utils.skip_init(ours_cls, 2)
        assert str(ours.value) == str(theirs.value)


# -- forward hooks with always_call ------------------------------------------------------------
# PyTorch calls the hooks back into this file, which a tape cannot replay: the expected calls
# are PyTorch 2.13's, written down, and checked live where PyTorch is installed.


class _Raises(nn.Module):
    def forward(self, x):
        raise ValueError("fwd")


def _always_call_events(lib, raising):
    events = []

    def record(name):
        return lambda m, i, o: events.append((name, o is None))

    m = raising()
    m.register_forward_hook(record("plain"))
    m.register_forward_hook(record("always"), always_call=True)
    with pytest.raises(ValueError):
        m(lib.ones(1))
    lin = lib.nn.Linear(1, 1)
    lin.register_forward_hook(record("before"), always_call=True)

    def fail(m, i, o):
        events.append(("fail", False))
        raise RuntimeError("first")

    lin.register_forward_hook(fail)
    lin.register_forward_hook(record("after"), always_call=True)
    with pytest.raises(RuntimeError, match="first"):
        lin(lib.ones(1))
    return events


EXPECTED_ALWAYS_CALL = [
    ("always", True),
    ("before", False),
    ("fail", False),
    ("after", False),
]


def test_always_call_hooks_run_when_the_call_raises():
    assert _always_call_events(tocha, _Raises) == EXPECTED_ALWAYS_CALL


def test_always_call_hooks_live():
    torch = pytest.importorskip("torch")

    class Raises(torch.nn.Module):
        def forward(self, x):
            raise ValueError("fwd")

    assert _always_call_events(torch, Raises) == EXPECTED_ALWAYS_CALL


def test_failing_always_call_hook_is_a_warning():
    m = _Raises()

    def bad(m, i, o):
        raise KeyError("hook err")

    m.register_forward_hook(bad, always_call=True)
    with pytest.warns(
        UserWarning, match="module forward hook with ``always_call=True``.*'hook err'"
    ):
        with pytest.raises(ValueError, match="fwd"):
            m(tocha.ones(1))


def test_global_forward_hook_with_kwargs_and_always_call():
    seen = []

    class Scaled(nn.Module):
        def forward(self, x, s=1):
            return x * s

    handle = module_mod.register_module_forward_hook(
        lambda m, a, k, o: seen.append((dict(k), o.tolist())), with_kwargs=True
    )
    try:
        Scaled()(tocha.ones(2), s=3)
    finally:
        handle.remove()
    assert seen == [({"s": 3}, [3.0, 3.0])]
    assert handle.id not in module_mod._GLOBAL_FORWARD_HOOKS_WITH_KWARGS

    def bad(m, i, o):
        raise KeyError("gerr")

    handle = module_mod.register_module_forward_hook(bad, always_call=True)
    lin = nn.Linear(1, 1)
    lin.register_forward_pre_hook(lambda m, i: 1 / 0)
    try:
        with pytest.warns(UserWarning, match="^global module forward hook"):
            with pytest.raises(ZeroDivisionError):
                lin(tocha.ones(1))
    finally:
        handle.remove()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(nn.Identity()(tocha.ones(1)).numpy(), [1.0])


def test_pre_hook_with_kwargs_must_return_a_pair(torch):
    def run(lib):
        lin = lib.nn.Linear(1, 1)
        lin.register_forward_pre_hook(lambda m, a, kw: (a, kw, 1), with_kwargs=True)
        lin(lib.ones(1))

    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(tocha)
    assert str(ours.value).split(", but got")[0] == str(theirs.value).split(", but got")[0]


@pytest.mark.parametrize("method", ["add_module", "register_buffer", "register_parameter"])
def test_dotted_name_errors(torch, method):
    def run(lib):
        value = lib.ones(1) if method == "register_buffer" else None
        getattr(lib.nn.Linear(1, 1), method)("a.b", value)

    with pytest.raises(KeyError) as theirs:
        run(torch)
    with pytest.raises(KeyError) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("method", ["get_extra_state", "set_extra_state"])
def test_extra_state_default_errors(torch, method):
    args = () if method == "get_extra_state" else ({},)
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.nn.Linear(1, 1), method)(*args)
    with pytest.raises(RuntimeError) as ours:
        getattr(nn.Linear(1, 1), method)(*args)
    assert str(ours.value) == str(theirs.value)


def test_to_a_complex_dtype_warns(torch):
    with pytest.warns(UserWarning) as theirs:
        torch.nn.Linear(2, 2).to(torch.complex64)
    with pytest.warns(UserWarning) as ours:
        layer = nn.Linear(2, 2).to(tocha.complex64)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert layer.weight.dtype == tocha.complex64


def test_loading_into_meta_parameters_warns(torch):
    def run(lib):
        model = lib.nn.Sequential(
            lib.nn.Linear(2, 3, device="meta"), lib.nn.BatchNorm1d(3, device="meta")
        )
        source = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        with pytest.warns(UserWarning) as caught:
            result = model.load_state_dict(source.state_dict())
        return [str(w.message) for w in caught], str(result), str(model[0].weight.device)

    assert run(tocha) == run(torch)


def test_state_dict_positional_arguments(torch):
    """The deprecated ``state_dict(destination, prefix, keep_vars)`` warns and honours all
    three."""

    def run(lib):
        layer = lib.nn.Linear(1, 1)
        with pytest.warns(FutureWarning) as caught:
            first = layer.state_dict(None, "p.", True)
        return str(caught[0].message), list(first), "Parameter" in repr(first["p.weight"])

    assert run(tocha) == run(torch)


@pytest.mark.parametrize("target", ["DoubleTensor", "float64", "HalfTensor"])
def test_module_type_casts_every_tensor(torch, target):
    def run(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        model.type(getattr(lib, target))
        return [str(t.dtype).split(".")[-1] for t in model.state_dict().values()]

    assert run(tocha) == run(torch)


# PyTorch 2.13's messages (a subclass of a recorded handle cannot replay them).
INIT_ERRORS = [
    ((1,), {}, "Mine.__init__() takes 1 positional argument but 2 were given"),
    ((1, 2), {}, "Mine.__init__() takes 1 positional argument but 3 were given"),
    ((), {"foo": 1}, "Mine.__init__() got an unexpected keyword argument 'foo'"),
    ((1,), {"foo": 1}, "Mine.__init__() got an unexpected keyword argument 'foo'"),
]


def _init_error(lib, args, kwargs) -> str:
    class Mine(lib.nn.Module):
        def __init__(self):
            super().__init__(*args, **kwargs)

    with pytest.raises(TypeError) as caught:
        Mine()
    return str(caught.value)


@pytest.mark.parametrize("args,kwargs,expected", INIT_ERRORS)
def test_module_init_rejects_arguments(args, kwargs, expected):
    assert _init_error(tocha, args, kwargs) == expected


def test_module_init_rejects_arguments_live():
    torch = pytest.importorskip("torch")
    for args, kwargs, expected in INIT_ERRORS:
        assert _init_error(torch, args, kwargs) == expected
