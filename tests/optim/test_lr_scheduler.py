"""The learning-rate schedulers against PyTorch's: sequences, state, warnings and errors.

Each case builds the same schedule on a tocha optimizer and on a PyTorch one, from one factory
taking the scheduler module (``tocha.optim.lr_scheduler`` or ``torch.optim.lr_scheduler``) and
the optimizer, so both sides read alike.
"""

from __future__ import annotations

import copy
import math
import warnings
from functools import partial

import numpy as np
import pytest

import tocha
import tocha.optim
from tocha.optim import lr_scheduler

TOL = 1e-12
EPOCHS = 30


def _params(lib, n_groups, lrs):
    if n_groups == 1:
        return [lib.zeros(2, requires_grad=True)]
    return [{"params": [lib.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]


def make_optimizer(lib, kind="sgd", n_groups=2, lrs=(0.1, 0.05)):
    """An optimizer of ``lib`` (tocha or torch) over small zero tensors."""
    params = _params(lib, n_groups, lrs)
    if kind == "sgd":
        return lib.optim.SGD(params, lr=lrs[0], momentum=0.9)
    if kind == "adam":
        return lib.optim.Adam(params, lr=lrs[0], betas=(0.9, 0.999))
    return lib.optim.Optimizer(params, {"lr": lrs[0]})


def momenta(optimizer):
    """The momentum (or beta1) of each param group, or None where it has neither."""
    out = []
    for group in optimizer.param_groups:
        if "betas" in group:
            out.append(group["betas"][0])
        else:
            out.append(group.get("momentum"))
    return out


def run(scheduler, optimizer, epochs=EPOCHS):
    """The lrs and momenta before each of ``epochs`` optimizer/scheduler steps."""
    lrs, moms = [], []
    for _ in range(epochs):
        lrs.append([group["lr"] for group in optimizer.param_groups])
        moms.append(momenta(optimizer))
        optimizer.step()
        scheduler.step()
        assert scheduler.get_last_lr() == [group["lr"] for group in optimizer.param_groups]
    return lrs, moms


def assert_close(actual, expected):
    assert len(actual) == len(expected)
    for epoch, (a_row, e_row) in enumerate(zip(actual, expected)):
        for a, e in zip(a_row, e_row, strict=True):
            if e is None:
                assert a is None, epoch
            else:
                assert math.isclose(a, e, rel_tol=0, abs_tol=TOL), (epoch, a, e)


def both(torch, factory, kind="sgd", n_groups=2, lrs=(0.1, 0.05)):
    """(tocha optimizer, tocha scheduler, torch optimizer, torch scheduler) from ``factory``."""
    t_opt = make_optimizer(tocha, kind, n_groups, lrs)
    r_opt = make_optimizer(torch, kind, n_groups, lrs)
    return t_opt, factory(lr_scheduler, t_opt), r_opt, factory(torch.optim.lr_scheduler, r_opt)


class _Halve:
    """A callable object, whose state LambdaLR saves (a plain function it does not)."""

    def __init__(self):
        self.base = 0.5

    def __call__(self, epoch):
        return self.base ** (epoch // 4)


def _sequential(m, o):
    warmup = m.LinearLR(o, start_factor=0.2, total_iters=5)
    step = m.StepLR(o, step_size=4, gamma=0.5)
    cosine = m.CosineAnnealingLR(o, T_max=6, eta_min=0.001)
    return m.SequentialLR(o, schedulers=[warmup, step, cosine], milestones=[5, 15])


CASES = {
    "lambda": lambda m, o: m.LambdaLR(o, lambda e: 0.95**e),
    "lambda_list": lambda m, o: m.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9**e]),
    "lambda_object": lambda m, o: m.LambdaLR(o, _Halve()),
    "multiplicative": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95),
    "multiplicative_list": lambda m, o: m.MultiplicativeLR(
        o, [lambda e: 0.9, lambda e: 1.0 if e % 2 else 0.8]
    ),
    "step": lambda m, o: m.StepLR(o, step_size=3, gamma=0.5),
    "step_default_gamma": lambda m, o: m.StepLR(o, step_size=7),
    "multistep": lambda m, o: m.MultiStepLR(o, milestones=[5, 10, 10, 22], gamma=0.5),
    "constant": lambda m, o: m.ConstantLR(o),
    "constant_factor": lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=8),
    "linear": lambda m, o: m.LinearLR(o),
    "linear_warmup": lambda m, o: m.LinearLR(o, start_factor=0.05, end_factor=0.9, total_iters=12),
    "linear_decay": lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=20),
    "exponential": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "polynomial": lambda m, o: m.PolynomialLR(o),
    "polynomial_square": lambda m, o: m.PolynomialLR(o, total_iters=12, power=2.0),
    "polynomial_sqrt": lambda m, o: m.PolynomialLR(o, total_iters=40, power=0.5),
    "cosine": lambda m, o: m.CosineAnnealingLR(o, T_max=10),
    "cosine_eta_min": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    "cosine_tmax_1": lambda m, o: m.CosineAnnealingLR(o, T_max=1, eta_min=0.001),
    "warm_restarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5),
    "warm_restarts_mult": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001
    ),
    "cyclic": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "cyclic_triangular2": lambda m, o: m.CyclicLR(
        o,
        base_lr=[0.01, 0.02],
        max_lr=[0.1, 0.2],
        step_size_up=3,
        step_size_down=5,
        mode="triangular2",
    ),
    "cyclic_exp_range": lambda m, o: m.CyclicLR(
        o,
        base_lr=0.01,
        max_lr=0.1,
        step_size_up=4,
        mode="exp_range",
        gamma=0.9,
        base_momentum=0.7,
        max_momentum=[0.95, 0.9],
    ),
    "cyclic_scale_fn_cycle": lambda m, o: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 1 / x
    ),
    "cyclic_scale_fn_iterations": lambda m, o: m.CyclicLR(
        o,
        base_lr=0.01,
        max_lr=0.1,
        step_size_up=3,
        scale_fn=lambda x: 0.97**x,
        scale_mode="iterations",
    ),
    "cyclic_no_momentum": lambda m, o: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=5, cycle_momentum=False
    ),
    "one_cycle": lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=EPOCHS),
    "one_cycle_linear": lambda m, o: m.OneCycleLR(
        o, max_lr=[0.1, 0.2], total_steps=40, anneal_strategy="linear", pct_start=0.25
    ),
    "one_cycle_three_phase": lambda m, o: m.OneCycleLR(
        o,
        max_lr=0.1,
        total_steps=EPOCHS,
        three_phase=True,
        div_factor=10.0,
        final_div_factor=100.0,
    ),
    "one_cycle_epochs": lambda m, o: m.OneCycleLR(
        o,
        max_lr=0.1,
        epochs=5,
        steps_per_epoch=7,
        base_momentum=[0.8, 0.85],
        max_momentum=0.9,
    ),
    "one_cycle_no_momentum": lambda m, o: m.OneCycleLR(
        o, max_lr=0.1, total_steps=EPOCHS, cycle_momentum=False
    ),
    "sequential": lambda m, o: m.SequentialLR(
        o, [m.ConstantLR(o, factor=0.1, total_iters=2), m.ExponentialLR(o, gamma=0.9)], [2]
    ),
    "sequential_three": _sequential,
    "chained": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=5), m.ExponentialLR(o, gamma=0.9)]
    ),
    "chained_optimizer": lambda m, o: m.ChainedScheduler(
        [m.StepLR(o, step_size=4, gamma=0.5), m.LinearLR(o, start_factor=0.5)], optimizer=o
    ),
}

