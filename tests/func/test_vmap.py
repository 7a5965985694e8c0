"""vmap's interface (in_dims, out_dims, pytrees, chunk_size, randomness, errors as torch's)
and its composition with reverse- and forward-mode autograd, each against the loop over
the examples."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tocha.autograd import forward_ad
from tocha.func._batching import LOOPED
from tocha.func._vmap import vmap


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _randn(*shape, seed=0):
    return tocha.from_numpy(np.random.default_rng(seed).standard_normal(shape))


# -- the interface ------------------------------------------------------------------------
def test_in_dims_none_and_nested_tuple():
    x, y = _randn(4, 3), _randn(3)
    got = vmap(lambda a, pair: a * pair[0] + pair[1], in_dims=(0, (None, 0)))(x, (y, x))
    _close(got, x * y + x)


def test_dict_inputs_and_outputs():
    x = _randn(5, 2)
    got = vmap(lambda d: {"s": d["a"].sum(), "t": (d["a"] * 2,)})({"a": x})
    _close(got["s"], x.sum(1))
    _close(got["t"][0], x * 2)


@pytest.mark.parametrize("out_dim", [0, 1, -1])
def test_out_dims(out_dim):
    x = _randn(4, 3, 2)
    got = vmap(lambda a: a.sum(-1), out_dims=out_dim)(x)
    _close(got, x.sum(-1).movedim(0, out_dim))


def test_out_dims_per_output_and_unbatched_outputs():
    x = _randn(4, 3)
    scale = _randn(3, seed=1)
    a, b = vmap(lambda r: (r * 2, scale), out_dims=(1, 0))(x)
    _close(a, (x * 2).T)
    assert b.shape == (4, 3)
    _close(b, scale.expand(4, 3))


def test_kwargs_are_not_mapped():
    x = _randn(4, 3)
    got = vmap(lambda a, *, k: a * k)(x, k=_randn(3))
    assert got.shape == (4, 3)


@pytest.mark.parametrize("chunk_size", [1, 3, 10])
def test_chunk_size(chunk_size):
    x = _randn(7, 3)
    _close(vmap(lambda a: a.softmax(0), chunk_size=chunk_size)(x), x.softmax(1))


def test_nested_with_different_dims():
    x = _randn(3, 4, 5)
    got = vmap(vmap(lambda a: a.sum(), in_dims=1), in_dims=0)(x)
    _close(got, x.sum(1))


def test_inplace_on_batched_tensor_and_error_on_unbatched_target():
    x = _randn(4, 3)
    _close(vmap(lambda a: a.clone().mul_(2).add_(1))(x), x * 2 + 1)
    y = _randn(3)
    with pytest.raises(RuntimeError, match="inplace arithmetic"):
        vmap(lambda a: y.clone().add_(a))(x)


def test_data_dependent_control_flow_raises():
    with pytest.raises(RuntimeError, match="vmap"):
        vmap(lambda a: a if a.sum() > 0 else -a)(_randn(3, 2))
    with pytest.raises(RuntimeError, match="vmap"):
        vmap(lambda a: a.item())(_randn(3))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: vmap(tocha.sin)(), "got no inputs"),
        (
            lambda: vmap(tocha.sin, in_dims=2)(_randn(3, 4)),
            "expected in_dim to satisfy -2 <= in_dim < 2",
        ),
        (lambda: vmap(tocha.add)(_randn(3, 4), _randn(4)), "same size in the mapped dimension"),
        (
            lambda: vmap(tocha.add, in_dims=[0, 0])(_randn(3), _randn(3)),
            "expected `in_dims` to be int",
        ),
        (lambda: vmap(tocha.add, in_dims=(0,))(_randn(3), _randn(3)), "in_dims is not compatible"),
        (lambda: vmap(lambda a: 3)(_randn(3)), "must only return Tensors"),
        (
            lambda: vmap(tocha.add, in_dims=(None, None))(_randn(3), _randn(3)),
            "at least one Tensor",
        ),
        (lambda: vmap(lambda a, b: a)(_randn(3), 3), "We cannot vmap over non-Tensor arguments"),
    ],
)
def test_errors_as_torch(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_randomness_modes():
    x = tocha.ones(6, 50)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: F.dropout(a, 0.5))(x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(tocha.sin, randomness="sometimes")
    same = vmap(lambda a: F.dropout(a, 0.5), randomness="same")(x)
    assert (same == same[0]).all()
    different = vmap(lambda a: F.dropout(a, 0.5), randomness="different")(x)
    assert not (different == different[0]).all()
    assert set(np.unique(different.numpy())) <= {0.0, 2.0}
    with pytest.raises(RuntimeError, match="randomness='different'"):
        vmap(lambda a: a + tocha.rand(50), randomness="different")(x)


def test_unruled_op_loops_with_a_warning_once():
    LOOPED.clear()
    x = _randn(4, 5)
    with pytest.warns(UserWarning, match="batching rule for kron"):
        got = vmap(lambda a: tocha.kron(a, a))(x)
    _close(got, tocha.stack([tocha.kron(r, r) for r in x]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vmap(lambda a: tocha.kron(a, a))(x)


# -- with autograd --------------------------------------------------------------------------
def _grad_of(loss_of):
    def per_example(w, x, t):
        with tocha.enable_grad():
            leaf = w.detach().requires_grad_()
            return tocha.autograd.grad(loss_of(leaf, x, t), leaf)[0]

    return per_example


LOSSES = {
    "cross_entropy": lambda w, x, t: F.cross_entropy((x @ w).tanh(), t),
    "mse": lambda w, x, t: F.mse_loss(x @ w, t.double().unsqueeze(-1).expand(-1, 3)),
    "log_softmax_gather": lambda w, x, t: -F.log_softmax(x @ w, -1).gather(1, t[:, None]).mean(),
    "layer_norm_gelu": lambda w, x, t: F.gelu(F.layer_norm(x @ w, (3,))).pow(2).sum(),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_per_sample_gradients_equal_the_loop(name):
    w, x = _randn(4, 3), _randn(6, 2, 4, seed=1)
    t = tocha.from_numpy(np.random.default_rng(2).integers(0, 3, (6, 2)))
    per_example = _grad_of(LOSSES[name])
    LOOPED.clear()
    got = vmap(per_example, in_dims=(None, 0, 0))(w, x, t)
    _close(got, tocha.stack([per_example(w, x[i], t[i]) for i in range(6)]))
    assert not LOOPED, f"fell back to the loop: {sorted(LOOPED)}"


class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(x.flatten(1))


def test_per_sample_gradients_of_a_cnn_without_the_loop():
    tocha.manual_seed(0)
    model = _CNN().double()
    x = _randn(5, 1, 8, 8)
    t = tocha.from_numpy(np.random.default_rng(3).integers(0, 5, (5,)))

    def per_example(x1, t1):
        with tocha.enable_grad():
            loss = F.cross_entropy(model(x1.unsqueeze(0)), t1.unsqueeze(0))
            return tocha.autograd.grad(loss, list(model.parameters()))

    LOOPED.clear()
    got = vmap(per_example)(x, t)
    assert not LOOPED, f"fell back to the loop: {sorted(LOOPED)}"
    for i in range(5):
        expected = per_example(x[i], t[i])
        for g, e in zip(got, expected):
            _close(g[i], e, 1e-9)


def test_jacobian_rows_by_vmap_over_backward():
    x = _randn(5).requires_grad_()
    y = (x.sin() * x).cumsum(0)
    rows = vmap(lambda v: tocha.autograd.grad(y, x, v, retain_graph=True)[0])(
        tocha.eye(5, dtype=tocha.float64)
    )
    for i in range(5):
        _close(rows[i], tocha.autograd.grad(y[i], x, retain_graph=True)[0])


def test_jacobian_columns_by_vmap_over_forward_mode():
    x = _randn(5)

    def column(v):
        with forward_ad.dual_level():
            y = F.softmax(forward_ad.make_dual(x, v).exp(), 0)
            return forward_ad.unpack_dual(y).tangent

    columns = vmap(column, out_dims=1)(tocha.eye(5, dtype=tocha.float64))
    x_leaf = x.clone().requires_grad_()
    y = F.softmax(x_leaf.exp(), 0)
    for i in range(5):
        _close(columns[i], tocha.autograd.grad(y[i], x_leaf, retain_graph=True)[0])


# -- backward through vmap ------------------------------------------------------------------
def test_backward_through_vmap_reaches_mapped_and_shared_leaves():
    x = _randn(4, 3).requires_grad_()
    w = _randn(3, seed=1).requires_grad_()
    vmap(lambda r: (r * w).sin().sum())(x).sum().backward()
    x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    (x2 * w2).sin().sum().backward()
    assert type(x.grad) is tocha.Tensor and type(w.grad) is tocha.Tensor
    _close(x.grad, x2.grad)
    _close(w.grad, w2.grad)


def test_only_nodes_recorded_under_vmap_take_the_batched_backward():
    """The engine looks for batched gradients only in graphs recorded under a transform:
    nodes made inside vmap are marked, those made after it (the batching layer installed
    for good) are not, and each graph's gradients are right."""
    x = _randn(4, 3).requires_grad_()
    inside = []

    def f(r):
        y = (r * 2).sin()
        inside.append(y.grad_fn)
        return y.sum()

    out = vmap(f)(x)
    assert inside[0].transformed
    out.sum().backward()
    _close(x.grad, 2 * (2 * x.detach()).cos())
    after = (x * 3).sin().sum()
    assert not after.grad_fn.transformed
    x.grad = None
    after.backward()
    _close(x.grad, 3 * (3 * x.detach()).cos())


