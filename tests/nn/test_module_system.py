"""Module, containers, Parameter and Buffer against torch.nn: registration, named_* with
prefixes and duplicates, state dicts and their errors, modes, conversions, hooks, reprs."""

from __future__ import annotations

import gc
from collections import OrderedDict

import numpy as np
import pytest

import tocha
import tocha.nn as nn


def build(lib):
    """The same small model in either library: nested containers, a shared layer, a buffer."""
    n = lib.nn

    class Block(n.Module):
        def __init__(self):
            super().__init__()
            self.fc = n.Linear(4, 4)
            self.act = n.ReLU()
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("scratch", lib.ones(2), persistent=False)

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(n.Module):
        def __init__(self):
            super().__init__()
            self.blocks = n.ModuleList([Block(), Block()])
            self.head = n.Sequential(OrderedDict(drop=n.Dropout(0.1), out=n.Linear(4, 2)))
            self.tied = self.head.out
            self.extra = n.ParameterDict({"scale": n.Parameter(lib.ones(2))})
            self.plist = n.ParameterList([n.Parameter(lib.zeros(3)), lib.ones(1)])

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return self.head(x) * self.extra["scale"]

    return Net()


def copy_into(ours, theirs, torch):
    theirs.load_state_dict(
        {k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    )


def test_names_and_registration(torch):
    ours, theirs = build(tocha), build(torch)
    for kwargs in ({}, {"prefix": "model"}, {"remove_duplicate": False}):
        assert [n for n, _ in ours.named_parameters(**kwargs)] == [
            n for n, _ in theirs.named_parameters(**kwargs)
        ]
        assert [n for n, _ in ours.named_buffers(**kwargs)] == [
            n for n, _ in theirs.named_buffers(**kwargs)
        ]
        assert [n for n, _ in ours.named_modules(**kwargs)] == [
            n for n, _ in theirs.named_modules(**kwargs)
        ]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [n for n, _ in ours.named_parameters(recurse=False)] == []
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    assert ours.get_submodule("blocks.1.fc") is ours.blocks[1].fc
    assert ours.get_parameter("head.out.bias") is ours.head.out.bias
    assert ours.get_buffer("blocks.0.steps") is ours.blocks[0].steps


def test_state_dict_keys_and_round_trip(torch):
    ours, theirs = build(tocha), build(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    copy_into(ours, theirs, torch)
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
    assert repr(ours.load_state_dict(ours.state_dict())) == repr(
        theirs.load_state_dict(theirs.state_dict())
    )
    assert ours.state_dict()["tied.weight"].requires_grad is False
    assert ours.state_dict(keep_vars=True)["tied.weight"] is ours.head.out.weight


def _load_error(model, state, strict=True):
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state, strict=strict)
    return str(error.value)


def test_load_state_dict_errors(torch):
    ours, theirs = build(tocha), build(torch)
    state_a, state_b = ours.state_dict(), theirs.state_dict()
    for edit in ("missing", "unexpected", "size", "all"):
        a, b = OrderedDict(state_a), OrderedDict(state_b)
        if edit in ("missing", "all"):
            del a["head.out.bias"], b["head.out.bias"]
        if edit in ("unexpected", "all"):
            a["head.out.nope"], b["head.out.nope"] = tocha.ones(1), torch.ones(1)
        if edit in ("size", "all"):
            a["blocks.0.fc.weight"], b["blocks.0.fc.weight"] = tocha.ones(3), torch.ones(3)
        assert _load_error(ours, a) == _load_error(theirs, b)
    a, b = OrderedDict(state_a), OrderedDict(state_b)
    del a["extra.scale"], b["extra.scale"]
    a["x"], b["x"] = tocha.ones(1), torch.ones(1)
    result_a = ours.load_state_dict(a, strict=False)
    result_b = theirs.load_state_dict(b, strict=False)
    assert result_a.missing_keys == result_b.missing_keys
    assert result_a.unexpected_keys == result_b.unexpected_keys


def test_train_eval_and_requires_grad(torch):
    ours = build(tocha)
    assert ours.training and ours.head.drop.training
    ours.eval()
    assert not any(m.training for m in ours.modules())
    ours.train()
    assert all(m.training for m in ours.modules())
    ours.requires_grad_(False)
    assert not any(p.requires_grad for p in ours.parameters())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        ours.train("yes")


def test_conversions_keep_parameters(torch):
    ours = build(tocha)
    param = ours.head.out.weight
    ours(tocha.ones(1, 4)).sum().backward()
    assert ours.double() is ours
    assert ours.head.out.weight is param and isinstance(param, nn.Parameter)
    assert param.dtype == tocha.float64 and param.grad.dtype == tocha.float64
    assert ours.blocks[0].steps.dtype == tocha.float64
    ours.half()
    assert param.dtype == tocha.float16
    ours.to(tocha.float32)
    assert param.dtype == tocha.float32 and param.requires_grad
    ours.to("cpu")
    assert ours.head.out.weight is param
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        ours.to(tocha.int64)


def test_apply_and_zero_grad(torch):
    ours = build(tocha)
    seen = []
    ours.apply(lambda m: seen.append(type(m).__name__))
    theirs_seen = []
    build(torch).apply(lambda m: theirs_seen.append(type(m).__name__))
    assert seen == theirs_seen
    ours(tocha.ones(2, 4)).sum().backward()
    ours.zero_grad(set_to_none=False)
    assert all(p.grad is None or not p.grad.any() for p in ours.parameters())
    ours.zero_grad()
    assert all(p.grad is None for p in ours.parameters())


def test_forward_hooks(torch):
    calls = []
    layer = nn.Linear(3, 2)
    pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    post = layer.register_forward_hook(lambda m, args, out: out + 1)
    layer.register_forward_hook(lambda m, args, kwargs, out: calls.append(kwargs), with_kwargs=True)
    x = tocha.ones(1, 3)
    expected = (x * 2) @ layer.weight.T + layer.bias + 1
    np.testing.assert_allclose(layer(x).detach().numpy(), expected.detach().numpy())
    assert calls == [{}]
    pre.remove()
    post.remove()
    np.testing.assert_allclose(
        layer(x).detach().numpy(), (x @ layer.weight.T + layer.bias).detach().numpy()
    )


def test_full_backward_hook_gradients_match_torch(torch):
    ours, theirs = nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    theirs.load_state_dict(
        {k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    )
    seen = {}

    def hook_for(lib):
        def hook(module, grad_input, grad_output):
            seen[lib] = (
                [g.numpy().copy() for g in grad_input],
                [g.numpy().copy() for g in grad_output],
            )
            return (grad_input[0] * 3,)

        return hook

    ours.register_full_backward_hook(hook_for("tocha"))
    theirs.register_full_backward_hook(hook_for("torch"))
    x = np.random.default_rng(0).standard_normal((4, 3))
    a = tocha.from_numpy(x.copy()).requires_grad_(True)
    b = torch.from_numpy(x.copy()).requires_grad_(True)
    (ours(a) ** 2).sum().backward()
    (theirs(b) ** 2).sum().backward()
    for mine, expected in zip(seen["tocha"], seen["torch"]):
        for u, v in zip(mine, expected):
            np.testing.assert_allclose(u, v, rtol=1e-5)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5)


def test_nested_repr_matches_torch(torch):
    assert repr(build(tocha)).replace("tocha.", "torch.") == repr(build(torch))
    assert repr(nn.Sequential()) == repr(torch.nn.Sequential())
    assert repr(nn.ModuleDict({"a": nn.ReLU()})) == repr(
        torch.nn.ModuleDict({"a": torch.nn.ReLU()})
    )


def test_sequential_behaviour(torch):
    layers = [nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 3)]
    seq = nn.Sequential(*layers)
    assert isinstance(seq[1:], nn.Sequential) and list(seq[1:]) == layers[1:]
    assert seq[-1] is layers[2]
    seq.append(nn.Tanh())
    seq.insert(1, nn.Sigmoid())
    assert [type(m).__name__ for m in seq] == ["Linear", "Sigmoid", "ReLU", "Linear", "Tanh"]
    del seq[1]
    assert [name for name, _ in seq.named_children()] == ["0", "1", "2", "3"]
    assert len(seq + nn.Sequential(nn.ReLU())) == 5
    with pytest.raises(IndexError):
        seq[10]
    tseq = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    assert repr(nn.Sequential(nn.Linear(2, 2), nn.ReLU())) == repr(tseq)


