"""The engine's callback queue (``Variable._execution_engine.queue_callback``) and
``autograd.graph.register_multi_grad_hook``.

Each scenario runs on a library (tocha, or PyTorch when installed) and returns plain data:
the expected values are PyTorch's, checked live against it where it is installed."""

from __future__ import annotations

import importlib

import pytest

import tocha


@pytest.fixture(params=["tocha", "torch"])
def lib(request):
    if request.param == "torch":
        return pytest.importorskip("torch")
    return importlib.import_module(request.param)


def _values(grads):
    return [None if g is None else g.tolist() for g in grads]


def test_callback_runs_after_the_whole_backward(lib):
    engine = lib.autograd.Variable._execution_engine
    order = []
    a = lib.ones(3, requires_grad=True)
    b = lib.ones(3, requires_grad=True)

    def hook(grad):
        order.append("hook")
        engine.queue_callback(lambda: order.append(("callback", b.grad is not None)))

    a.register_hook(hook)
    (a * b).sum().backward()
    assert order == ["hook", ("callback", True)]


def test_callbacks_run_once_each_in_order_and_may_queue_more(lib):
    engine = lib.autograd.Variable._execution_engine
    order = []

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            def first():
                order.append("first")
                engine.queue_callback(lambda: order.append("queued by first"))

            engine.queue_callback(first)
            engine.queue_callback(lambda: order.append("second"))
            return grad * 2

    x = lib.ones(2, requires_grad=True)
    Double.apply(x).sum().backward()
    assert order == ["first", "second", "queued by first"]
    order.clear()
    (x * 3).sum().backward()  # a later backward runs none of them again
    assert order == []


def test_callback_from_post_accumulate_hook_sees_every_gradient(lib):
    engine = lib.autograd.Variable._execution_engine
    seen = []
    w1 = lib.ones(2, requires_grad=True)
    w2 = lib.ones(2, requires_grad=True)

    def reduce_all():
        seen.append((w1.grad.tolist(), w2.grad.tolist()))

    def post(param):
        if not seen and param is w1:
            engine.queue_callback(reduce_all)

    w1.register_post_accumulate_grad_hook(post)
    w2.register_post_accumulate_grad_hook(post)
    (w1 * 3 + w2 * 5).sum().backward()
    assert seen == [([3.0, 3.0], [5.0, 5.0])]


def test_callback_in_autograd_grad_and_in_a_leaf_fed_backward(lib):
    engine = lib.autograd.Variable._execution_engine
    order = []
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: engine.queue_callback(lambda: order.append("grad")))
    (gx,) = lib.autograd.grad((y * y).sum(), x)
    assert gx.tolist() == [8.0, 8.0] and order == ["grad"]
    x.register_hook(lambda g: engine.queue_callback(lambda: order.append("leaf")))
    (x * 3).sum().backward()  # one node straight into its leaf
    assert order == ["grad", "leaf"]


def test_callback_queued_by_a_nested_backward_runs_at_its_end(lib):
    engine = lib.autograd.Variable._execution_engine
    order = []

    class Inner(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            engine.queue_callback(lambda: order.append("outer"))
            with lib.enable_grad():
                z = lib.ones(1, requires_grad=True)
                w = z * 2
                w.register_hook(lambda g: engine.queue_callback(lambda: order.append("inner")))
                w.sum().backward()
            order.append("inner done")
            return grad

    Inner.apply(lib.ones(1, requires_grad=True)).sum().backward()
    assert order == ["inner", "inner done", "outer"]


def test_queue_callback_outside_backward_raises(lib):
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward"):
        lib.autograd.Variable._execution_engine.queue_callback(lambda: None)


def test_a_failing_callback_raises_from_backward_and_is_dropped(lib):
    engine = lib.autograd.Variable._execution_engine
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: engine.queue_callback(lambda: 1 / 0))
    with pytest.raises(ZeroDivisionError):
        y.sum().backward()
    order = []
    z = x * 2
    z.register_hook(lambda g: order.append("hook"))
    z.sum().backward()
    assert order == ["hook"]


def test_multi_grad_hook_all_waits_for_the_gradients_this_backward_computes(lib):
    register = lib.autograd.graph.register_multi_grad_hook
    a, b, c = (lib.ones(3, requires_grad=True) for _ in range(3))
    calls = []
    handle = register((a, b, c), lambda grads: calls.append(_values(grads)))
    (a * 2 + b).sum().backward()
    assert calls == [[[2.0] * 3, [1.0] * 3, None]]
    (a * 2 + b * c).sum().backward()
    assert calls[1] == [[2.0] * 3, [1.0] * 3, [1.0] * 3]
    handle.remove()
    (a * 2 + b * c).sum().backward()
    assert len(calls) == 2


def test_multi_grad_hook_all_with_inputs_and_grad(lib):
    register = lib.autograd.graph.register_multi_grad_hook
    x = lib.ones(2, requires_grad=True)
    y, z = x * 2, x * 3
    calls = []
    register((y, z), lambda grads: calls.append(_values(grads)))
    (gy,) = lib.autograd.grad((y * z).sum(), y, retain_graph=True)
    assert gy.tolist() == [3.0, 3.0]
    lib.autograd.grad((y * z).sum(), x, retain_graph=True)
    y.sum().backward(inputs=[x])
    assert calls == [
        [[3.0, 3.0], None],
        [[3.0, 3.0], [2.0, 2.0]],
        [[1.0, 1.0], None],
    ]


def test_multi_grad_hook_any_fires_once_per_backward(lib):
    register = lib.autograd.graph.register_multi_grad_hook
    x = lib.ones(2, requires_grad=True)
    y, z = x * 2, x * 3
    calls = []
    register((y, z), lambda grad: calls.append(grad.tolist()), mode="any")
    (y * 7).sum().backward(retain_graph=True)
    (y * 5 + z * 5).sum().backward(retain_graph=True)
    assert calls == [[7.0, 7.0], [5.0, 5.0]]


def test_multi_grad_hook_handle_and_errors(lib):
    register = lib.autograd.graph.register_multi_grad_hook
    x = lib.ones(2, requires_grad=True)
    calls = []
    with register((x,), lambda grads: calls.append(1)):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    assert calls == [1]
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        register((x,), lambda grads: None, mode="some")
    with pytest.raises(AssertionError):
        register((lib.ones(2), x), lambda grads: None)


def test_engine_frames_are_not_kept_after_backward():
    from tocha.autograd._running import QUEUED

    engine = tocha.autograd.Variable._execution_engine
    x = tocha.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: engine.queue_callback(lambda: None))
    y.sum().backward()
    z = x * 2
    z.register_hook(lambda g: engine.queue_callback(lambda: 1 / 0))
    with pytest.raises(ZeroDivisionError):
        z.sum().backward()
    assert not QUEUED


def test_multi_grad_hook_all_when_a_reached_tensor_gets_no_gradient(lib):
    class DropSecond(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    x = lib.ones(2, requires_grad=True)
    y, z = x * 2, x * 3
    calls = []
    lib.autograd.graph.register_multi_grad_hook((y, z), lambda grads: calls.append(_values(grads)))
    DropSecond.apply(y, z).sum().backward()
    assert calls == [[[1.0, 1.0], None]]
