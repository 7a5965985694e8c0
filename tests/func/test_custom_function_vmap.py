"""Custom autograd.Functions under vmap, as PyTorch's "Extending torch.func" tutorial uses
them: a vmap staticmethod that sees the inputs' batched values (NumPy kernels inside), with
grad and nesting; generate_vmap_rule; the errors PyTorch gives (messages recorded from
PyTorch 2.13). Also the errors vmap gives for data-dependent Python values."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
from tocha.func import grad, vmap

RNG = np.random.default_rng(3)
DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class NumpySort(tocha.autograd.Function):
    """Sorts along `dim` in NumPy; its backward is NumpyTake, also a NumPy kernel."""

    @staticmethod
    def forward(x, dim):
        array = x.detach().numpy()
        ind = np.argsort(array, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(array, ind, axis=dim)
        return tocha.tensor(result), tocha.tensor(ind), tocha.tensor(ind_inv)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, dim = inputs
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    @staticmethod
    def vmap(info, in_dims, x, dim):
        x_bdim, _ = in_dims
        x = x.movedim(x_bdim, 0)
        dim = dim if dim >= 0 else dim + x.dim() - 1
        return NumpySort.apply(x, dim + 1), (0, 0, 0)


class NumpyTake(tocha.autograd.Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        return tocha.tensor(np.take_along_axis(x.detach().numpy(), ind.numpy(), dim))

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None, None, None

    @staticmethod
    def vmap(info, in_dims, x, ind, ind_inv, dim):
        def front(t, bdim):
            return t.expand(info.batch_size, *t.shape) if bdim is None else t.movedim(bdim, 0)

        x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims
        logical_dim = x.dim() if x_bdim is None else x.dim() - 1
        dim = dim if dim >= 0 else dim + logical_dim
        x, ind, ind_inv = front(x, x_bdim), front(ind, ind_bdim), front(ind_inv, ind_inv_bdim)
        return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0


def numpy_sort(x, dim=-1):
    return NumpySort.apply(x, dim)[0]


class Scale(tocha.autograd.Function):
    """x * y * k, recording what its vmap staticmethod is called with."""

    calls: list = []

    @staticmethod
    def forward(x, y, k):
        return x * y * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], inputs[1])
        ctx.k = inputs[2]

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * ctx.k, g * x * ctx.k, None

    @staticmethod
    def vmap(info, in_dims, x, y, k):
        Scale.calls.append((info.batch_size, info.randomness, in_dims, tuple(x.shape)))
        xd, yd, _ = in_dims
        x = x.movedim(xd, 0) if xd is not None else x.expand(info.batch_size, *x.shape)
        y = y.movedim(yd, 0) if yd is not None else y.expand(info.batch_size, *y.shape)
        return Scale.apply(x, y, k), 0


def _randn(*shape):
    return tocha.from_numpy(RNG.standard_normal(shape))


def test_vmap_staticmethod_runs_numpy_kernels():
    x = _randn(4, 5)
    np.testing.assert_array_equal(vmap(numpy_sort)(x).numpy(), np.sort(x.numpy(), axis=-1))
    np.testing.assert_array_equal(
        vmap(numpy_sort, in_dims=1, out_dims=1)(x).numpy(), np.sort(x.numpy(), axis=0)
    )
    nested = vmap(vmap(numpy_sort))(_randn(2, 3, 4))
    assert nested.shape == (2, 3, 4)
    assert (nested.diff(dim=-1) >= 0).all()


def test_vmap_staticmethod_composes_with_grad():
    x = _randn(3, 4)
    weights = tocha.arange(4.0, dtype=tocha.float64)

    def loss(row):
        return (numpy_sort(row) * weights).sum()

    expected = np.take_along_axis(
        np.broadcast_to(weights.numpy(), (3, 4)), np.argsort(np.argsort(x.numpy())), -1
    )
    np.testing.assert_array_equal(vmap(grad(loss))(x).numpy(), expected)
    leaf = x.clone().requires_grad_()
    (vmap(numpy_sort)(leaf) * weights).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), expected)
    np.testing.assert_array_equal(
        grad(lambda t: (vmap(numpy_sort)(t) * weights).sum())(x), expected
    )


def test_vmap_staticmethod_arguments():
    Scale.calls.clear()
    out = vmap(Scale.apply, in_dims=(0, None, None), randomness="same")(
        tocha.ones(2, 3), tocha.full((3,), 2.0), 3.0
    )
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 6.0))
    assert Scale.calls == [(2, "same", (0, None, None), (2, 3))]
    Scale.calls.clear()
    out = vmap(vmap(Scale.apply, in_dims=(0, None, None)), in_dims=(None, 0, None))(
        tocha.ones(2, 3), tocha.full((4, 3), 2.0), 3.0
    )
    assert out.shape == (4, 2, 3)
    assert [call[:3] for call in Scale.calls] == [
        (2, "error", (0, None, None)),
        (4, "error", (None, 0, None)),
    ]


def _function(name, forward, **attributes):
    namespace = {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(lambda ctx, inputs, output: None),
        "backward": staticmethod(lambda ctx, *grads: grads),
        **attributes,
    }
    return type(name, (tocha.autograd.Function,), namespace)


def test_generate_vmap_rule_batches_forward():
    Cube = _function("Cube", lambda x: x**3, generate_vmap_rule=True)
    x = _randn(3, 2)
    np.testing.assert_allclose(vmap(Cube.apply)(x).numpy(), x.numpy() ** 3)


@pytest.mark.parametrize(
    "attributes, message",
    [
        (
            {},
            "You tried to vmap over F, but it does not have vmap support. Please override and "
            f"implement the vmap staticmethod or set generate_vmap_rule=True. {DOCS}",
        ),
        (
            {
                "generate_vmap_rule": True,
                "vmap": staticmethod(lambda info, in_dims, x: (x * 2, 0)),
            },
            "You tried to vmap over F, but it has both generate_vmap_rule=True and an "
            "overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the "
            f"overridden vmap staticmethod to avoid ambiguity. {DOCS}",
        ),
        (
            {"vmap": staticmethod(lambda info, in_dims, x: x * 2)},
            "Expected the vmap staticmethod to have two returns, an output and out_dims with "
            "pytree structure compatible with the output. Got a <class 'tocha._tensor.Tensor'> "
            "instead",
        ),
    ],
    ids=["no_rule", "both", "one_return"],
)
def test_vmap_errors_match_pytorch(attributes, message):
    F = _function("F", lambda x: x * 2, **attributes)
    with pytest.raises(RuntimeError) as info:
        vmap(F.apply)(tocha.ones(3))
    assert str(info.value) == message


def test_base_vmap_staticmethod_raises():
    with pytest.raises(NotImplementedError, match="override the vmap staticmethod"):
        tocha.autograd.Function.vmap(None, None)
    assert tocha.autograd.Function.generate_vmap_rule is False


ITEM = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
    ".item() on a Tensor, please try to rewrite what you're doing with other operations."
)


@pytest.mark.parametrize(
    "fn, message",
    [
        (lambda a: a.item(), ITEM),
        (lambda a: float(a.sum()), ITEM),
        (lambda a: int(a[0]), ITEM),
        (lambda a: a.tolist(), "Cannot access data pointer of Tensor that doesn't have storage"),
        (lambda a: a.numpy(), "Cannot access data pointer of Tensor that doesn't have storage"),
        (
            lambda a: 1 if a.sum() > 0 else 0,
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow.",
        ),
    ],
    ids=["item", "float", "int", "tolist", "numpy", "bool"],
)
def test_data_dependent_python_values_raise_pytorch_errors(fn, message):
    with pytest.raises(RuntimeError) as info:
        vmap(fn)(_randn(3, 2))
    assert str(info.value).startswith(message)


def test_in_dims_none_is_refused():
    with pytest.raises(ValueError) as info:
        vmap(lambda a: a, in_dims=None)(_randn(3))
    assert str(info.value) == (
        "vmap(<lambda>, in_dims=None, ...)(<inputs>): expected `in_dims` to be int or a "
        "(potentially nested) tuple matching the structure of inputs, got: <class 'NoneType'>."
    )
