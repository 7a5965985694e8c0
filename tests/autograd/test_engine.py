"""The backward engine: accumulation, graph freeing, hooks, in-place checks, threads,
memory, deep graphs."""

from __future__ import annotations

import gc
import math
import os
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest

import tocha
from tocha import autograd

RNG = np.random.default_rng(0)


def leaf(*shape, dtype=np.float64):
    return tocha.tensor(RNG.random(shape).astype(dtype) + 0.5, requires_grad=True)


def test_gradients_match_torch(torch):
    xn, yn = RNG.random((3, 4)), RNG.random((4,))
    x, y = tocha.tensor(xn, requires_grad=True), tocha.tensor(yn, requires_grad=True)
    xt, yt = torch.tensor(xn, requires_grad=True), torch.tensor(yn, requires_grad=True)
    ((x * y).exp() / (x + 2) - y.sin()).sum().backward()
    ((xt * yt).exp() / (xt + 2) - yt.sin()).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), yt.grad.numpy(), rtol=1e-12)


def test_backward_accumulates_into_existing_grad():
    x = leaf(3)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 5.0))


def test_a_leaf_used_twice_gets_both_contributions():
    x = leaf(3)
    (x * x + x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy() + 1)


def test_same_tensor_gradient_to_two_leaves_is_not_aliased():
    a, b = leaf(3), leaf(3)
    (a + b).sum().backward()
    a.grad += 1
    np.testing.assert_allclose(b.grad.numpy(), np.ones(3))


def test_user_gradient_is_not_aliased_by_grad():
    x = leaf(3)
    gradient = tocha.ones(3, dtype=tocha.float64)
    x.clone().backward(gradient)
    x.grad += 1
    np.testing.assert_allclose(gradient.numpy(), np.ones(3))


def test_second_backward_through_freed_graph_raises():
    x = leaf(3)
    y = (x.exp() * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf(3)
    y = (x.exp() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.exp(x.detach().numpy()))


def test_non_scalar_backward_needs_a_gradient():
    x = leaf(3)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()


def test_backward_gradient_and_inputs():
    x, y = leaf(3), leaf(3)
    (x * y).backward(tocha.full((3,), 2.0, dtype=tocha.float64), inputs=[x])
    np.testing.assert_allclose(x.grad.numpy(), 2 * y.detach().numpy())
    assert y.grad is None


def test_grad_returns_without_accumulating():
    x, y = leaf(3), leaf(3)
    (gx,) = autograd.grad((x * y).sum(), x)
    np.testing.assert_allclose(gx.numpy(), y.detach().numpy())
    assert x.grad is None


def test_grad_of_an_unused_input():
    x, y = leaf(3), leaf(3)
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        autograd.grad((x * 2).sum(), [x, y])
    gx, gy = autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
    assert gy is None
    _, gy = autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
    np.testing.assert_array_equal(gy.numpy(), np.zeros(3))


def test_grad_of_non_leaf_input():
    x = leaf(3)
    h = x * 3
    (gh,) = autograd.grad((h * h).sum(), h)
    np.testing.assert_allclose(gh.numpy(), 2 * h.detach().numpy())


def test_higher_order_with_create_graph(torch):
    xn = RNG.random(4)
    x, xt = tocha.tensor(xn, requires_grad=True), torch.tensor(xn, requires_grad=True)
    (g,) = autograd.grad((x.sin() * x).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad((xt.sin() * xt).sum(), xt, create_graph=True)
    (g2,) = autograd.grad(g.sum(), x)
    (g2t,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(g2.numpy(), g2t.numpy(), rtol=1e-12)


def test_deep_chain_does_not_recurse():
    x = leaf(1)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_no_grad_records_nothing():
    x = leaf(3)
    with tocha.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    z = x * 2
    assert z.requires_grad and z.grad_fn.name() == "MulBackward0"
    assert not z.is_leaf and x.is_leaf


def test_integer_and_bool_inputs_get_no_grad():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require"):
        tocha.ones(3, dtype=tocha.int64).requires_grad_()
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        tocha.ones(3, dtype=tocha.int64).requires_grad = True
    x = leaf(3)
    mask = x > 1
    assert not mask.requires_grad


def test_tensor_hooks():
    x = leaf(3)
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    h = x * 2
    h.register_hook(lambda g: g * 10)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 20.0))
    np.testing.assert_allclose(seen[0], np.full(3, 20.0))


def test_hook_handle_removes_the_hook():
    x = leaf(3)
    handle = x.register_hook(lambda g: g * 0)
    handle.remove()
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones(3))


