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
    rng = np.random.default_rng(2)
    an, bn = rng.random(2), rng.random(3)
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


# -- forward mode: jvp ------------------------------------------------------------------------
fwAD = autograd.forward_ad


class MulScaled(Function):
    """x * y * z for tensors x, y and a number z, with both derivatives."""

    @staticmethod
    def forward(ctx, x, y, z):
        ctx.save_for_backward(x, y)
        ctx.save_for_forward(x, y)
        ctx.z = z
        return x * y * z

    @staticmethod
    def jvp(ctx, x_t, y_t, _):
        x, y = ctx.saved_tensors
        return ctx.z * (y * x_t + x * y_t)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return ctx.z * grad * y, ctx.z * grad * x, None


class SinCos(Function):
    """Two outputs, set up with setup_context."""

    @staticmethod
    def forward(x):
        return x.sin(), x.cos()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(*output)

    @staticmethod
    def jvp(ctx, x_t):
        sin, cos = ctx.saved_tensors
        return cos * x_t, -sin * x_t


def _dual_tangents(function, primals, tangents):
    """The tangents of `function`'s outputs, each primal made dual with its tangent (None:
    left plain)."""
    with fwAD.dual_level():
        args = [fwAD.make_dual(p, t) if t is not None else p for p, t in zip(primals, tangents)]
        out = function(*args)
        outs = out if isinstance(out, tuple) else (out,)
        return [fwAD.unpack_dual(o).tangent for o in outs]


def test_jvp_matches_finite_differences():
    assert gradcheck(
        lambda x, y: MulScaled.apply(x, y, 4.0), (leaf(3), leaf(3)), check_forward_ad=True
    )
    assert gradcheck(SinCos.apply, (leaf(4),), check_forward_ad=True, check_backward_ad=False)


def test_jvp_matches_torch_forward_ad(torch):
    rng = np.random.default_rng(3)
    xn, yn, tn, un = (rng.standard_normal(3) for _ in range(4))

    def run(lib, product, sincos):
        forward_ad = lib.autograd.forward_ad
        with forward_ad.dual_level():
            x = forward_ad.make_dual(lib.tensor(xn), lib.tensor(tn))
            y = forward_ad.make_dual(lib.tensor(yn), lib.tensor(un))
            outs = (product(x, y), *sincos(x))
            return [forward_ad.unpack_dual(o).tangent.numpy(force=True) for o in outs]

    mine = run(tocha, lambda x, y: MulScaled.apply(x, y, 4.0), SinCos.apply)
    theirs = run(torch, lambda x, y: x * y * 4.0, lambda x: (x.sin(), x.cos()))
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t, rtol=1e-12)


def test_jvp_gets_zeros_for_inputs_without_tangent_and_none_for_others():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, y, n, k, materialize):
            ctx.set_materialize_grads(materialize)
            return x * y

        @staticmethod
        def jvp(ctx, *tangents):
            seen.append(tangents)
            return tangents[0]

    x, y, k = tocha.ones(2), tocha.full((2,), 3.0), tocha.tensor([1, 2])
    (tangent,) = _dual_tangents(lambda a: Probe.apply(a, y, 2, k, True), [x], [tocha.ones(2)])
    x_t, y_t, n_t, k_t, m_t = seen[0]
    assert float(y_t.abs().sum()) == 0 and y_t.shape == y.shape
    assert n_t is None and k_t is None and m_t is None
    np.testing.assert_allclose(tangent.numpy(), np.ones(2))
    _dual_tangents(lambda a: Probe.apply(a, y, 2, k, False), [x], [tocha.ones(2)])
    assert seen[1][1] is None


def test_jvp_runs_under_no_grad_and_needs_no_graph():
    x, t = leaf(3), tocha.tensor(RNG.standard_normal(3))
    with tocha.no_grad():
        (tangent,) = _dual_tangents(lambda a: MulScaled.apply(a, a, 2.0), [x.detach()], [t])
    np.testing.assert_allclose(tangent.numpy(), 4 * x.detach().numpy() * t.numpy())
    with fwAD.dual_level():
        out = MulScaled.apply(fwAD.make_dual(x.detach(), t), x.detach(), 1.0)
        assert out.grad_fn is None and not out.requires_grad


