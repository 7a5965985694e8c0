"""tocha.nn.init against torch.nn.init: gains, fans, bounds and moments of the random
initialisers, exact values of the deterministic ones, generators, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tocha.compat import use_pytorch_random
from tocha.nn import init


@pytest.mark.parametrize(
    "args",
    [
        ("linear",),
        ("conv2d",),
        ("sigmoid",),
        ("tanh",),
        ("relu",),
        ("leaky_relu",),
        ("leaky_relu", 0.2),
        ("leaky_relu", 3),
        ("selu",),
        ("conv_transpose3d",),
    ],
)
def test_calculate_gain(torch, args):
    assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


@pytest.mark.parametrize("args", [("softmax",), ("leaky_relu", "x"), ("leaky_relu", True)])
def test_calculate_gain_errors(torch, args):
    with pytest.raises(ValueError) as theirs:
        torch.nn.init.calculate_gain(*args)
    with pytest.raises(ValueError, match=str(theirs.value)):
        init.calculate_gain(*args)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (6, 4, 3, 3), (2, 3, 1, 2, 2)])
def test_fans(torch, shape):
    ours = init._calculate_fan_in_and_fan_out(tocha.empty(shape))
    assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


def _moments(fn, shape=(400, 500), **kwargs):
    t = fn(tocha.empty(shape), **kwargs).numpy()
    return t.min(), t.max(), t.mean(), t.std()


@pytest.mark.parametrize(
    "name,kwargs,shape",
    [
        ("uniform_", {"a": -2.0, "b": 3.0}, (400, 500)),
        ("normal_", {"mean": 1.0, "std": 2.0}, (400, 500)),
        ("trunc_normal_", {"mean": 0.5, "std": 1.0, "a": -1.0, "b": 1.5}, (400, 500)),
        ("xavier_uniform_", {"gain": 2.0}, (400, 500)),
        ("xavier_normal_", {}, (400, 50, 3)),
        ("kaiming_uniform_", {"a": math.sqrt(5)}, (400, 500)),
        ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}, (400, 50, 2)),
        ("kaiming_normal_", {"nonlinearity": "tanh"}, (400, 500)),
        ("kaiming_normal_", {"mode": "fan_out"}, (400, 500)),
    ],
)
def test_random_initialisers_match_torch_statistics(torch, name, kwargs, shape):
    ours = getattr(init, name)(tocha.empty(shape), **kwargs).numpy()
    theirs = getattr(torch.nn.init, name)(torch.empty(shape), **kwargs).numpy()
    assert ours.dtype == theirs.dtype == np.float32
    for stat in (np.mean, np.std):
        assert abs(stat(ours) - stat(theirs)) < 0.02 * max(1.0, abs(stat(theirs)))
    if "uniform" in name or "trunc" in name:
        assert ours.min() >= theirs.min() - 0.01 * abs(theirs.min()) - 1e-3
        assert ours.max() <= theirs.max() + 0.01 * abs(theirs.max()) + 1e-3


def test_generator_makes_results_reproducible():
    for fn in (
        init.uniform_,
        init.normal_,
        init.trunc_normal_,
        init.xavier_uniform_,
        init.kaiming_normal_,
        init.orthogonal_,
    ):
        a = fn(tocha.empty(5, 4), generator=tocha.Generator().manual_seed(3))
        b = fn(tocha.empty(5, 4), generator=tocha.Generator().manual_seed(3))
        assert tocha.equal(a, b), fn.__name__
    tocha.manual_seed(0)
    a = init.sparse_(tocha.empty(6, 4), 0.5, generator=tocha.Generator().manual_seed(1))
    tocha.manual_seed(0)
    b = init.sparse_(tocha.empty(6, 4), 0.5, generator=tocha.Generator().manual_seed(1))
    assert tocha.equal(a, b)


def test_sparse_generator_draws_values_and_global_rng_the_zeros(torch):
    """As PyTorch's: `generator` draws the normal values; the zeroed rows of each column come
    from the global generator."""
    previous = use_pytorch_random(True)
    torch.manual_seed(0)
    tocha.manual_seed(0)
    theirs = torch.nn.init.sparse_(
        torch.empty(6, 4), 0.5, generator=torch.Generator().manual_seed(1)
    )
    try:
        ours = init.sparse_(tocha.empty(6, 4), 0.5, generator=tocha.Generator().manual_seed(1))
    finally:
        use_pytorch_random(previous)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize(
    "name,args,shape",
    [
        ("constant_", (0.3,), (3, 4)),
        ("ones_", (), (2, 3)),
        ("zeros_", (), (2, 3)),
        ("eye_", (), (3, 5)),
        ("eye_", (), (4, 2)),
        ("dirac_", (), (4, 3, 3)),
        ("dirac_", (2,), (4, 2, 3, 3)),
        ("dirac_", (), (2, 3, 1, 3, 3)),
    ],
)
def test_deterministic_initialisers(torch, name, args, shape):
    ours = getattr(init, name)(tocha.empty(shape), *args)
    theirs = getattr(torch.nn.init, name)(torch.empty(shape), *args)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3)])
def test_orthogonal(shape):
    t = init.orthogonal_(tocha.empty(shape, dtype=tocha.float64), gain=2.0).numpy()
    flat = t.reshape(shape[0], -1)
    gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, 4 * np.eye(len(gram)), atol=1e-10)


def test_sparse_zeros_per_column():
    t = init.sparse_(tocha.empty(10, 6), sparsity=0.3, std=0.5).numpy()
    assert ((t == 0).sum(axis=0) == 3).all()


def test_initialisers_work_on_parameters_without_history():
    p = nn.Parameter(tocha.empty(3, 4))
    out = init.kaiming_uniform_(p)
    assert out is p and p.grad_fn is None and p.requires_grad


@pytest.mark.parametrize(
    "call",
    [
        lambda m, t: m.nn.init.eye_(t.empty(2, 2, 2)),
        lambda m, t: m.nn.init.dirac_(t.empty(2, 2)),
        lambda m, t: m.nn.init.dirac_(t.empty(3, 2, 3), groups=2),
        lambda m, t: m.nn.init.xavier_uniform_(t.empty(3)),
        lambda m, t: m.nn.init.kaiming_normal_(t.empty(3, 3), mode="fan_avg"),
        lambda m, t: m.nn.init.orthogonal_(t.empty(3)),
        lambda m, t: m.nn.init.sparse_(t.empty(3, 3, 3), 0.1),
    ],
)
def test_errors_match_torch(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tocha, tocha)
    assert str(ours.value) == str(theirs.value)


def test_zero_element_warns(torch):
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(tocha.empty(0, 3))