def test_retain_grad_and_post_accumulate_hook():
    x = leaf(3)
    calls = []
    x.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.numpy().copy()))
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), 2 * h.detach().numpy())
    np.testing.assert_allclose(calls[0], 8 * x.detach().numpy())


def _retained_after_hooks(lib):
    a = lib.ones(3, requires_grad=True)
    b = a * 3
    b.retain_grad()
    b.register_hook(lambda g: g + 1)
    (b * 2).sum().backward()
    c = a * 2
    c.register_hook(lambda g: g * 10)
    c.retain_grad()
    c.register_hook(lambda g: g + 1)
    c.sum().backward()
    return b.grad, c.grad, a.grad


def test_a_retained_gradient_sees_every_hook_whatever_the_order(torch):
    for ours, theirs in zip(_retained_after_hooks(tocha), _retained_after_hooks(torch)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_node_hooks_and_next_functions():
    x = leaf(3)
    y = x * 2 + 1
    fn = y.grad_fn
    assert fn.name() == "AddBackward0"
    mul, _ = fn.next_functions[0]
    assert mul.name() == "MulBackward0"
    assert mul.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    got = []
    fn.register_hook(lambda grad_inputs, grad_outputs: got.append(len(grad_inputs)))
    y.sum().backward()
    assert got == [2]


def test_modified_saved_tensor_raises():
    x = leaf(3)
    h = x * 1
    y = h.exp()  # saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_on_leaf_requiring_grad_raises():
    x = leaf(3)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.add_(1)
    with tocha.no_grad():
        x.add_(1)


def test_inplace_on_view_of_leaf_raises():
    x = leaf(3, 2)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        x[0].mul_(2)


def test_inplace_on_non_leaf_and_its_views_matches_torch(torch):
    xn = RNG.random((3, 4))
    x, xt = tocha.tensor(xn, requires_grad=True), torch.tensor(xn, requires_grad=True)
    for t in (x, xt):
        y = t.clone()
        y[:, 1].mul_(2)
        y.exp_()
        (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_gradients_add_up_silently_through_inf():
    """inf + -inf is nan, without NumPy's warning (PyTorch is silent), both where a node's
    gradients meet and where a leaf's ``.grad`` accumulates."""
    x = tocha.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = x * 2
        (y * math.inf + y * -math.inf).sum().backward()
        assert math.isnan(x.grad.item())
        x.grad = None
        (x * math.inf).sum().backward()
        (x * -math.inf).sum().backward()
        assert math.isnan(x.grad.item())


def test_graph_is_freed_after_backward():
    x = leaf(100)
    h = x.exp()
    refs = [weakref.ref(h), weakref.ref(h.grad_fn)]
    loss = (h * 2).sum()
    loss.backward()
    del h, loss
    gc.collect()
    assert all(r() is None for r in refs)


def test_graph_holds_no_reference_cycles():
    x = leaf(100)
    h = (x.exp() * x).sin()
    ref = weakref.ref(h.grad_fn)
    gc.disable()
    try:
        del h
        assert ref() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_a_leaf_is_freed_without_the_cyclic_collector():
    """A leaf refers to its AccumulateGrad node weakly (the node holds the leaf), so once the
    graph is gone reference counting alone frees the leaf and its ``.grad``."""
    x = leaf(100)
    y = x * 2
    (y * x).sum().backward()
    refs = [weakref.ref(x), weakref.ref(x.grad)]
    gc.disable()
    try:
        del x, y
        assert [r() for r in refs] == [None, None]
    finally:
        gc.enable()


def test_one_accumulator_per_leaf_while_a_graph_holds_it():
    x = leaf(3)
    calls = []
    x.register_hook(lambda grad: calls.append(grad.numpy().copy()))
    a, b = x * 2, x * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]
    (a + b).sum().backward()
    # both paths meet in the one node: the hook sees their sum, once
    np.testing.assert_allclose(np.array(calls), [np.full(3, 5.0)])
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 5.0))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_memory_returns_without_the_cyclic_collector():
    """200 steps, each with a new 4 MB leaf (its graph and gradient about 12 MB), hold at
    most two steps' memory with the cyclic garbage collector off."""

    def rss() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    w = tocha.ones(1 << 20, requires_grad=True)
    gc.collect()
    gc.disable()
    try:
        start = rss()
        for _ in range(200):
            x = tocha.ones(1 << 20, requires_grad=True)
            (x * w).sum().backward()
        grown = rss() - start
    finally:
        gc.enable()
    assert grown < 2 * 12 * 2**20, f"{grown / 2**20:.0f} MB kept"


