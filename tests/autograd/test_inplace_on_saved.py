"""Changing an op's output or input in place after the op, then backward: allowed where
PyTorch's derivative does not save that tensor (the output of a division, a norm layer, a
pooling with indices...), refused with PyTorch's error where it does (exp, softmax, a
tensor exponent's pow...). Gradients are checked against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import tocha

RNG = np.random.default_rng(0)
X = RNG.uniform(0.2, 0.9, (2, 4, 3)).astype(np.float32)


def _nn(lib):
    return lib.nn.functional


# (id, f(lib, x) -> a tensor computed from x, which is then changed in place)
ALLOWED = [
    ("div_scalar", lambda m, x: x / 2),
    ("div_frozen_tensor", lambda m, x: x / m.full((3,), 3.0)),
    ("pow_scalar", lambda m, x: x.pow(2)),
    ("pow_half", lambda m, x: x**0.5),
    ("logaddexp", lambda m, x: m.logaddexp(x, x * 2)),
    ("logaddexp2", lambda m, x: m.logaddexp2(x, x * 2)),
    ("erfinv", lambda m, x: m.erfinv(x * 0.5)),
    ("frexp", lambda m, x: m.frexp(x)[0]),
    ("max_dim", lambda m, x: x.max(1)[0]),
    ("min_dim", lambda m, x: x.min(-1).values),
    ("median_dim", lambda m, x: x.median(1).values),
    ("sort", lambda m, x: x.sort(1)[0]),
    ("topk", lambda m, x: x.topk(2, 1)[0]),
    ("kthvalue", lambda m, x: x.kthvalue(2, 1)[0]),
    ("cummax", lambda m, x: x.cummax(1)[0]),
    ("max_pool1d", lambda m, x: _nn(m).max_pool1d(x, 2)),
    ("adaptive_max_pool1d", lambda m, x: _nn(m).adaptive_max_pool1d(x, 2)),
    ("dropout", lambda m, x: _nn(m).dropout(x, 0.0)),
    ("layer_norm", lambda m, x: _nn(m).layer_norm(x, (3,))),
    ("group_norm", lambda m, x: _nn(m).group_norm(x, 2)),
    ("batch_norm", lambda m, x: _nn(m).batch_norm(x, None, None, training=True)),
    ("instance_norm", lambda m, x: _nn(m).instance_norm(x)),
    ("normalize", lambda m, x: _nn(m).normalize(x, dim=1)),
    ("softsign", lambda m, x: _nn(m).softsign(x)),
    (
        "cross_entropy_none",
        lambda m, x: _nn(m).cross_entropy(x, m.tensor([[0, 1, 2], [3, 0, 1]]), reduction="none"),
    ),
]

REFUSED = [
    ("exp", lambda m, x: x.exp()),
    ("sigmoid", lambda m, x: x.sigmoid()),
    ("softmax", lambda m, x: x.softmax(1)),
    ("pow_tensor_exponent", lambda m, x: x.pow(m.full((3,), 2.0, requires_grad=True))),
    ("hypot", lambda m, x: m.hypot(x, x * 2)),
    ("prod", lambda m, x: x.prod(1)),
    ("cumprod", lambda m, x: x.cumprod(1)),
    ("logsumexp", lambda m, x: x.logsumexp(1)),
    ("amax", lambda m, x: x.amax(1)),
]


def _grad_after_inplace(lib, fn):
    x = lib.from_numpy(X.copy()).requires_grad_()
    y = fn(lib, x * 1)
    y.mul_(2)
    _weighted_sum(lib, y).backward()
    return x.grad


def _weighted_sum(lib, y):
    """A loss whose gradient does not cancel through a normalization."""
    weights = np.random.default_rng(2).standard_normal(tuple(y.shape)).astype(np.float32)
    return (y * lib.from_numpy(weights)).sum()


@pytest.mark.parametrize("fn", [c[1] for c in ALLOWED], ids=[c[0] for c in ALLOWED])
def test_output_changed_in_place_still_differentiates(fn, torch):
    np.testing.assert_allclose(
        _grad_after_inplace(tocha, fn).numpy(),
        _grad_after_inplace(torch, fn).numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("fn", [c[1] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_output_saved_by_the_derivative_is_refused(fn):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _grad_after_inplace(tocha, fn)


def _input_changed(lib, other_requires_grad):
    x = lib.from_numpy(X.copy()).requires_grad_()
    w = lib.full((3,), 3.0, requires_grad=other_requires_grad)
    h = x * 1
    y = h / w
    h.add_(1)
    y.sum().backward()
    return x.grad


def test_division_saves_its_numerator_only_for_the_divisor_gradient(torch):
    np.testing.assert_allclose(
        _input_changed(tocha, False).numpy(), _input_changed(torch, False).numpy()
    )
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _input_changed(tocha, True)


def test_batch_norm_then_inplace_residual_and_relu(torch):
    """ResNet's ``out = bn(conv(x)); out += identity; relu_(out)``."""
    grads = []
    for lib in (tocha, torch):
        conv = lib.nn.Conv2d(2, 2, 3, padding=1, bias=False)
        with lib.no_grad():
            conv.weight.copy_(lib.from_numpy(CONV_WEIGHT.copy()))
        bn = lib.nn.BatchNorm2d(2)
        x = lib.from_numpy(RNG_IMAGES.copy()).requires_grad_()
        out = bn(conv(x))
        out += x
        out = lib.nn.functional.relu(out, inplace=True)
        _weighted_sum(lib, out).backward()
        grads.append((x.grad.numpy(), conv.weight.grad.numpy(), bn.weight.grad.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


RNG_IMAGES = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype(np.float32)
CONV_WEIGHT = np.random.default_rng(3).uniform(-0.3, 0.3, (2, 2, 3, 3)).astype(np.float32)


def _frozen_input_changed(lib, kind):
    x = lib.from_numpy(X[0].copy()).requires_grad_()
    w = lib.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3) / 10)
    h = x * 2
    products = {
        "linear": lambda: lib.nn.functional.linear(h, w),
        "matmul": lambda: h @ w.T,
        "mul": lambda: h * w[0],
        "mul_on_the_left": lambda: w[1] * h,
    }
    y = products[kind]()
    h.add_(1)
    y.sum().backward()
    return x.grad


@pytest.mark.parametrize("kind", ["linear", "matmul", "mul", "mul_on_the_left"])
def test_a_frozen_weights_product_does_not_keep_its_input(torch, kind):
    """PyTorch saves a product's input only for the weight's gradient."""
    np.testing.assert_allclose(
        _frozen_input_changed(tocha, kind).numpy(), _frozen_input_changed(torch, kind).numpy()
    )


def test_a_product_keeps_the_factor_the_other_gradient_needs():
    """The frozen factor is what the wanted gradient reads: changing it is refused."""
    x = tocha.from_numpy(X[0].copy()).requires_grad_()
    w = tocha.from_numpy(X[1].copy())
    y = x * 2 * w
    w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
