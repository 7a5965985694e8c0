"""cross_entropy and nll_loss's common case ((N, C) scores, class indices, no weight, reduced)
takes a short path: the same values and gradients as the general path, and the general
path's errors and ignored targets."""

import numpy as np
import pytest

import tocha
import tocha.nn.functional as F


def _general(fn, x, t, reduction):
    """The same loss through the general path (a class weight of ones)."""
    return fn(x, t, weight=tocha.ones(x.shape[1], dtype=x.dtype), reduction=reduction)


@pytest.mark.parametrize("fn", [F.cross_entropy, F.nll_loss])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", [tocha.float32, tocha.float64])
@pytest.mark.parametrize("target_dtype", [tocha.int64, tocha.uint8])
def test_plain_path_matches_general_path(fn, reduction, dtype, target_dtype):
    rng = np.random.default_rng(0)
    x = tocha.from_numpy(rng.standard_normal((9, 6)) * 4).to(dtype).requires_grad_()
    t = tocha.tensor([0, 5, 2, 2, 1, 3, 0, 4, 5], dtype=target_dtype)
    loss = fn(x, t, reduction=reduction)
    (grad,) = tocha.autograd.grad(loss, x)
    want = _general(fn, x, t, reduction)
    (want_grad,) = tocha.autograd.grad(want, x)
    assert loss.dtype == dtype and loss.shape == ()
    tol = 1e-6 if dtype == tocha.float32 else 1e-12
    np.testing.assert_allclose(loss.item(), want.item(), rtol=tol)
    np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("fn", [F.cross_entropy, F.nll_loss])
@pytest.mark.parametrize("bad", [6, -1])
def test_plain_path_target_out_of_bounds(fn, bad):
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
        fn(tocha.zeros(3, 6), tocha.tensor([0, bad, 1]))


@pytest.mark.parametrize("fn", [F.cross_entropy, F.nll_loss])
def test_ignored_targets_take_the_general_path(fn):
    x = tocha.randn(4, 3, dtype=tocha.float64, requires_grad=True)
    t = tocha.tensor([0, -100, 2, 1])
    loss = fn(x, t)
    loss.backward()
    keep = tocha.tensor([0, 2, 3])
    want = fn(x.detach()[keep], t[keep])
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-12)
    assert (x.grad[1] == 0).all()


def test_plain_path_gradients_check():
    t = tocha.tensor([0, 2, 1])
    x = tocha.randn(3, 4, dtype=tocha.float64, requires_grad=True)
    assert tocha.autograd.gradcheck(lambda z: F.cross_entropy(z, t), (x,))
    assert tocha.autograd.gradgradcheck(lambda z: F.cross_entropy(z, t), (x,))
    assert tocha.autograd.gradcheck(lambda z: F.nll_loss(z, t, reduction="sum"), (x,))


@pytest.mark.parametrize("dtype", [tocha.float16, tocha.bfloat16])
def test_cross_entropy_reduced_precision_short_path(dtype):
    """Rows summed by a reduction rather than a matrix-vector product; bfloat16 takes the
    general path: both match float32's answer to their precision."""
    rng = np.random.default_rng(1)
    x32 = tocha.from_numpy(rng.standard_normal((7, 5)).astype(np.float32))
    t = tocha.tensor([0, 4, 2, 2, 1, 3, 0])
    x = x32.to(dtype).requires_grad_()
    loss = F.cross_entropy(x, t)
    loss.backward()
    ref = x32.to(dtype).float().requires_grad_()
    want = F.cross_entropy(ref, t)
    want.backward()
    assert loss.dtype == dtype and x.grad.dtype == dtype
    np.testing.assert_allclose(loss.float().item(), want.item(), rtol=2e-2)
    np.testing.assert_allclose(x.grad.float().numpy(), ref.grad.numpy(), atol=2e-2)


def test_empty_batch_mean_is_nan():
    x = tocha.zeros(0, 3, requires_grad=True)
    assert F.cross_entropy(x, tocha.zeros(0, dtype=tocha.int64)).isnan().item()


@pytest.mark.parametrize("shape", [(5, 7), (7, 5), (3, 1), (1, 4)])
def test_plain_path_of_strided_scores(shape):
    # the rows are found through flat indices: a transposed input and other shapes (the
    # cached row starts of one shape must not serve another)
    rng = np.random.default_rng(1)
    x = tocha.from_numpy(rng.standard_normal(shape[::-1])).t().requires_grad_()
    t = tocha.from_numpy(rng.integers(0, shape[1], shape[0]))
    loss = F.cross_entropy(x, t)
    loss.backward()
    want = _general(F.cross_entropy, x, t, "mean")
    (want_grad,) = tocha.autograd.grad(want, x)
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), want_grad.numpy(), rtol=1e-12, atol=1e-15)
