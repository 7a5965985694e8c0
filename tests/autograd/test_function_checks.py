"""Custom ``autograd.Function``: what its node exposes as ``ctx``, keyword arguments to
``apply``, the checks of what backward returns, and ``mark_dirty``.

Each scenario runs on a library (tocha, or PyTorch when installed) and returns plain data:
the expected values are PyTorch's, checked live against it where it is installed."""

from __future__ import annotations

import importlib

import pytest


@pytest.fixture(params=["tocha", "torch"])
def lib(request):
    if request.param == "torch":
        return pytest.importorskip("torch")
    return importlib.import_module(request.param)


def _function(lib, backward_result=None):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor=2.0):
            ctx.factor = factor
            ctx.save_for_backward(x)
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            if backward_result is not None:
                return backward_result(grad)
            return grad * ctx.factor, None

    return Scale


def test_the_node_reads_as_ctx(lib):
    Scale = _function(lib)
    x = lib.ones(2, requires_grad=True)
    y = Scale.apply(x, 3.0)
    node = y.grad_fn
    assert isinstance(node, lib.autograd.function.BackwardCFunction)
    assert type(node).__name__ == "ScaleBackward"
    assert node.factor == 3.0 and node.needs_input_grad == (True, False)
    assert len(node.saved_tensors) == 1
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = node.saved_tensors
    assert node.factor == 3.0
    with pytest.raises(AttributeError):
        _ = node.missing


def test_apply_takes_keyword_arguments(lib):
    Scale = _function(lib)
    x = lib.ones(2, requires_grad=True)
    y = Scale.apply(x=x, factor=5.0)
    assert y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_what_backward_returns_is_checked(lib):
    x = lib.ones(2, requires_grad=True)
    wrong_shape = _function(lib, lambda g: (lib.ones(3), None))
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got \[3\] but"):
        wrong_shape.apply(x).sum().backward()
    not_a_tensor = _function(lib, lambda g: ("no", None))
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got str\)"):
        not_a_tensor.apply(x).sum().backward()
    broadcast = _function(lib, lambda g: (lib.ones(3, 2), None))  # summed to the input
    broadcast.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_save_for_backward_names_a_non_tensor(lib):
    class Saves(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(TypeError, match="argument 1 is of type int"):
        Saves.apply(lib.ones(2, requires_grad=True))


def test_mark_dirty(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    a = lib.ones(2, requires_grad=True)
    b = a.clone()
    c = Double.apply(b)
    assert c is b and b._version == 2 and b.grad_fn.name() == "DoubleBackward"
    c.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad has been used"):
        Double.apply(lib.ones(2, requires_grad=True))


def test_non_tensor_outputs_get_no_gradient(lib):
    class WithCount(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 5

        @staticmethod
        def backward(ctx, grad, grad_count):
            assert grad_count is None
            return grad * 2

    x = lib.ones(2, requires_grad=True)
    out, count = WithCount.apply(x)
    out.sum().backward()
    assert count == 5 and x.grad.tolist() == [2.0, 2.0]


def test_an_input_returned_as_non_differentiable(lib):
    class Passthrough(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = lib.ones(2, requires_grad=True)
    out = Passthrough.apply(x)
    assert out is not x and not out.requires_grad


def test_functions_are_not_instantiated(lib):
    Scale = _function(lib)
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        instance = Scale()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        instance(lib.ones(2))


def test_legacy_names(lib):
    function = lib.autograd.function
    assert isinstance(function.Function, function.FunctionMeta)
    with pytest.warns(DeprecationWarning):
        assert function.InplaceFunction(inplace=True).inplace is True
    assert lib.autograd.profiler_util.FunctionEvent is not None
    assert lib.autograd.kineto_available() is True
    assert lib.autograd.is_tensor_like(lib.ones(1)) and not lib.autograd.is_tensor_like(1)
