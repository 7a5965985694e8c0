"""tocha.nn.utils against torch.nn.utils: gradient clipping, parameter vectors,
parametrizations (weight_norm, spectral_norm, custom), fusion, functional_call."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tocha.nn.utils import parametrizations, parametrize, stateless


def _models(torch, seed=0):
    rng = np.random.default_rng(seed)
    ours = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    theirs.load_state_dict(
        {k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    )
    x = rng.standard_normal((5, 4)).astype(np.float32)
    return ours, theirs, x


def _grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3, float("inf")])
@pytest.mark.parametrize("max_norm", [0.1, 100.0])
def test_clip_grad_norm(torch, norm_type, max_norm):
    ours, theirs, x = _models(torch)
    ours(tocha.from_numpy(x)).pow(2).sum().backward()
    theirs(torch.from_numpy(x)).pow(2).sum().backward()
    total_a = nn.utils.clip_grad_norm_(ours.parameters(), max_norm, norm_type)
    total_b = torch.nn.utils.clip_grad_norm_(theirs.parameters(), max_norm, norm_type)
    np.testing.assert_allclose(total_a.numpy(), total_b.numpy(), rtol=1e-5)
    for a, b in zip(_grads(ours), _grads(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_clip_grad_value_and_nonfinite(torch):
    ours, theirs, x = _models(torch)
    ours(tocha.from_numpy(x)).sum().backward()
    theirs(torch.from_numpy(x)).sum().backward()
    nn.utils.clip_grad_value_(ours.parameters(), 0.2)
    torch.nn.utils.clip_grad_value_(theirs.parameters(), 0.2)
    for a, b in zip(_grads(ours), _grads(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    p = nn.Parameter(tocha.ones(2))
    p.grad = tocha.tensor([float("inf"), 1.0])
    tp = torch.nn.Parameter(torch.ones(2))
    tp.grad = torch.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError) as theirs_error:
        torch.nn.utils.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ours_error:
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert str(ours_error.value) == str(theirs_error.value)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0


def test_parameters_vector_round_trip(torch):
    ours, theirs, _ = _models(torch)
    vec = nn.utils.parameters_to_vector(ours.parameters())
    np.testing.assert_array_equal(
        vec.detach().numpy(), torch.nn.utils.parameters_to_vector(theirs.parameters()).detach()
    )
    nn.utils.vector_to_parameters(vec * 2, ours.parameters())
    np.testing.assert_allclose(
        ours[0].weight.detach().numpy(), 2 * theirs[0].weight.detach().numpy()
    )
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], ours.parameters())


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a):
        return a.triu()


def test_custom_parametrization():
    layer = nn.Linear(3, 3)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    assert type(layer).__name__ == "ParametrizedLinear" and isinstance(layer, nn.Linear)
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert not parametrize.is_parametrized(layer, "bias")
    w = layer.weight
    np.testing.assert_allclose(w.detach().numpy(), w.detach().numpy().T)
    assert sorted(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    layer(tocha.ones(2, 3)).sum().backward()
    assert layer.parametrizations.weight.original.grad is not None
    target = tocha.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    layer.weight = target
    np.testing.assert_allclose(layer.weight.detach().numpy(), target.numpy())
    with parametrize.cached():
        assert layer.weight is layer.weight
    assert layer.weight is not layer.weight
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear and isinstance(layer.weight, nn.Parameter)
    np.testing.assert_allclose(layer.weight.detach().numpy(), target.numpy())
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(layer, "weight")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(layer, "nothing", Symmetric())


def test_parametrization_shape_check():
    class Shrink(nn.Module):
        def forward(self, x):
            return x[:1]

    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", Shrink())
    layer = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Shrink(), unsafe=True)
    assert layer.weight.shape == (1, 2)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(torch, dim):
    ours, theirs, x = _models(torch)
    parametrizations.weight_norm(ours[0], dim=dim)
    torch.nn.utils.parametrizations.weight_norm(theirs[0], dim=dim)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), rtol=1e-6)
    out_a, out_b = ours(tocha.from_numpy(x)), theirs(torch.from_numpy(x))
    np.testing.assert_allclose(out_a.detach().numpy(), out_b.detach().numpy(), rtol=1e-5)
    out_a.sum().backward()
    out_b.sum().backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("training", [True, False])
def test_spectral_norm_matches_torch(torch, training):
    ours, theirs, x = _models(torch)
    parametrizations.spectral_norm(ours[0])
    torch.nn.utils.parametrizations.spectral_norm(theirs[0])
    ours.load_state_dict(
        {k: tocha.from_numpy(v.numpy().copy()) for k, v in theirs.state_dict().items()}
    )
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    ours.train(training)
    theirs.train(training)
    out_a, out_b = ours(tocha.from_numpy(x)), theirs(torch.from_numpy(x))
    np.testing.assert_allclose(out_a.detach().numpy(), out_b.detach().numpy(), rtol=1e-5, atol=1e-6)
    out_a.sum().backward()
    out_b.sum().backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6)
    sigma = np.linalg.svd(ours[0].parametrizations.weight.original.detach().numpy())[1][0]
    for _ in range(30):
        ours.train()(tocha.from_numpy(x))
    np.testing.assert_allclose(np.linalg.svd(ours[0].weight.detach().numpy())[1][0], 1.0, rtol=1e-4)
    assert sigma > 0


def test_fuse_linear_bn_style_attributes():
    class BN(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.num_features, self.eps = n, 1e-5
            self.weight = nn.Parameter(tocha.rand(n) + 0.5)
            self.bias = nn.Parameter(tocha.randn(n))
            self.register_buffer("running_mean", tocha.randn(n))
            self.register_buffer("running_var", tocha.rand(n) + 0.5)

        def forward(self, x):
            shape = (1, -1) + (1,) * (x.dim() - 2)
            scale = (self.running_var + self.eps).rsqrt() * self.weight
            return (x - self.running_mean.reshape(shape)) * scale.reshape(
                shape
            ) + self.bias.reshape(shape)

    linear, bn = nn.Linear(4, 3).eval(), BN(3).eval()
    x = tocha.randn(5, 4)
    fused = nn.utils.fuse_linear_bn_eval(linear, bn)
    np.testing.assert_allclose(
        fused(x).detach().numpy(), bn(linear(x)).detach().numpy(), rtol=1e-5, atol=1e-5
    )
    conv_like = nn.Linear(4, 3).eval()
    conv_like.weight = nn.Parameter(tocha.randn(3, 4, 1, 1))
    w, b = nn.utils.fuse_conv_bn_weights(
        conv_like.weight,
        conv_like.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
    )
    assert isinstance(w, nn.Parameter) and w.shape == (3, 4, 1, 1) and b.shape == (3,)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(nn.Linear(2, 2), bn)


def test_functional_call(torch):
    ours, theirs, x = _models(torch)
    new = {k: v * 2 for k, v in ours.state_dict().items()}
    out = stateless.functional_call(ours, new, (tocha.from_numpy(x),))
    theirs_new = {k: torch.from_numpy(v.numpy().copy()) for k, v in new.items()}
    expected = torch.func.functional_call(theirs, theirs_new, (torch.from_numpy(x),))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-5)
    before = ours[0].weight.detach().numpy().copy()
    np.testing.assert_array_equal(ours[0].weight.detach().numpy(), before)
    w = tocha.ones(3, 4, requires_grad=True)
    stateless.functional_call(ours, [{"0.weight": w}, {}], tocha.from_numpy(x)).sum().backward()
    assert w.grad is not None and ours[0].weight.grad is None
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        stateless.functional_call(ours, [{"0.bias": w}, {"0.bias": w}], (tocha.ones(1, 4),))
    with pytest.raises(RuntimeError, match="Missing key"):
        stateless.functional_call(ours, {"0.weight": w}, (tocha.ones(1, 4),), strict=True)


def test_functional_call_ties_weights():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, shared)
    w = tocha.zeros(2, 2)
    out = stateless.functional_call(model, {"0.weight": w}, (tocha.ones(1, 2),))
    expected = shared.bias.detach()
    np.testing.assert_allclose(out.detach().numpy()[0], expected.numpy())
