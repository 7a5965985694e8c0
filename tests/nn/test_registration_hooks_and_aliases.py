"""Global module hooks run on registration (parameters, buffers, submodules) and before each
module's backward, against torch.nn; and the deprecated spellings PyTorch still accepts
(Hardtanh's min_value/max_value, NLLLoss2d, Container, a Buffer without data)."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tocha.nn.modules import module as module_mod

# PyTorch calls these hooks back into this file, which a tape cannot replay: the expected
# logs are PyTorch 2.13's, written down, and checked live where PyTorch is installed.


def _registration_log(lib):
    hooks = lib.nn.modules.module
    log = []

    def shape(t):
        return None if t is None else tuple(t.shape)

    handles = [
        hooks.register_module_parameter_registration_hook(
            lambda m, n, p: log.append(("param", type(m).__name__, n, shape(p)))
        ),
        hooks.register_module_buffer_registration_hook(
            lambda m, n, b: log.append(("buf", type(m).__name__, n, shape(b)))
        ),
        hooks.register_module_module_registration_hook(
            lambda m, n, s: log.append(("mod", type(m).__name__, n, type(s).__name__))
        ),
    ]
    try:
        lin = lib.nn.Linear(2, 3)
        lib.nn.BatchNorm1d(2)
        seq = lib.nn.Sequential(lib.nn.ReLU())
        seq.extra = lib.nn.Tanh()
        lin.weight = lib.nn.Parameter(lib.ones(3, 2))
        lin.register_buffer("zz", None)
        lin.zz = lib.ones(1)
        lin.b2 = lib.nn.Buffer(lib.ones(4))
        lin.register_parameter("pp", None)
    finally:
        for handle in handles:
            handle.remove()
    return log


EXPECTED_REGISTRATIONS = [
    ("param", "Linear", "weight", (3, 2)),
    ("param", "Linear", "bias", (3,)),
    ("param", "BatchNorm1d", "weight", (2,)),
    ("param", "BatchNorm1d", "bias", (2,)),
    ("buf", "BatchNorm1d", "running_mean", (2,)),
    ("buf", "BatchNorm1d", "running_var", (2,)),
    ("buf", "BatchNorm1d", "num_batches_tracked", ()),
    ("mod", "Sequential", "0", "ReLU"),
    ("mod", "Sequential", "extra", "Tanh"),
    ("param", "Linear", "weight", (3, 2)),
    ("buf", "Linear", "zz", None),
    ("buf", "Linear", "zz", (1,)),
    ("buf", "Linear", "b2", (4,)),
]


def test_registration_hooks():
    assert _registration_log(tocha) == EXPECTED_REGISTRATIONS
    assert not module_mod._GLOBAL_PARAMETER_REGISTRATION_HOOKS


def test_registration_hooks_live():
    torch = pytest.importorskip("torch")
    assert _registration_log(torch) == EXPECTED_REGISTRATIONS


def test_registration_hooks_may_replace_what_is_registered():
    handle = module_mod.register_module_module_registration_hook(
        lambda m, n, s: nn.Identity() if isinstance(s, nn.ReLU) else None
    )
    try:
        seq = nn.Sequential(nn.ReLU(), nn.Tanh())
    finally:
        handle.remove()
    assert [type(m).__name__ for m in seq] == ["Identity", "Tanh"]
    handle = module_mod.register_module_buffer_registration_hook(
        lambda m, n, b: tocha.full_like(b, 7.0) if n == "running_var" else None
    )
    try:
        bn = nn.BatchNorm1d(2, track_running_stats=True)
    finally:
        handle.remove()
    assert bn.running_var.tolist() == [1.0, 1.0]  # reset_running_stats refills it in place
    handle = module_mod.register_module_parameter_registration_hook(
        lambda m, n, p: nn.Parameter(tocha.zeros_like(p)) if n == "bias" else None
    )
    module = nn.Module()
    try:
        module.bias = nn.Parameter(tocha.ones(2))
    finally:
        handle.remove()
    assert module.bias.tolist() == [0.0, 0.0]


def _backward_pre_log(lib):
    log = []
    handle = lib.nn.modules.module.register_module_full_backward_pre_hook(
        lambda m, grad_output: log.append((type(m).__name__, len(grad_output)))
    )
    try:
        lib.manual_seed(0)
        x = lib.ones(1, 2, requires_grad=True)
        lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())(x).sum().backward()
    finally:
        handle.remove()
    return log


EXPECTED_BACKWARD_PRE = [("Sequential", 1), ("ReLU", 1), ("Linear", 1)]


def test_global_full_backward_pre_hook():
    assert _backward_pre_log(tocha) == EXPECTED_BACKWARD_PRE


def test_global_full_backward_pre_hook_live():
    torch = pytest.importorskip("torch")
    assert _backward_pre_log(torch) == EXPECTED_BACKWARD_PRE


def test_global_backward_pre_hook_may_replace_grad_output():
    handle = module_mod.register_module_full_backward_pre_hook(
        lambda m, grad_output: tuple(g * 2 for g in grad_output)
    )
    try:
        x = tocha.ones(3, requires_grad=True)
        nn.Identity()(x * 1).sum().backward()
    finally:
        handle.remove()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_hardtanh_deprecated_keywords(torch):
    with pytest.warns(FutureWarning) as theirs:
        t = torch.nn.Hardtanh(min_value=-2.0, max_value=3.0)
    with pytest.warns(FutureWarning) as ours:
        o = nn.Hardtanh(min_value=-2.0, max_value=3.0)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert repr(o) == repr(t)
    np.testing.assert_array_equal(
        o(tocha.tensor([-5.0, 5.0])).numpy(), t(torch.tensor([-5.0, 5.0])).numpy()
    )


def test_nll_loss_2d_and_container_are_deprecated_aliases(torch):
    with pytest.warns(FutureWarning) as theirs:
        t = torch.nn.NLLLoss2d(ignore_index=1)
    with pytest.warns(FutureWarning) as ours:
        o = nn.NLLLoss2d(ignore_index=1)
    assert str(ours[0].message) == str(theirs[0].message)
    assert repr(o) == repr(t) and isinstance(o, nn.NLLLoss)
    x = np.log(np.full((2, 3, 2, 2), 1 / 3))
    target = np.zeros((2, 2, 2), dtype=np.int64)
    assert float(o(tocha.tensor(x), tocha.tensor(target))) == pytest.approx(
        float(t(torch.tensor(x), torch.tensor(target)))
    )
    with pytest.warns(FutureWarning) as theirs:
        t = torch.nn.Container(a=torch.nn.Linear(1, 1))
    with pytest.warns(FutureWarning) as ours:
        o = nn.Container(a=nn.Linear(1, 1))
    assert str(ours[0].message) == str(theirs[0].message)
    assert repr(o) == repr(t)


def test_buffer_without_data(torch):
    ours, theirs = nn.Buffer(), torch.nn.Buffer()
    assert tuple(ours.shape) == tuple(theirs.shape) == (0,)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


class _Two(nn.Module):
    def forward(self, a, b, scale=1.0):
        return a * b * scale, a + b


def _two_log(lib, two):
    log = []

    def shapes(grads):
        return [None if g is None else tuple(g.shape) for g in grads]

    two.register_full_backward_hook(lambda m, gi, go: log.append((shapes(gi), shapes(go))))
    a = lib.ones(2, requires_grad=True)
    out, _ = two(a, lib.ones(2), scale=2.0)
    out.sum().backward()
    return log, a.grad.tolist()


# PyTorch 2.13's: a float input that does not require grad still gets a grad_input once
# another input does; an output the loss does not use has grad_output None.
EXPECTED_TWO = ([([(2,), (2,)], [(2,), None])], [2.0, 2.0])


def test_full_backward_hook_gradients():
    assert _two_log(tocha, _Two()) == EXPECTED_TWO


def test_full_backward_hook_gradients_live():
    torch = pytest.importorskip("torch")

    class Two(torch.nn.Module):
        def forward(self, a, b, scale=1.0):
            return a * b * scale, a + b

    assert _two_log(torch, Two()) == EXPECTED_TWO


def test_full_backward_hook_without_input_gradients_warns():
    layer = nn.Linear(2, 2)
    seen = []
    layer.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are"):
        layer(tocha.ones(1, 2)).sum().backward()
    assert seen == [(None,)]


def test_backward_hook_kinds_do_not_mix(torch):
    for first, second in [
        ("register_full_backward_hook", "register_backward_hook"),
        ("register_backward_hook", "register_full_backward_hook"),
    ]:
        for lib in (torch, tocha):
            layer = lib.nn.Linear(1, 1)
            getattr(layer, first)(lambda *a: None)
            with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
                getattr(layer, second)(lambda *a: None)
