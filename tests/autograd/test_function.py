"""Custom autograd Functions, gradcheck itself, functional derivatives, saved-tensor hooks."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha import autograd
from tocha.autograd import Function, gradcheck, gradgradcheck
from tocha.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp
from tocha.autograd.graph import saved_tensors_hooks

RNG = np.random.default_rng(1)


def leaf(*shape):
    return tocha.tensor(RNG.random(shape) + 0.5, requires_grad=True)


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * grad * x * x


class ScaleWithSetup(Function):
    @staticmethod
    def forward(x, factor):
        return x * factor

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.factor = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


class SortedAndArgmax(Function):
    @staticmethod
    def forward(ctx, x):
        index = x.argmax()
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(index)
        ctx.n = x.numel()
        return x * 2, index

    @staticmethod
    def backward(ctx, grad, grad_index):
        assert grad_index is None or float(grad_index.abs().sum()) == 0
        return grad * 2


class AddOneInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class NoMaterialize(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 1, x * 2

    @staticmethod
    def backward(ctx, g1, g2):
        assert g2 is None
        return g1


def test_custom_function_gradients_and_name():
    x = leaf(4)
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)
    assert gradcheck(Cube.apply, (leaf(3),))


def test_setup_context_style_and_non_tensor_args():
    x = leaf(3)
    ScaleWithSetup.apply(x, 4.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 4.0))


def test_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen["needs"] = ctx.needs_input_grad
            return a * b

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    Probe.apply(leaf(2), tocha.ones(2, dtype=tocha.float64))
    assert seen["needs"] == (True, False)


def test_mark_non_differentiable():
    x = leaf(5)
    y, index = SortedAndArgmax.apply(x)
    assert not index.requires_grad and y.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(5, 2.0))


def test_mark_dirty_on_non_leaf():
    x = leaf(3)
    h = x * 1
    out = AddOneInPlace.apply(h)
    assert out is h and out.grad_fn.name() == "AddOneInPlaceBackward"
    (out * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))


def test_set_materialize_grads_false_passes_none():
    x = leaf(3)
    a, _ = NoMaterialize.apply(x)
    a.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones(3))


def test_saved_tensors_are_freed_after_backward():
    x = leaf(3)
    y = Cube.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_wrong_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(leaf(2)).sum().backward()


def test_once_differentiable():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @autograd.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * grad * x

    x = leaf(3)
    (g,) = autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: a * b + a / b,
        lambda a, b: (a**b).exp().log1p(),
        lambda a, b: tocha.atan2(a, b) * tocha.hypot(a, b),
        lambda a, b: (a.sin() * b.cos()).tanh().sigmoid(),
        lambda a, b: (a - b).abs().sqrt(),
        lambda a, b: tocha.maximum(a, b) - tocha.minimum(a, 2 * b),
    ],
)
def test_gradcheck_and_gradgradcheck_pass_on_correct_formulas(fn):
    a, b = leaf(3), leaf(3)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


def test_gradcheck_catches_a_wrong_formula():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    with pytest.raises(autograd.GradcheckError, match="Jacobian mismatch"):
        gradcheck(Wrong.apply, (leaf(3),))
    assert gradcheck(Wrong.apply, (leaf(3),), raise_exception=False) is False


def test_functional_against_closed_forms():
    xn = RNG.random(3) + 0.5
    x = tocha.tensor(xn)
    v = tocha.tensor(np.array([1.0, 2.0, 3.0]))

    def f(t):
        return (t * t * t).sum()

    def g(t):
        return t.exp() * 2

    _, vjp_value = vjp(g, x, v)
    np.testing.assert_allclose(vjp_value.numpy(), 2 * np.exp(xn) * [1, 2, 3])
    _, jvp_value = jvp(g, x, v)
    np.testing.assert_allclose(jvp_value.numpy(), 2 * np.exp(xn) * [1, 2, 3])
    np.testing.assert_allclose(jacobian(g, x).numpy(), np.diag(2 * np.exp(xn)))
    np.testing.assert_allclose(hessian(f, x).numpy(), np.diag(6 * xn))
    np.testing.assert_allclose(vhp(f, x, v)[1].numpy(), 6 * xn * [1, 2, 3])
    np.testing.assert_allclose(hvp(f, x, v)[1].numpy(), 6 * xn * [1, 2, 3])


def test_jacobian_of_two_inputs_matches_torch(torch):
    an, bn = RNG.random(2), RNG.random(3)
    ours = jacobian(lambda a, b: (a[:, None] * b).exp(), (tocha.tensor(an), tocha.tensor(bn)))
    theirs = torch.autograd.functional.jacobian(
        lambda a, b: (a[:, None] * b).exp(), (torch.tensor(an), torch.tensor(bn))
    )
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12)


def test_saved_tensors_hooks_pack_and_unpack():
    packed, unpacked = [], []

    def pack(t):
        packed.append(t.shape)
        return t.numpy(force=True).copy()

    def unpack(array):
        unpacked.append(array.shape)
        return tocha.from_numpy(array)

    x = leaf(3)
    with saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()
    y.backward()
    assert len(packed) == 2 and len(unpacked) == 2
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())
