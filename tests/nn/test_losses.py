"""Loss layers against torch.nn, driven by one table: outputs, gradients of every floating input
and of the upstream gradient in train and eval modes, every reduction; float64 gradcheck in
reverse and forward mode (and gradgradcheck and forward over reverse where PyTorch has a double
backward) of every functional form; forward-mode tangents against torch.autograd.forward_ad;
errors; reprs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F
from tests.nn.forward_ad import assert_tangents_match, check_forward_over_reverse, tangents
from tocha.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def normal(*shape):
    return RNG.standard_normal(shape)


def uniform(*shape, low=0.05, high=0.95):
    return RNG.uniform(low, high, shape)


def softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def signs(*shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


def log_softmax(x, axis):
    return np.log(softmax(x, axis))


def no_kwargs(lib):
    return {}


def weight(values, **extra):
    """Keyword arguments holding a class weight tensor (and `extra` settings)."""
    return lambda lib: {"weight": lib.tensor(values), **extra}


def settings(**kwargs):
    return lambda lib: kwargs


W3, W4, W5 = (RNG.uniform(0.2, 2.0, n) for n in (3, 4, 5))
P3 = RNG.uniform(0.5, 3.0, 3)
CTC_LENGTHS = ((10, 8, 6), (3, 2, 0))

# (layer, constructor kwargs from the library, inputs: (array, differentiable) pairs,
#  reductions it takes, whether PyTorch has its double backward)
CASES = [
    ("L1Loss", no_kwargs, [(normal(4, 3), True), (normal(4, 3), True)], True),
    ("MSELoss", no_kwargs, [(normal(4, 3), True), (normal(4, 3), True)], True),
    ("SmoothL1Loss", settings(beta=0.5), [(normal(4, 3), True), (normal(4, 3), True)], True),
    ("SmoothL1Loss", settings(beta=0.0), [(normal(6), True), (normal(6), True)], True),
    ("HuberLoss", settings(delta=0.7), [(normal(4, 3), True), (normal(4, 3), True)], True),
    ("CrossEntropyLoss", no_kwargs, [(normal(6, 5), True), (RNG.integers(0, 5, 6), False)], True),
    (
        "CrossEntropyLoss",
        weight(W5, ignore_index=2, label_smoothing=0.15),
        [(normal(7, 5), True), (np.array([0, 2, 4, 1, 2, 3, 4]), False)],
        True,
    ),
    (
        "CrossEntropyLoss",
        weight(W5, label_smoothing=0.1),
        [(normal(2, 5, 3, 2), True), (RNG.integers(0, 5, (2, 3, 2)), False)],
        True,
    ),
    (
        "CrossEntropyLoss",
        settings(label_smoothing=0.3),
        [(normal(5), True), (np.array(3), False)],
        True,
    ),
    (
        "CrossEntropyLoss",
        weight(W5, label_smoothing=0.2),
        [(normal(4, 5), True), (softmax(normal(4, 5), 1), True)],
        True,
    ),
    (
        "CrossEntropyLoss",
        no_kwargs,
        [(normal(3, 5, 4), True), (softmax(normal(3, 5, 4), 1), True)],
        True,
    ),
    (
        "NLLLoss",
        weight(W5, ignore_index=1),
        [(normal(6, 5), True), (np.array([0, 1, 4, 3, 1, 2]), False)],
        True,
    ),
    (
        "NLLLoss",
        no_kwargs,
        [(normal(2, 5, 3, 2), True), (RNG.integers(0, 5, (2, 3, 2)), False)],
        True,
    ),
    ("NLLLoss", weight(W5), [(normal(2, 5, 3), True), (RNG.integers(0, 5, (2, 3)), False)], True),
    ("NLLLoss", no_kwargs, [(normal(5), True), (np.array(4), False)], True),
    ("BCELoss", no_kwargs, [(uniform(4, 3), True), (uniform(4, 3, low=0, high=1), True)], True),
    (
        "BCELoss",
        weight(uniform(3)),
        [(uniform(4, 3), True), (RNG.integers(0, 2, (4, 3)) * 1.0, True)],
        True,
    ),
    ("BCEWithLogitsLoss", no_kwargs, [(normal(4, 3) * 4, True), (uniform(4, 3), True)], True),
    (
        "BCEWithLogitsLoss",
        lambda lib: {"weight": lib.tensor(W3), "pos_weight": lib.tensor(P3)},
        [(normal(4, 3) * 4, True), (uniform(4, 3), True)],
        True,
    ),
    (
        "KLDivLoss",
        settings(reduction="batchmean"),
        [(log_softmax(normal(4, 5), 1), True), (softmax(normal(4, 5), 1), True)],
        True,
    ),
    (
        "KLDivLoss",
        settings(log_target=True),
        [(log_softmax(normal(4, 5), 1), True), (log_softmax(normal(4, 5), 1), True)],
        True,
    ),
    ("PoissonNLLLoss", no_kwargs, [(normal(4, 3), True), (uniform(4, 3, high=4.0), True)], True),
    (
        "PoissonNLLLoss",
        settings(log_input=False, full=True),
        [(uniform(4, 3, high=3.0), True), (uniform(4, 3, high=4.0), True)],
        True,
    ),
    (
        "GaussianNLLLoss",
        no_kwargs,
        [(normal(4, 3), True), (normal(4, 3), True), (uniform(4, 3, high=2.0), True)],
        True,
    ),
    (
        "GaussianNLLLoss",
        settings(full=True, eps=0.3),
        [(normal(4, 3), True), (normal(4, 3), True), (uniform(4, high=2.0), True)],
        True,
    ),
    (
        "CosineEmbeddingLoss",
        settings(margin=0.2),
        [(normal(6, 5), True), (normal(6, 5), True), (signs(6), False)],
        True,
    ),
    (
        "CosineEmbeddingLoss",
        no_kwargs,
        [(normal(5), True), (normal(5), True), (np.array(-1.0), False)],
        True,
    ),
    (
        "MarginRankingLoss",
        settings(margin=0.1),
        [(normal(6), True), (normal(6), True), (signs(6), True)],
        True,
    ),
    (
        "HingeEmbeddingLoss",
        settings(margin=0.5),
        [(normal(4, 3), True), (signs(4, 3), False)],
        True,
    ),
    (
        "MultiLabelMarginLoss",
        no_kwargs,
        [(normal(3, 4), True), (np.array([[3, 0, -1, 1], [1, 2, 3, -1], [0, 1, 2, 3]]), False)],
        False,
    ),
    (
        "MultiLabelMarginLoss",
        no_kwargs,
        [(normal(4), True), (np.array([2, -1, 0, 1]), False)],
        False,
    ),
    (
        "MultiLabelSoftMarginLoss",
        weight(uniform(4)),
        [(normal(3, 4), True), (RNG.integers(0, 2, (3, 4)) * 1.0, True)],
        True,
    ),
    ("MultiMarginLoss", no_kwargs, [(normal(5, 4), True), (RNG.integers(0, 4, 5), False)], False),
    (
        "MultiMarginLoss",
        weight(W4, p=2, margin=0.7),
        [(normal(5, 4), True), (RNG.integers(0, 4, 5), False)],
        False,
    ),
    ("MultiMarginLoss", no_kwargs, [(normal(4), True), (np.array(2), False)], False),
    ("MultiMarginLoss", no_kwargs, [(normal(4), True), (np.array([1]), False)], False),
    ("SoftMarginLoss", no_kwargs, [(normal(4, 3), True), (signs(4, 3), False)], True),
    (
        "TripletMarginLoss",
        no_kwargs,
        [(normal(5, 4), True), (normal(5, 4), True), (normal(5, 4), True)],
        True,
    ),
    (
        "TripletMarginLoss",
        settings(p=1.0, swap=True, margin=2.0),
        [(normal(5, 4), True), (normal(5, 4), True), (normal(5, 4), True)],
        True,
    ),
    (
        "TripletMarginWithDistanceLoss",
        lambda lib: {
            "distance_function": lambda a, b: 1.0 - lib.nn.functional.cosine_similarity(a, b),
            "swap": True,
            "margin": 0.5,
        },
        [(normal(5, 4), True), (normal(5, 4), True), (normal(5, 4), True)],
        True,
    ),
]


def _lib_inputs(lib, inputs):
    """The case's arrays as `lib` tensors (differentiable floating ones requiring grad)."""
    return [lib.tensor(a, requires_grad=grad) for a, grad in inputs]


