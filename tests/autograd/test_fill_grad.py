"""Gradients and forward-mode tangents through copy_ and fill_, against PyTorch. Their values
are in tests/core/test_fill.py, which needs no tocha-autograd."""

from __future__ import annotations

import numpy as np

import tocha


def test_copy_is_differentiable_with_respect_to_the_source(torch):
    grads = []
    for lib in (tocha, torch):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.zeros(2, 3)
        b.copy_(a * 2)
        (b * b).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_fill_of_a_tracked_tensor_cuts_the_gradient(torch):
    grads = []
    for lib in (tocha, torch):
        a = lib.ones(3, requires_grad=True)
        y = a * 2
        y[1:].fill_(5)
        (y * a).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def _dual(lib, values, tangent):
    forward_ad = lib.autograd.forward_ad
    return forward_ad.make_dual(
        lib.tensor(values, dtype=lib.float64), lib.tensor(tangent, dtype=lib.float64)
    )


def test_copy_carries_the_tangent_of_the_source(torch):
    tangents = []
    for lib in (tocha, torch):
        with lib.autograd.forward_ad.dual_level():
            a = _dual(lib, [1.0, 2.0, 3.0], [1.0, -1.0, 0.5])
            b = lib.zeros(2, 3, dtype=lib.float64)
            b.copy_(a * 2)
            tangents.append(lib.autograd.forward_ad.unpack_dual(b * b).tangent.numpy())
    np.testing.assert_allclose(tangents[0], tangents[1])


def test_assignment_carries_the_tangent_of_the_value(torch):
    tangents = []
    for lib in (tocha, torch):
        with lib.autograd.forward_ad.dual_level():
            a = _dual(lib, [1.0, 2.0, 3.0], [1.0, -1.0, 0.5])
            y = a * 1
            y[0] = a[2] * 3
            w = lib.zeros(3, dtype=lib.float64)
            w[1:] = a[:2]
            unpack = lib.autograd.forward_ad.unpack_dual
            tangents.append((unpack(y).tangent.numpy(), unpack(w).tangent.numpy()))
    for got, want in zip(*tangents):
        np.testing.assert_allclose(got, want)


def test_fill_of_a_dual_view_zeroes_the_tangent_there():
    forward_ad = tocha.autograd.forward_ad
    with forward_ad.dual_level():
        y = _dual(tocha, [1.0, 2.0, 3.0], [1.0, -1.0, 0.5]) * 2
        y[1:].fill_(5)
        assert forward_ad.unpack_dual(y).tangent.tolist() == [2.0, 0.0, 0.0]


def test_inplace_on_a_dual_view_writes_the_base_tangent():
    forward_ad = tocha.autograd.forward_ad
    with forward_ad.dual_level():
        base = _dual(tocha, [1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0]) * 1
        other = _dual(tocha, [10.0, 20.0], [5.0, 6.0])
        base[1:3].copy_(other)
        assert forward_ad.unpack_dual(base).tangent.tolist() == [1.0, 5.0, 6.0, 1.0]
        view = base[::2]
        view.mul_(3)
        assert forward_ad.unpack_dual(base).tangent.tolist() == [3.0, 5.0, 18.0, 1.0]
        assert forward_ad.unpack_dual(view).tangent.tolist() == [3.0, 18.0]
