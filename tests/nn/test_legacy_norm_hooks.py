"""nn.utils.weight_norm / spectral_norm (PyTorch's older forward-pre-hook forms) and their
remove_* functions, against torch (recorded): parameters and buffers by name, values through
training and eval forwards, gradients, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

W = np.linspace(-1.0, 2.0, 12).reshape(4, 3)
U = np.array([0.5, -0.5, 0.5, 0.5])
V = np.array([0.6, 0.0, 0.8])
X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


def _linear(lib):
    m = lib.nn.Linear(3, 4).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W))
        m.bias.zero_()
    return m


def _weight_norm_run(lib, dim):
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        m = lib.nn.utils.weight_norm(_linear(lib), dim=dim)
    names = [n for n, _ in m.named_parameters()]
    y = m(lib.tensor(X))
    y.sum().backward()
    grads = [m.weight_g.grad.tolist(), m.weight_v.grad.tolist()]
    shape = list(m.weight_g.shape)
    lib.nn.utils.remove_weight_norm(m)
    return names, shape, y.tolist(), grads, [n for n, _ in m.named_parameters()], m.weight.tolist()


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(torch, dim):
    ours, theirs = _weight_norm_run(tocha, dim), _weight_norm_run(torch, dim)
    assert ours[:2] == theirs[:2] and ours[4] == theirs[4]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    for a, b in zip(ours[3], theirs[3], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-12)


def _spectral_norm_run(lib):
    m = lib.nn.utils.spectral_norm(_linear(lib))
    with lib.no_grad():
        m.weight_u.copy_(lib.tensor(U))
        m.weight_v.copy_(lib.tensor(V))
    names = ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()])
    keys = list(m.state_dict())
    outputs = [m(lib.tensor(X)).tolist() for _ in range(2)]
    uv = [m.weight_u.tolist(), m.weight_v.tolist()]
    m.eval()
    y = m(lib.tensor(X))
    y.sum().backward()
    outputs.append(y.tolist())
    same_u = m.weight_u.tolist() == uv[0]
    lib.nn.utils.remove_spectral_norm(m)
    after = ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()])
    return names, keys, outputs, uv, None, same_u, after


def test_spectral_norm_matches_torch(torch):
    ours, theirs = _spectral_norm_run(tocha), _spectral_norm_run(torch)
    assert ours[0] == theirs[0] and ours[1] == theirs[1] and ours[6] == theirs[6]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    np.testing.assert_allclose(ours[3][0], theirs[3][0], rtol=1e-12)
    np.testing.assert_allclose(ours[3][1], theirs[3][1], rtol=1e-12)
    assert ours[5] and theirs[5]


def test_spectral_norm_divides_by_the_largest_singular_value():
    m = tocha.nn.utils.spectral_norm(_linear(tocha), n_power_iterations=50)
    m(tocha.tensor(X))
    sigma = np.linalg.svd(W, compute_uv=False)[0]
    np.testing.assert_allclose(m.weight.detach().numpy(), W / sigma, rtol=1e-9)


def test_spectral_norm_of_transposed_convolution_uses_dim_1():
    m = tocha.nn.utils.spectral_norm(tocha.nn.ConvTranspose2d(2, 5, 3))
    assert m.weight_u.shape == (5,) and m.weight_v.shape == (18,)


def test_errors(torch):
    for lib in (tocha, torch):
        m = lib.nn.Linear(3, 4)
        with pytest.warns(FutureWarning):
            lib.nn.utils.weight_norm(m)
        with (
            pytest.warns(FutureWarning),
            pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"),
        ):
            lib.nn.utils.weight_norm(m)
        lib.nn.utils.remove_weight_norm(m)
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in Linear"):
            lib.nn.utils.remove_weight_norm(m)
        lib.nn.utils.spectral_norm(m)
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(m)
        lib.nn.utils.remove_spectral_norm(m)
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in Linear"):
            lib.nn.utils.remove_spectral_norm(m)
        with pytest.raises(KeyError):
            lib.nn.utils.spectral_norm(lib.nn.ReLU())
