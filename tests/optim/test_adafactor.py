"""Adafactor against torch (recorded): five steps on a matrix, a vector, a 3-D tensor and a
scalar (factored and plain second moments), with weight decay, maximize, d, eps and
beta2_decay varied, in float32 and float64; the state's names and shapes; the argument
checks; a state_dict round trip."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import tocha

RNG = np.random.default_rng(0)
INIT = [RNG.standard_normal(s) for s in [(4, 3), (3,), (2, 3, 4), ()]]
SETTINGS = [
    {"lr": 0.05, "weight_decay": 0.1},
    {},
    {"maximize": True, "d": 1.5, "eps": (1e-6, 1e-2)},
    {"lr": 2.0, "beta2_decay": -0.5},
]


def _run(lib, settings, dtype, steps=5):
    ps = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in INIT]
    opt = lib.optim.Adafactor(ps, **settings)
    for _ in range(steps):
        opt.zero_grad()
        loss = sum((p**2).sum() * (i + 1) for i, p in enumerate(ps)) + ps[0].sum() * 3
        (loss + ps[2].sin().sum()).backward()
        opt.step()
    return ps, opt


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_steps_match_torch(torch, settings, dtype):
    ours, ours_opt = _run(tocha, settings, getattr(tocha, dtype))
    theirs, theirs_opt = _run(torch, settings, getattr(torch, dtype))
    rtol, atol = (1e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-14)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)
    for a, b in zip(ours, theirs, strict=True):
        mine, its = ours_opt.state[a], theirs_opt.state[b]
        assert sorted(mine) == sorted(its)
        for key in mine:
            assert tuple(mine[key].shape) == tuple(its[key].shape)
            assert str(mine[key].dtype).split(".")[1] == str(its[key].dtype).split(".")[1]
            np.testing.assert_allclose(mine[key].numpy(), its[key].numpy(), rtol=rtol, atol=atol)


def test_defaults_and_checks(torch):
    for lib in (tocha, torch):
        zero = lib.zeros(1, requires_grad=True)
        assert lib.optim.Adafactor([zero]).defaults == {
            "lr": 0.01,
            "beta2_decay": -0.8,
            "eps": (None, 0.001),
            "d": 1.0,
            "weight_decay": 0.0,
            "foreach": None,
            "maximize": False,
        }
        for kwargs, message in [
            ({"lr": -1}, "Learning rate should be >= 0 but is: -1"),
            ({"beta2_decay": 0.1}, "beta2_decay should be <= 0 but is: 0.1"),
            ({"eps": (-1, 1e-3)}, "epsilon1 should be >= 0 but is: -1"),
            ({"eps": (None, -1)}, "epsilon2 should be >= 0 but is: -1"),
            ({"d": 0.5}, "Clipping threshold d should be >= 1 but is: 0.5"),
            ({"weight_decay": -1}, "weight_decay should be >= 0 but is: -1"),
        ]:
            with pytest.raises(ValueError, match=message):
                lib.optim.Adafactor([zero], **kwargs)


def test_state_dict_round_trip_continues_identically():
    ps, opt = _run(tocha, SETTINGS[0], tocha.float64, steps=2)
    saved = copy.deepcopy(opt.state_dict())  # as from a file: no tensor shared with `opt`
    clones = [p.detach().clone().requires_grad_() for p in ps]
    twin = tocha.optim.Adafactor(clones, **SETTINGS[0])
    twin.load_state_dict(saved)
    for params, optimizer in ((ps, opt), (clones, twin)):
        optimizer.zero_grad()
        sum((p**2).sum() for p in params).backward()
        optimizer.step()
    for a, b in zip(ps, clones, strict=True):
        assert tocha.equal(a, b)
