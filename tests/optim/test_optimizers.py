"""tocha.optim against PyTorch: trajectories of every optimizer on a least-squares problem,
the single-tensor and multi-tensor paths, state dicts, hooks and argument errors."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

import tocha

STEPS = 50

# (optimizer, options): a representative set of option combinations of each optimizer.
CONFIGS = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.9), maximize=True)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.2, amsgrad=True)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.03)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.1, momentum=0.3, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=1e-3, alpha=0.5, t0=10, weight_decay=0.1)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-4, 0.5), maximize=True)),
]


def ids(config):
    name, options = config
    return name + "".join(f"-{k}={v}" for k, v in options.items())


def data(n_params: int = 3):
    """Seeded float64 inputs, targets and initial parameters of a linear least-squares fit."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 4))
    y = rng.standard_normal((16, 3))
    shapes = [(4, 3), (3,), (1, 3)][:n_params] + [(3,)] * max(n_params - 3, 0)
    params = [0.5 * rng.standard_normal(s) for s in shapes]
    return x, y, params


def make(lib, n_params: int = 3):
    """Parameters (leaf tensors) and a loss closure of the least-squares problem in `lib`."""
    x, y, init = data(n_params)
    x, y = lib.from_numpy(x), lib.from_numpy(y)
    params = [lib.tensor(p, dtype=lib.float64, requires_grad=True) for p in init]

    def loss_fn():
        out = x @ params[0] + params[1]
        for extra in params[2:]:
            out = out + extra * 0.5
        return ((out - y) ** 2).mean()

    return params, loss_fn


def trajectory(lib, name, options, steps=STEPS, n_params=3, optimizer=None, params=None):
    """The parameters after each of `steps` steps, as NumPy arrays."""
    if params is None:
        params, loss_fn = make(lib, n_params)
    else:
        params, loss_fn = params
    opt = optimizer or getattr(lib.optim, name)(params, **options)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
        out.append(np.concatenate([p.detach().numpy().ravel().copy() for p in params]))
    return np.array(out), opt, (params, loss_fn)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-10)


@pytest.mark.parametrize("config", CONFIGS, ids=ids)
@pytest.mark.parametrize("foreach", [False, True])
def test_trajectory_matches_torch(torch, config, foreach):
    name, options = config
    ours, _, _ = trajectory(tocha, name, dict(options, foreach=foreach))
    # PyTorch's multi-tensor ASGD computes eta in float32 tensor arithmetic, its single-tensor
    # ASGD in double: they differ by 1e-5 relative. tocha follows the single-tensor maths.
    theirs, _, _ = trajectory(torch, name, dict(options, foreach=foreach and name != "ASGD"))
    assert np.abs(ours[-1] - ours[0]).max() > 1e-4  # the test problem does move
    close(ours, theirs)


def count_paths(opt) -> dict:
    """Count the steps `opt` takes on each path from now on: group steps on the multi-tensor
    path ("flat"), parameter steps on the single-tensor path ("single")."""
    counts = {"flat": 0, "single": 0}
    flat_step, single_step = opt._flat_step, opt._single_step

    def flat(group):
        taken = flat_step(group)
        counts["flat"] += taken
        return taken

    def single(group, p):
        counts["single"] += 1
        single_step(group, p)

    opt._flat_step, opt._single_step = flat, single
    return counts


def test_configs_cover_every_elementwise_optimizer():
    elementwise = {
        name for name in tocha.optim.__all__ if hasattr(getattr(tocha.optim, name), "_flat_step")
    }
    assert {name for name, _ in CONFIGS} == elementwise


@pytest.mark.parametrize("config", CONFIGS, ids=ids)
def test_foreach_agrees_with_single_tensor(config):
    """With 10 parameters (more than the 8 from which foreach=None takes the multi-tensor
    path), foreach=False takes the single-tensor path and foreach=True the multi-tensor one,
    and the two agree."""
    name, options = config
    runs = {}
    for foreach, expected in (
        (False, {"flat": 0, "single": 10 * STEPS}),
        (True, {"flat": STEPS, "single": 0}),
    ):
        problem = make(tocha, 10)
        opt = getattr(tocha.optim, name)(problem[0], **dict(options, foreach=foreach))
        paths = count_paths(opt)
        runs[foreach], _, _ = trajectory(tocha, name, options, optimizer=opt, params=problem)
        assert paths == expected, foreach
    close(runs[False], runs[True])