def test_threads_backpropagate_separate_graphs():
    results = {}

    def work(k):
        x = tocha.tensor(np.full(50, float(k)), requires_grad=True)
        for _ in range(50):
            (x * x * k).sum().backward()
        results[k] = x.grad.numpy().copy()

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in (1, 2):
        np.testing.assert_allclose(results[k], np.full(50, 50 * 2.0 * k * k))


def test_missing_derivative_raises_naming_the_op():
    from tocha._dispatch import REGISTRY, call, defop

    op = defop("test_without_formula", lambda xp: lambda x: x * 2)
    try:
        y = call(op, (leaf(3),))
        with pytest.raises(NotImplementedError, match="test_without_formula"):
            y.sum().backward()
    finally:
        del REGISTRY["test_without_formula"]


def test_detect_anomaly_names_the_forward_op():
    x = tocha.tensor([0.0, 1.0], dtype=tocha.float64, requires_grad=True)
    with autograd.detect_anomaly():
        y = x.sqrt() * 0
        with pytest.raises(RuntimeError, match="SqrtBackward0.*nan"):
            y.sum().backward()


def test_a_path_without_gradient_does_not_block_other_paths(torch):
    grads = []
    for lib in (tocha, torch):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = lib.tensor([1.0, 1.0, -1.0], requires_grad=True)
        (lib.copysign(x, y) + y * 2).sum().backward()
        grads.append((x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


def test_inference_tensors_never_join_a_graph(torch):
    for lib in (tocha, torch):
        with lib.inference_mode():
            x = lib.ones(3)
            view = x[1:]
            x.add_(1)  # in-place inside inference mode is fine
        assert x.is_inference() and view.is_inference() and not lib.ones(2).is_inference()
        w = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            w * x
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
            x.add_(1)
        with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor"):
            x.requires_grad_()
        assert not (x.clone().is_inference())


def test_node_prehooks_and_accumulate_grad_posthooks_run_in_pytorchs_order():
    # The order and arguments PyTorch 2.13 gives for the same graph.
    events = []
    x = tocha.ones(2, requires_grad=True)
    y = (x * 2).sum()
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    acc.register_hook(lambda gi, go: events.append(("post", gi, [g.tolist() for g in go])))
    acc.register_prehook(lambda go: events.append(("pre", [g.tolist() for g in go])))
    handle = y.grad_fn.register_prehook(lambda go: events.append(("pre sum", go[0].item())))
    y.backward(retain_graph=True)
    assert events == [("pre sum", 1.0), ("pre", [[2.0, 2.0]]), ("post", (), [[2.0, 2.0]])]
    handle.remove()
    events.clear()
    y.backward()
    assert [e[0] for e in events] == ["pre", "post"] and x.grad.tolist() == [4.0, 4.0]


def test_a_node_prehook_may_replace_the_gradients():
    x = tocha.ones(2, requires_grad=True)
    y = x * 3
    y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    y.sum().backward()
    assert x.grad.tolist() == [30.0, 30.0]


def _batched_vjps(lib):
    u = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (first,) = lib.autograd.grad(u * u, u, grad_outputs=lib.eye(3), is_grads_batched=True)
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (second,) = lib.autograd.grad(
        (x**3).sum(1), x, lib.eye(2), is_grads_batched=True, create_graph=True
    )
    (third,) = lib.autograd.grad(second.sum(), x)
    return first, second.detach(), third


def test_grads_batched_is_one_vjp_per_batch_entry(torch):
    for ours, theirs in zip(_batched_vjps(tocha), _batched_vjps(torch)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
