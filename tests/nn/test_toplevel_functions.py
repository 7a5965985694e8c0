"""The top-level neural-network functions (``tocha.conv2d``, ``tocha.embedding``,
``tocha.batch_norm``...: torch's signatures, some unlike nn.functional's) and the
nn.functional names added for issue 26 (fractional max pooling, gumbel_softmax, conv_tbc,
linear_cross_entropy, pdist, native_channel_shuffle), against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn.functional as F

_RNG = np.random.default_rng(5)
X = _RNG.standard_normal((2, 4, 6, 6))
SEQ = _RNG.standard_normal((2, 4, 9))
W2 = _RNG.standard_normal((3, 4, 3, 3))
W1 = _RNG.standard_normal((3, 4, 2))
BIAS = _RNG.standard_normal(3)
TABLE = _RNG.standard_normal((5, 3))
PROBS = _RNG.random((3, 4))
LOGITS = _RNG.standard_normal((3, 4))
TARGET = (_RNG.random((3, 4)) > 0.5).astype(np.float64)


def assert_tensor(got, want):
    """Same shape, dtype and values (a tocha tensor against a torch tensor)."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), np.asarray(want.detach()), rtol=1e-6, atol=1e-7)


def pair(torch, array_):
    return tocha.from_numpy(array_.copy()), torch.from_numpy(array_.copy())


def same_call(torch, name, *arrays, **kwargs):
    mine = [tocha.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in arrays]
    theirs = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in arrays]
    got = getattr(tocha, name)(*mine, **kwargs)
    want = getattr(torch, name)(*theirs, **kwargs)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            assert_tensor(g, w)
    else:
        assert_tensor(got, want)


@pytest.mark.parametrize(
    "name, arrays, kwargs",
    [
        ("conv1d", (SEQ, W1, BIAS), {"stride": 2, "padding": 1}),
        ("conv2d", (X, W2, BIAS), {"padding": 1}),
        ("conv_transpose1d", (SEQ, W1.transpose(1, 0, 2).copy()), {"stride": 2}),
        ("conv_transpose2d", (X, W2.transpose(1, 0, 2, 3).copy(), BIAS), {}),
        ("cosine_similarity", (LOGITS, PROBS), {"dim": 0}),
        ("pairwise_distance", (LOGITS, PROBS), {"p": 3.0}),
        ("pixel_shuffle", (X[:, :4],), {"upscale_factor": 2}),
        ("pixel_unshuffle", (X,), {"downscale_factor": 2}),
        ("prelu", (X, np.array([0.25])), {}),
        ("selu", (LOGITS,), {}),
        ("celu", (LOGITS,), {"alpha": 0.5}),
        ("threshold", (LOGITS, 0.1, -2.0), {}),
        ("hardshrink", (LOGITS,), {"lambd": 0.4}),
        ("rrelu", (LOGITS,), {}),
        ("channel_shuffle", (X, 2), {}),
        ("layer_norm", (X, (6, 6)), {"eps": 1e-3}),
        ("group_norm", (X, 2, np.ones(4), np.zeros(4)), {}),
        ("max_pool1d", (SEQ, 2), {}),
        ("max_pool2d", (X, 3, 2), {"padding": 1}),
        ("max_pool3d", (X, 2), {}),
        ("avg_pool1d", (SEQ, 3, 2), {"count_include_pad": False}),
        ("adaptive_avg_pool1d", (SEQ, 4), {}),
        ("adaptive_max_pool1d", (SEQ, 4), {}),
        ("max_pool1d_with_indices", (SEQ, 3), {}),
        ("constant_pad_nd", (LOGITS, (1, 2)), {"value": 0.5}),
        ("bilinear", (LOGITS, PROBS, _RNG.standard_normal((2, 4, 4))), {}),
        ("pdist", (LOGITS,), {"p": 1.0}),
    ],
)
def test_functions_with_torchs_top_level_signature(torch, name, arrays, kwargs):
    same_call(torch, name, *arrays, **kwargs)


def test_embedding_takes_weight_first(torch):
    (mt, tt), (mi, ti) = pair(torch, TABLE), pair(torch, np.array([[0, 2], [4, 2]]))
    assert_tensor(tocha.embedding(mt, mi), torch.embedding(tt, ti))
    assert_tensor(tocha.embedding(mt, mi, 2), torch.embedding(tt, ti, 2))