@pytest.mark.parametrize("config", CONFIGS, ids=ids)
def test_state_matches_torch(torch, config):
    name, options = config
    _, ours, _ = trajectory(tocha, name, options, steps=3)
    _, theirs, _ = trajectory(torch, name, options, steps=3)
    ours, theirs = ours.state_dict(), theirs.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    assert ours["state"].keys() == theirs["state"].keys()
    for index, state in theirs["state"].items():
        assert list(ours["state"][index]) == list(state)
        for key, value in state.items():
            mine = ours["state"][index][key]
            assert tuple(mine.shape) == tuple(value.shape), key
            assert str(mine.dtype).split(".")[1] == str(value.dtype).split(".")[1], key
            close(mine.numpy(), value.numpy())


@pytest.mark.parametrize("config", CONFIGS, ids=ids)
@pytest.mark.parametrize("foreach", [False, True])
def test_resume_from_state_dict(config, foreach):
    name, options = config
    options = dict(options, foreach=foreach)
    full, _, _ = trajectory(tocha, name, options, steps=20, n_params=10)
    first, opt, problem = trajectory(tocha, name, options, steps=10, n_params=10)
    saved = copy.deepcopy(opt.state_dict())
    params, loss_fn = problem
    fresh = getattr(tocha.optim, name)(params, **options)
    fresh.load_state_dict(saved)
    second, _, _ = trajectory(tocha, name, options, steps=10, optimizer=fresh, params=problem)
    resumed = np.concatenate([first, second])
    # Loading casts floating state to its parameter's dtype, as PyTorch does, so float32
    # scalar state (NAdam's mu_product, ASGD's eta and mu) resumes in float64.
    recast = any(
        key != "step" and value.dtype is not params[0].dtype
        for entries in saved["state"].values()
        for key, value in entries.items()
    )
    if recast:
        close(resumed, full)
    else:
        np.testing.assert_array_equal(resumed, full)


def test_foreach_default_and_missing_grads():
    """foreach=None takes the flat path for 8+ parameters; a parameter without a gradient is
    skipped (its state not made) and the others still match the single-tensor path."""
    results = []
    # foreach=None: the first step is flat; a step missing a gradient is not, nor is any step
    # after one (the parameters' step counts differ), so 9 + 10 + 9 + 10 + 9 single steps
    for foreach, expected in (
        (None, {"flat": 1, "single": 47}),
        (False, {"flat": 0, "single": 57}),
    ):
        params, loss_fn = make(tocha, 10)
        opt = tocha.optim.Adam(params, lr=0.05, foreach=foreach)
        paths = count_paths(opt)
        for i in range(6):
            opt.zero_grad()
            loss_fn().backward()
            if i % 2:
                params[-1].grad = None
            opt.step()
        assert paths == expected, foreach
        results.append([p.detach().numpy().copy() for p in params])
        assert float(opt.state[params[-1]]["step"]) == 3.0
        assert float(opt.state[params[0]]["step"]) == 6.0
    for a, b in zip(*results):
        close(a, b)


@pytest.mark.parametrize("config", CONFIGS, ids=ids)
@pytest.mark.parametrize("foreach", [False, True])
def test_steps_are_silent_on_inf_and_nan(config, foreach):
    """Gradients of inf, -inf and nan make inf and nan parameters without NumPy's warnings,
    as PyTorch is silent."""
    name, options = config
    params, _ = make(tocha, 10)
    opt = getattr(tocha.optim, name)(params, **dict(options, foreach=foreach))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for value in (math.inf, -math.inf, math.nan):
            for p in params:
                p.grad = tocha.full_like(p, value)
            opt.step()


def test_state_entries_are_torch_shaped():
    params, loss_fn = make(tocha, 10)
    opt = tocha.optim.Adam(params, foreach=True, amsgrad=True)
    loss_fn().backward()
    opt.step()
    state = opt.state[params[0]]
    assert list(state) == ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
    assert state["step"].shape == () and state["step"].dtype is tocha.float32
    assert state["exp_avg"].shape == params[0].shape
    assert state["exp_avg"].dtype is tocha.float64


def test_sgd_without_momentum_keeps_no_state(torch):
    for lib in (tocha, torch):
        _, opt, _ = trajectory(lib, "SGD", dict(lr=0.1), steps=2)
        assert opt.state_dict()["state"] == {}


def test_step_updates_in_place_and_bumps_version():
    params, loss_fn = make(tocha, 10)
    opt = tocha.optim.Adam(params, foreach=True)
    loss_fn().backward()
    before = [(p.data_ptr(), p._version) for p in params]
    opt.step()
    assert [p.data_ptr() for p in params] == [b[0] for b in before]
    assert all(p._version > v for p, (_, v) in zip(params, before))


