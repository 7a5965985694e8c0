"""The lazy tape: what recording defers (a leaf's AccumulateGrad, the metadata of saved
arguments and of an op's one output, a fresh tensor's version counter) behaves as if it had
been made at once, as in PyTorch."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import tocha
from tocha.autograd.graph import saved_tensors_hooks


def leaf(n=3):
    return tocha.arange(1.0, n + 1.0).requires_grad_()


def both(torch, build):
    """`build(lib)` run with tocha and with torch; their results."""
    return build(tocha), build(torch)


def test_a_leaf_has_one_accumulator_across_its_ops_and_backward():
    # PyTorch: one AccumulateGrad per leaf while a graph holds it
    a = leaf()
    y, z = a * a, a + 1
    first = y.grad_fn.next_functions
    assert first[0][0] is first[1][0] is z.grad_fn.next_functions[0][0]
    assert first[0][0].name() == "torch::autograd::AccumulateGrad"
    (y + z).sum().backward()
    assert y.grad_fn.next_functions[0][0] is first[0][0]
    assert a.grad.tolist() == [3.0, 5.0, 7.0]


def test_a_hook_on_an_accumulator_found_before_backward_runs():
    a = leaf()
    y = a * 2
    seen = []
    y.grad_fn.next_functions[0][0].register_hook(lambda gi, go: seen.append(go[0].tolist()))
    y.sum().backward()
    assert seen == [[2.0, 2.0, 2.0]]


def test_the_accumulator_keeps_a_leaf_the_program_dropped():
    y = tocha.ones(3, requires_grad=True) * 2
    accumulator = y.grad_fn.next_functions[0][0]
    y.sum().backward()
    assert accumulator.variable.grad.tolist() == [2.0, 2.0, 2.0]


def test_next_functions_after_backward_freed_the_graph(torch):
    def build(lib):
        a = lib.arange(1.0, 4.0).requires_grad_()
        b = lib.arange(1.0, 4.0)
        y = (a * 2) * b
        y.sum().backward()
        return [None if fn is None else fn.name() for fn, _ in y.grad_fn.next_functions]

    mine, theirs = both(torch, build)
    assert mine == ["MulBackward0", None] and theirs == mine


def test_saved_metadata_is_frozen_when_backward_frees_the_graph():
    a = leaf()
    b = tocha.arange(1.0, 4.0) * 1
    y = a * b
    node = y.grad_fn
    ref = weakref.ref(b)
    y.sum().backward()
    del b
    gc.collect()
    assert ref() is None  # the node keeps no saved argument once freed
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()
    assert len(node.next_functions) == 2


@pytest.mark.parametrize("write", ["tensor", "view"])
def test_writing_a_fresh_saved_tensor_is_caught(write):
    x = leaf() * 1  # no version counter yet when mul saves it
    y = x * x
    if write == "tensor":
        x.add_(1)
    else:
        x[:2].mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_a_saved_tensor_rewritten_before_its_op_is_fine():
    x = leaf() * 1
    x.add_(1)
    y = x * x
    y.sum().backward()


def test_saved_tensor_hooks_see_each_saved_tensor_once():
    packed, unpacked = [], []

    def pack(t):
        packed.append(t.shape)
        return t

    def unpack(t):
        unpacked.append(t.shape)
        return t

    a, b = leaf(), leaf()
    with saved_tensors_hooks(pack, unpack):
        y = (a * b).exp()
    y.sum().backward()
    assert len(packed) == 3 and len(unpacked) == 3
    np.testing.assert_allclose(a.grad.numpy(), (y * b).detach().numpy(), rtol=1e-6)


def test_a_prehook_that_takes_the_gradient_away(torch):
    def build(lib):
        a = lib.arange(1.0, 4.0).requires_grad_()
        y = a * 2
        y.grad_fn.register_prehook(lambda g: (None,))
        y.sum().backward()
        return a.grad

    assert both(torch, build) == (None, None)


def test_gradients_of_broadcast_and_promoted_saved_arguments(torch):
    def build(lib):
        a = lib.arange(1.0, 4.0, dtype=lib.float64).requires_grad_()
        b = lib.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
        (a * b).sum().backward()
        return a.grad.tolist(), str(a.grad.dtype), b.grad.tolist(), str(b.grad.dtype)

    mine, theirs = both(torch, build)
    assert mine[0] == theirs[0] and mine[2] == theirs[2]
    assert mine[1].split(".")[-1] == theirs[1].split(".")[-1]
    assert mine[3].split(".")[-1] == theirs[3].split(".")[-1]