MOMENTUM_CASES = [name for name in CASES if "cycl" in name]


@pytest.mark.parametrize("name", list(CASES))
def test_sequence_matches_torch(torch, name):
    t_opt, t_sched, r_opt, r_sched = both(torch, CASES[name])
    t_lrs, t_moms = run(t_sched, t_opt)
    r_lrs, r_moms = run(r_sched, r_opt)
    assert_close(t_lrs, r_lrs)
    assert_close(t_moms, r_moms)


@pytest.mark.parametrize("name", ["step", "cosine", "warm_restarts", "linear_warmup"])
def test_sequence_matches_torch_one_group(torch, name):
    t_opt, t_sched, r_opt, r_sched = both(torch, CASES[name], n_groups=1, lrs=(0.3,))
    assert_close(run(t_sched, t_opt)[0], run(r_sched, r_opt)[0])


@pytest.mark.parametrize("name", MOMENTUM_CASES)
def test_betas_cycle_with_adam(torch, name):
    t_opt, t_sched, r_opt, r_sched = both(torch, CASES[name], kind="adam")
    t_lrs, t_moms = run(t_sched, t_opt)
    r_lrs, r_moms = run(r_sched, r_opt)
    assert_close(t_lrs, r_lrs)
    assert_close(t_moms, r_moms)
    assert [g["betas"][1] for g in t_opt.param_groups] == [0.999, 0.999]