def test_normalization_in_torchs_argument_order(torch):
    (mx, tx), (mw, tw), (mb, tb) = (
        pair(torch, X),
        pair(torch, np.full(4, 1.5)),
        pair(torch, np.full(4, 0.2)),
    )
    for training in (True, False):
        (mm, tm), (mv, tv) = pair(torch, np.zeros(4)), pair(torch, np.ones(4))
        got = tocha.batch_norm(mx, mw, mb, mm, mv, training, 0.3, 1e-5, True)
        want = torch.batch_norm(tx, tw, tb, tm, tv, training, 0.3, 1e-5, True)
        assert_tensor(got, want)
        assert_tensor(mm, tm)
        assert_tensor(mv, tv)
    got = tocha.instance_norm(mx, mw, mb, None, None, True, 0.1, 1e-5, False)
    want = torch.instance_norm(tx, tw, tb, None, None, True, 0.1, 1e-5, False)
    assert_tensor(got, want)
    assert_tensor(
        tocha.layer_norm(mx, (6,), None, None, 1e-5, False),
        torch.layer_norm(tx, (6,), None, None, 1e-5, False),
    )


@pytest.mark.parametrize(
    "name", ["dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"]
)
def test_dropout_family(torch, name):
    mine, theirs = pair(torch, X)
    assert_tensor(getattr(tocha, name)(mine, 0.4, False), getattr(torch, name)(theirs, 0.4, False))
    out = getattr(tocha, name)(mine, 0.5, True)
    assert tuple(out.shape) == tuple(mine.shape)
    if name.startswith("feature"):
        # whole channels are dropped: each (n, c) plane is constant in its mask
        dropped = tocha.feature_dropout(tocha.ones(8, 16, 3), 0.5, True)
        per_channel = dropped.reshape(8, 16, 3)
        assert bool(((per_channel == per_channel[..., :1]).all()).item())
        assert set(np.unique(dropped.numpy()).tolist()) <= {0.0, 2.0}
    inplace = tocha.ones(4, 3)
    assert getattr(tocha, f"{name}_")(inplace, 0.2, False) is inplace


def test_losses_with_an_integer_reduction(torch):
    (ml, tl), (mt, tt) = pair(torch, LOGITS), pair(torch, TARGET)
    signs = np.where(TARGET > 0, 1.0, -1.0)
    (ms, ts) = pair(torch, signs[:, 0].copy())
    for reduction in (0, 1, 2):
        assert_tensor(
            tocha.binary_cross_entropy_with_logits(ml, mt, None, None, reduction),
            torch.binary_cross_entropy_with_logits(tl, tt, None, None, reduction),
        )
        assert_tensor(
            tocha.kl_div(ml.log_softmax(1), mt, reduction),
            torch.kl_div(tl.log_softmax(1), tt, reduction),
        )
        assert_tensor(
            tocha.hinge_embedding_loss(ml, pair(torch, signs)[0], 0.5, reduction),
            torch.hinge_embedding_loss(tl, torch.from_numpy(signs.copy()), 0.5, reduction),
        )
        assert_tensor(
            tocha.margin_ranking_loss(ml[:, 0], ml[:, 1], ms, 0.1, reduction),
            torch.margin_ranking_loss(tl[:, 0], tl[:, 1], ts, 0.1, reduction),
        )
        assert_tensor(
            tocha.cosine_embedding_loss(ml, mt, ms, 0.0, reduction),
            torch.cosine_embedding_loss(tl, tt, ts, 0.0, reduction),
        )
        assert_tensor(
            tocha.triplet_margin_loss(ml, mt, ml * 2, 1.0, 2, 1e-6, False, reduction),
            torch.triplet_margin_loss(tl, tt, tl * 2, 1.0, 2, 1e-6, False, reduction),
        )
        assert_tensor(
            tocha.poisson_nll_loss(ml, mt, True, False, 1e-8, reduction),
            torch.poisson_nll_loss(tl, tt, True, False, 1e-8, reduction),
        )
    # Every top-level loss reduces nothing by default (PyTorch's binding).
    assert_tensor(tocha.kl_div(ml, mt), torch.kl_div(tl, tt))
    assert_tensor(tocha.cosine_embedding_loss(ml, mt, ms), torch.cosine_embedding_loss(tl, tt, ts))
    pos = np.array([1.0, 2.0, 0.5, 3.0])
    assert_tensor(
        tocha.binary_cross_entropy_with_logits(ml, mt, None, pair(torch, pos)[0]),
        torch.binary_cross_entropy_with_logits(tl, tt, None, torch.from_numpy(pos.copy())),
    )