def test_jacobian_of_a_vmapped_function():
    from tocha.func import jacrev

    x = _randn(4, 3)
    jac = jacrev(vmap(lambda r: r.sin() * r.sum()))(x)
    expected = tocha.autograd.functional.jacobian(lambda a: a.sin() * a.sum(1, keepdim=True), x)
    _close(jac, expected)


def test_hessian_forward_over_reverse_and_reverse_over_reverse_agree():
    from tocha.func import jacfwd, jacrev

    w = _randn(5)

    def f(v):
        return (v.exp() * v[0]).sum() + (v.sin() @ v)

    _close(jacfwd(jacrev(f))(w), jacrev(jacrev(f))(w))


def test_a_plain_backward_runs_outside_any_transform_once_vmap_is_loaded():
    """Fused backward kernels (layer_norm's, attention's) are skipped under a transform: a
    backward with nothing batched must not turn the transforms on."""
    from tocha.library import GRAD_MODE

    seen = []
    x = _randn(3, 4).requires_grad_()
    y = F.layer_norm(x, (4,))
    y.register_hook(lambda g: seen.append(GRAD_MODE.transforms))
    y.sum().backward()
    assert seen == [0]


def test_debug_unwrap():
    seen = []

    def record(x):
        seen.append((tocha.func.debug_unwrap(x), tocha.func.debug_unwrap(x, recurse=False)))
        return x

    x = tocha.arange(24.0).view(2, 3, 4)
    vmap(vmap(record))(x)
    whole, inner = seen[0]
    assert type(whole) is tocha.Tensor and tocha.equal(whole, x)
    assert inner.shape == (3, 4)  # the outer level still batched
    plain = tocha.ones(2)
    assert tocha.func.debug_unwrap(plain) is plain


def test_empty_batch():
    """A batch of no examples maps to empty results, as PyTorch's (ops see a stand-in
    example; the per-example loop stacks nothing)."""
    empty = tocha.randn(0, 3)
    assert vmap(lambda a: a * 2)(empty).shape == (0, 3)
    assert vmap(lambda a: a.sum())(empty).shape == (0,)
    assert vmap(tocha.dot)(empty, empty).shape == (0,)
    assert vmap(tocha.func.grad(lambda a: a.sin().sum()))(empty).shape == (0, 3)
    assert vmap(lambda a, b: a @ b, in_dims=(0, None))(
        tocha.randn(0, 2, 3), tocha.randn(3, 4)
    ).shape == (0, 2, 4)