@pytest.mark.parametrize("name", MOMENTUM_CASES)
def test_scheduler_adds_the_param_group_keys_torch_adds(torch, name):
    t_opt, _, r_opt, _ = both(torch, CASES[name])

    def added(opt):
        return [set(group) - set(opt.defaults) - {"params"} for group in opt.param_groups]

    assert added(t_opt) == added(r_opt)


@pytest.mark.parametrize(
    "factory",
    [
        lambda m, o: m.StepLR(o, step_size=3, gamma=0.5),
        lambda m, o: m.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.5),
        lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=4),
        lambda m, o: m.LinearLR(o, start_factor=0.25, total_iters=6),
        lambda m, o: m.ExponentialLR(o, gamma=0.9),
        lambda m, o: m.PolynomialLR(o, total_iters=8, power=2.0),
        lambda m, o: m.CosineAnnealingLR(o, T_max=6, eta_min=0.01),
        lambda m, o: m.LambdaLR(o, lambda e: 0.9**e),
    ],
)
def test_step_with_epoch_uses_closed_form(torch, factory):
    t_opt, t_sched, r_opt, r_sched = both(torch, factory)
    for epoch in [3, 7, 2, 12, 0, 5]:
        t_opt.step()
        r_opt.step()
        with pytest.warns(UserWarning, match="The epoch parameter"):
            t_sched.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r_sched.step(epoch)
        assert t_sched.last_epoch == r_sched.last_epoch == epoch
        assert_close([t_sched.get_last_lr()], [r_sched.get_last_lr()])


@pytest.mark.parametrize("t_mult", [1, 2, 3])
def test_warm_restarts_fractional_epochs(torch, t_mult):
    def factory(m, o):
        return m.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=t_mult, eta_min=0.005)

    t_opt, t_sched, r_opt, r_sched = both(torch, factory)
    iters = 3
    t_lrs, r_lrs = [], []
    for epoch in range(EPOCHS):
        for i in range(iters):
            for opt, sched, out in ((t_opt, t_sched, t_lrs), (r_opt, r_sched, r_lrs)):
                opt.step()
                sched.step(epoch + i / iters)
                out.append(sched.get_last_lr())
    assert t_sched.T_i == r_sched.T_i and t_sched.last_epoch == r_sched.last_epoch
    assert_close(t_lrs, r_lrs)


def test_warm_restarts_interleaved_steps(torch):
    def factory(m, o):
        return m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)

    t_opt, t_sched, r_opt, r_sched = both(torch, factory)
    for epoch in [None, 5.5, None, None, 20.25, 1, None, 13]:
        t_sched.step(epoch)
        r_sched.step(epoch)
        assert math.isclose(t_sched.T_cur, r_sched.T_cur, abs_tol=TOL)
        assert_close([t_sched.get_last_lr()], [r_sched.get_last_lr()])


def test_one_cycle_stepping_past_total_steps_raises(torch):
    for lib, m in ((tocha, lr_scheduler), (torch, torch.optim.lr_scheduler)):
        opt = make_optimizer(lib)
        sched = m.OneCycleLR(opt, max_lr=0.1, total_steps=5)
        for _ in range(5):
            opt.step()
            sched.step()
        with pytest.raises(ValueError) as info:
            sched.step()
        assert str(info.value) == "Tried to step 6 times. The specified number of total steps is 5"


STATE_CASES = [
    "lambda_object",
    "multiplicative",
    "step",
    "multistep",
    "linear_warmup",
    "polynomial_square",
    "cosine_eta_min",
    "warm_restarts_mult",
    "cyclic_exp_range",
    "cyclic_scale_fn_iterations",
    "one_cycle_three_phase",
    "sequential_three",
    "chained",
]


