"""``tocha.compile(opt.step)``: SGD, Adam and AdamW steps as generated kernels, equal to the
eager steps; the cases the kernel leaves to the eager step; a whole training step."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tocha.compiler import _codegen_numba

HAS_NUMBA = importlib.util.find_spec("numba") is not None

pytestmark = pytest.mark.usefixtures("fresh_compiler")


@pytest.fixture(scope="module", autouse=True)
def numba_loaded():
    if HAS_NUMBA:
        assert _codegen_numba.wait_for_numba(120)


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 3))


OPTIMIZERS = [
    ("sgd", lambda ps: tocha.optim.SGD(ps, lr=0.1)),
    ("sgd_momentum", lambda ps: tocha.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1)),
    (
        "sgd_nesterov_decay",
        lambda ps: tocha.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    ),
    ("sgd_maximize", lambda ps: tocha.optim.SGD(ps, lr=0.05, weight_decay=0.1, maximize=True)),
    ("adam", lambda ps: tocha.optim.Adam(ps, lr=1e-2)),
    (
        "adam_decay_maximize",
        lambda ps: tocha.optim.Adam(ps, lr=1e-2, weight_decay=0.1, maximize=True),
    ),
    ("adam_low_beta1", lambda ps: tocha.optim.Adam(ps, lr=1e-2, betas=(0.3, 0.9))),
    ("adamw", lambda ps: tocha.optim.AdamW(ps, lr=1e-2)),
    ("adamw_amsgrad", lambda ps: tocha.optim.AdamW(ps, lr=1e-2, amsgrad=True)),
    ("adamw_foreach", lambda ps: tocha.optim.AdamW(ps, lr=1e-2, foreach=True)),
]


def _train(model, opt, step, steps=20, seed=0):
    gen = tocha.Generator().manual_seed(seed)
    for _ in range(steps):
        x = tocha.randn(8, 12, generator=gen)
        y = tocha.randint(0, 3, (8,), generator=gen)
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        step()


def _assert_same(model, reference, opt, opt_ref):
    for p, q in zip(model.parameters(), reference.parameters()):
        tocha.testing.assert_close(p, q, rtol=1e-5, atol=1e-5)
    for p, q in zip(model.parameters(), reference.parameters()):
        for name, value in opt_ref.state[q].items():
            tocha.testing.assert_close(opt.state[p][name], value, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,make", OPTIMIZERS, ids=[n for n, _ in OPTIMIZERS])
def test_20_compiled_steps_equal_eager(name, make):
    tocha.manual_seed(0)
    model = _mlp()
    reference = copy.deepcopy(model)
    opt, opt_ref = make(model.parameters()), make(reference.parameters())
    step = tocha.compile(opt.step)
    assert type(step).__name__ == "CompiledStep" and step.__wrapped__ == opt.step
    _train(model, opt, step)
    _train(reference, opt_ref, opt_ref.step)
    _assert_same(model, reference, opt, opt_ref)
    kernels = [plan.kernel.fn for plan in step.plans.values()]
    if HAS_NUMBA and "amsgrad" not in name:
        assert kernels and all(k is not None for k in kernels)  # the generated kernel ran
    else:
        assert not kernels


def test_generated_step_source_is_logged(caplog, monkeypatch):
    monkeypatch.setenv("TOCHA_LOGS", "code")
    caplog.set_level("DEBUG", logger="tocha.compiler")
    model = _mlp()
    opt = tocha.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = tocha.compile(opt.step)
    _train(model, opt, step, steps=2)
    assert "b_[k] = b" in caplog.text and "p_[k] = p_[k] - u * lr" in caplog.text


def test_whole_training_step_compiled_equals_eager():
    tocha.manual_seed(0)
    model = _mlp()
    reference = copy.deepcopy(model)
    opt = tocha.optim.AdamW(model.parameters(), lr=1e-2)
    opt_ref = tocha.optim.AdamW(reference.parameters(), lr=1e-2)
    compiled = tocha.compile(model)
    opt.step = tocha.compile(opt.step)  # as torch users write it
    _train(compiled, opt, opt.step)
    _train(reference, opt_ref, opt_ref.step)
    _assert_same(model, reference, opt, opt_ref)


def test_hooks_closure_and_scheduler_behave_as_eager():
    tocha.manual_seed(0)
    model = _mlp()
    reference = copy.deepcopy(model)
    opt = tocha.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_ref = tocha.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    step = tocha.compile(opt.step)
    calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    sched = tocha.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    sched_ref = tocha.optim.lr_scheduler.StepLR(opt_ref, step_size=2, gamma=0.5)
    x, y = tocha.randn(8, 12), tocha.randint(0, 3, (8,))
    for _ in range(6):
        runs = ((model, opt, step, sched), (reference, opt_ref, opt_ref.step, sched_ref))
        for m, o, s, sc in runs:

            def closure(m=m, o=o):
                o.zero_grad()
                loss = F.cross_entropy(m(x), y)
                loss.backward()
                return loss

            loss = s(closure)
            assert isinstance(loss, tocha.Tensor)
            sc.step()
    assert calls == ["pre", "post"] * 6
    _assert_same(model, reference, opt, opt_ref)
    assert not opt._group_updates  # the kernel's update is registered for one call only


def test_cases_left_to_the_eager_step(monkeypatch):
    tocha.manual_seed(0)
    model = _mlp()
    reference = copy.deepcopy(model)
    params = list(model.parameters())
    params_ref = list(reference.parameters())
    opt = tocha.optim.Adam([{"params": params[:2]}, {"params": params[2:], "lr": 0.1}], lr=1e-2)
    opt_ref = tocha.optim.Adam(
        [{"params": params_ref[:2]}, {"params": params_ref[2:], "lr": 0.1}], lr=1e-2
    )
    step = tocha.compile(opt.step)
    x, y = tocha.randn(8, 12), tocha.randint(0, 3, (8,))
    for k in range(8):
        for m, o, s in ((model, opt, step), (reference, opt_ref, opt_ref.step)):
            o.zero_grad()
            F.cross_entropy(m(x), y).backward()
            if k == 3:  # a parameter without a gradient: that group steps eagerly
                m[2].bias.grad = None
            s()
        if k == 5:  # numba not ready: the eager step
            monkeypatch.setattr(_codegen_numba, "ready", lambda: False)
    _assert_same(model, reference, opt, opt_ref)
    # the state a compiled step leaves loads into an eager optimizer
    fresh = tocha.optim.Adam(
        [{"params": params_ref[:2]}, {"params": params_ref[2:], "lr": 0.1}], lr=1e-2
    )
    fresh.load_state_dict(opt.state_dict())
    assert fresh.state_dict()["state"][0]["step"] == opt_ref.state_dict()["state"][0]["step"]


def test_the_compiler_reaches_optimizers_through_their_published_hook():
    root = Path(_codegen_numba.__file__).parent
    for path in root.glob("*.py"):
        assert "_step_group" not in path.read_text(), path.name
    opt = tocha.optim.SGD(_mlp().parameters(), lr=0.1)
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: seen.append(len(o._group_updates)))
    tocha.compile(opt.step)()
    opt.step()
    assert seen == [1, 0]


def test_state_replaced_by_load_state_dict_is_followed():
    tocha.manual_seed(0)
    model = _mlp()
    reference = copy.deepcopy(model)
    opt = tocha.optim.AdamW(model.parameters(), lr=1e-2)
    opt_ref = tocha.optim.AdamW(reference.parameters(), lr=1e-2)
    step = tocha.compile(opt.step)
    _train(model, opt, step, steps=3)
    _train(reference, opt_ref, opt_ref.step, steps=3)
    opt.load_state_dict(copy.deepcopy(opt_ref.state_dict()))
    _train(model, opt, step, steps=3, seed=1)
    _train(reference, opt_ref, opt_ref.step, steps=3, seed=1)
    _assert_same(model, reference, opt, opt_ref)


def test_other_optimizers_and_backends_keep_the_general_path():
    model = _mlp()
    rms = tocha.optim.RMSprop(model.parameters())
    assert type(tocha.compile(rms.step)).__name__ == "CompiledFunction"
    sgd = tocha.optim.SGD(model.parameters(), lr=0.1)
    assert type(tocha.compile(sgd.step, backend="aot_eager")).__name__ == "CompiledFunction"


def test_a_compiled_function_running_backward_and_the_step_runs_eagerly_once():
    tocha.manual_seed(0)
    model = _mlp()
    reference = copy.deepcopy(model)
    opt = tocha.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_ref = tocha.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    step = tocha.compile(opt.step)

    @tocha.compile
    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        step()
        return loss

    gen = tocha.Generator().manual_seed(0)
    for _ in range(5):
        x, y = tocha.randn(8, 12, generator=gen), tocha.randint(0, 3, (8,), generator=gen)
        loss = train_step(x, y)
        opt_ref.zero_grad()
        want = F.cross_entropy(reference(x), y)
        want.backward()
        opt_ref.step()
        tocha.testing.assert_close(loss, want)
    _assert_same(model, reference, opt, opt_ref)


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_a_training_step_function_keeps_the_model_and_the_update_compiled(optimizer, captures):
    tocha.manual_seed(0)
    model = _mlp()
    reference = copy.deepcopy(model)
    make = dict(OPTIMIZERS)["sgd_momentum" if optimizer == "sgd" else "adamw"]
    opt, opt_ref = make(model.parameters()), make(reference.parameters())
    ran = []

    @tocha.compile
    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    gen = tocha.Generator().manual_seed(0)
    for _ in range(6):
        x, y = tocha.randn(8, 12, generator=gen), tocha.randint(0, 3, (8,), generator=gen)
        loss = train_step(x, y)
        ran.append(sorted(vars(model)) == sorted(vars(reference)))
        opt_ref.zero_grad()
        want = F.cross_entropy(reference(x), y)
        want.backward()
        opt_ref.step()
        tocha.testing.assert_close(loss, want, rtol=1e-5, atol=1e-5)
    _assert_same(model, reference, opt, opt_ref)
    assert all(ran)  # nothing is left installed on the instances
    assert not opt._group_updates
    parts = next(iter(train_step.parts.values()))
    assert [m for m, _ in parts.modules] == [model]
    assert [o for o, _ in parts.optimizers] == [opt]
    assert captures() == 1  # the model's forward (the step itself broke the graph)
    if HAS_NUMBA:
        step = parts.optimizers[0][1]
        assert step.plans and all(p.kernel.fn is not None for p in step.plans.values())


def test_a_group_of_many_parameters():
    params = [tocha.randn(3, 5).requires_grad_() for _ in range(40)]
    reference = [p.detach().clone().requires_grad_() for p in params]
    opt = tocha.optim.AdamW(params, lr=1e-2)
    opt_ref = tocha.optim.AdamW(reference, lr=1e-2)
    step = tocha.compile(opt.step)
    for k in range(4):
        for p, q in zip(params, reference):
            p.grad = tocha.full_like(p, float(k + 1)) * p.detach()
            q.grad = tocha.full_like(q, float(k + 1)) * q.detach()
        step()
        opt_ref.step()
    for p, q in zip(params, reference):
        tocha.testing.assert_close(p, q, rtol=1e-5, atol=1e-5)
