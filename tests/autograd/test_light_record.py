"""The light record path: a one-output op's node is also its output's autograd metadata, a
saved tensor without a version counter gets no version entry, and anomaly mode and
saved-tensor hooks are looked up only while some thread has them on. Each behaves as in
PyTorch."""

from __future__ import annotations

import re
import threading

import pytest

import tocha


def leaf(lib, n=3):
    return lib.arange(1.0, n + 1.0).requires_grad_()


def test_an_output_of_a_recorded_op(torch):
    def build(lib):
        a, b = leaf(lib), leaf(lib)
        y = a * b
        y.retain_grad()
        (y * y).sum().backward()
        return (
            y.grad_fn.name(),
            y.is_leaf,
            y.requires_grad,
            y.output_nr,
            y.retains_grad,
            y.grad.tolist(),
            a.grad.tolist(),
            [fn.name() for fn, _ in y.grad_fn.next_functions],
        )

    assert build(tocha) == build(torch)


def test_backward_into_a_non_leaf_whose_node_has_a_hook():
    # PyTorch's answers (the hook is a callback, which the oracle cannot replay): the
    # gradient stops at y, whose node still runs its hook
    a = leaf(tocha)
    y = a * 2
    seen = []
    y.grad_fn.register_hook(lambda grad_in, grad_out: seen.append(grad_out[0].tolist()))
    (y * y).sum().backward(inputs=[y])
    assert (y.grad.tolist(), a.grad, seen) == ([4.0, 8.0, 12.0], None, [[4.0, 8.0, 12.0]])


def test_a_graph_that_saved_no_tensor_runs_backward_twice(torch):
    def build(lib):
        a, b = leaf(lib), leaf(lib)
        y = a + b
        y.backward(lib.ones(3))
        y.backward(lib.ones(3))
        return a.grad.tolist()

    assert build(tocha) == build(torch)


@pytest.mark.parametrize("writes_before", [0, 3])
def test_writing_a_saved_tensor_names_its_versions(torch, writes_before):
    def build(lib):
        a = leaf(lib)
        x = lib.ones(3)
        for _ in range(writes_before):
            x.add_(1)
        y = a * x
        x.mul_(2)
        try:
            y.sum().backward()
        except RuntimeError as exc:
            return re.search(r"is at version \d+; expected version \d+", str(exc)).group()
        return None

    assert build(tocha) == build(torch)


def test_a_saved_tensor_with_a_fresh_counter_written_later(torch):
    def build(lib):
        a = leaf(lib)
        x = lib.ones(3)
        x[:2]  # a view: x has a version counter, still at 0
        y = a * x
        x.add_(1)
        try:
            y.sum().backward()
        except RuntimeError as exc:
            return re.search(r"is at version \d+; expected version \d+", str(exc)).group()
        return None

    assert build(tocha) == build(torch)


@pytest.mark.parametrize("op", ["mul_", "pow_", "exp_"])
def test_an_in_place_op_that_saves_its_own_target(torch, op):
    def build(lib):
        a = leaf(lib)
        y = a * 1
        if op == "exp_":
            y.exp_()
        else:
            getattr(y, op)(2)
        y.sum().backward()
        return [round(v, 5) for v in a.grad.tolist()], y.grad_fn.name()

    assert build(tocha) == build(torch)


def test_saved_tensor_hooks_pack_a_counterless_saved_tensor_unchecked():
    """What the hooks packed is theirs: as in PyTorch, a later in-place change to the
    tensor is not checked (backward sees what the unpack hook gives back)."""
    packed = []

    def pack(t):
        packed.append(t)
        return t

    a = leaf(tocha)
    x = tocha.ones(3)
    with tocha.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = a * x
    assert len(packed) == 1  # x alone: as PyTorch, a is kept only for x's (unwanted) gradient
    x.add_(1)
    y.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]
    b = leaf(tocha)
    with tocha.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        z = b * 3
    z.sum().backward()
    assert b.grad.tolist() == [3.0, 3.0, 3.0]


def nan_gradient():
    """A NaN gradient: sqrt's derivative at -1."""
    a = tocha.tensor([-1.0, 4.0], requires_grad=True)
    a.sqrt().sum().backward()
    return a.grad


def test_anomaly_mode_switched_on_and_off_and_nested():
    assert nan_gradient()[0].isnan()
    with tocha.autograd.detect_anomaly():
        with tocha.autograd.detect_anomaly(check_nan=False):
            nan_gradient()
        with pytest.raises(RuntimeError, match="returned nan values"):
            nan_gradient()
    assert nan_gradient()[0].isnan()
    tocha.autograd.set_detect_anomaly(True)
    tocha.autograd.set_detect_anomaly(True)
    try:
        with pytest.raises(RuntimeError, match="returned nan values"):
            nan_gradient()
    finally:
        tocha.autograd.set_detect_anomaly(False)
    assert nan_gradient()[0].isnan()
    assert not tocha.autograd.is_anomaly_enabled()


def test_anomaly_mode_on_and_off_in_another_thread():
    errors = []

    def worker():
        with tocha.autograd.detect_anomaly():
            try:
                nan_gradient()
            except RuntimeError as exc:
                errors.append(str(exc))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert errors and "returned nan values" in errors[0]
    assert nan_gradient()[0].isnan()
