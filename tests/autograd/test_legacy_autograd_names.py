"""Older PyTorch programs' autograd names: Variable, the grad_mode module,
set_multithreading_enabled."""

from __future__ import annotations

import pytest

import tocha
from tocha.autograd import Variable


def test_variable_is_a_detached_tensor_sharing_memory():
    w = tocha.randn(3, requires_grad=True)
    x = w * 2
    v = Variable(x)
    assert v is not x and v.grad_fn is None and not v.requires_grad
    assert v.data_ptr() == x.data_ptr()
    leaf = Variable(x, requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf and not x.is_leaf
    (leaf * 3).sum().backward()
    assert leaf.grad.tolist() == [3.0, 3.0, 3.0]
    assert w.grad is None


def test_every_tensor_is_a_variable():
    assert isinstance(tocha.ones(1), Variable)
    assert not isinstance(3, Variable)


def test_variable_arguments():
    assert Variable().shape == (0,)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        Variable(3)
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert not Variable(tocha.ones(1), volatile=True).requires_grad


def test_grad_mode_module_and_multithreading_switch():
    from tocha.autograd import grad_mode

    assert grad_mode.no_grad is tocha.no_grad
    with tocha.autograd.set_multithreading_enabled(False):
        x = tocha.ones(2, requires_grad=True)
        (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match=r"argument 'enabled' \(position 1\) must be bool"):
        tocha.autograd.set_multithreading_enabled(1)