@pytest.mark.parametrize("name", STATE_CASES)
def test_state_dict_round_trip_resumes_sequence(torch, name):
    factory = CASES[name]
    opt = make_optimizer(tocha)
    sched = factory(lr_scheduler, opt)
    run(sched, opt, 10)
    state = copy.deepcopy(sched.state_dict())
    opt_state = copy.deepcopy(opt.state_dict())
    expected = run(sched, opt, 20)

    new_opt = make_optimizer(tocha)
    new_sched = factory(lr_scheduler, new_opt)
    new_opt.load_state_dict(opt_state)
    new_sched.load_state_dict(state)
    resumed = run(new_sched, new_opt, 20)
    assert_close(resumed[0], expected[0])
    assert_close(resumed[1], expected[1])

    r_opt = make_optimizer(torch)
    r_sched = factory(torch.optim.lr_scheduler, r_opt)
    assert set(sched.state_dict()) == set(r_sched.state_dict())


def _plateau(m, o):
    return m.ReduceLROnPlateau(o, patience=1, factor=0.5, cooldown=1)


CHECKPOINT_CASES = {
    **{name: CASES[name] for name in STATE_CASES if name != "multistep"},
    "one_cycle": CASES["one_cycle"],
    "warm_restarts": CASES["warm_restarts"],
    "sequential": CASES["sequential"],
    "plateau": _plateau,
}


def advance(scheduler, optimizer, epochs, start=0, plateau=False):
    """The lrs and momenta before each of ``epochs`` steps (a plateau scheduler reads LOSSES)."""
    if not plateau:
        return run(scheduler, optimizer, epochs)
    lrs = []
    for loss in LOSSES[start : start + epochs]:
        lrs.append([group["lr"] for group in optimizer.param_groups])
        optimizer.step()
        scheduler.step(loss)
    return lrs, [momenta(optimizer)] * len(lrs)


@pytest.mark.parametrize("name", list(CHECKPOINT_CASES))
@pytest.mark.parametrize("writer", ["torch", "tocha"])
def test_checkpoint_of_one_resumes_in_the_other(torch, name, writer):
    """A state dict written by PyTorch resumes the schedule in tocha, and the other way."""
    factory = CHECKPOINT_CASES[name]
    t_opt, t_sched, r_opt, r_sched = both(torch, factory)
    sides = {"torch": (r_opt, r_sched), "tocha": (t_opt, t_sched)}
    w_opt, w_sched = sides[writer]
    l_opt, l_sched = sides["tocha" if writer == "torch" else "torch"]
    plateau = name == "plateau"
    advance(w_sched, w_opt, 10, plateau=plateau)
    l_opt.load_state_dict(w_opt.state_dict())
    l_sched.load_state_dict(w_sched.state_dict())
    assert_close([l_sched.get_last_lr()], [w_sched.get_last_lr()])
    t_lrs, t_moms = advance(t_sched, t_opt, 15, 10, plateau)
    r_lrs, r_moms = advance(r_sched, r_opt, 15, 10, plateau)
    assert_close(t_lrs, r_lrs)
    assert_close(t_moms, r_moms)


RESUME_CASES = {
    "lambda": lambda m, o, k: m.LambdaLR(o, lambda e: 0.9**e, last_epoch=k),
    "multiplicative": lambda m, o, k: m.MultiplicativeLR(o, lambda e: 0.9, last_epoch=k),
    "step": lambda m, o, k: m.StepLR(o, step_size=3, gamma=0.5, last_epoch=k),
    "multistep": lambda m, o, k: m.MultiStepLR(o, [3, 7, 7], gamma=0.5, last_epoch=k),
    "constant": lambda m, o, k: m.ConstantLR(o, factor=0.5, total_iters=3, last_epoch=k),
    "linear": lambda m, o, k: m.LinearLR(o, start_factor=0.25, total_iters=6, last_epoch=k),
    "exponential": lambda m, o, k: m.ExponentialLR(o, gamma=0.9, last_epoch=k),
    "polynomial": lambda m, o, k: m.PolynomialLR(o, total_iters=8, power=2.0, last_epoch=k),
    "warm_restarts": lambda m, o, k: m.CosineAnnealingWarmRestarts(o, 3, 2, last_epoch=k),
    "cyclic": lambda m, o, k: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, last_epoch=k),
}


