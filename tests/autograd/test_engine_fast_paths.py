"""The engine's common-case shortcuts keep every observable behaviour: a scalar's
``.backward()`` (one root, implicit gradient), a leaf fed by one edge (its gradient goes to
``.grad`` at once), and gradients handed over without a copy only when nothing else holds
them."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha import autograd


def leaves(n: int, size: int = 4):
    rng = np.random.default_rng(n)
    return [tocha.tensor(rng.random(size) + 0.5, requires_grad=True) for _ in range(n)]


def test_small_graph_gradients():
    a, b, c = leaves(3)
    ((a * b) + c).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.detach().numpy())
    np.testing.assert_allclose(b.grad.numpy(), a.detach().numpy())
    np.testing.assert_allclose(c.grad.numpy(), np.ones(4))


def test_gradients_handed_to_leaves_are_not_shared():
    a, c = leaves(2)
    ((a * 2) + c).sum().backward()
    c.grad.add_(5.0)
    a.grad.add_(7.0)
    np.testing.assert_allclose(a.grad.numpy(), np.full(4, 9.0))
    np.testing.assert_allclose(c.grad.numpy(), np.full(4, 6.0))
    (a + c).sum().backward()  # one gradient reaches both leaves: each gets its own
    a.grad.zero_()
    np.testing.assert_allclose(c.grad.numpy(), np.full(4, 7.0))


def test_leaf_fed_by_two_edges_accumulates_once():
    (a,) = leaves(1)
    calls = []
    a.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.clone()))
    (a * 2 + a * 3).sum().backward()
    assert len(calls) == 1
    np.testing.assert_allclose(calls[0].numpy(), np.full(4, 5.0))
    np.testing.assert_allclose(a.grad.numpy(), np.full(4, 5.0))


def test_leaf_fed_by_one_edge_runs_its_hooks():
    (a,) = leaves(1)
    seen = []
    a.register_hook(lambda g: g * 10)
    a.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.sum().item()))
    (a * 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(4, 20.0))
    assert seen == [80.0]


def test_accumulate_grad_node_hooks_run():
    (a,) = leaves(1)
    y = (a * 3).sum()
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    pre, post = [], []
    acc.register_prehook(lambda grads: pre.append(grads[0].clone()))
    acc.register_hook(lambda grad_inputs, grad_outputs: post.append(grad_outputs[0].clone()))
    y.backward()
    assert len(pre) == 1 and len(post) == 1
    np.testing.assert_allclose(post[0].numpy(), np.full(4, 3.0))
    np.testing.assert_allclose(a.grad.numpy(), np.full(4, 3.0))


def test_second_backward_through_freed_graph_raises():
    a, b = leaves(2)
    y = (a * b).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_graph_without_saved_tensors_runs_twice():
    (a,) = leaves(1)
    y = (a + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(4, 2.0))


def test_retained_graph_accumulates():
    a, b = leaves(2)
    y = (a * b).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * b.detach().numpy())


def test_scalar_backward_errors():
    (a,) = leaves(1)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (a * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        tocha.tensor(1.0).backward()
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient"):
        b = a * 1
        y = (b * b).sum()
        b.add_(1)
        y.backward()


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_complex_scalar_needs_a_gradient(how):
    """As PyTorch (since 2.1): a complex scalar gets no implicit gradient of 1."""
    z = tocha.randn(3, dtype=tocha.complex64, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs but got tocha.complex64"):
        z.sum().backward() if how == "backward" else autograd.grad(z.sum(), z)
    z.sum().backward(tocha.tensor(1 + 0j))
    np.testing.assert_array_equal(z.grad.numpy(), np.ones(3, np.complex64))


def test_scalar_leaf_backward():
    x = tocha.tensor(2.0, requires_grad=True)
    x.backward()
    x.backward()
    assert x.grad.item() == 2.0


def test_scalar_backward_keeps_dtype_and_create_graph():
    x = tocha.tensor([1.5, 2.0], dtype=tocha.float32, requires_grad=True)
    y = (x * x).sum()
    y.backward(create_graph=True)
    assert x.grad.dtype is tocha.float32
    assert x.grad.requires_grad
    (gx,) = autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(gx.numpy(), np.full(2, 2.0))


def test_several_roots_sum():
    a, b = leaves(2)
    autograd.backward([(a * 2).sum(), (a * b).sum()])
    np.testing.assert_allclose(a.grad.numpy(), 2 + b.detach().numpy())
    autograd.backward([a.sum(), a.sum()])  # two roots on one leaf: both gradients arrive
    np.testing.assert_allclose(a.grad.numpy(), 4 + b.detach().numpy())


def test_multi_output_root():
    (a,) = leaves(1, 6)
    values, indices = a.reshape(2, 3).max(dim=1)
    values.sum().backward()
    expected = np.zeros(6)
    expected[np.arange(2) * 3 + indices.numpy()] = 1
    np.testing.assert_allclose(a.grad.numpy(), expected)


# -- one node straight into its leaves (a single op, a compiled graph) ---------------------
def test_one_node_graph_gradients_and_accumulation():
    a, b = leaves(2)
    for _ in range(2):
        tocha.dot(a, b).backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * b.detach().numpy())
    np.testing.assert_allclose(b.grad.numpy(), 2 * a.detach().numpy())


def test_one_node_with_one_leaf_twice_sums_its_gradients():
    (a,) = leaves(1)
    calls = []
    a.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.clone()))
    tocha.dot(a, a).backward()
    assert len(calls) == 1
    np.testing.assert_allclose(a.grad.numpy(), 2 * a.detach().numpy())


def test_one_node_adds_into_existing_gradients_in_place():
    a, b = leaves(2)
    tocha.dot(a, b).backward()
    grad_a, version = a.grad, a.grad._version
    calls = []
    b.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.clone()))
    tocha.dot(a, b).backward()
    assert a.grad is grad_a and a.grad._version == version + 1
    np.testing.assert_allclose(a.grad.numpy(), 2 * b.detach().numpy())
    assert len(calls) == 1
    np.testing.assert_allclose(calls[0].numpy(), 2 * a.detach().numpy())


def test_gradient_into_an_expanded_grad_is_refused():
    a, b = leaves(2)
    a.grad = tocha.ones(1, dtype=tocha.float64).expand(4)  # its 4 elements share one
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        tocha.dot(a, b).backward()
    a.grad = tocha.ones(1, dtype=tocha.float64).expand(4)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        (a * b).sum().backward()


def test_gradient_into_a_slice_of_a_flat_buffer_writes_the_buffer():
    a, b = leaves(2)
    flat = tocha.zeros(8, dtype=tocha.float64)
    a.grad = flat[2:6]
    tocha.dot(a, b).backward()
    assert a.grad._base is flat
    np.testing.assert_allclose(flat[2:6].numpy(), b.detach().numpy())


def test_one_node_multi_output_root_into_leaves():
    a = tocha.tensor([[3.0, 1.0], [0.5, 2.0]], requires_grad=True)
    for _ in range(2):
        values, _ = a.max(dim=1)
        values.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[2.0, 0.0], [0.0, 2.0]])


def test_one_node_runs_leaf_node_and_accumulator_hooks():
    a, b = leaves(2)
    a.register_hook(lambda g: g * 10)
    out = tocha.dot(a, b)
    node_calls, accumulator_calls = [], []
    out.grad_fn.register_hook(lambda grad_in, grad_out: node_calls.append(len(grad_in)))
    accumulator = out.grad_fn.next_functions[1][0]
    accumulator.register_hook(lambda grad_in, grad_out: accumulator_calls.append(grad_out))
    out.backward()
    assert node_calls == [2] and len(accumulator_calls) == 1
    np.testing.assert_allclose(a.grad.numpy(), 10 * b.detach().numpy())
    np.testing.assert_allclose(accumulator_calls[0][0].numpy(), a.detach().numpy())


def test_one_node_skips_inputs_without_gradient_and_frees_its_graph():
    (a,) = leaves(1)
    constant = tocha.tensor([1.0, 2.0, 3.0, 4.0], dtype=tocha.float64)
    out = tocha.dot(a, constant)
    out.backward()
    assert constant.grad is None
    np.testing.assert_allclose(a.grad.numpy(), constant.numpy())
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()
    assert tocha.is_grad_enabled()


def test_one_node_restores_grad_mode_when_its_formula_fails():
    class Failing(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("no gradient today")

    (a,) = leaves(1)
    with pytest.raises(ValueError, match="no gradient today"):
        Failing.apply(a).backward()
    assert tocha.is_grad_enabled()


def test_one_node_create_graph_gives_a_differentiable_gradient():
    (b,) = leaves(1)
    tocha.dot(b, b).backward(create_graph=True)
    assert b.grad.requires_grad
    b.grad.sum().backward()
    np.testing.assert_allclose(b.grad.detach().numpy(), 2 * b.detach().numpy() + 2)