def test_fractional_max_pool(torch):
    (mx, tx), (ms, ts) = pair(torch, X), pair(torch, _RNG.random((2, 4, 2)))
    for kwargs in ({"output_size": 4}, {"output_size": (3, 5)}, {"output_ratio": (0.5, 0.5)}):
        got = F.fractional_max_pool2d(mx, 2, return_indices=True, _random_samples=ms, **kwargs)
        want = torch.nn.functional.fractional_max_pool2d(
            tx, 2, return_indices=True, _random_samples=ts, **kwargs
        )
        assert_tensor(got[0], want[0])
        assert_tensor(got[1], want[1])
    assert_tensor(
        F.fractional_max_pool2d(mx[0], (2, 3), 3, _random_samples=ms[:1]),
        torch.nn.functional.fractional_max_pool2d(tx[0], (2, 3), 3, _random_samples=ts[:1]),
    )
    cube = _RNG.standard_normal((1, 2, 5, 6, 7))
    (mc, tc), (m3, t3) = pair(torch, cube), pair(torch, _RNG.random((1, 2, 3)))
    got = F.fractional_max_pool3d_with_indices(mc, 2, (3, 4, 4), _random_samples=m3)
    want = torch.nn.functional.fractional_max_pool3d_with_indices(
        tc, 2, (3, 4, 4), _random_samples=t3
    )
    assert_tensor(got[0], want[0])
    assert_tensor(got[1], want[1])
    assert tuple(F.fractional_max_pool2d(mx, 3, output_ratio=(0.5, 0.7)).shape) == (2, 4, 3, 4)
    with pytest.raises(ValueError):
        F.fractional_max_pool2d(mx, 2)


def test_fractional_max_pool_gradient(torch):
    from tocha.autograd import gradcheck

    x = tocha.tensor(_RNG.permutation(72).reshape(1, 2, 6, 6) / 10.0, requires_grad=True)
    samples = tocha.tensor(_RNG.random((1, 2, 2)), dtype=tocha.float64)
    assert gradcheck(
        lambda t: F.fractional_max_pool2d(t, 2, 3, _random_samples=samples),
        [x],
        check_forward_ad=True,
    )


def test_gumbel_softmax():
    tocha.manual_seed(0)
    logits = tocha.tensor(np.log([[0.1, 0.2, 0.7]] * 4000), dtype=tocha.float64)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).numpy(), 1.0)
    hard = F.gumbel_softmax(logits, hard=True)
    assert set(np.unique(hard.numpy()).tolist()) <= {0.0, 1.0}
    np.testing.assert_allclose(hard.mean(0).numpy(), [0.1, 0.2, 0.7], atol=0.03)
    x = tocha.zeros(2, 3, requires_grad=True)
    F.gumbel_softmax(x, hard=True, dim=1).mul(tocha.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad is not None and tuple(x.grad.shape) == (2, 3)


def test_conv_tbc_linear_cross_entropy_native_channel_shuffle(torch):
    seq = _RNG.standard_normal((7, 2, 4))
    weight = _RNG.standard_normal((3, 4, 5))
    bias = _RNG.standard_normal(5)
    got = F.conv_tbc(*(tocha.from_numpy(a.copy()) for a in (seq, weight, bias)), 1)
    want = torch.nn.functional.conv_tbc(
        *(torch.from_numpy(a.copy()) for a in (seq, weight, bias)), 1
    )
    assert_tensor(got, want)
    (mi, ti), (mw, tw) = pair(torch, LOGITS), pair(torch, _RNG.standard_normal((5, 4)))
    (mt, tt) = pair(torch, np.array([0, 4, 2]))
    for kwargs in ({}, {"reduction": "sum", "label_smoothing": 0.1}):
        assert_tensor(
            F.linear_cross_entropy(mi, mw, mt, **kwargs),
            torch.nn.functional.linear_cross_entropy(ti, tw, tt, **kwargs),
        )
    mx, tx = pair(torch, X)
    assert_tensor(
        F.native_channel_shuffle(mx, 2), torch.nn.functional.native_channel_shuffle(tx, 2)
    )
    assert F.pdist is tocha.pdist


def test_tensor_methods_of_nn_functions(torch):
    mine, theirs = pair(torch, LOGITS)
    assert_tensor(mine.hardshrink(0.3), theirs.hardshrink(0.3))
    weight = np.array([0.2, 0.1, 0.3])
    assert_tensor(
        tocha.from_numpy(X[:, :3].copy()).prelu(tocha.from_numpy(weight)),
        torch.from_numpy(X[:, :3].copy()).prelu(torch.from_numpy(weight)),
    )