@pytest.mark.parametrize("last_epoch", [1, 2, 6])
@pytest.mark.parametrize("name", list(RESUME_CASES))
def test_resume_with_last_epoch_matches_torch(torch, name, last_epoch):
    """Built again with ``last_epoch`` over an optimizer that ran, the schedule goes on as
    PyTorch's does (its first step keeps the rate or moves it, scheduler by scheduler)."""
    factory = RESUME_CASES[name]
    t_opt, t_sched, r_opt, r_sched = both(torch, partial(factory, k=-1))
    run(t_sched, t_opt, last_epoch + 1)
    run(r_sched, r_opt, last_epoch + 1)
    t_resumed = factory(lr_scheduler, t_opt, last_epoch)
    r_resumed = factory(torch.optim.lr_scheduler, r_opt, last_epoch)
    assert_close([t_resumed.get_last_lr()], [r_resumed.get_last_lr()])
    t_lrs, t_moms = run(t_resumed, t_opt, 12)
    r_lrs, r_moms = run(r_resumed, r_opt, 12)
    assert_close(t_lrs, r_lrs)
    assert_close(t_moms, r_moms)


def test_state_dict_excludes_optimizer_and_load_keeps_argument(torch):
    opt = make_optimizer(tocha)
    sched = lr_scheduler.LambdaLR(opt, [_Halve(), lambda e: 1.0])
    state = sched.state_dict()
    assert "optimizer" not in state
    assert state["lr_lambdas"] == [{"base": 0.5}, None]
    state["lr_lambdas"][0]["base"] = 0.25
    sched.load_state_dict(state)
    assert sched.lr_lambdas[0].base == 0.25
    assert "lr_lambdas" in state


def test_resume_with_last_epoch(torch):
    t_opt, t_sched, r_opt, r_sched = both(torch, CASES["cosine_eta_min"])
    run(t_sched, t_opt, 10)
    run(r_sched, r_opt, 10)

    def resume(m, o):
        return m.CosineAnnealingLR(o, T_max=7, eta_min=0.01, last_epoch=9)

    t_resumed, r_resumed = resume(lr_scheduler, t_opt), resume(torch.optim.lr_scheduler, r_opt)
    assert_close(run(t_resumed, t_opt, 20)[0], run(r_resumed, r_opt, 20)[0])


def test_initial_lr_and_base_lrs():
    opt = make_optimizer(tocha)
    sched = lr_scheduler.StepLR(opt, step_size=2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.05]
    assert sched.base_lrs == [0.1, 0.05]
    assert sched.last_epoch == 0
    assert sched.get_last_lr() == [0.1, 0.05]
    assert isinstance(sched, lr_scheduler.LRScheduler)
    assert issubclass(lr_scheduler._LRScheduler, lr_scheduler.LRScheduler)
    assert lr_scheduler._LRScheduler.__name__ == "_LRScheduler"


def test_lr_scheduler_all_matches_torch(torch):
    assert sorted(lr_scheduler.__all__) == sorted(torch.optim.lr_scheduler.__all__)


