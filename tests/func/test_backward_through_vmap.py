"""A backward through vmap after it exited, where a batched branch meets a plain one: its
gradient must equal the loop's (MAML's meta-gradient over a vmap of tasks, the backward of
a vectorized jacobian with create_graph, a penalty on per-example jacobians added to a
loss). Each once summed only the first example's share, or counted a plain one per example."""

from __future__ import annotations

import numpy as np

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tocha.autograd.functional import jacobian
from tocha.func import functional_call, grad, jacrev, vmap

RNG = np.random.default_rng(5)


def _randn(*shape, grad=False):
    return tocha.tensor(RNG.standard_normal(shape), requires_grad=grad)


def _close(a, b):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_meta_gradient_over_a_vmap_of_tasks():
    w = _randn(3, grad=True)
    xs = _randn(4, 3)

    def loss(p, x):
        return ((x * p).tanh() ** 2).sum()

    def task(p, x):
        return loss(p - 0.1 * grad(loss)(p, x), x)

    vmap(task, in_dims=(None, 0))(w, xs).sum().backward()
    batched = w.grad
    w.grad = None
    sum(task(w, xs[i]) for i in range(4)).backward()
    _close(batched, w.grad)


def test_vectorized_jacobian_with_create_graph_backward():
    w = _randn(3, grad=True)
    x = _randn(3, grad=True)

    def grads(vectorize):
        x.grad = w.grad = None
        J = jacobian(lambda a: (a * w).tanh(), x, create_graph=True, vectorize=vectorize)
        J.sum().backward()
        return x.grad, w.grad

    for got, want in zip(grads(True), grads(False)):
        _close(got, want)


def test_per_example_jacobian_penalty_plus_a_plain_loss():
    net = nn.Sequential(nn.Linear(1, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    x = _randn(3, 1)

    def grads(jacobians):
        net.zero_grad()
        penalty = jacobians().pow(2).sum()
        (F.mse_loss(net(x), x.sin()) + 0.1 * penalty).backward()
        return [p.grad for p in net.parameters()]

    batched = grads(lambda: vmap(jacrev(net))(x))
    looped = grads(lambda: tocha.stack([jacrev(net)(x[i]) for i in range(3)]))
    for got, want in zip(batched, looped):
        _close(got, want)


def test_maml_with_functional_call():
    net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    params = dict(net.named_parameters())
    support, query = _randn(3, 5, 1), _randn(3, 5, 1)

    def loss(p, x):
        return F.mse_loss(functional_call(net, p, (x,)), x.sin())

    def task(p, xs, xq):
        g = grad(loss)(p, xs)
        return loss({k: p[k] - 0.1 * g[k] for k in p}, xq)

    vmap(task, in_dims=(None, 0, 0))(params, support, query).mean().backward()
    batched = [p.grad for p in net.parameters()]
    net.zero_grad()
    (sum(task(params, support[i], query[i]) for i in range(3)) / 3).backward()
    for got, p in zip(batched, net.parameters()):
        _close(got, p.grad)


def _through_vmap(w, xs):
    return vmap(lambda x: (w * x).sin().sum() * w.sum())(xs).sum()


def _looped(w, xs):
    return sum((w * xs[i]).sin().sum() * w.sum() for i in range(xs.shape[0]))


def test_second_derivatives_of_a_function_that_vmaps():
    """A leaf's gradient summed over vmap's examples keeps its tangent and its history:
    hessian (forward over reverse), jacrev of jacrev and a double backward see vmap."""
    from tocha.func import hessian, jvp

    w, xs, v = _randn(3), _randn(4, 3), _randn(3)
    h = hessian(lambda w: _through_vmap(w, xs))(w)
    _close(h, hessian(lambda w: _looped(w, xs))(w))
    _close(jacrev(jacrev(lambda w: _through_vmap(w, xs)))(w), h)
    _close(jvp(grad(lambda w: _through_vmap(w, xs)), (w,), (v,))[1], h @ v)
    leaf = w.clone().requires_grad_()
    (g,) = tocha.autograd.grad(_through_vmap(leaf, xs), leaf, create_graph=True)
    (gg,) = tocha.autograd.grad(g.sum(), leaf)
    _close(gg, h.sum(0))


def test_second_derivatives_of_a_vmapped_branch_plus_a_plain_one():
    from tocha.func import hessian

    w, xs = _randn(3), _randn(4, 3)

    def h(w):
        return vmap(lambda x: (w * x).sin().sum())(xs).sum() + (w**3).sum()

    def looped(w):
        return sum((w * xs[i]).sin().sum() for i in range(4)) + (w**3).sum()

    want = hessian(looped)(w)
    _close(hessian(h)(w), want)
    _close(jacrev(jacrev(h))(w), want)
    leaf = w.clone().requires_grad_()
    (g,) = tocha.autograd.grad(h(leaf), leaf, create_graph=True)
    _close(tocha.autograd.grad(g.sum(), leaf)[0], want.sum(0))


def test_second_derivatives_through_the_gradient_of_vmaps_output():
    """The backward (and jvp) of entering and leaving vmap is differentiable again: here the
    gradient reaching vmap's output depends on w, and a model's hessian keeps its history."""
    from tocha.func import hessian

    w, xs = _randn(3), _randn(2, 3)

    def h(w):
        return (vmap(lambda x: (w * x).sin())(xs) * w).sum()

    def looped(w):
        return (tocha.stack([(w * xs[i]).sin() for i in range(2)]) * w).sum()

    want = hessian(looped)(w)
    _close(hessian(h)(w), want)
    _close(jacrev(jacrev(h))(w), want)
    net = nn.Sequential(nn.Linear(3, 4), nn.SiLU(), nn.Linear(4, 1)).double()
    hessians = vmap(hessian(lambda x: net(x).squeeze(-1)))(xs)
    assert hessians.requires_grad
    hessians.diagonal(dim1=-2, dim2=-1).sum().backward()
    batched = [p.grad for p in net.parameters()]
    net.zero_grad()
    looped_h = tocha.stack([hessian(lambda x: net(x).squeeze(-1))(xs[i]) for i in range(2)])
    looped_h.diagonal(dim1=-2, dim2=-1).sum().backward()
    for got, p in zip(batched, net.parameters()):
        if p.grad is None:  # the last bias: a hessian does not depend on it
            assert got is None or not got.any()
        else:
            _close(got, p.grad)
