"""SparseAdam, SGD and Adagrad on sparse COO gradients, against PyTorch: the parameters and
states after several steps, and the errors for dense gradients and weight decay."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha

W0 = np.array(
    [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.1, 0.2, 0.3], [-2.0, 1.0, 0.5]], dtype=np.float32
)
# (row indices, gradient rows) per step; repeated rows add up
STEPS = [
    ([1, 1, 3], [[0.5, -1.0, 2.0], [1.0, 0.5, -0.5], [0.25, 0.25, -1.0]]),
    ([0, 3], [[-0.5, 1.5, 0.0], [2.0, -1.0, 0.5]]),
    ([2], [[0.1, -0.2, 0.3]]),
    ([], np.zeros((0, 3), np.float32)),
]


def trajectory(lib, name, options, steps=STEPS):
    """The parameter after each step on sparse gradients, and the optimizer."""
    w = lib.tensor(W0.copy(), requires_grad=True)
    opt = getattr(lib.optim, name)([w], **options)
    seen = []
    for rows, grads in steps:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's note on invariant checks
            w.grad = lib.sparse_coo_tensor(
                [rows], lib.tensor(np.asarray(grads, np.float32)), (4, 3)
            )
        opt.step()
        seen.append(np.asarray(w.detach()).copy())
    return np.stack(seen), opt, w


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


CONFIGS = [
    ("SparseAdam", dict(lr=0.1)),
    ("SparseAdam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6)),
    ("SparseAdam", dict(lr=0.05, maximize=True)),
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.05, lr_decay=0.1, eps=1e-6, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, maximize=True, foreach=True)),
]


@pytest.mark.parametrize(
    "config", CONFIGS, ids=[f"{n}-{'-'.join(map(str, o.values()))}" for n, o in CONFIGS]
)
def test_trajectory_matches_torch(torch, config):
    name, options = config
    ours, _, _ = trajectory(tocha, name, options)
    theirs, _, _ = trajectory(torch, name, options)
    assert np.abs(ours[-1] - W0).max() > 1e-3
    close(ours, theirs)


def test_sparse_adam_state_matches_torch(torch):
    _, ours, _ = trajectory(tocha, "SparseAdam", dict(lr=0.1))
    _, theirs, _ = trajectory(torch, "SparseAdam", dict(lr=0.1))
    ours, theirs = ours.state_dict(), theirs.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    mine, other = ours["state"][0], theirs["state"][0]
    assert list(mine) == list(other)
    assert mine["step"] == other["step"] and type(mine["step"]) is type(other["step"])
    for key in ("exp_avg", "exp_avg_sq"):
        assert not mine[key].is_sparse
        close(np.asarray(mine[key]), np.asarray(other[key]))


def test_adagrad_state_matches_torch(torch):
    options = dict(lr=0.1, initial_accumulator_value=0.25)
    _, ours, _ = trajectory(tocha, "Adagrad", options)
    _, theirs, _ = trajectory(torch, "Adagrad", options)
    ours, theirs = ours.state_dict(), theirs.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    mine, other = ours["state"][0], theirs["state"][0]
    assert list(mine) == list(other)
    assert float(mine["step"]) == float(other["step"]) == len(STEPS)
    assert not mine["sum"].is_sparse
    close(np.asarray(mine["sum"]), np.asarray(other["sum"]))


def test_adagrad_mixes_sparse_and_dense_gradients(torch):
    got = []
    for lib in (tocha, torch):
        emb = lib.nn.Embedding(5, 3, sparse=True)
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(np.arange(15, dtype=np.float32).reshape(5, 3) / 7))
            lin.weight.fill_(0.5)
            lin.bias.fill_(-0.25)
        params = [*emb.parameters(), *lin.parameters()]
        opt = lib.optim.Adagrad(params, lr=0.2, foreach=True)
        for ids in ([1, 1, 3], [0, 4], [3]):
            opt.zero_grad()
            lin(emb(lib.tensor(ids))).square().sum().backward()
            assert emb.weight.grad.is_sparse
            opt.step()
        got.append([np.asarray(p.detach()).copy() for p in params])
    for mine, other in zip(*got):
        close(mine, other)


@pytest.mark.parametrize("options", [dict(weight_decay=0.1), dict(fused=True)])
def test_adagrad_errors_match_torch(torch, options):
    got = []
    for lib in (tocha, torch):
        w = lib.zeros(2, 3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w.grad = lib.sparse_coo_tensor([[0]], lib.ones(1, 3), (2, 3))
        with pytest.raises(RuntimeError) as info:
            lib.optim.Adagrad([w], **options).step()
        got.append(str(info.value))
    assert got[0] == got[1]


def test_errors_match_torch(torch):
    got = []
    for lib in (tocha, torch):
        row = []
        w = lib.zeros(2, 3, requires_grad=True)
        w.grad = lib.ones(2, 3)
        with pytest.raises(RuntimeError) as info:
            lib.optim.SparseAdam([w]).step()
        row.append(str(info.value))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w.grad = lib.sparse_coo_tensor([[0]], lib.ones(1, 3), (2, 3))
        with pytest.raises(RuntimeError) as info:
            lib.optim.SGD([w], lr=0.1, weight_decay=0.1).step()
        row.append(str(info.value))
        got.append(row)
    assert got[0] == got[1]


def test_sgd_mixes_sparse_and_dense_gradients(torch):
    got = []
    for lib in (tocha, torch):
        a = lib.tensor(W0.copy(), requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a.grad = lib.sparse_coo_tensor([[0, 2, 0]], lib.ones(3, 3), (4, 3))
        b.grad = lib.tensor([1.0, 2.0, 3.0])
        opt = lib.optim.SGD([a, b], lr=0.5, momentum=0.5)
        opt.step()
        opt.step()
        got.append([np.asarray(a.detach()).tolist(), np.asarray(b.detach()).tolist()])
        assert a.grad.is_sparse
    assert got[0] == got[1]


@pytest.mark.parametrize(
    "name, message",
    [
        ("Adam", "Adam does not support sparse gradients, please consider SparseAdam instead"),
        ("AdamW", "Adam does not support sparse gradients, please consider SparseAdam instead"),
        ("RMSprop", "RMSprop does not support sparse gradients"),
        ("NAdam", "NAdam does not support sparse gradients"),
        ("Rprop", "Rprop does not support sparse gradients"),
    ],
)
def test_dense_optimizers_refuse_sparse_gradients_as_torch(name, message):
    weight = tocha.randn(5, 3, requires_grad=True)
    tocha.nn.functional.embedding(tocha.tensor([1, 3]), weight, sparse=True).sum().backward()
    optimizer = getattr(tocha.optim, name)([weight])
    with pytest.raises(RuntimeError, match=message):
        optimizer.step()