def test_module_list_and_dict():
    mlist = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    mlist += [nn.Sigmoid()]
    mlist.insert(0, nn.Identity())
    assert [type(m).__name__ for m in mlist] == ["Identity", "ReLU", "Tanh", "Sigmoid"]
    assert isinstance(mlist[1:3], nn.ModuleList) and len(mlist[1:3]) == 2
    mdict = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
    assert list(mdict) == ["b", "a"] and "a" in mdict
    assert isinstance(mdict.pop("b"), nn.ReLU) and list(mdict.keys()) == ["a"]


def test_parameter_list_and_dict(torch):
    plist = nn.ParameterList([nn.Parameter(tocha.ones(2)), tocha.zeros(3)])
    tlist = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2)), torch.zeros(3)])
    assert all(isinstance(p, nn.Parameter) for p in plist)
    assert repr(plist).replace("tocha.", "torch.") == repr(tlist)
    assert [n for n, _ in plist.named_parameters()] == [n for n, _ in tlist.named_parameters()]
    pdict = nn.ParameterDict({"w": tocha.ones(2, 2)})
    tdict = torch.nn.ParameterDict({"w": torch.ones(2, 2)})
    assert repr(pdict) == repr(tdict)
    assert isinstance(pdict["w"], nn.Parameter) and list(pdict.keys()) == ["w"]


