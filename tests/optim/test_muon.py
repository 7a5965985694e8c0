"""Muon against torch (recorded): four steps on square, wide and tall matrices with Nesterov
or plain momentum, both learning-rate adjustments and custom Newton-Schulz settings, within
bfloat16's precision (PyTorch's Newton-Schulz iterations run in bfloat16, tocha's in the
parameter's dtype); state, defaults and checks exactly; and the orthogonalisation itself."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.optim.muon import _orthogonalized

RNG = np.random.default_rng(0)
INIT = [RNG.standard_normal(s) for s in [(4, 3), (3, 5), (6, 6)]]
SETTINGS = [
    {},
    {"lr": 0.02, "nesterov": False, "weight_decay": 0.0},
    {"adjust_lr_fn": "match_rms_adamw", "momentum": 0.5},
    {"ns_steps": 3, "eps": 1e-3, "ns_coefficients": (2.0, -1.5, 0.5)},
]


def _run(lib, settings, dtype):
    ps = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in INIT]
    opt = lib.optim.Muon(ps, **settings)
    for _ in range(4):
        opt.zero_grad()
        loss = sum(((p - 0.3) ** 2).sum() * (i + 1) for i, p in enumerate(ps))
        (loss + ps[2].sin().sum()).backward()
        opt.step()
    return ps, opt


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_steps_match_torch_to_bfloat16_precision(torch, settings, dtype):
    ours, ours_opt = _run(tocha, settings, getattr(tocha, dtype))
    theirs, theirs_opt = _run(torch, settings, getattr(torch, dtype))
    lr = settings.get("lr", 1e-3)
    for a, b, start in zip(ours, theirs, INIT, strict=True):
        moved = np.abs(b.detach().numpy() - start).max()
        np.testing.assert_allclose(
            a.detach().numpy(), b.detach().numpy(), rtol=0, atol=2**-4 * max(moved, lr)
        )
        assert list(ours_opt.state[a]) == list(theirs_opt.state[b]) == ["momentum_buffer"]
        np.testing.assert_allclose(
            ours_opt.state[a]["momentum_buffer"].numpy(),
            theirs_opt.state[b]["momentum_buffer"].numpy(),
            rtol=2e-3,  # gradients at parameters that differ by bfloat16's rounding
            atol=1e-5,
        )


def test_defaults_and_checks(torch):
    for lib in (tocha, torch):
        square = lib.zeros(2, 2, requires_grad=True)
        assert lib.optim.Muon([square]).defaults == {
            "lr": 0.001,
            "weight_decay": 0.1,
            "momentum": 0.95,
            "nesterov": True,
            "ns_coefficients": (3.4445, -4.775, 2.0315),
            "eps": 1e-07,
            "ns_steps": 5,
            "adjust_lr_fn": None,
        }
        for kwargs, message in [
            ({"lr": -1}, "Learning rate should be >= 0 but is: -1"),
            ({"weight_decay": -1}, "weight decay should be >= 0 but is: -1"),
            ({"momentum": -0.1}, "momentum should be >= 0 but is: -0.1"),
            ({"adjust_lr_fn": "x"}, "Adjust learning rate function x is not supported"),
        ]:
            with pytest.raises(ValueError, match=message):
                lib.optim.Muon([square], **kwargs)
        with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
            lib.optim.Muon([lib.zeros(2, requires_grad=True)])


@pytest.mark.parametrize("shape", [(8, 8), (5, 12), (12, 5)])
def test_newton_schulz_gives_singular_values_near_one(shape):
    g = tocha.tensor(np.random.default_rng(3).standard_normal(shape))
    o = _orthogonalized(g, (3.4445, -4.775, 2.0315), 5, 1e-7)
    singular = np.linalg.svd(o.numpy(), compute_uv=False)
    assert singular.min() > 0.6 and singular.max() < 1.25
    u, _, vt = np.linalg.svd(g.numpy(), full_matrices=False)
    cosine = (o.numpy() * (u @ vt)).sum() / np.linalg.norm(o.numpy()) / np.linalg.norm(u @ vt)
    assert cosine > 0.98


@pytest.mark.parametrize("nesterov", [True, False])
def test_momentum_mix_matches_torch(torch, nesterov):
    """Two steps with unrelated gradients and no Newton-Schulz iteration: the update is the
    normalised mix of gradient and buffer, so the Nesterov form shows."""
    rng = np.random.default_rng(7)
    grads = [rng.standard_normal((3, 4)) for _ in range(2)]

    def run(lib):
        p = lib.zeros(3, 4, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.Muon(
            [p], lr=0.1, weight_decay=0.0, momentum=0.6, nesterov=nesterov, ns_steps=0
        )
        for g in grads:
            p.grad = lib.tensor(g)
            opt.step()
        return p.detach().numpy()

    np.testing.assert_allclose(run(tocha), run(torch), rtol=0, atol=2e-3)
