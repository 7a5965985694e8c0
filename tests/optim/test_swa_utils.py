"""SWA utilities: AveragedModel against closed-form averages and PyTorch, update_bn, SWALR."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.optim
from tocha.optim import lr_scheduler, swa_utils
from tocha.optim.swa_utils import (
    SWALR,
    AveragedModel,
    get_ema_avg_fn,
    get_ema_multi_avg_fn,
    get_swa_avg_fn,
    get_swa_multi_avg_fn,
    update_bn,
)

TOL = 1e-12


def make_model(seed=0):
    """A Linear + BatchNorm1d network in float64, its parameters drawn from `seed`."""
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, affine=False)).double()
    with tocha.no_grad():
        for p in model.parameters():
            p.copy_(tocha.tensor(rng.normal(size=tuple(p.shape))))
    return model


def make_models(torch, seed=0):
    """The same network in tocha and in PyTorch."""
    model = make_model(seed)
    reference = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4, affine=False)
    ).double()
    copy_into(model, reference, torch)
    return model, reference


def copy_into(model, reference, torch):
    with torch.no_grad():
        for p, r in zip(model.parameters(), reference.parameters(), strict=True):
            r.copy_(torch.from_numpy(p.detach().numpy().copy()))
        for b, r in zip(model.buffers(), reference.buffers(), strict=True):
            r.copy_(torch.from_numpy(np.array(b.numpy())))


def set_params(model, values):
    with tocha.no_grad():
        for p, v in zip(model.parameters(), values, strict=True):
            p[...] = tocha.tensor(v)


def arrays(model):
    return [np.array(p.detach().numpy()) for p in model.parameters()]


def param_sequence(model, rng, n):
    return [[rng.normal(size=p.shape) for p in model.parameters()] for _ in range(n)]


def assert_arrays_close(actual, expected):
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=0, atol=TOL)


def test_swa_average_is_the_mean():
    model = make_model()
    averaged = AveragedModel(model)
    sequence = param_sequence(model, np.random.default_rng(1), 7)
    for k, values in enumerate(sequence, 1):
        set_params(model, values)
        averaged.update_parameters(model)
        assert int(averaged.n_averaged) == k
        mean = [np.mean([v[i] for v in sequence[:k]], axis=0) for i in range(len(values))]
        assert_arrays_close(arrays(averaged), mean)
    assert averaged.n_averaged.dtype == tocha.int64


@pytest.mark.parametrize("how", ["avg_fn", "multi_avg_fn"])
def test_swa_functions_give_the_mean(how):
    model = make_model()
    if how == "avg_fn":
        averaged = AveragedModel(model, avg_fn=get_swa_avg_fn())
    else:
        averaged = AveragedModel(model, multi_avg_fn=get_swa_multi_avg_fn())
    sequence = param_sequence(model, np.random.default_rng(2), 5)
    for values in sequence:
        set_params(model, values)
        averaged.update_parameters(model)
    mean = [np.mean([v[i] for v in sequence], axis=0) for i in range(len(sequence[0]))]
    assert_arrays_close(arrays(averaged), mean)


def ema_closed_form(sequence, decay):
    """decay^n v_0 + sum_k (1 - decay) decay^(n - k) v_k, per parameter."""
    n = len(sequence) - 1
    out = []
    for i in range(len(sequence[0])):
        total = decay**n * sequence[0][i]
        for k in range(1, n + 1):
            total = total + (1 - decay) * decay ** (n - k) * sequence[k][i]
        out.append(total)
    return out


@pytest.mark.parametrize("decay", [0.9, 0.5, 0.999])
@pytest.mark.parametrize("how", ["avg_fn", "multi_avg_fn"])
def test_ema_average_matches_closed_form(decay, how):
    model = make_model()
    if how == "avg_fn":
        averaged = AveragedModel(model, avg_fn=get_ema_avg_fn(decay))
    else:
        averaged = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(decay))
    sequence = param_sequence(model, np.random.default_rng(3), 6)
    for values in sequence:
        set_params(model, values)
        averaged.update_parameters(model)
    assert_arrays_close(arrays(averaged), ema_closed_form(sequence, decay))


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("fns", ["swa", "ema", "ema_multi"])
def test_averaged_model_matches_torch(torch, use_buffers, fns):
    torch_swa = torch.optim.swa_utils

    model, reference = make_models(torch)
    kwargs = {
        "swa": ({}, {}),
        "ema": ({"avg_fn": get_ema_avg_fn(0.8)}, {"avg_fn": torch_swa.get_ema_avg_fn(0.8)}),
        "ema_multi": (
            {"multi_avg_fn": get_ema_multi_avg_fn(0.8)},
            {"multi_avg_fn": torch_swa.get_ema_multi_avg_fn(0.8)},
        ),
    }[fns]
    averaged = AveragedModel(model, use_buffers=use_buffers, **kwargs[0])
    r_averaged = torch_swa.AveragedModel(reference, use_buffers=use_buffers, **kwargs[1])
    rng = np.random.default_rng(4)
    for values in param_sequence(model, rng, 5):
        set_params(model, values)
        model(tocha.tensor(rng.normal(size=(6, 3))))
        copy_into(model, reference, torch)
        averaged.update_parameters(model)
        r_averaged.update_parameters(reference)
    names = [name for name, _ in averaged.named_buffers()]
    assert names == [name for name, _ in r_averaged.named_buffers()]
    for mine, theirs in zip(averaged.buffers(), r_averaged.buffers(), strict=True):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=0, atol=TOL)
    for mine, theirs in zip(averaged.parameters(), r_averaged.parameters(), strict=True):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), atol=TOL)


def test_averaged_model_is_an_independent_copy():
    rng = np.random.default_rng(5)
    model = nn.Sequential(nn.Linear(2, 2)).double()
    averaged = AveragedModel(model)
    assert averaged.module is not model
    for mine, theirs in zip(averaged.parameters(), model.parameters(), strict=True):
        assert mine is not theirs
        np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
    x = tocha.tensor(rng.normal(size=(3, 2)))
    np.testing.assert_array_equal(averaged(x).detach().numpy(), model(x).detach().numpy())
    assert list(averaged.modules())[0] is averaged
    assert list(averaged.modules())[1:] == list(averaged.module.modules())
    assert averaged.eval() is averaged and not averaged.training
    assert not averaged.module.training
    averaged.train()
    assert averaged.training and averaged.module.training


def test_averaged_model_rejects_two_functions(torch):
    torch_swa = torch.optim.swa_utils

    model, reference = make_models(torch)
    with pytest.raises(AssertionError) as info:
        AveragedModel(model, avg_fn=get_swa_avg_fn(), multi_avg_fn=get_swa_multi_avg_fn())
    with pytest.raises(AssertionError) as r_info:
        torch_swa.AveragedModel(
            reference,
            avg_fn=torch_swa.get_swa_avg_fn(),
            multi_avg_fn=torch_swa.get_swa_multi_avg_fn(),
        )
    assert str(info.value) == str(r_info.value)


@pytest.mark.parametrize("factory", ["get_ema_avg_fn", "get_ema_multi_avg_fn"])
@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_invalid_decay(torch, factory, decay):
    torch_swa = torch.optim.swa_utils

    with pytest.raises(ValueError) as info:
        getattr(swa_utils, factory)(decay)
    with pytest.raises(ValueError) as r_info:
        getattr(torch_swa, factory)(decay)
    assert str(info.value) == str(r_info.value)


def test_ema_multi_avg_fn_on_integer_tensors():
    ema = get_ema_multi_avg_fn(0.5)
    averaged = [tocha.tensor([10, 20])]
    ema(averaged, [tocha.tensor([20, 40])], None)
    assert averaged[0].tolist() == [15, 30]


def loader_of(rng, n_batches=4, pairs=True):
    batches = [tocha.tensor(rng.normal(size=(5, 3))) for _ in range(n_batches)]
    if pairs:
        return [(x, tocha.tensor(0)) for x in batches]
    return batches


@pytest.mark.parametrize("pairs", [True, False])
def test_update_bn_matches_torch(torch, pairs):
    torch_swa = torch.optim.swa_utils

    model, reference = make_models(torch)
    averaged = AveragedModel(model)
    r_averaged = torch_swa.AveragedModel(reference)
    loader = loader_of(np.random.default_rng(6), pairs=pairs)
    r_loader = [
        [torch.from_numpy(x.numpy().copy()) for x in batch]
        if pairs
        else torch.from_numpy(batch.numpy().copy())
        for batch in loader
    ]
    averaged.eval()
    r_averaged.eval()
    update_bn(loader, averaged)
    torch_swa.update_bn(r_loader, r_averaged)
    for mine, theirs in zip(averaged.buffers(), r_averaged.buffers(), strict=True):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=0, atol=TOL)
    bn = averaged.module._modules["1"]
    assert bn.momentum == 0.1
    assert not averaged.training and not bn.training


def test_update_bn_running_mean_is_the_mean_of_batch_means():
    model = make_model()
    loader = loader_of(np.random.default_rng(7), pairs=False)
    update_bn(loader, model, device="cpu")
    linear = model._modules["0"]
    means = [linear(x).detach().numpy().mean(0) for x in loader]
    bn = model._modules["1"]
    np.testing.assert_allclose(bn._buffers["running_mean"].numpy(), np.mean(means, axis=0))
    assert int(bn._buffers["num_batches_tracked"]) == len(loader)
    assert model.training


def test_update_bn_without_batchnorm_does_nothing():
    model = nn.Sequential(nn.Linear(3, 2)).double()
    model.train(False)
    update_bn([1, 2, 3], model)
    assert not model.training


def both_optimizers(torch, lrs=(0.1, 0.05)):
    def make(lib):
        groups = [{"params": [lib.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
        return lib.optim.SGD(groups, lr=lrs[0], momentum=0.9)

    return make(tocha), make(torch)


def run(scheduler, optimizer, epochs=30):
    lrs = []
    for _ in range(epochs):
        lrs.append([group["lr"] for group in optimizer.param_groups])
        optimizer.step()
        scheduler.step()
    return lrs


def assert_close(actual, expected):
    for a_row, e_row in zip(actual, expected, strict=True):
        for a, e in zip(a_row, e_row, strict=True):
            assert math.isclose(a, e, rel_tol=0, abs_tol=TOL), (a, e)


SWALR_CASES = [
    {"swa_lr": 0.01},
    {"swa_lr": 0.2, "anneal_epochs": 5, "anneal_strategy": "linear"},
    {"swa_lr": [0.02, 0.01], "anneal_epochs": 1},
    {"swa_lr": 0.03, "anneal_epochs": 0},
    {"swa_lr": 0.03, "anneal_epochs": 0, "anneal_strategy": "linear"},
    {"swa_lr": 0.005, "anneal_epochs": 40, "anneal_strategy": "cos"},
]


@pytest.mark.parametrize("kwargs", SWALR_CASES)
def test_swalr_sequence_matches_torch(torch, kwargs):
    t_opt, r_opt = both_optimizers(torch)
    t_sched = SWALR(t_opt, **copy.deepcopy(kwargs))
    r_sched = torch.optim.swa_utils.SWALR(r_opt, **copy.deepcopy(kwargs))
    assert_close(run(t_sched, t_opt), run(r_sched, r_opt))
    assert [g["swa_lr"] for g in t_opt.param_groups] == [g["swa_lr"] for g in r_opt.param_groups]


def test_swalr_after_another_scheduler_matches_torch(torch):
    t_opt, r_opt = both_optimizers(torch)
    lrs = []
    for opt, m, swa in (
        (t_opt, lr_scheduler, swa_utils),
        (r_opt, torch.optim.lr_scheduler, torch.optim.swa_utils),
    ):
        cosine = m.CosineAnnealingLR(opt, T_max=20)
        swa_scheduler = swa.SWALR(opt, swa_lr=0.02, anneal_epochs=4)
        out = []
        for epoch in range(30):
            opt.step()
            (swa_scheduler if epoch >= 10 else cosine).step()
            out.append([group["lr"] for group in opt.param_groups])
        lrs.append(out)
    assert_close(lrs[0], lrs[1])


def test_swalr_state_dict_round_trip(torch):
    t_opt, r_opt = both_optimizers(torch)
    sched = SWALR(t_opt, swa_lr=0.01, anneal_epochs=8, anneal_strategy="linear")
    run(sched, t_opt, 3)
    state = copy.deepcopy(sched.state_dict())
    opt_state = copy.deepcopy(t_opt.state_dict())
    expected = run(sched, t_opt, 10)
    assert "anneal_func" not in state and "optimizer" not in state
    assert set(state) == set(torch.optim.swa_utils.SWALR(r_opt, swa_lr=0.01).state_dict())

    new_opt, _ = both_optimizers(torch)
    new_sched = SWALR(new_opt, swa_lr=0.5)
    new_opt.load_state_dict(opt_state)
    new_sched.load_state_dict(state)
    assert new_sched.anneal_func is SWALR._linear_anneal
    assert_close(run(new_sched, new_opt, 10), expected)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"swa_lr": 0.1, "anneal_strategy": "exp"},
        {"swa_lr": 0.1, "anneal_epochs": -1},
        {"swa_lr": 0.1, "anneal_epochs": 2.5},
        {"swa_lr": [0.1, 0.2, 0.3]},
    ],
)
def test_swalr_validation_matches_torch(torch, kwargs):
    t_opt, r_opt = both_optimizers(torch)
    with pytest.raises(ValueError) as info:
        SWALR(t_opt, **kwargs)
    with pytest.raises(ValueError) as r_info:
        torch.optim.swa_utils.SWALR(r_opt, **kwargs)
    assert str(info.value) == str(r_info.value)


def test_swalr_get_lr_outside_step_warns():
    t_opt = tocha.optim.SGD([tocha.zeros(2, requires_grad=True)], lr=0.1)
    sched = SWALR(t_opt, swa_lr=0.01)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t_opt.step()
        sched.step()


def test_swa_utils_all_matches_torch(torch):
    assert sorted(swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)


def _bn_net(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.BatchNorm1d(8), lib.nn.ReLU())


def test_averaged_model_is_a_module(torch):
    ours, theirs = (
        AveragedModel(_bn_net(tocha)),
        torch.optim.swa_utils.AveragedModel(_bn_net(torch)),
    )
    assert isinstance(ours, nn.Module)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    ours.update_parameters(_bn_net(tocha))
    restored = AveragedModel(_bn_net(tocha))
    assert str(restored.load_state_dict(ours.state_dict())) == "<All keys matched successfully>"
    assert int(restored.n_averaged) == 1
    assert restored.double().module[0].weight.dtype == tocha.float64