def _registration_errors(lib) -> list:
    m = lib.nn.Module()
    calls = (
        lambda: m.register_parameter("a.b", None),
        lambda: m.register_buffer("", None),
        lambda: m.register_parameter("x", lib.ones(1)),
        lambda: m.add_module(3, None),
        lambda: m.missing,
    )
    errors = []
    for fn in calls:
        with pytest.raises(Exception) as error:
            fn()
        errors.append((type(error.value), str(error.value)))
    return errors


def test_registration_errors(torch):
    assert _registration_errors(tocha) == _registration_errors(torch)


def test_parameter_and_buffer(torch):
    p = nn.Parameter(tocha.ones(2))
    assert p.requires_grad and isinstance(p, tocha.Tensor)
    assert repr(p) == repr(torch.nn.Parameter(torch.ones(2)))
    m = nn.Module()
    m.buf = nn.Buffer(tocha.ones(2), persistent=False)
    assert "buf" in dict(m.named_buffers()) and "buf" not in m.state_dict()
    assert not isinstance(m.buf, nn.Buffer)


def test_training_steps_leave_no_reference_cycles():
    """Training steps (an input that requires grad too) leave nothing for the cyclic garbage
    collector: their memory returns as soon as a step's tensors are dropped."""
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))

    def step():
        x = tocha.randn(4, 8, requires_grad=True)
        model.zero_grad()
        nn.functional.cross_entropy(model(x), tocha.tensor([0, 1, 2, 0])).backward()
        with tocha.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad

    step()
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            step()
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_the_older_load_state_dict_pre_hook_form():
    """``_register_load_state_dict_pre_hook``: the hook gets the module only `with_module`
    (the calls PyTorch 2.13 makes, recorded by hand: the hooks' side effects do not replay)."""
    outer = tocha.nn.Sequential(tocha.nn.Linear(2, 2))
    calls = []
    handle = outer[0]._register_load_state_dict_pre_hook(
        lambda state_dict, prefix, *rest: calls.append((prefix, sorted(state_dict)))
    )
    outer[0]._register_load_state_dict_pre_hook(
        lambda module, state_dict, prefix, *rest: calls.append(type(module).__name__),
        with_module=True,
    )
    outer.load_state_dict(outer.state_dict())
    handle.remove()
    outer.load_state_dict(outer.state_dict())
    assert calls == [("0.", ["0.bias", "0.weight"]), "Linear", "Linear"]
