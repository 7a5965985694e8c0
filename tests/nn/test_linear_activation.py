"""Linear, activation, flatten, embedding and dropout layers and their functional forms,
against torch.nn with identical weights: outputs, input and parameter gradients (train and
eval), gradcheck in float64 (reverse and forward mode, forward over reverse), forward-mode
tangents against torch.autograd.forward_ad, errors and reprs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tests.nn.forward_ad import assert_tangents_match, check_forward_over_reverse
from tocha.autograd import gradcheck, gradgradcheck


def _pair(torch, array, requires_grad=True):
    a = tocha.from_numpy(array.copy())
    b = torch.from_numpy(array.copy())
    if requires_grad and array.dtype.kind == "f":
        a.requires_grad_(True)
        b.requires_grad_(True)
    return a, b


def _close(a, b, tol=1e-5):
    expected = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    actual = a.detach().numpy()
    assert actual.shape == expected.shape
    assert str(actual.dtype) == str(expected.dtype)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def _copy_weights(ours, theirs, torch):
    state = {k: torch.from_numpy(v.detach().numpy().copy()) for k, v in ours.state_dict().items()}
    theirs.load_state_dict(state)


# (name, args, input shape, kwargs of forward); inputs standard normal, float32.
LAYERS = [
    ("ReLU", (), (4, 5)),
    ("ReLU6", (), (4, 5)),
    ("LeakyReLU", (0.2,), (4, 5)),
    ("PReLU", (), (4, 3, 2)),
    ("PReLU", (3, 0.1), (4, 3, 2)),
    ("RReLU", (0.1, 0.3), (4, 5)),
    ("ELU", (2.0,), (4, 5)),
    ("SELU", (), (4, 5)),
    ("CELU", (0.5,), (4, 5)),
    ("GELU", (), (4, 5)),
    ("GELU", ("tanh",), (4, 5)),
    ("SiLU", (), (4, 5)),
    ("Mish", (), (4, 5)),
    ("Softplus", (), (4, 5)),
    ("Softplus", (2.0, 1.0), (4, 5)),
    ("Softsign", (), (4, 5)),
    ("Softshrink", (0.3,), (4, 5)),
    ("Hardshrink", (0.3,), (4, 5)),
    ("Tanhshrink", (), (4, 5)),
    ("Hardtanh", (-0.5, 0.7), (4, 5)),
    ("Hardsigmoid", (), (4, 5)),
    ("Hardswish", (), (4, 5)),
    ("Sigmoid", (), (4, 5)),
    ("LogSigmoid", (), (4, 5)),
    ("Tanh", (), (4, 5)),
    ("Threshold", (0.1, 20.0), (4, 5)),
    ("GLU", (), (4, 6)),
    ("GLU", (0,), (4, 6)),
    ("Softmax", (1,), (4, 5)),
    ("LogSoftmax", (1,), (4, 5)),
    ("Softmin", (0,), (4, 5)),
    ("Softmax2d", (), (2, 3, 4, 5)),
    ("Softmax", (-1,), (2, 3, 4)),
    ("Identity", (3, "anything"), (4, 5)),
    ("Linear", (5, 3), (4, 5)),
    ("Linear", (5, 3, False), (2, 4, 5)),
    ("Linear", (5, 3), (5,)),
    ("Flatten", (), (2, 3, 4)),
    ("Flatten", (0, 1), (2, 3, 4)),
    ("Unflatten", (1, (2, 2)), (3, 4, 5)),
    ("Dropout", (0.3,), (4, 5)),
    ("Dropout1d", (), (2, 3, 4)),
    ("Dropout2d", (), (2, 3, 4, 4)),
    ("Dropout3d", (), (2, 3, 2, 2, 2)),
    ("AlphaDropout", (0.2,), (4, 5)),
    ("FeatureAlphaDropout", (), (2, 3, 4)),
]
RANDOM_IN_TRAINING = {
    "RReLU",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
}


@pytest.mark.parametrize("name,args,shape", LAYERS, ids=lambda v: str(v))
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_layer_matches_torch(torch, name, args, shape, training):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    _copy_weights(ours, theirs, torch)
    ours.train(training)
    theirs.train(training)
    assert repr(ours) == repr(theirs)
    if training and name in RANDOM_IN_TRAINING:
        return
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    a, b = _pair(torch, x)
    out_a, out_b = ours(a), theirs(b)
    _close(out_a, out_b)
    g = np.random.default_rng(1).standard_normal(tuple(out_b.shape)).astype(np.float32)
    out_a.backward(tocha.from_numpy(g))
    out_b.backward(torch.from_numpy(g))
    _close(a.grad, b.grad)
    for (key, p), q in zip(ours.named_parameters(), theirs.parameters()):
        _close(p.grad, q.grad), key


def test_bilinear_matches_torch(torch):
    ours, theirs = nn.Bilinear(3, 4, 2), torch.nn.Bilinear(3, 4, 2)
    _copy_weights(ours, theirs, torch)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(0)
    (a1, b1), (a2, b2) = (
        _pair(torch, rng.standard_normal((5, n)).astype(np.float32)) for n in (3, 4)
    )
    out_a, out_b = ours(a1, a2), theirs(b1, b2)
    _close(out_a, out_b)
    out_a.sum().backward()
    out_b.sum().backward()
    _close(a1.grad, b1.grad)
    _close(a2.grad, b2.grad)
    _close(ours.weight.grad, theirs.weight.grad)
    _close(ours.bias.grad, theirs.bias.grad)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"padding_idx": 1},
        {"padding_idx": -1},
        {"scale_grad_by_freq": True},
        {"max_norm": 1.0},
        {"max_norm": 1.5, "norm_type": 1.0},
    ],
)
def test_embedding_matches_torch(torch, kwargs):
    ours, theirs = nn.Embedding(6, 3, **kwargs), torch.nn.Embedding(6, 3, **kwargs)
    _copy_weights(ours, theirs, torch)
    assert repr(ours) == repr(theirs)
    idx = np.array([[0, 1, 1], [5, 2, 1]], dtype=np.int64)
    out_a, out_b = ours(tocha.from_numpy(idx)), theirs(torch.from_numpy(idx))
    _close(out_a, out_b)
    g = np.random.default_rng(1).standard_normal((2, 3, 3)).astype(np.float32)
    out_a.backward(tocha.from_numpy(g))
    out_b.backward(torch.from_numpy(g))
    _close(ours.weight.grad, theirs.weight.grad)
    _close(ours.weight, theirs.weight)


def test_embedding_from_pretrained(torch):
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    ours = nn.Embedding.from_pretrained(tocha.from_numpy(w.copy()))
    theirs = torch.nn.Embedding.from_pretrained(torch.from_numpy(w.copy()))
    assert repr(ours) == repr(theirs)
    assert ours.weight.requires_grad is False
    assert nn.Embedding.from_pretrained(tocha.from_numpy(w), freeze=False).weight.requires_grad
    _close(ours(tocha.tensor([2, 0])), theirs(torch.tensor([2, 0])))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("layout", ["2d", "offsets", "last_offset", "padding", "weights"])
def test_embedding_bag_matches_torch(torch, mode, layout):
    if layout == "weights" and mode != "sum":
        pytest.skip("per_sample_weights is for mode='sum' only")
    kwargs = {"mode": mode}
    if layout == "last_offset":
        kwargs["include_last_offset"] = True
    if layout == "padding":
        kwargs["padding_idx"] = 2
    ours, theirs = nn.EmbeddingBag(7, 3, **kwargs), torch.nn.EmbeddingBag(7, 3, **kwargs)
    _copy_weights(ours, theirs, torch)
    assert repr(ours) == repr(theirs)
    flat = np.array([1, 2, 4, 5, 4, 3, 2, 6], dtype=np.int64)
    args_a, args_b = (), ()
    if layout == "2d":
        flat = flat.reshape(2, 4)
    else:
        offsets = np.array([0, 2, 2, 5] if layout != "last_offset" else [0, 2, 5, 8])
        args_a, args_b = (tocha.from_numpy(offsets),), (torch.from_numpy(offsets),)
    if layout == "weights":
        w = np.random.default_rng(3).standard_normal(flat.shape).astype(np.float32)
        args_a, args_b = args_a + (tocha.from_numpy(w),), args_b + (torch.from_numpy(w),)
    out_a = ours(tocha.from_numpy(flat), *args_a)
    out_b = theirs(torch.from_numpy(flat), *args_b)
    _close(out_a, out_b)
    g = np.random.default_rng(1).standard_normal(tuple(out_b.shape)).astype(np.float32)
    out_a.backward(tocha.from_numpy(g))
    out_b.backward(torch.from_numpy(g))
    _close(ours.weight.grad, theirs.weight.grad)


# -- functional ops: values and dtypes --------------------------------------------------------
FUNCTIONAL = [
    ("softmax", {"dim": 0}),
    ("softmax", {"dim": 1, "dtype": "float64"}),
    ("log_softmax", {"dim": -1}),
    ("log_softmax", {"dim": 0, "dtype": "float64"}),
    ("softmin", {"dim": 1}),
    ("gelu", {"approximate": "tanh"}),
    ("elu", {"alpha": 0.3}),
    ("celu", {"alpha": 2.0}),
    ("selu", {}),
    ("leaky_relu", {"negative_slope": 0.3}),
    ("hardtanh", {"min_val": -0.2, "max_val": 0.4}),
    ("relu6", {}),
    ("silu", {}),
    ("mish", {}),
    ("softplus", {"beta": 3.0, "threshold": 2.0}),
    ("hardswish", {}),
    ("hardsigmoid", {}),
    ("logsigmoid", {}),
    ("softshrink", {"lambd": 0.2}),
    ("hardshrink", {}),
    ("threshold", {"threshold": 0.3, "value": -2.0}),
    ("normalize", {}),
    ("normalize", {"p": 1.0, "dim": 0}),
    ("glu", {"dim": 0}),
]


@pytest.mark.parametrize("name,kwargs", FUNCTIONAL, ids=lambda v: str(v))
def test_functional_matches_torch(torch, name, kwargs):
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32) * 3
    a, b = _pair(torch, x)
    kw_a = {k: getattr(tocha, v) if k == "dtype" else v for k, v in kwargs.items()}
    kw_b = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
    out_a, out_b = getattr(F, name)(a, **kw_a), getattr(torch.nn.functional, name)(b, **kw_b)
    _close(out_a, out_b)
    out_a.sum().backward()
    out_b.sum().backward()
    _close(a.grad, b.grad)


INPLACE = [
    "relu",
    "relu6",
    "elu",
    "selu",
    "celu",
    "leaky_relu",
    "hardtanh",
    "silu",
    "mish",
    "hardswish",
    "hardsigmoid",
    "threshold",
]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_forms(torch, name):
    extra = (0.1, 5.0) if name == "threshold" else ()
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    a, b = _pair(torch, x)
    ya, yb = a * 2, b * 2
    out_a = getattr(F, name)(ya, *extra, inplace=True)
    out_b = getattr(torch.nn.functional, name)(yb, *extra, inplace=True)
    assert out_a is ya
    _close(ya, yb)
    (out_a * out_a).sum().backward()
    (out_b * out_b).sum().backward()
    _close(a.grad, b.grad)


def test_softmax_implicit_dim_warns(torch):
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(tocha.ones(2, 3))
    _close(out, torch.softmax(torch.ones(2, 3), 1))


def test_one_hot(torch):
    idx = np.array([[0, 3], [2, 1]], dtype=np.int64)
    _close(F.one_hot(tocha.from_numpy(idx)), torch.nn.functional.one_hot(torch.from_numpy(idx)))
    _close(
        F.one_hot(tocha.from_numpy(idx), 6), torch.nn.functional.one_hot(torch.from_numpy(idx), 6)
    )


def test_distances(torch):
    rng = np.random.default_rng(0)
    (a1, b1), (a2, b2) = (_pair(torch, rng.standard_normal((4, 5))) for _ in range(2))
    tf = torch.nn.functional
    _close(F.cosine_similarity(a1, a2), tf.cosine_similarity(b1, b2))
    _close(F.cosine_similarity(a1, a2, dim=0), tf.cosine_similarity(b1, b2, dim=0))
    _close(F.pairwise_distance(a1, a2), tf.pairwise_distance(b1, b2))
    _close(
        F.pairwise_distance(a1, a2, p=1.0, keepdim=True),
        tf.pairwise_distance(b1, b2, p=1.0, keepdim=True),
    )
    (F.cosine_similarity(a1, a2).sum() + F.pairwise_distance(a1, a2).sum()).backward()
    (tf.cosine_similarity(b1, b2).sum() + tf.pairwise_distance(b1, b2).sum()).backward()
    _close(a1.grad, b1.grad)
    _close(a2.grad, b2.grad)


# -- gradcheck in float64 -----------------------------------------------------------------------
def _x(*shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape) * 2
    return tocha.from_numpy(x).requires_grad_(True)


GRADCHECKS = {
    "softmax": (lambda x: F.softmax(x, 1), True),
    "log_softmax": (lambda x: F.log_softmax(x, 0), True),
    "softmin": (lambda x: F.softmin(x, 1), True),
    "gelu": (F.gelu, True),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), True),
    "elu": (lambda x: F.elu(x, 0.7), True),
    "selu": (F.selu, True),
    "celu": (lambda x: F.celu(x, 1.5), True),
    "silu": (F.silu, True),
    "mish": (F.mish, True),
    "softplus": (lambda x: F.softplus(x, 2.0, 3.0), True),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), True),
    "hardtanh": (lambda x: F.hardtanh(x, -1.5, 1.5), True),
    "hardsigmoid": (F.hardsigmoid, True),
    "hardswish": (F.hardswish, True),
    "logsigmoid": (F.logsigmoid, True),
    "softshrink": (lambda x: F.softshrink(x, 0.3), True),
    "hardshrink": (lambda x: F.hardshrink(x, 0.3), True),
    "threshold": (lambda x: F.threshold(x, 0.1, 3.0), True),
    "tanhshrink": (F.tanhshrink, True),
    "softsign": (F.softsign, True),
    "glu": (lambda x: F.glu(x[:, :2], 1), True),
    "normalize": (F.normalize, True),
    "prelu": (lambda x: F.prelu(x, tocha.tensor([0.1, 0.2, 0.3], dtype=tocha.float64)), True),
    "rrelu_eval": (F.rrelu, True),
    "linear": (lambda x: F.linear(x, _x(5, 3, seed=1), _x(5, seed=2)), True),
    "linear_3d": (lambda x: F.linear(x.reshape(1, 3, 3)[:, :2], _x(4, 3, seed=1)), True),
    "bilinear": (lambda x: F.bilinear(x, x[:, :2], _x(2, 3, 2, seed=1), _x(2, seed=2)), True),
    "embedding": (lambda x: F.embedding(tocha.tensor([[0, 2], [2, 1]]), x), True),
    "embedding_bag_mean": (
        lambda x: F.embedding_bag(tocha.tensor([0, 2, 1, 2]), x, tocha.tensor([0, 1])),
        True,
    ),
    "embedding_bag_max": (
        lambda x: F.embedding_bag(tocha.tensor([[0, 2], [1, 2]]), x, mode="max"),
        False,
    ),
    "cosine_similarity": (lambda x: F.cosine_similarity(x, x.flip(0)), True),
    "pairwise_distance": (lambda x: F.pairwise_distance(x, x.flip(0)), True),
    "alpha_dropout_eval": (F.alpha_dropout, True),
    "dropout": (lambda x: F.dropout(x, 0.0), True),
    "dropout_reseeded": (lambda x: (tocha.manual_seed(0), F.dropout(x, 0.4))[1], True),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, second = GRADCHECKS[name]
    x = _x(3, 3)
    assert gradcheck(fn, (x,), check_forward_ad=True)
    if second:
        assert gradgradcheck(fn, (x,))
        assert check_forward_over_reverse(fn, (x,))


def test_gradcheck_softmax_backward_double_backward():
    x = _x(2, 4)
    for fn in (lambda t: F.softmax(t, -1) * t, lambda t: F.log_softmax(t, -1) * t):
        assert gradgradcheck(fn, (x,))
        assert check_forward_over_reverse(fn, (x,))


def test_forward_ad_gradcheck_of_linear_weight_bias_and_embedding_weight():
    x, w, b = _x(4, 3), _x(5, 3, seed=1), _x(5, seed=2)
    assert gradcheck(F.linear, (x, w, b), check_forward_ad=True)
    assert check_forward_over_reverse(F.linear, (x, w, b))
    idx = tocha.tensor([[0, 2], [2, 1]])
    for kwargs in ({}, {"padding_idx": 2}, {"scale_grad_by_freq": True}):
        assert gradcheck(
            lambda t, kw=kwargs: F.embedding(idx, t, **kw),
            (_x(3, 3),),
            check_forward_ad=True,
            check_backward_ad=not kwargs,
        )


def _f64(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape) * 2


def _functional(name, kwargs):
    def fn(lib, x):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        return getattr(lib.nn.functional, name)(x, **kw)

    return fn


# (id, fn(lib, *tensors), arrays): forward-mode tangents against torch.autograd.forward_ad
FORWARD = [
    (f"{name}{kwargs}", _functional(name, kwargs), [_f64(4, 6)]) for name, kwargs in FUNCTIONAL
]
FORWARD += [
    ("gelu", lambda L, x: L.nn.functional.gelu(x), [_f64(3, 4)]),
    ("prelu", lambda L, x, w: L.nn.functional.prelu(x, w), [_f64(2, 3, 2), _f64(3, seed=1)]),
    (
        "linear",
        lambda L, x, w, b: L.nn.functional.linear(x, w, b),
        [_f64(4, 3), _f64(5, 3, seed=1), _f64(5, seed=2)],
    ),
    ("linear_3d", lambda L, x, w: L.nn.functional.linear(x, w), [_f64(2, 4, 3), _f64(5, 3)]),
    (
        "bilinear",
        lambda L, a, b, w, c: L.nn.functional.bilinear(a, b, w, c),
        [_f64(4, 3), _f64(4, 2, seed=1), _f64(5, 3, 2, seed=2), _f64(5, seed=3)],
    ),
    (
        "embedding",
        lambda L, w, i: L.nn.functional.embedding(i, w, padding_idx=1),
        [_f64(5, 3), np.array([[0, 1], [4, 1]])],
    ),
    ("dropout_eval", lambda L, x: L.nn.functional.dropout(x, 0.3, training=False), [_f64(3, 4)]),
    ("alpha_dropout_eval", lambda L, x: L.nn.functional.alpha_dropout(x, 0.3), [_f64(3, 4)]),
]


@pytest.mark.parametrize("name,fn,arrays", FORWARD, ids=[case[0] for case in FORWARD])
def test_forward_ad_matches_torch(torch, name, fn, arrays):
    assert_tangents_match(torch, fn, arrays)


def test_dropout_forward_ad_uses_the_mask():
    x = tocha.ones(20, 30, dtype=tocha.float64)
    with tocha.autograd.forward_ad.dual_level():
        out = F.dropout(tocha.autograd.forward_ad.make_dual(x, 2 * x), 0.4)
        primal, tangent = tocha.autograd.forward_ad.unpack_dual(out)
    np.testing.assert_allclose(tangent.numpy(), 2 * primal.numpy())


# -- dropout statistics ------------------------------------------------------------------------
def test_dropout_training_statistics():
    x = tocha.ones(200, 500)
    out = F.dropout(x, 0.3)
    values = np.unique(out.numpy())
    np.testing.assert_allclose(values, [0.0, 1 / 0.7], rtol=1e-6)
    assert abs((out.numpy() == 0).mean() - 0.3) < 0.01
    channels = F.dropout2d(tocha.ones(50, 40, 3, 3), 0.5).numpy()
    assert (channels.reshape(2000, 9).std(axis=1) == 0).all()
    assert F.dropout(x, 1.0).sum().item() == 0
    assert F.dropout(x, 0.3, training=False) is x
    alpha = F.alpha_dropout(tocha.randn(400, 500), 0.2, training=True).numpy()
    assert abs(alpha.mean()) < 0.02 and abs(alpha.std() - 1) < 0.02


def test_dropout_gradient_uses_mask():
    x = tocha.ones(10, 10, requires_grad=True)
    out = F.dropout(x, 0.5)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), out.detach().numpy())


def test_rrelu_training_slopes():
    x = -tocha.ones(1000)
    out = F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert ((out <= -0.1) & (out >= -0.3)).all() and out.std() > 0.01


# -- errors --------------------------------------------------------------------------------------
ERRORS = [
    (lambda m: m.linear(m_ones(m, 2, 3), m_ones(m, 4, 5))),
    (lambda m: m.linear(m_ones(m, 2, 7, 3), m_ones(m, 4, 5))),
    (lambda m: m.dropout(m_ones(m, 3), 1.5)),
    (lambda m: m.dropout1d(m_ones(m, 2, 3, 4, 5))),
    (lambda m: m.one_hot(m_ones(m, 2))),
    (lambda m: m.one_hot(m_tensor(m, [-1]))),
    (lambda m: m.one_hot(m_tensor(m, [3]), 2)),
    (lambda m: m.embedding(m_tensor(m, [5]), m_ones(m, 3, 2))),
    (lambda m: m.embedding(m_ones(m, 1), m_ones(m, 3, 2))),
    (lambda m: m.softmax(m_ones(m, 3), 2)),
    (lambda m: m.softmax(m_tensor(m, [1, 2]), 0)),
    (lambda m: m.glu(m_ones(m, 3))),
    (lambda m: m.embedding_bag(m_tensor(m, [[1, 2]]), m_ones(m, 3, 2), m_tensor(m, [0]))),
    (lambda m: m.embedding_bag(m_tensor(m, [1, 2]), m_ones(m, 3, 2))),
    (lambda m: m.hardtanh(m_ones(m, 2), 1.0, 0.0)),
    (lambda m: m.gelu(m_ones(m, 2), approximate="fast")),
    (lambda m: m.softshrink(m_ones(m, 2), -1.0)),
]


def m_ones(m, *shape):
    return (tocha if m is F else m._torch).ones(*shape)


def m_tensor(m, data):
    return (tocha if m is F else m._torch).tensor(data)


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_match_torch(torch, index):
    torch.nn.functional._torch = torch
    fn = ERRORS[index]
    with pytest.raises(Exception) as theirs:
        fn(torch.nn.functional)
    with pytest.raises(type(theirs.value)) as ours:
        fn(F)
    assert str(ours.value).replace("tocha._tensor", "torch") == str(theirs.value)


def test_layer_construction_errors(torch):
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(1.5)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints"):
        nn.Unflatten(1, 4)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D"):
        nn.Softmax2d()(tocha.ones(2, 2))


def test_dropout2d_warns_on_2d_input():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.dropout2d(tocha.ones(2, 3))
    assert "Received a 2-D input to dropout2d" in str(caught[0].message)


def test_linear_default_init_bounds():
    layer = nn.Linear(100, 50)
    bound = 1 / 10
    assert layer.weight.abs().max().item() <= bound
    assert layer.bias.abs().max().item() <= bound
    assert layer.weight.std().item() == pytest.approx(bound / 3**0.5, rel=0.1)
    assert nn.Linear(3, 2, dtype=tocha.float64).weight.dtype == tocha.float64