def _warnings_of(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return [(w.category, str(w.message)) for w in caught]


def _both_warnings(torch, action):
    t_opt, t_sched, r_opt, r_sched = both(torch, lambda m, o: m.StepLR(o, step_size=2))
    t_caught = _warnings_of(lambda: action(t_opt, t_sched))
    r_caught = _warnings_of(lambda: action(r_opt, r_sched))
    assert t_caught == r_caught
    return t_caught


def test_warns_when_scheduler_steps_before_optimizer(torch):
    caught = _both_warnings(torch, lambda opt, sched: sched.step())
    assert len(caught) == 1 and caught[0][0] is UserWarning
    assert caught[0][1].startswith(
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`."
    )


def test_no_warning_in_right_order(torch):
    def action(opt, sched):
        for _ in range(3):
            opt.step()
            sched.step()

    assert _both_warnings(torch, action) == []


def test_warns_when_optimizer_step_overridden(torch):
    def action(opt, sched):
        opt.step = lambda: None
        opt.step()
        sched.step()

    caught = _both_warnings(torch, action)
    assert len(caught) == 1
    assert caught[0][1].startswith("Seems like `optimizer.step()` has been overridden")


def test_get_lr_outside_step_warns(torch):
    caught = _both_warnings(torch, lambda opt, sched: sched.get_lr())
    assert caught == [
        (
            UserWarning,
            "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
        )
    ]


@pytest.mark.parametrize("optimizer_first", [True, False], ids=["optimizer_first", "late"])
def test_call_order_is_watched_per_optimizer(torch, optimizer_first):
    """An optimizer step seen by the first scheduler counts for a scheduler attached later."""
    caught = []
    for lib, m in ((tocha, lr_scheduler), (torch, torch.optim.lr_scheduler)):
        opt = make_optimizer(lib)
        first = m.StepLR(opt, step_size=2)

        def action(opt=opt, m=m, first=first):
            if optimizer_first:
                opt.step()
            second = m.ExponentialLR(opt, gamma=0.5)
            second.step()
            first.step()
            opt.step()
            second.step()

        caught.append(_warnings_of(action))
    assert caught[0] == caught[1]
    assert len(caught[0]) == (0 if optimizer_first else 2)


def _error_of(build):
    with pytest.raises(Exception) as info:
        build()
    return type(info.value), str(info.value)


def _not_optimizer(lib, m):
    return m.StepLR(object(), step_size=1)


def _resume_without_initial_lr(lib, m):
    return m.StepLR(make_optimizer(lib), step_size=1, last_epoch=5)


def _sequential_bad(kind):
    def build(lib, m):
        opt = make_optimizer(lib)
        step = m.StepLR(opt, step_size=1)
        if kind == "empty":
            return m.SequentialLR(opt, [], [])
        if kind == "milestones":
            return m.SequentialLR(opt, [step, m.ExponentialLR(opt, 0.9)], [1, 2])
        if kind == "plateau":
            return m.SequentialLR(opt, [step, m.ReduceLROnPlateau(opt)], [1])
        if kind == "no_optimizer":
            return m.SequentialLR(opt, [step, object()], [1])
        other = make_optimizer(lib)
        return m.SequentialLR(opt, [step, m.ExponentialLR(other, 0.9)], [1])

    return build


def _chained_bad(kind):
    def build(lib, m):
        opt = make_optimizer(lib)
        if kind == "empty":
            return m.ChainedScheduler([])
        return m.ChainedScheduler([m.StepLR(opt, step_size=1), m.ReduceLROnPlateau(opt)])

    return build


def _with(factory, kind="sgd"):
    return lambda lib, m: factory(m, make_optimizer(lib, kind))


def _with_base(factory):
    return lambda lib, m: factory(m, make_optimizer(lib, "base"))


ERROR_CASES = {
    "not_optimizer": _not_optimizer,
    "resume_without_initial_lr": _resume_without_initial_lr,
    "lambda_count": _with(lambda m, o: m.LambdaLR(o, [lambda e: 1.0])),
    "multiplicative_not_callable": _with(lambda m, o: m.MultiplicativeLR(o, 0.5)),
    "constant_factor": _with(lambda m, o: m.ConstantLR(o, factor=2.0)),
    "linear_start": _with(lambda m, o: m.LinearLR(o, start_factor=0.0)),
    "linear_end": _with(lambda m, o: m.LinearLR(o, end_factor=1.5)),
    "warm_restarts_t0": _with(lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=-1)),
    "warm_restarts_t0_float": _with(lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2.5)),
    "warm_restarts_tmult": _with(lambda m, o: m.CosineAnnealingWarmRestarts(o, 2, T_mult=0)),
    "warm_restarts_eta_min": _with(lambda m, o: m.CosineAnnealingWarmRestarts(o, 2, eta_min="0.1")),
    "warm_restarts_negative_epoch": _with(
        lambda m, o: m.CosineAnnealingWarmRestarts(o, 2).step(-1)
    ),
    "cyclic_mode": _with(lambda m, o: m.CyclicLR(o, 0.01, 0.1, mode="square")),
    "cyclic_no_momentum": _with_base(lambda m, o: m.CyclicLR(o, 0.01, 0.1)),
    "cyclic_base_lr_count": _with(lambda m, o: m.CyclicLR(o, [0.01], 0.1)),
    "cyclic_momentum_count": _with(
        lambda m, o: m.CyclicLR(o, 0.01, 0.1, max_momentum=[0.9, 0.9, 0.9])
    ),
    "one_cycle_total_steps": _with(lambda m, o: m.OneCycleLR(o, 0.1, total_steps=0)),
    "one_cycle_total_steps_float": _with(lambda m, o: m.OneCycleLR(o, 0.1, total_steps=5.0)),
    "one_cycle_epochs": _with(lambda m, o: m.OneCycleLR(o, 0.1, epochs=-1, steps_per_epoch=3)),
    "one_cycle_steps_per_epoch": _with(
        lambda m, o: m.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=0)
    ),
    "one_cycle_no_steps": _with(lambda m, o: m.OneCycleLR(o, 0.1, epochs=2)),
    "one_cycle_pct_start": _with(lambda m, o: m.OneCycleLR(o, 0.1, 10, pct_start=1.5)),
    "one_cycle_pct_start_int": _with(lambda m, o: m.OneCycleLR(o, 0.1, 10, pct_start=1)),
    "one_cycle_anneal": _with(lambda m, o: m.OneCycleLR(o, 0.1, 10, anneal_strategy="exp")),
    "one_cycle_no_momentum": _with_base(lambda m, o: m.OneCycleLR(o, 0.1, 10)),
    "one_cycle_max_lr_count": _with(lambda m, o: m.OneCycleLR(o, [0.1, 0.2, 0.3], 10)),
    "plateau_factor": _with(lambda m, o: m.ReduceLROnPlateau(o, factor=1.0)),
    "plateau_mode": _with(lambda m, o: m.ReduceLROnPlateau(o, mode="median")),
    "plateau_threshold_mode": _with(lambda m, o: m.ReduceLROnPlateau(o, threshold_mode="pct")),
    "plateau_min_lr_count": _with(lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1])),
    "plateau_not_optimizer": lambda lib, m: m.ReduceLROnPlateau(object()),
    "sequential_empty": _sequential_bad("empty"),
    "sequential_milestones": _sequential_bad("milestones"),
    "sequential_plateau": _sequential_bad("plateau"),
    "sequential_no_optimizer": _sequential_bad("no_optimizer"),
    "chained_empty": _chained_bad("empty"),
    "chained_plateau": _chained_bad("plateau"),
}


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_validation_errors_match_torch(torch, name):
    build = ERROR_CASES[name]
    expected = _error_of(lambda: build(torch, torch.optim.lr_scheduler))
    assert _error_of(lambda: build(tocha, lr_scheduler)) == expected


def test_sequential_other_optimizer_error(torch):
    build = _sequential_bad("other_optimizer")
    t_type, t_message = _error_of(lambda: build(tocha, lr_scheduler))
    r_type, r_message = _error_of(lambda: build(torch, torch.optim.lr_scheduler))
    assert t_type is r_type is ValueError
    prefix = "SequentialLR expects all schedulers to belong to the same optimizer, but got "
    assert t_message.startswith(prefix) and r_message.startswith(prefix)
    assert t_message.endswith("which is different from SGD.")


LOSSES = [
    1.0, 0.9, 0.85, 0.86, 0.87, 0.84, 0.84, 0.85, 0.9, 0.95, 0.83, 0.83, 0.8399, 0.84,
    0.85, 0.7, 0.71, 0.72, 0.73, 0.74, 0.75, 0.69, 0.69, 0.7, 0.71, 0.6, 0.6, 0.6, 0.61, 0.62,
]  # fmt: skip

PLATEAU_CASES = [
    {},
    {"patience": 2},
    {"patience": 1, "factor": 0.5, "cooldown": 2},
    {"patience": 0, "threshold": 0.05, "threshold_mode": "abs"},
    {"patience": 1, "threshold": 0.02, "threshold_mode": "rel", "min_lr": [0.02, 0.001]},
    {"mode": "max", "patience": 1, "factor": 0.3},
    {"mode": "max", "patience": 0, "threshold_mode": "abs", "min_lr": 0.004},
    {"patience": 0, "factor": 0.9, "eps": 0.006},
]


@pytest.mark.parametrize("kwargs", PLATEAU_CASES)
def test_reduce_lr_on_plateau_matches_torch(torch, kwargs):
    t_opt, t_sched, r_opt, r_sched = both(
        torch, lambda m, o: m.ReduceLROnPlateau(o, **copy.deepcopy(kwargs))
    )
    t_lrs, r_lrs = [], []
    for loss in LOSSES:
        for opt, sched, out in ((t_opt, t_sched, t_lrs), (r_opt, r_sched, r_lrs)):
            opt.step()
            sched.step(loss)
            out.append(sched.get_last_lr())
        assert t_sched.num_bad_epochs == r_sched.num_bad_epochs
        assert t_sched.cooldown_counter == r_sched.cooldown_counter
        assert t_sched.best == r_sched.best
    assert_close(t_lrs, r_lrs)
    assert len({tuple(lrs) for lrs in r_lrs}) > 1 or kwargs == {}


def test_reduce_lr_on_plateau_state_dict(torch):
    opt = make_optimizer(tocha)
    sched = lr_scheduler.ReduceLROnPlateau(opt, patience=1, mode="max")
    for loss in LOSSES[:10]:
        sched.step(loss)
    state = copy.deepcopy(sched.state_dict())
    r_sched = torch.optim.lr_scheduler.ReduceLROnPlateau(make_optimizer(torch))
    assert set(state) == set(r_sched.state_dict())
    new = lr_scheduler.ReduceLROnPlateau(make_optimizer(tocha))
    new.load_state_dict(state)
    assert (new.mode, new.patience, new.best, new.mode_worse) == ("max", 1, sched.best, -math.inf)


def test_reduce_lr_on_plateau_new_param_group(torch):
    lrs, errors = [], []
    for lib, m in ((tocha, lr_scheduler), (torch, torch.optim.lr_scheduler)):
        opt = make_optimizer(lib)
        scalar = m.ReduceLROnPlateau(opt, patience=0, min_lr=0.02)
        listed = m.ReduceLROnPlateau(opt, patience=0, min_lr=[0.01, 0.01])
        opt.add_param_group({"params": [lib.zeros(1, requires_grad=True)], "lr": 0.5})
        for loss in (1.0, 2.0):
            scalar.step(loss)
        assert scalar.min_lrs == [0.02] * 3
        lrs.append([g["lr"] for g in opt.param_groups])
        listed.step(1.0)
        errors.append(_error_of(partial(listed.step, 2.0)))
    assert_close([lrs[0]], [lrs[1]])
    assert errors[0] == errors[1]
    assert errors[0][0] is RuntimeError


def test_reduce_lr_on_plateau_epoch_argument_warns():
    sched = lr_scheduler.ReduceLROnPlateau(make_optimizer(tocha))
    with pytest.warns(UserWarning, match="The epoch parameter"):
        sched.step(1.0, epoch=4)
    assert sched.last_epoch == 4


@pytest.mark.parametrize("name", ["step", "cosine_eta_min", "linear_warmup", "one_cycle"])
def test_tensor_lr_is_updated_in_place(torch, name):
    def make(lib):
        lr = lib.from_numpy(np.array(0.1))
        return lr, lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=lr, momentum=0.9)

    (t_lr, t_opt), (r_lr, r_opt) = make(tocha), make(torch)
    t_sched = CASES[name](lr_scheduler, t_opt)
    r_sched = CASES[name](torch.optim.lr_scheduler, r_opt)
    for _ in range(EPOCHS):
        for opt, sched in ((t_opt, t_sched), (r_opt, r_sched)):
            opt.step()
            sched.step()
        assert t_opt.param_groups[0]["lr"] is t_lr
        assert r_opt.param_groups[0]["lr"] is r_lr
        assert_close([[float(t_lr)]], [[float(r_lr)]])
        assert t_sched.get_last_lr()[0] is not t_lr
        assert float(t_sched.get_last_lr()[0]) == float(t_lr)
