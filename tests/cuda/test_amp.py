"""Mixed precision on the CPU, against PyTorch: `tocha.autocast` (bfloat16) casts by the op
lists, and `tocha.amp.GradScaler("cpu")` scales, unscales, skips and updates as PyTorch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha

# Autocast and GradScaler are tocha-core's, but these tests drive them through tocha-nn's
# functions and modules and tocha-optim's SGD, which tocha-cuda does not depend on: its tests
# alone skip this file (`nox -s tests` runs it).
pytest.importorskip("tocha.nn", reason="tocha-nn is not installed (tocha-cuda does not need it)")
pytest.importorskip(
    "tocha.optim", reason="tocha-optim is not installed (tocha-cuda does not need it)"
)

import tocha.nn.functional as F  # noqa: E402


def _pair(torch, shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return tocha.from_numpy(a.copy()), torch.from_numpy(a.copy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x, w: x @ w.T,
        lambda lib, x, w: lib.matmul(x, w.T),
        lambda lib, x, w: lib.mm(x, w.T),
        lambda lib, x, w: lib.exp(x),
        lambda lib, x, w: (x @ w.T).softmax(-1),
        lambda lib, x, w: lib.nn.functional.nll_loss(x.bfloat16(), lib.tensor([0, 1, 2, 3])),
        lambda lib, x, w: lib.nn.functional.cross_entropy(x @ w.T, lib.tensor([0, 1, 2, 0])),
        lambda lib, x, w: lib.cat([x, x.bfloat16()]),
    ],
    ids=["@", "matmul", "mm", "exp", "softmax", "nll_loss", "cross_entropy", "cat"],
)
def test_cpu_autocast_dtypes_match_torch(fn, torch):
    (x, tx), (w, tw) = _pair(torch, (4, 8)), _pair(torch, (3, 8), seed=1)
    with tocha.autocast("cpu", dtype=tocha.bfloat16):
        got = fn(tocha, x, w)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = fn(torch, tx, tw)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(
        got.float().detach().numpy(), want.float().detach().numpy(), rtol=2e-2, atol=2e-2
    )


def test_cpu_autocast_linear_is_bfloat16():
    with tocha.autocast("cpu"):
        assert F.linear(tocha.ones(2, 3), tocha.ones(4, 3)).dtype == tocha.bfloat16


def test_autocast_state_nesting_decorator_and_gradients():
    assert not tocha.is_autocast_enabled("cpu")
    assert tocha.get_autocast_dtype("cpu") == tocha.bfloat16
    assert tocha.get_autocast_dtype("cuda") == tocha.float16
    with tocha.autocast("cpu"):
        assert tocha.is_autocast_enabled("cpu") and not tocha.is_autocast_enabled("cuda")
        with tocha.autocast("cpu", enabled=False):
            assert (tocha.ones(2, 2) @ tocha.ones(2, 2)).dtype == tocha.float32
        assert (tocha.ones(2, 2) @ tocha.ones(2, 2)).dtype == tocha.bfloat16
    assert not tocha.is_autocast_enabled("cpu")

    @tocha.autocast("cpu")
    def product(a, b):
        return a @ b

    w = tocha.ones(2, 2, requires_grad=True)
    out = product(tocha.ones(3, 2), w)
    assert out.dtype == tocha.bfloat16
    out.float().sum().backward()
    assert w.grad.dtype == tocha.float32 and w.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    with pytest.warns(UserWarning, match="Disabling autocast"):
        region = tocha.autocast("cpu", dtype=tocha.float64)
    with region:
        assert not tocha.is_autocast_enabled("cpu")
    assert tocha.amp.autocast is tocha.autocast
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        region = tocha.cuda.amp.autocast()
    messages = [str(w.message) for w in caught]
    assert any("cuda.amp.autocast(args...)` is deprecated" in m for m in messages)
    with region:  # as PyTorch's, disabled (with a warning) where CUDA is not available
        assert tocha.is_autocast_enabled("cuda") == tocha.cuda.is_available()
        assert (tocha.ones(2, 2) @ tocha.ones(2, 2)).dtype == tocha.float32  # cpu tensors
    assert any("Disabling autocast" in m for m in messages) != tocha.cuda.is_available()


def _train(lib, scaler, grads):
    """Steps of SGD on one parameter with the given gradients; the scales and parameter."""
    p = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([p], lr=0.1)
    scales = []
    for g in grads:
        opt.zero_grad()
        (scaler.scale((p * lib.tensor(g)).sum())).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, p.detach().tolist(), scaler.state_dict()


def test_grad_scaler_matches_torch(torch):
    grads = [
        [1.0, 2.0, 3.0],
        [float("inf"), 0.0, 0.0],
        [1.0, 1.0, 1.0],
        [0.5, 0.5, 0.5],
        [float("nan"), 1.0, 1.0],
        [1.0, 1.0, 1.0],
        [2.0, 2.0, 2.0],
    ]
    kwargs = {
        "init_scale": 256.0,
        "growth_factor": 4.0,
        "backoff_factor": 0.25,
        "growth_interval": 2,
    }
    got = _train(tocha, tocha.amp.GradScaler("cpu", **kwargs), grads)
    want = _train(torch, torch.amp.GradScaler("cpu", **kwargs), grads)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    assert got[2] == {k: (v.item() if hasattr(v, "item") else v) for k, v in want[2].items()}


def test_grad_scaler_state_dict_and_errors():
    scaler = tocha.amp.GradScaler("cpu", init_scale=8.0)
    other = tocha.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.get_scale() == 8.0 and other.state_dict() == scaler.state_dict()
    p = tocha.nn.Parameter(tocha.ones(2))
    opt = tocha.optim.SGD([p], lr=1.0)
    scaler.scale(p.sum()).backward()
    scaler.unscale_(opt)
    assert p.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    disabled = tocha.amp.GradScaler("cpu", enabled=False)
    x = tocha.ones(1)
    assert disabled.scale(x) is x and disabled.get_scale() == 1.0 and disabled.state_dict() == {}
    if tocha.cuda.is_available():
        assert tocha.amp.GradScaler("cuda").is_enabled()
    else:
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert not tocha.amp.GradScaler("cuda").is_enabled()
    with pytest.raises(ValueError, match="growth factor"):
        tocha.amp.GradScaler("cpu", growth_factor=1.0)