def test_forward_and_jvp_see_no_tangents():
    seen = []

    class Look(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            seen.append((fwAD.unpack_dual(x).tangent, fwAD.unpack_dual(y).tangent))
            return y

        @staticmethod
        def jvp(ctx, x_t):
            seen.append((fwAD.unpack_dual(x_t).tangent,))
            return x_t * 2

    _dual_tangents(Look.apply, [leaf(2).detach()], [tocha.ones(2)])
    assert all(t is None for entry in seen for t in entry)


def test_tangents_are_differentiable_by_backward():
    """jvp runs in grad mode: the output's tangent has a graph back to the input's."""
    x, t = tocha.tensor(RNG.random(3) + 0.5), leaf(3)
    with fwAD.dual_level():
        out = SinCos.apply(fwAD.make_dual(x, t))[0]
        tangent = fwAD.unpack_dual(out).tangent
        (grad,) = autograd.grad(tangent.sum(), t)
    np.testing.assert_allclose(grad.numpy(), np.cos(x.numpy()))


def test_function_without_jvp_raises():
    with fwAD.dual_level():
        x = fwAD.make_dual(leaf(2).detach(), tocha.ones(2))
        with pytest.raises(NotImplementedError, match="must implement the jvp function"):
            Cube.apply(x)
        Cube.apply(leaf(2))  # no tangent: no jvp needed


def test_saved_tensors_in_jvp_and_backward():
    seen = {}

    class Saves(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x, None)
            ctx.save_for_backward(x * 2)
            return x * x

        @staticmethod
        def jvp(ctx, x_t):
            seen["jvp"] = ctx.saved_tensors
            return 2 * ctx.saved_tensors[0] * x_t

        @staticmethod
        def backward(ctx, grad):
            seen["backward"] = ctx.saved_tensors
            return grad * ctx.saved_tensors[0]

    x = leaf(2)
    with fwAD.dual_level():
        out = Saves.apply(fwAD.make_dual(x, tocha.ones(2)))
    out.sum().backward()
    np.testing.assert_allclose(seen["jvp"][0].detach().numpy(), x.detach().numpy())
    assert seen["jvp"][1] is None
    np.testing.assert_allclose(seen["backward"][0].detach().numpy(), 2 * x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())

    class SavesNumber(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x, 3)
            return x

    with pytest.raises(AssertionError, match="save_for_forward expects all arguments"):
        SavesNumber.apply(leaf(2))


def _returning(forward, tangent_rule):
    class Custom(Function):
        pass

    Custom.forward = staticmethod(forward)
    Custom.jvp = staticmethod(tangent_rule)
    return Custom


@pytest.mark.parametrize(
    "forward, tangent_rule, message",
    [
        (lambda ctx, x: (x * 2, x * 3), lambda ctx, t: t * 2, r"expected 2 but got 1"),
        (lambda ctx, x: x * 2, lambda ctx, t: 3.0, "expected Variable or None"),
        (lambda ctx, x: x * 2, lambda ctx, t: t.sum(), "different size"),
        (lambda ctx, x: (x * 2, x.argmax()), lambda ctx, t: (t, t), "not a differentiable"),
        (lambda ctx, x: x, lambda ctx, t: t * 1, "is not returning a view"),
        (lambda ctx, x: x[:1], lambda ctx, t: t.clone()[:1], "not returning a view of the given"),
    ],
    ids=["count", "type", "shape", "non_differentiable", "as_is", "view"],
)
def test_jvp_errors(forward, tangent_rule, message):
    with fwAD.dual_level():
        x = fwAD.make_dual(tocha.ones(2), tocha.ones(2))
        with pytest.raises(RuntimeError, match=message):
            _returning(forward, tangent_rule).apply(x)


def test_jvp_of_views_and_inputs_returned_as_is():
    for forward, tangent_rule in (
        (lambda ctx, x: x, lambda ctx, t: t.view_as(t)),
        (lambda ctx, x: x[1:], lambda ctx, t: t[1:]),
    ):
        x = tocha.tensor([1.0, 2.0])
        (tangent,) = _dual_tangents(
            _returning(forward, tangent_rule).apply, [x], [tocha.tensor([3.0, 4.0])]
        )
        np.testing.assert_allclose(tangent.numpy(), [3.0, 4.0][-tangent.numel() :])


class DoubleInPlace(Function):
    @staticmethod
    def forward(ctx, x, y):
        x.mul_(2).add_(y)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def jvp(ctx, x_t, y_t):
        return x_t.mul_(2).add_(y_t)


def test_jvp_of_an_in_place_function():
    """mark_dirty: the input's tangent is updated in place (zeros when it had none)."""
    x, y = tocha.tensor([1.0, 2.0]), tocha.tensor([0.5, 0.5])
    with fwAD.dual_level():
        dual_x = fwAD.make_dual(x.clone(), tocha.tensor([1.0, 3.0]))
        out = DoubleInPlace.apply(dual_x, fwAD.make_dual(y, tocha.tensor([1.0, 1.0])))
        assert out is dual_x
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.numpy(), [3.0, 7.0])
        plain = x.clone()
        out = DoubleInPlace.apply(plain, fwAD.make_dual(y, tocha.tensor([1.0, 1.0])))
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.numpy(), [1.0, 1.0])


@pytest.mark.parametrize(
    "tangent_rule, message",
    [
        (lambda ctx, t: t, "not modifying the forward mode gradients inplace"),
        (lambda ctx, t: t.mul_(2) * 1, "not modifying the forward mode gradients inplace"),
        (lambda ctx, t: t.mul_(2).view_as(t), "not returning the forward mode gradients as-is"),
    ],
    ids=["unmodified", "copy", "view"],
)
def test_jvp_of_an_in_place_function_must_update_the_tangent(tangent_rule, message):
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.mul_(2)

    with fwAD.dual_level():
        x = fwAD.make_dual(tocha.ones(2), tocha.ones(2))
        with pytest.raises(RuntimeError, match=message):
            _returning(forward, tangent_rule).apply(x)


def test_once_differentiable_jvp():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        @autograd.once_differentiable
        def jvp(ctx, x_t):
            (x,) = ctx.saved_tensors
            return 2 * x * x_t

    x, t = tocha.tensor([1.0, 2.0]), leaf(2)
    (tangent,) = _dual_tangents(Square.apply, [x], [t])
    np.testing.assert_allclose(tangent.numpy(), 2 * x.numpy() * t.detach().numpy())
    assert not tangent.requires_grad