def _run(lib, layer, kwargs, inputs, reduction, training):
    module = getattr(lib.nn, layer)(
        **kwargs(lib), **({"reduction": reduction} if reduction else {})
    )
    module.train(training)
    tensors = _lib_inputs(lib, inputs)
    out = module(*tensors)
    upstream = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
    (out * upstream).sum().backward()
    grads = [t.grad.numpy() if t.requires_grad else None for t in tensors]
    return out.detach().numpy(), grads, module


def _reductions(layer, kwargs):
    return [None] if "reduction" in kwargs(tocha) else ["none", "mean", "sum"]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_layer_matches_torch(torch, case, training):
    layer, kwargs, inputs, _ = case
    for reduction in _reductions(layer, kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, our_grads, _ = _run(tocha, layer, kwargs, inputs, reduction, training)
            theirs, their_grads, _ = _run(torch, layer, kwargs, inputs, reduction, training)
        assert ours.shape == theirs.shape, (layer, reduction)
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
        for mine, want in zip(our_grads, their_grads):
            if want is not None:
                np.testing.assert_allclose(mine, want, rtol=1e-9, atol=1e-12)


def _functional(layer, kwargs, reduction):
    """The loss as a function of the case's differentiable inputs (others fixed)."""
    return lambda *tensors: getattr(nn, layer)(**kwargs(tocha), reduction=reduction)(*tensors)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradcheck(case):
    layer, kwargs, inputs, double_backward = case
    for reduction in _reductions(layer, kwargs):
        tensors = _lib_inputs(tocha, inputs)
        mod = getattr(nn, layer)(**kwargs(tocha), **({"reduction": reduction} if reduction else {}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert gradcheck(mod, tuple(tensors), check_forward_ad=True)
            if double_backward:
                assert gradgradcheck(mod, tuple(tensors))


FORWARD_OVER_REVERSE = [c for c in CASES if c[3]]


@pytest.mark.parametrize("case", FORWARD_OVER_REVERSE, ids=[c[0] for c in CASES if c[3]])
def test_forward_over_reverse(case):
    layer, kwargs, inputs, _ = case
    for reduction in _reductions(layer, kwargs):
        tensors = _lib_inputs(tocha, inputs)
        mod = getattr(nn, layer)(**kwargs(tocha), **({"reduction": reduction} if reduction else {}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert check_forward_over_reverse(
                mod, tuple(tensors), differentiable=[grad for _, grad in inputs]
            )


# Losses whose forward mode PyTorch has not implemented (NotImplementedError there).
TORCH_WITHOUT_FORWARD_AD = {"MultiLabelMarginLoss", "MultiMarginLoss"}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_forward_ad_matches_torch(torch, case):
    layer, kwargs, inputs, _ = case
    if layer in TORCH_WITHOUT_FORWARD_AD:
        pytest.skip("PyTorch has no forward-mode AD for this loss")
    arrays = [np.asarray(a) for a, _ in inputs]
    rng = np.random.default_rng(100)
    dirs = [rng.standard_normal(a.shape) if grad else None for a, (_, grad) in zip(arrays, inputs)]
    for reduction in _reductions(layer, kwargs):
        extra = {"reduction": reduction} if reduction else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_tangents_match(
                torch,
                lambda lib, *t, extra=extra: getattr(lib.nn, layer)(**kwargs(lib), **extra)(*t),
                arrays,
                dirs,
            )


CLASS_WEIGHTED = ["nll_loss", "cross_entropy", "cross_entropy_smoothed", "binary_cross_entropy"]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("fn", CLASS_WEIGHTED)
def test_forward_ad_class_weight_is_a_constant(torch, fn, reduction):
    """As backward treats it (and PyTorch declares it for nll_loss and cross_entropy): a
    tangent of the weight adds nothing. PyTorch itself differentiates the weight through its
    label-smoothing composite and refuses a dual weight in binary_cross_entropy, so those two
    are compared with PyTorch without a weight tangent."""
    if fn == "binary_cross_entropy":
        x, t, w = uniform(2, 5), uniform(2, 5, low=0, high=1), uniform(2, 5)
        kwargs = {"reduction": reduction}
    else:
        x, t, w = normal(2, 5, 3), np.array([[0, 1, 4], [1, 2, 1]]), RNG.uniform(0.2, 2.0, 5)
        kwargs = {"reduction": reduction, "ignore_index": 2}
    if fn == "cross_entropy_smoothed":
        fn, kwargs["label_smoothing"] = "cross_entropy", 0.1

    def loss(lib, x, w, t):
        return getattr(lib.nn.functional, fn)(x, t, w, **kwargs)

    arrays = [x, w, t]
    dirs = [normal(*x.shape), normal(*w.shape), None]
    without = [dirs[0], None, None]
    np.testing.assert_array_equal(
        tangents(tocha, loss, arrays, dirs)[0], tangents(tocha, loss, arrays, without)[0]
    )
    torch_weight_constant = fn == "nll_loss" or (
        fn == "cross_entropy" and "label_smoothing" not in kwargs
    )
    assert_tangents_match(torch, loss, arrays, dirs if torch_weight_constant else without)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_repr_and_state(torch, case):
    layer, kwargs, _, _ = case
    ours, theirs = getattr(nn, layer)(**kwargs(tocha)), getattr(torch.nn, layer)(**kwargs(torch))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.reduction == theirs.reduction


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_float32_and_large(torch, dtype):
    x, t = normal(64, 100).astype(dtype) * 3, RNG.integers(0, 100, 64)
    ours = tocha.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    a = F.cross_entropy(ours, tocha.tensor(t), label_smoothing=0.1)
    b = torch.nn.functional.cross_entropy(theirs, torch.tensor(t), label_smoothing=0.1)
    a.backward()
    b.backward()
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert a.dtype == getattr(tocha, dtype)
    np.testing.assert_allclose(a.item(), b.item(), rtol=tol)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=tol, atol=tol)


def test_cross_entropy_is_one_node():
    x = tocha.randn(4, 5, requires_grad=True)
    loss = F.cross_entropy(x, tocha.tensor([0, 1, 2, 3]))
    assert loss.grad_fn.next_functions[0][0] is not None
    assert len([f for f, _ in loss.grad_fn.next_functions if f is not None]) == 1
    assert type(loss.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


def test_all_targets_ignored_gives_nan_and_zero_gradients(torch):
    x = normal(3, 5)
    t = np.array([1, 1, 1])
    for fn in ("cross_entropy", "nll_loss"):
        ours_x, theirs_x = tocha.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ours = getattr(F, fn)(ours_x, tocha.tensor(t), ignore_index=1)
        theirs = getattr(torch.nn.functional, fn)(theirs_x, torch.tensor(t), ignore_index=1)
        assert np.isnan(ours.item()) and np.isnan(theirs.item())
        ours.backward()
        theirs.backward()
        np.testing.assert_array_equal(ours_x.grad.numpy(), theirs_x.grad.numpy())


def _ctc_inputs(lib, padded: bool):
    steps, batch, classes = 12, 3, 5
    rng = np.random.default_rng(1)
    logits = lib.tensor(rng.standard_normal((steps, batch, classes)), requires_grad=True)
    il, tl = CTC_LENGTHS
    targets = np.array([[1, 2, 2], [3, 1, 0], [0, 0, 0]]) if padded else np.array([1, 2, 2, 3, 1])
    targets = targets.copy()
    targets[targets == 0] = 4
    return logits, lib.tensor(targets), lib.tensor(il), lib.tensor(tl)


@pytest.mark.parametrize("padded", [True, False], ids=["padded", "concatenated"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_matches_torch(torch, padded, reduction, zero_infinity):
    results = []
    for lib in (tocha, torch):
        logits, targets, il, tl = _ctc_inputs(lib, padded)
        lp = lib.nn.functional.log_softmax(logits, 2)
        if zero_infinity:
            il = lib.tensor([10, 1, 6])
        loss = lib.nn.CTCLoss(blank=0, reduction=reduction, zero_infinity=zero_infinity)(
            lp, targets, il, tl
        )
        loss.sum().backward()
        results.append((loss.detach().numpy(), logits.grad.numpy()))
    (ours, our_grad), (theirs, their_grad) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-8, atol=1e-10)


def test_ctc_loss_unbatched_and_blank(torch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((7, 4))
    results = []
    for lib in (tocha, torch):
        logits = lib.tensor(x, requires_grad=True)
        lp = lib.nn.functional.log_softmax(logits, 1)
        loss = lib.nn.functional.ctc_loss(
            lp, lib.tensor([0, 1, 1]), lib.tensor(7), lib.tensor(3), blank=3, reduction="none"
        )
        loss.backward()
        results.append((loss.detach().numpy(), logits.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-10)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-8, atol=1e-10)


def test_ctc_loss_gradcheck():
    logits, targets, il, tl = _ctc_inputs(tocha, True)

    def loss(logits):
        return F.ctc_loss(F.log_softmax(logits, 2), targets, il, tl, reduction="sum")

    assert gradcheck(loss, (logits,), check_forward_ad=True)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_forward_ad_of_any_log_probs(zero_infinity):
    """Forward mode gives the exact derivative by log_probs, normalised or not (the backward
    is PyTorch's, exact through a log_softmax only, so it is not checked here)."""
    logits, targets, il, tl = _ctc_inputs(tocha, True)
    if zero_infinity:  # the second target cannot fit in one step: an infinite loss, zeroed
        il = tocha.tensor([10, 1, 6])

    def loss(x):
        return F.ctc_loss(x, targets, il, tl, reduction="none", zero_infinity=zero_infinity)

    assert gradcheck(loss, (logits,), check_forward_ad=True, check_backward_ad=False)


ERRORS = [
    lambda lib: lib.nn.functional.cross_entropy(lib.zeros(3, 5), lib.tensor([1, 2, 5])),
    lambda lib: lib.nn.functional.nll_loss(lib.zeros(3, 5), lib.tensor([1, -100, -2])),
    lambda lib: lib.nn.functional.nll_loss(lib.zeros(2, 5, 3), lib.tensor([[1, 2, 7], [0] * 3])),
    lambda lib: lib.nn.functional.cross_entropy(lib.zeros(3, 5), lib.tensor([1.0, 2.0, 3.0])),
    lambda lib: lib.nn.functional.nll_loss(lib.zeros(3, 5), lib.tensor([1, 2, 3], dtype=lib.int32)),
    lambda lib: lib.nn.functional.cross_entropy(lib.zeros(3, 5), lib.tensor([1, 2])),
    lambda lib: lib.nn.functional.nll_loss(lib.zeros(3, 5), lib.zeros(3, 2, dtype=lib.long)),
    lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(3, 5), lib.tensor([1, 2, 3]), weight=lib.ones(4)
    ),
    lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(3, 5), lib.zeros(3, 5), weight=lib.ones(4)
    ),
    lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(3, 5), lib.tensor([1, 2, 3]), label_smoothing=1.5
    ),
    lambda lib: lib.nn.functional.cross_entropy(lib.zeros(3, 5), lib.zeros(3, 5), ignore_index=1),
    lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(3, 5), lib.tensor([1, 2, 3]), reduction="foo"
    ),
    lambda lib: lib.nn.functional.nll_loss(lib.zeros(3, 5, 2), lib.zeros(3, 3, dtype=lib.long)),
    lambda lib: lib.nn.functional.nll_loss(lib.zeros(3, 5, 2, 2), lib.zeros(3, 2, dtype=lib.long)),
    lambda lib: lib.nn.functional.nll_loss(
        lib.zeros(3, 5, 2, 2), lib.zeros(3, 2, 3, dtype=lib.long)
    ),
    lambda lib: lib.nn.functional.nll_loss(lib.zeros(5), lib.zeros(2, dtype=lib.long)),
    lambda lib: lib.nn.functional.nll_loss(lib.zeros(()), lib.tensor(0)),
    lambda lib: lib.nn.functional.nll_loss(lib.zeros(3, 5, dtype=lib.long), lib.tensor([1, 2, 3])),
    lambda lib: lib.nn.functional.nll_loss(
        lib.zeros(3, 5), lib.tensor([1, 2, 3]), weight=lib.ones(5, dtype=lib.float64)
    ),
    lambda lib: lib.nn.functional.binary_cross_entropy(lib.full((3,), 1.5), lib.ones(3)),
    lambda lib: lib.nn.functional.binary_cross_entropy(lib.full((3,), 0.5), lib.ones(2)),
    lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(lib.zeros(3), lib.ones(2)),
    lambda lib: lib.nn.functional.smooth_l1_loss(lib.zeros(3), lib.ones(3), beta=-1.0),
    lambda lib: lib.nn.functional.huber_loss(lib.zeros(3), lib.ones(3), delta=0.0),
    lambda lib: lib.nn.functional.mse_loss(lib.zeros(3), lib.ones(3), weight=lib.ones(2)),
    lambda lib: lib.nn.functional.gaussian_nll_loss(lib.zeros(3, 2), lib.ones(3, 2), lib.ones(4)),
    lambda lib: lib.nn.functional.gaussian_nll_loss(lib.zeros(3), lib.ones(3), -lib.ones(3)),
    lambda lib: lib.nn.functional.margin_ranking_loss(lib.zeros(3), lib.zeros(3), lib.zeros(3, 1)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(
        lib.zeros(3, 2), lib.zeros(3, 2), lib.zeros(3, 1)
    ),
    lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(3), lib.zeros(3), lib.zeros(3)),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1, 4])),
    lambda lib: lib.nn.functional.multi_margin_loss(
        lib.zeros(3, 4),
        lib.tensor([0, 1]),
    ),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1, 2]), p=3),
    lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.zeros(3, 4), lib.zeros(3, 3, dtype=lib.long)
    ),
    lambda lib: lib.nn.functional.triplet_margin_loss(
        lib.zeros(3, 4), lib.zeros(3, 4), lib.zeros(4)
    ),
    lambda lib: lib.nn.functional.triplet_margin_loss(
        lib.zeros(3, 4), lib.zeros(3, 4), lib.zeros(3, 4), margin=0.0
    ),
    lambda lib: lib.nn.TripletMarginLoss(margin=-1.0),
    lambda lib: lib.nn.MultiMarginLoss(p=3),
    lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
    lambda lib: lib.nn.HuberLoss(delta="1"),
    lambda lib: lib.nn.functional.kl_div(lib.zeros(3), lib.zeros(3), reduction="avg"),
    lambda lib: lib.nn.functional.ctc_loss(
        lib.zeros(5, 2, 3), lib.ones(2, 2, dtype=lib.long), (5, 6), (2, 2)
    ),
    lambda lib: lib.nn.functional.ctc_loss(
        lib.zeros(5, 2, 3), lib.ones(2, 2, dtype=lib.long), lib.tensor([5, 5]), lib.tensor([2, 3])
    ),
    lambda lib: lib.nn.functional.ctc_loss(
        lib.zeros(5, 2, 3), lib.ones(4, dtype=lib.long), (5, 5), (2, 3)
    ),
    lambda lib: lib.nn.functional.ctc_loss(
        lib.zeros(5, 2, 3), lib.ones(2, 2, dtype=lib.long), (5, 5, 5), (2, 2)
    ),
    lambda lib: lib.nn.functional.ctc_loss(
        lib.zeros(5, 2, 3), lib.ones(2, 2, dtype=lib.long), (5, 5), (2, 2), blank=3
    ),
    lambda lib: lib.nn.functional.multi_margin_loss(
        lib.zeros(3, 4), lib.tensor([0, 1, 2]), weight=lib.ones(3)
    ),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.zeros(3, 0), lib.zeros(3, dtype=lib.long)),
    lambda lib: lib.nn.functional.multilabel_margin_loss(lib.zeros(4), lib.tensor([0, 5, -1, 0])),
]