# -- LBFGS -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        dict(),
        dict(lr=0.5, max_iter=5, history_size=3),
        dict(line_search_fn="strong_wolfe"),
        dict(line_search_fn="strong_wolfe", max_iter=4, history_size=2),
    ],
    ids=str,
)
def test_lbfgs_matches_torch(torch, options):
    results = []
    for lib in (tocha, torch):
        params, loss_fn = make(lib)
        opt = lib.optim.LBFGS(params, **options)

        def closure(opt=opt, loss_fn=loss_fn):
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss

        out = []
        for _ in range(5):
            out.append(float(opt.step(closure).detach()))
            out.extend(p.detach().numpy().ravel().copy() for p in params)
        results.append(
            (
                np.concatenate([np.ravel(o) for o in out]),
                opt.state[params[0]]["func_evals"],
                opt.state[params[0]]["n_iter"],
            )
        )
    (ours, evals, iters), (theirs, t_evals, t_iters) = results
    close(ours, theirs)
    assert (evals, iters) == (t_evals, t_iters)


def test_lbfgs_rejects_groups_and_bad_line_search():
    params, loss_fn = make(tocha)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        tocha.optim.LBFGS([{"params": params[:1]}, {"params": params[1:]}])
    opt = tocha.optim.LBFGS(params, line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# -- the base class ----------------------------------------------------------------------
def leaf(*shape):
    return tocha.zeros(*shape, requires_grad=True)


@pytest.mark.parametrize(
    "name, options, message",
    [
        ("SGD", dict(lr=-1), "Invalid learning rate: -1"),
        ("SGD", dict(lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
        ("SGD", dict(lr=0.1, weight_decay=-1), "Invalid weight_decay value: -1"),
        (
            "SGD",
            dict(lr=0.1, nesterov=True),
            "Nesterov momentum requires a momentum and zero dampening",
        ),
        ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "Nesterov momentum"),
        ("Adam", dict(betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
        ("Adam", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
        ("Adam", dict(eps=-1e-8), "Invalid epsilon value: -1e-08"),
        ("AdamW", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
        ("Adamax", dict(lr=-0.5), "Invalid learning rate: -0.5"),
        ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
        ("RAdam", dict(eps=-1), "Invalid epsilon value: -1"),
        ("RMSprop", dict(alpha=-1), "Invalid alpha value: -1"),
        ("RMSprop", dict(momentum=-1), "Invalid momentum value: -1"),
        ("Adagrad", dict(lr_decay=-1), "Invalid lr_decay value: -1"),
        (
            "Adagrad",
            dict(initial_accumulator_value=-1),
            "Invalid initial_accumulator_value value: -1",
        ),
        ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
        ("ASGD", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
        ("Rprop", dict(etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
        ("LBFGS", dict(lr=-1), "Invalid learning rate: -1"),
        ("SparseAdam", dict(lr=0), "Invalid learning rate: 0"),
    ],
)
def test_bad_arguments(torch, name, options, message):
    for lib in (tocha, torch):
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            getattr(lib.optim, name)([lib.zeros(2, requires_grad=True)], **options)


def test_bad_parameters(torch):
    for lib in (tocha, torch):
        with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
            lib.optim.SGD([], lr=0.1)
        with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
            lib.optim.Adam(p for p in [])
        w = lib.zeros(2, requires_grad=True)
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            lib.optim.SGD([w * 2], lr=0.1)
        with pytest.raises(
            ValueError, match="some parameters appear in more than one parameter group"
        ):
            lib.optim.SGD([{"params": [w]}, {"params": [w], "lr": 0.5}], lr=0.1)
        with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
            lib.optim.SGD([1.0], lr=0.1)
        with pytest.raises(
            TypeError,
            match="params argument given to the optimizer should be "
            "an iterable of Tensors or dicts",
        ):
            lib.optim.SGD(w, lr=0.1)
        with pytest.raises(
            TypeError, match="optimizer parameters need to be organized in ordered collections"
        ):
            lib.optim.SGD([{"params": {w}}], lr=0.1)


def test_params_forms_and_groups(torch):
    for lib in (tocha, torch):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
        assert len(lib.optim.SGD(iter([a, b]), lr=0.1).param_groups[0]["params"]) == 2
        opt = lib.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
        assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
        assert opt.param_groups[1]["momentum"] == 0.9
        named = lib.optim.Adam([("a", a), ("b", b)])
        assert named.param_groups[0]["param_names"] == ["a", "b"]
        c = lib.zeros(1, requires_grad=True)
        opt.add_param_group({"params": [c], "lr": 0.01})
        assert len(opt.param_groups) == 3 and opt.param_groups[2]["momentum"] == 0.9


def test_repr_matches_torch(torch):
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "LBFGS"):
        reprs = [
            repr(getattr(lib.optim, name)([lib.zeros(2, requires_grad=True)], lr=0.1))
            for lib in (tocha, torch)
        ]
        assert reprs[0] == reprs[1]


def test_defaults_match_torch(torch):
    names = [
        "SGD",
        "Adam",
        "AdamW",
        "Adamax",
        "NAdam",
        "RAdam",
        "RMSprop",
        "Adagrad",
        "Adadelta",
        "ASGD",
        "Rprop",
        "LBFGS",
        "SparseAdam",
    ]
    for name in names:
        ours = getattr(tocha.optim, name)([tocha.zeros(2, requires_grad=True)]).defaults
        theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)]).defaults
        assert ours == theirs, name


def test_load_state_dict_errors(torch):
    for lib in (tocha, torch):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
        one = lib.optim.Adam([a, b])
        two = lib.optim.Adam([{"params": [a]}, {"params": [b]}])
        small = lib.optim.Adam([a])
        with pytest.raises(
            ValueError, match="loaded state dict has a different number of parameter groups"
        ):
            one.load_state_dict(two.state_dict())
        with pytest.raises(
            ValueError,
            match="loaded state dict contains a parameter group "
            "that doesn't match the size of optimizer's group",
        ):
            small.load_state_dict(one.state_dict())


def test_state_dict_structure(torch):
    for lib in (tocha, torch):
        a, b, c = (lib.ones(2, requires_grad=True) for _ in range(3))
        opt = lib.optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, momentum=0.9)
        (a.sum() + b.sum() + c.sum()).backward()
        opt.step()
        sd = opt.state_dict()
        assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
        assert sorted(sd["state"]) == [0, 1, 2]
        assert list(sd["state"][2]) == ["momentum_buffer"]


def test_zero_grad(torch):
    for lib in (tocha, torch):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        p.sum().backward()
        grad = p.grad
        opt.zero_grad(set_to_none=False)
        assert p.grad is grad and p.grad.tolist() == [0.0, 0.0, 0.0]
        opt.zero_grad()
        assert p.grad is None


def test_step_hooks_and_closure():
    p = tocha.ones(2, requires_grad=True)
    opt = tocha.optim.SGD([p], lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", len(args))))

    def closure():
        calls.append(("closure", tocha.is_grad_enabled()))
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with tocha.no_grad():
        loss = opt.step(closure)
    assert float(loss) == 2.0
    assert calls == [("pre", True), ("closure", True), ("post", 2)]
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 0.8])
    pre.remove()
    calls.clear()
    opt.step()
    assert calls == [("post", 1)]


def test_step_pre_hook_replaces_arguments():
    p = tocha.ones(2, requires_grad=True)
    opt = tocha.optim.SGD([p], lr=0.1)
    seen = []

    def closure():
        seen.append(True)
        return tocha.tensor(1.0)

    opt.register_step_pre_hook(lambda o, args, kwargs: ((o,), {"closure": closure}))
    assert float(opt.step()) == 1.0 and seen == [True]


def test_state_dict_hooks():
    p = tocha.ones(2, requires_grad=True)
    opt = tocha.optim.Adam([p])
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    sd = opt.state_dict()
    assert calls == ["pre"] and sd["extra"] == 1

    def load_pre(o, sd):
        calls.append("load_pre")
        sd["param_groups"][0]["lr"] = 0.5
        return sd

    opt.register_load_state_dict_pre_hook(load_pre)
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load_post"))
    opt.load_state_dict(opt.state_dict())
    assert calls[-2:] == ["load_pre", "load_post"]
    assert opt.param_groups[0]["lr"] == 0.5


def test_sparse_adam_refuses_dense_gradients(torch):
    for lib in (tocha, torch):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SparseAdam([p])
        p.sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            opt.step()


def test_differentiable_is_refused():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        tocha.optim.Adam([leaf(2)], differentiable=True)


def test_lr_scheduler_submodules_are_lazy():
    import tocha.optim as optim

    assert "lr_scheduler" in dir(optim) and "swa_utils" in dir(optim)
    with pytest.raises(AttributeError):
        optim.__getattr__("no_such_thing")
