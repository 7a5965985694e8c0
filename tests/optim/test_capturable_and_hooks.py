"""Optimizer details against torch.optim: ``capturable=True`` on CPU parameters, the
arguments the step hooks see, and the key order of schedulers' state dicts."""

from __future__ import annotations

import pytest

import tocha

CAPTURABLE = ["Adadelta", "Adam", "AdamW", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop"]


@pytest.mark.parametrize("name", CAPTURABLE)
@pytest.mark.parametrize("foreach", [None, False])
def test_capturable_step_on_cpu_raises(torch, name, foreach):
    def run(lib):
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.ones(3)
        getattr(lib.optim, name)([p], lr=0.1, capturable=True, foreach=foreach).step()

    with pytest.raises(AssertionError) as theirs:
        run(torch)
    with pytest.raises(AssertionError) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)


def test_capturable_is_accepted_until_a_step():
    p = tocha.nn.Parameter(tocha.ones(3))
    opt = tocha.optim.Adam([p], capturable=True)
    assert opt.param_groups[0]["capturable"] is True
    opt.step()  # no gradient: nothing to update, nothing to check


def test_step_hooks_see_the_optimizer_first_in_args():
    """PyTorch 2.13 hands the hooks step's positional arguments with the optimizer first,
    and calls step with a pre hook's replacement arguments as they are."""
    p = tocha.nn.Parameter(tocha.ones(2))
    p.grad = tocha.ones(2)
    opt = tocha.optim.SGD([p], lr=0.1)
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", a[0] is o, a[1:], k)))
    opt.register_step_post_hook(lambda o, a, k: seen.append(("post", a[0] is o, a[1:], k)))

    def closure():
        return 1.0

    opt.step()
    opt.step(closure)
    opt.step(closure=closure)
    assert seen == [
        ("pre", True, (), {}),
        ("post", True, (), {}),
        ("pre", True, (closure,), {}),
        ("post", True, (closure,), {}),
        ("pre", True, (), {"closure": closure}),
        ("post", True, (), {"closure": closure}),
    ]
    replacement = lambda: 2.0  # noqa: E731
    opt.register_step_pre_hook(lambda o, a, k: ((o, replacement), {}))
    assert opt.step() == 2.0
    assert seen[-1] == ("post", True, (replacement,), {})


def test_global_step_pre_hook_sees_the_optimizer_first():
    from tocha.optim.optimizer import register_optimizer_step_pre_hook

    p = tocha.nn.Parameter(tocha.ones(2))
    p.grad = tocha.ones(2)
    opt = tocha.optim.SGD([p], lr=0.1)
    seen = []
    handle = register_optimizer_step_pre_hook(lambda o, a, k: seen.append(len(a)))
    try:
        opt.step()
    finally:
        handle.remove()
    assert seen == [1]


def _step_lr_keys(lib):
    p = lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SGD([p], lr=0.1)
    return list(lib.optim.lr_scheduler.StepLR(opt, 2).state_dict())


def _plateau_keys(lib):
    p = lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SGD([p], lr=0.1)
    return list(lib.optim.lr_scheduler.ReduceLROnPlateau(opt).state_dict())


@pytest.mark.parametrize("keys", [_step_lr_keys, _plateau_keys])
def test_scheduler_state_dict_key_order(torch, keys):
    assert keys(tocha) == keys(torch)


def test_adagrad_share_memory(torch):
    def run(lib):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.Adagrad([p], initial_accumulator_value=0.5)
        assert opt.share_memory() is None
        state = opt.state[p]
        shared = (state["sum"].is_shared(), state["step"].is_shared())
        p.grad = lib.ones(3)
        opt.step()
        return shared, p.detach().numpy().tolist(), state["sum"].numpy().tolist()

    assert run(tocha) == run(torch)


def test_profile_hook_step_runs_the_hooks_once():
    """A custom step decorated with ``Optimizer.profile_hook_step`` runs the step hooks
    once (PyTorch 2.13 wraps such a step twice and runs them twice)."""

    class Custom(tocha.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        @tocha.optim.Optimizer.profile_hook_step
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.data.add_(p.grad, alpha=-group["lr"])

    p = tocha.nn.Parameter(tocha.ones(2))
    p.grad = tocha.ones(2)
    opt = Custom([p])
    calls = []
    opt.register_step_pre_hook(lambda *a: calls.append("pre"))
    opt.register_step_post_hook(lambda *a: calls.append("post"))
    opt.step()
    assert calls == ["pre", "post"]
    assert p.tolist() == pytest.approx([0.9, 0.9])


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("foreach", [None, False])
def test_tensor_betas_step(torch, name, foreach):
    def run(lib):
        p = lib.nn.Parameter(lib.ones(2))
        opt = getattr(lib.optim, name)(
            [p], betas=(lib.tensor(0.8), lib.tensor(0.9)), lr=lib.tensor(0.01), foreach=foreach
        )
        for _ in range(3):
            p.grad = p.detach() * 2
            opt.step()
        return p.detach().numpy().tolist()

    assert run(tocha) == pytest.approx(run(torch), rel=1e-6)


TENSOR_HYPERPARAMETER_ERRORS = [
    ({"lr": "t"}, True),
    ({"betas": ("t", 0.9)}, None),
    ({"betas": (0.8, "t")}, True),
    ({"betas": ("t", "t")}, True),
]


@pytest.mark.parametrize("kwargs,foreach", TENSOR_HYPERPARAMETER_ERRORS)
def test_tensor_hyperparameter_errors(torch, kwargs, foreach):
    def run(lib):
        def value(v):
            if v == "t":
                return lib.tensor(0.5)
            return v

        given = {
            k: tuple(value(x) for x in v) if isinstance(v, tuple) else value(v)
            for k, v in kwargs.items()
        }
        lib.optim.Adam([lib.nn.Parameter(lib.ones(2))], foreach=foreach, **given)

    with pytest.raises(ValueError) as theirs:
        run(torch)
    with pytest.raises(ValueError) as ours:
        run(tocha)
    assert str(ours.value) == str(theirs.value)