@pytest.mark.parametrize("make", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_torch(torch, make):
    with pytest.raises(Exception) as theirs:
        make(torch)
    with pytest.raises(Exception) as ours:
        make(tocha)
    assert ours.type is theirs.type
    assert str(ours.value).replace("tocha.Size", "torch.Size") == str(theirs.value)


def test_legacy_reduction_arguments(torch):
    for size_average, reduce, want in (
        (False, None, "sum"),
        (None, False, "none"),
        (True, True, "mean"),
    ):
        with pytest.warns(UserWarning, match=f"please use reduction='{want}' instead"):
            layer = nn.MSELoss(size_average=size_average, reduce=reduce)
        assert layer.reduction == want
        x, y = normal(3, 2), normal(3, 2)
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            ours = F.nll_loss(
                tocha.tensor(x), tocha.tensor([0, 1, 1]), size_average=size_average, reduce=reduce
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = torch.nn.functional.nll_loss(
                torch.tensor(x), torch.tensor([0, 1, 1]), size_average=size_average, reduce=reduce
            )
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
        assert F.mse_loss(tocha.tensor(x), tocha.tensor(y), reduction=want).shape == tuple(
            torch.nn.functional.mse_loss(torch.tensor(x), torch.tensor(y), reduction=want).shape
        )


def test_size_mismatch_warns():
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(tocha.zeros(3, 1), tocha.zeros(3))


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(tocha.zeros(3), tocha.zeros(3))


def test_weight_buffers_follow_the_module(torch):
    layer = nn.CrossEntropyLoss(weight=tocha.ones(3))
    assert [name for name, _ in layer.named_buffers()] == ["weight"]
    assert layer.double().weight.dtype == tocha.float64
    both = nn.BCEWithLogitsLoss(weight=tocha.ones(2), pos_weight=tocha.ones(2))
    assert list(both.state_dict()) == list(
        torch.nn.BCEWithLogitsLoss(weight=torch.ones(2), pos_weight=torch.ones(2)).state_dict()
    )


def test_bce_saturated_inputs_have_finite_gradients(torch):
    x = np.array([0.0, 1.0, 1e-30, 0.5])
    t = np.array([0.0, 1.0, 1.0, 0.3])
    grads = []
    for lib in (tocha, torch):
        xs = lib.tensor(x, requires_grad=True)
        lib.nn.functional.binary_cross_entropy(xs, lib.tensor(t)).backward()
        grads.append(xs.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_bce_with_logits_is_stable():
    x = tocha.tensor([1000.0, -1000.0], requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, tocha.tensor([0.0, 1.0]), reduction="none")
    loss.sum().backward()
    np.testing.assert_allclose(loss.detach().numpy(), [1000.0, 1000.0])
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -1.0])


def test_default_distance_is_a_pairwise_distance_submodule(torch):
    pytest.importorskip("tocha.nn.modules.distance")
    ours, theirs = nn.TripletMarginWithDistanceLoss(), torch.nn.TripletMarginWithDistanceLoss()
    assert repr(ours) == repr(theirs)
    a, p, n = normal(4, 3), normal(4, 3), normal(4, 3)
    np.testing.assert_allclose(
        ours(tocha.tensor(a), tocha.tensor(p), tocha.tensor(n)).item(),
        theirs(torch.tensor(a), torch.tensor(p), torch.tensor(n)).item(),
        rtol=1e-10,
    )
