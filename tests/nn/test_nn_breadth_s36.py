"""nn classes added in session 36, against torch.nn: the lazy modules (LazyLinear,
LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*) with their uninitialized
parameters and buffers, FractionalMaxPool2d/3d, AdaptiveLogSoftmaxWithLoss, SyncBatchNorm
and nn.utils.parametrizations.orthogonal."""

from __future__ import annotations

import copy
import pickle
import types

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tocha.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from tocha.nn.utils.parametrizations import orthogonal

# -- lazy modules -----------------------------------------------------------------------------

LAZY = [
    ("LazyLinear", (3,), {}, (2, 5)),
    ("LazyLinear", (4,), {"bias": False}, (2, 3, 6)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv2d", (4, 3), {"stride": 2, "groups": 2}, (2, 6, 7, 7)),
    ("LazyConv2d", (4, 3), {"bias": False}, (3, 7, 7)),
    ("LazyConv3d", (2, 2), {"padding_mode": "reflect", "padding": 1}, (1, 2, 4, 4, 4)),
    ("LazyConvTranspose1d", (3, 3), {"stride": 2}, (2, 4, 5)),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2, "output_padding": 1, "stride": 2}, (1, 6, 5, 5)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), {"affine": False}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"momentum": None, "bias": False}, (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 3, 2)),
]


def _state(lib, module):
    lazy = lib.nn.parameter.is_lazy
    return [(k, lazy(v)) for k, v in module.state_dict().items()]


def _dtype(t) -> str:
    return str(t.dtype).split(".")[-1]


@pytest.mark.parametrize(
    "name,args,kwargs,shape", LAZY, ids=[f"{r[0]}-{i}" for i, r in enumerate(LAZY)]
)
def test_lazy_module_matches_torch(torch, name, args, kwargs, shape):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert _state(tocha, ours) == _state(torch, theirs)
    assert ours.has_uninitialized_params() == theirs.has_uninitialized_params()
    assert [(n, repr(p)) for n, p in ours.named_parameters()] == [
        (n, repr(p)) for n, p in theirs.named_parameters()
    ]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ours(tocha.from_numpy(x))
    theirs(torch.from_numpy(x))
    assert ours._get_name() == theirs._get_name() == name[4:]
    assert repr(ours) == repr(theirs)
    assert not hasattr(ours, "has_uninitialized_params")
    assert not hasattr(ours, "_initialize_hook") and not ours._forward_pre_hooks
    assert [(n, tuple(p.shape), _dtype(p)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape), _dtype(p)) for n, p in theirs.named_parameters()
    ]
    # Same parameters and statistics, same outputs and gradients from then on.
    ours.load_state_dict(
        {k: tocha.from_numpy(v.numpy().copy()) for k, v in theirs.state_dict().items()}
    )
    xo, xt = tocha.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
    out_o, out_t = ours(xo), theirs(xt)
    np.testing.assert_allclose(out_o.detach().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-5)
    out_o.sum().backward()
    out_t.sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-5)


def test_lazy_parameters_initialize_like_the_layer():
    tocha.manual_seed(0)
    lazy = nn.LazyLinear(3)
    lazy(tocha.zeros(2, 40))
    bound = 1 / np.sqrt(40)
    assert np.abs(lazy.weight.detach().numpy()).max() <= bound
    assert np.abs(lazy.weight.detach().numpy()).max() > bound / 2
    norm = nn.LazyBatchNorm2d()
    norm.eval()
    norm(tocha.zeros(1, 4, 2, 2))
    np.testing.assert_array_equal(norm.weight.detach().numpy(), np.ones(4, np.float32))
    np.testing.assert_array_equal(norm.running_var.numpy(), np.ones(4, np.float32))
    assert norm.num_batches_tracked.item() == 0


def test_lazy_dtype_and_device_follow_the_module(torch):
    for lib in (tocha, torch):
        m = lib.nn.LazyLinear(3)
        m.double()
        assert _dtype(m.weight) == "float64" and m.has_uninitialized_params()
        assert repr(m.weight) == "<UninitializedParameter>"
        assert _dtype(m(lib.ones(2, 4, dtype=lib.float64))) == "float64"
        m = lib.nn.LazyConv1d(2, 1, dtype=lib.float64)
        assert _dtype(m(lib.ones(1, 3, 2, dtype=lib.float64))) == "float64"


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type and message are what is compared
        return type(exc).__name__, str(exc)
    return None


LAZY_ERRORS = [
    ("LazyConv2d", (4, 3), {"groups": 2}, (1, 3, 5, 5)),
    ("LazyConv2d", (4, 3), {}, (3, 5)),
    ("LazyConvTranspose1d", (4, 3), {}, (1, 2, 3, 5)),
    ("LazyBatchNorm2d", (), {}, (4, 3)),
    ("LazyInstanceNorm1d", (), {}, (3, 7)),
]


@pytest.mark.parametrize(
    "name,args,kwargs,shape", LAZY_ERRORS, ids=[f"{r[0]}-{i}" for i, r in enumerate(LAZY_ERRORS)]
)
def test_lazy_errors_match_torch(torch, name, args, kwargs, shape):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    x = np.zeros(shape, np.float32)
    got = _error(lambda: ours(tocha.from_numpy(x)))
    want = _error(lambda: theirs(torch.from_numpy(x)))
    assert got == want and got is not None
    assert ours._get_name() == theirs._get_name()


def test_uninitialized_tensor_uses_match_torch(torch):
    """Shape access and ops raise as PyTorch's; dtype, device, requires_grad answer."""
    ours = UninitializedParameter()
    theirs = torch.nn.parameter.UninitializedParameter()
    assert repr(ours) == repr(theirs) == "<UninitializedParameter>"
    assert (ours.requires_grad, ours.is_leaf, ours.grad) == (
        theirs.requires_grad,
        theirs.is_leaf,
        theirs.grad,
    )
    assert _dtype(ours) == _dtype(theirs)
    assert str(ours.device) == str(theirs.device)
    assert isinstance(ours, nn.Parameter) and is_lazy(ours)
    assert _error(lambda: ours.shape) == _error(lambda: theirs.shape)
    for use in (
        lambda p: p + 1,
        lambda p: p.numel(),
        lambda p: p.sum(),
        lambda p: p.detach(),
        lambda p: p.requires_grad_(False),
    ):
        got = _error(lambda use=use: use(ours))
        want = _error(lambda use=use: use(theirs))
        assert got[0] == want[0] == "ValueError"
        assert "uninitialized parameter" in got[1]
    assert _error(ours.share_memory_) == _error(theirs.share_memory_)
    b, tb = UninitializedBuffer(), torch.nn.parameter.UninitializedBuffer()
    assert (repr(b), b.requires_grad) == (repr(tb), tb.requires_grad)
    assert isinstance(tocha.nn.UninitializedBuffer(), tocha.Tensor)


def test_uninitialized_buffer_assignment_matches_torch(torch):
    """Assigned as an attribute it is registered as a buffer, persistent or not as made."""

    def registered(lib):
        made = lib.nn.parameter.UninitializedBuffer
        fresh, declared, explicit = lib.nn.Module(), lib.nn.Module(), lib.nn.Module()
        fresh.x = made(persistent=False)
        declared.register_buffer("x", None)
        declared.x = made(persistent=False)
        explicit.register_buffer("x", made(persistent=False))
        kept = lib.nn.Module()
        kept.x = made()
        return [
            (
                list(m._buffers),
                sorted(m._non_persistent_buffers_set),
                list(m.state_dict(keep_vars=True)),
            )
            for m in (fresh, declared, explicit, kept)
        ]

    assert registered(tocha) == registered(torch)
    b = UninitializedBuffer(persistent=False)
    for other in (copy.deepcopy(b), pickle.loads(pickle.dumps(b)), b.double()):
        assert is_lazy(other) and not other.persistent
    assert UninitializedBuffer().persistent


def test_materialize_matches_torch(torch):
    seen = []
    for lib in (tocha, torch):
        mod = lib.nn.parameter
        p = mod.UninitializedParameter(requires_grad=False, dtype=lib.float64)
        p.materialize((2, 3))
        q = mod.UninitializedParameter()
        q.materialize(4, dtype=lib.float16)
        b = mod.UninitializedBuffer()
        b.materialize((2,))
        seen.append(
            [(mod.is_lazy(t), tuple(t.shape), _dtype(t), t.requires_grad) for t in (p, q, b)]
        )
        if lib is tocha:
            assert type(p) is type(q) is nn.Parameter and type(b) is tocha.Tensor
    assert seen[0] == seen[1]
    assert seen[0][0] == (False, (2, 3), "float64", False)


def test_lazy_state_dict_round_trips(torch):
    # An uninitialized module's state dict holds the uninitialized tensors themselves.
    for lib in (tocha, torch):
        m = lib.nn.LazyLinear(3)
        assert m.state_dict()["weight"] is m.weight
        assert repr(lib.nn.LazyLinear(3).load_state_dict(m.state_dict())) == (
            "<All keys matched successfully>"
        )
    # Loading initialized tensors materializes the lazy ones but keeps the lazy class.
    ours, theirs = nn.LazyLinear(3), torch.nn.LazyLinear(3)
    ours.load_state_dict(nn.Linear(5, 3).state_dict())
    theirs.load_state_dict(torch.nn.Linear(5, 3).state_dict())
    assert ours._get_name() == theirs._get_name() == "LazyLinear"
    assert tuple(ours.weight.shape) == tuple(theirs.weight.shape) == (3, 5)
    ours(tocha.zeros(2, 5))
    theirs(torch.zeros(2, 5))
    assert repr(ours) == repr(theirs)
    # An uninitialized tensor loaded into an initialized one cannot be.
    got = _error(lambda: nn.Linear(5, 3).load_state_dict(nn.LazyLinear(3).state_dict()))
    want = _error(
        lambda: torch.nn.Linear(5, 3).load_state_dict(torch.nn.LazyLinear(3).state_dict())
    )
    assert got == want and got[0] == "RuntimeError"
    ours, theirs = nn.LazyLinear(3), torch.nn.LazyLinear(3)
    ours.load_state_dict(nn.Linear(5, 3).state_dict())
    theirs.load_state_dict(torch.nn.Linear(5, 3).state_dict())
    got, want = _error(lambda: ours(tocha.zeros(1, 7))), _error(lambda: theirs(torch.zeros(1, 7)))
    assert got == want and got[0] == "AssertionError"


def test_lazy_module_with_an_optimizer():
    m = nn.LazyLinear(2)
    opt = tocha.optim.SGD(m.parameters(), lr=0.5)
    x = tocha.ones(3, 4)
    m(x)
    before = m.weight.detach().clone()
    m(x).sum().backward()
    opt.step()
    np.testing.assert_allclose(
        m.weight.detach().numpy(), before.numpy() - 0.5 * 3, rtol=1e-6, atol=1e-6
    )


def test_lazy_module_copies_and_pickles():
    m = nn.LazyConv2d(3, 1)
    for copied in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(copied) is nn.LazyConv2d and copied.has_uninitialized_params()
        assert copied(tocha.zeros(1, 5, 2, 2)).shape == (1, 3, 2, 2)
        assert type(copied) is nn.Conv2d and copied.in_channels == 5
    assert type(m) is nn.LazyConv2d and m.has_uninitialized_params()


def test_lazy_mixin_contract(torch):
    class Custom(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = UninitializedParameter()

        def forward(self, x):
            return x

    class Partial(Custom):
        def initialize_parameters(self, x):
            pass

    assert _error(lambda: Custom()(tocha.ones(1))) == (
        "NotImplementedError",
        "initialize_parameters is not implemented for Custom",
    )
    assert _error(lambda: Partial()(tocha.ones(1))) == (
        "RuntimeError",
        "module Partial has not been fully initialized",
    )
    m = nn.LazyLinear(2)
    assert _error(m.share_memory) == _error(torch.nn.LazyLinear(2).share_memory)


# -- fractional max pooling -------------------------------------------------------------------

FRACTIONAL = [
    ("FractionalMaxPool2d", (3,), {"output_size": (5, 4)}, (2, 3, 10, 9)),
    ("FractionalMaxPool2d", (2,), {"output_ratio": 0.5, "return_indices": True}, (3, 8, 9)),
    ("FractionalMaxPool3d", ((2, 2, 3),), {"output_ratio": (0.5, 0.6, 0.5)}, (1, 2, 6, 7, 8)),
    ("FractionalMaxPool3d", (2,), {"output_size": 3, "return_indices": True}, (2, 6, 6, 7)),
]


@pytest.mark.parametrize(
    "name,args,kwargs,shape", FRACTIONAL, ids=[f"{r[0]}-{i}" for i, r in enumerate(FRACTIONAL)]
)
def test_fractional_max_pool_matches_torch(torch, name, args, kwargs, shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    dims = 2 if name.endswith("2d") else 3
    batch = shape[0] if len(shape) == dims + 2 else 1
    channels = shape[-dims - 1]
    samples = rng.random((batch, channels, dims))
    ours = getattr(nn, name)(*args, **kwargs, _random_samples=tocha.from_numpy(samples))
    theirs = getattr(torch.nn, name)(*args, **kwargs, _random_samples=torch.from_numpy(samples))
    assert repr(ours) == repr(theirs)
    assert (ours.kernel_size, ours.output_size, ours.output_ratio) == (
        theirs.kernel_size,
        theirs.output_size,
        theirs.output_ratio,
    )
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_random_samples"]
    xo, xt = tocha.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
    out_o, out_t = ours(xo), theirs(xt)
    if kwargs.get("return_indices"):
        (out_o, idx_o), (out_t, idx_t) = out_o, out_t
        np.testing.assert_array_equal(idx_o.numpy(), idx_t.numpy())
    np.testing.assert_array_equal(out_o.detach().numpy(), out_t.detach().numpy())
    g = rng.standard_normal(tuple(out_t.shape))
    out_o.backward(tocha.from_numpy(g))
    out_t.backward(torch.from_numpy(g))
    np.testing.assert_array_equal(xo.grad.numpy(), xt.grad.numpy())


def test_fractional_max_pool_random_starts_and_gradcheck():
    m = nn.FractionalMaxPool2d(2, output_ratio=(0.5, 0.5))
    assert m._random_samples is None and not m.state_dict()
    x = tocha.randn(2, 3, 10, 8, dtype=tocha.float64, requires_grad=True)
    assert m(x).shape == (2, 3, 5, 4)
    samples = tocha.rand(2, 3, 2, dtype=tocha.float64)
    fixed = nn.FractionalMaxPool2d(2, output_size=4, _random_samples=samples)
    assert tocha.autograd.gradcheck(fixed, (x,))


FRACTIONAL_ERRORS = [
    ("FractionalMaxPool2d", {"kernel_size": 2}),
    ("FractionalMaxPool3d", {"kernel_size": 2}),
    ("FractionalMaxPool2d", {"kernel_size": 2, "output_size": 3, "output_ratio": 0.5}),
    ("FractionalMaxPool2d", {"kernel_size": 2, "output_ratio": 1.5}),
    ("FractionalMaxPool3d", {"kernel_size": 2, "output_ratio": 0.0}),
    ("FractionalMaxPool2d", {"kernel_size": 2, "output_ratio": (0.5, 1.0)}),
]


@pytest.mark.parametrize(
    "name,kwargs", FRACTIONAL_ERRORS, ids=[str(i) for i in range(len(FRACTIONAL_ERRORS))]
)
def test_fractional_max_pool_errors_match_torch(torch, name, kwargs):
    got = _error(lambda: getattr(nn, name)(**kwargs))
    want = _error(lambda: getattr(torch.nn, name)(**kwargs))
    assert got == want and got[0] == "ValueError"


# -- adaptive log-softmax ---------------------------------------------------------------------

ADAPTIVE = [
    ((8, 20, [5, 12]), {"div_value": 2.0}),
    ((8, 20, [5, 12]), {"head_bias": True}),
    ((6, 10, [3]), {}),
]


def _same_parameters(ours, theirs, torch, rng):
    for (name, p), (name_t, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == name_t and tuple(p.shape) == tuple(pt.shape)
        value = rng.standard_normal(tuple(p.shape))
        with tocha.no_grad():
            p.copy_(tocha.from_numpy(value))
        with torch.no_grad():
            pt.copy_(torch.from_numpy(value))


@pytest.mark.parametrize("args,kwargs", ADAPTIVE, ids=[str(i) for i in range(len(ADAPTIVE))])
def test_adaptive_log_softmax_matches_torch(torch, args, kwargs):
    ours = nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs, dtype=tocha.float64)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    for attr in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "div_value"):
        assert getattr(ours, attr) == getattr(theirs, attr)
    rng = np.random.default_rng(0)
    _same_parameters(ours, theirs, torch, rng)
    n_classes = args[1]
    x = rng.standard_normal((7, args[0]))
    target = np.array([0, n_classes - 1, 1, args[2][0], n_classes // 2, 2, n_classes - 2])
    xo, xt = tocha.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
    out_o, out_t = ours(xo, tocha.from_numpy(target)), theirs(xt, torch.from_numpy(target))
    assert out_o._fields == ("output", "loss")
    np.testing.assert_allclose(out_o.output.detach().numpy(), out_t.output.detach().numpy())
    np.testing.assert_allclose(out_o.loss.item(), out_t.loss.item())
    out_o.loss.backward()
    out_t.loss.backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    for p, pt in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), pt.grad.numpy(), rtol=1e-12, atol=1e-12)
    # One unbatched sample, every class's log-probability, the predictions.
    one_o = ours(tocha.from_numpy(x[0]), tocha.tensor(int(target[0])))
    one_t = theirs(torch.from_numpy(x[0]), torch.tensor(int(target[0])))
    assert one_o.output.dim() == 0
    np.testing.assert_allclose(one_o.output.item(), one_t.output.item())
    np.testing.assert_allclose(
        ours.log_prob(tocha.from_numpy(x)).detach().numpy(),
        theirs.log_prob(torch.from_numpy(x)).detach().numpy(),
    )
    for scale in (1.0, 5.0):
        np.testing.assert_array_equal(
            ours.predict(tocha.from_numpy(x * scale)).numpy(),
            theirs.predict(torch.from_numpy(x * scale)).numpy(),
        )


def test_adaptive_log_softmax_gradcheck():
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 9, [2, 5], div_value=2.0).double()
    x = tocha.randn(5, 4, dtype=tocha.float64, requires_grad=True)
    target = tocha.tensor([0, 3, 8, 1, 6])
    assert tocha.autograd.gradcheck(lambda t: m(t, target).output, (x,))
    assert tocha.autograd.gradcheck(m.log_prob, (x,))


ADAPTIVE_ERRORS = [
    ("init", (8, 20, []), None, None),
    ("init", (8, 20, [5, 5]), None, None),
    ("init", (8, 20, [12, 5]), None, None),
    ("init", (8, 20, [0, 5]), None, None),
    ("init", (8, 20, [20]), None, None),
    ("forward", (8, 20, [5, 12]), (4, 8), [0, 1, 2]),
    ("forward", (8, 20, [5, 12]), (4, 8), [0, 1, 2, 20]),
    ("forward", (8, 20, [5, 12]), (4, 8), [0, 1, 2, -1]),
    ("forward", (8, 20, [5, 12]), (2, 4, 8), [0, 1]),
    ("forward", (8, 20, [5, 12]), (2, 8), 3),
    ("forward", (8, 20, [5, 12]), (2, 8), [[0, 1]]),
    ("log_prob", (8, 20, [5, 12]), (2, 4, 8), None),
    ("log_prob", (8, 20, [5, 12]), (8,), None),
]


@pytest.mark.parametrize(
    "kind,args,shape,target", ADAPTIVE_ERRORS, ids=[str(i) for i in range(len(ADAPTIVE_ERRORS))]
)
def test_adaptive_log_softmax_errors_match_torch(torch, kind, args, shape, target):
    def attempt(lib):
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(*args)
        if kind == "init":
            return
        x = lib.zeros(shape)
        if kind == "forward":
            m(x, lib.tensor(target))
        else:
            m.log_prob(x)

    got, want = _error(lambda: attempt(tocha)), _error(lambda: attempt(torch))
    assert got == want and got is not None


# -- SyncBatchNorm ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (2, 4, 3, 3), (2, 4, 2, 2, 3)])
def test_sync_batch_norm_in_one_process_matches_torch(torch, shape):
    ours, theirs = nn.SyncBatchNorm(4, momentum=None), torch.nn.SyncBatchNorm(4, momentum=None)
    assert repr(ours) == repr(theirs) and ours.process_group is theirs.process_group is None
    assert list(ours.state_dict()) == list(theirs.state_dict())
    rng = np.random.default_rng(0)
    for train in (True, True, False):
        ours.train(train)
        theirs.train(train)
        x = rng.standard_normal(shape).astype(np.float32)
        xo, xt = tocha.from_numpy(x).requires_grad_(), torch.from_numpy(x).requires_grad_()
        out_o, out_t = ours(xo), theirs(xt)
        np.testing.assert_allclose(out_o.detach().numpy(), out_t.detach().numpy(), atol=1e-5)
        g = rng.standard_normal(shape).astype(np.float32)
        out_o.backward(tocha.from_numpy(g))
        out_t.backward(torch.from_numpy(g))
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), atol=1e-5)
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), atol=1e-5)


@pytest.mark.parametrize("shape", [(3,), (1, 4)])
def test_sync_batch_norm_errors_match_torch(torch, shape):
    got = _error(lambda: nn.SyncBatchNorm(4)(tocha.zeros(shape)))
    want = _error(lambda: torch.nn.SyncBatchNorm(4)(torch.zeros(shape)))
    assert got[0] == want[0] == "ValueError"
    assert got[1].replace("tocha.", "torch.") == want[1]


def test_sync_batch_norm_refuses_training_across_processes(monkeypatch):
    fake = types.SimpleNamespace(
        is_available=lambda: True, is_initialized=lambda: True, get_world_size=lambda g=None: 2
    )
    monkeypatch.setitem(__import__("sys").modules, "tocha.distributed", fake)
    m = nn.SyncBatchNorm(4)
    with pytest.raises(ValueError, match="SyncBatchNorm expected input tensor to be on GPU"):
        m(tocha.zeros(3, 4))
    m.eval()
    assert m(tocha.zeros(3, 4)).shape == (3, 4)
    fake.get_world_size = lambda g=None: 1
    m.train()
    assert m(tocha.zeros(3, 4)).shape == (3, 4)


def test_convert_sync_batchnorm_matches_torch(torch):
    def build(lib):
        n = lib.nn
        net = n.Sequential(
            n.Conv2d(3, 4, 1),
            n.BatchNorm2d(4, momentum=0.3, eps=1e-3),
            n.Sequential(n.BatchNorm1d(4, affine=False)),
            n.InstanceNorm1d(3),
        )
        net[1].weight.requires_grad_(False)
        net[2][0].eval()
        return net

    ours, theirs = build(tocha), build(torch)
    weight, mean = ours[1].weight, ours[1].running_mean
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(ours, process_group="group")
    converted_t = torch.nn.SyncBatchNorm.convert_sync_batchnorm(theirs, process_group="group")
    assert repr(converted) == repr(converted_t)
    assert converted is ours
    assert converted[1].weight is weight and converted[1].running_mean is mean
    assert not converted[1].weight.requires_grad
    for path in ("1", "2.0"):
        mo, mt = converted.get_submodule(path), converted_t.get_submodule(path)
        assert (mo.training, mo.process_group) == (mt.training, mt.process_group)
    bn = nn.BatchNorm1d(3)
    bn.qconfig = "q"
    root = nn.SyncBatchNorm.convert_sync_batchnorm(bn)
    assert type(root) is nn.SyncBatchNorm and root.qconfig == "q" and root.bias is bn.bias


# -- orthogonal parametrization ---------------------------------------------------------------

ORTHOGONAL = [
    ((3, 3), {}),
    ((3, 3), {"orthogonal_map": "cayley"}),
    ((3, 3), {"orthogonal_map": "householder"}),
    ((2, 4, 4), {"use_trivialization": False}),
    ((5, 3), {"orthogonal_map": "householder", "use_trivialization": False}),
    ((3, 5), {"use_trivialization": False}),
    ((2, 3, 5), {"orthogonal_map": "householder", "use_trivialization": False}),
    ((4, 2), {"orthogonal_map": "cayley", "use_trivialization": False}),
]


def _with_weight(lib, value):
    m = lib.nn.Module()
    m.weight = lib.nn.Parameter(lib.from_numpy(value.copy()))
    return m


@pytest.mark.parametrize("shape,kwargs", ORTHOGONAL, ids=[str(i) for i in range(len(ORTHOGONAL))])
def test_orthogonal_matches_torch(torch, shape, kwargs):
    rng = np.random.default_rng(0)
    w = rng.standard_normal(shape)
    ours = orthogonal(_with_weight(tocha, w), **kwargs)
    theirs = torch.nn.utils.parametrizations.orthogonal(_with_weight(torch, w), **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours.parametrizations.weight[0]) == repr(theirs.parametrizations.weight[0])
    for o, t in (
        (ours.parametrizations.weight.original, theirs.parametrizations.weight.original),
        (ours.weight, theirs.weight),
    ):
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), atol=1e-10)
    q = ours.weight.detach().numpy()
    gram = np.swapaxes(q, -1, -2) @ q if shape[-2] >= shape[-1] else q @ np.swapaxes(q, -1, -2)
    np.testing.assert_allclose(
        gram, np.broadcast_to(np.eye(gram.shape[-1]), gram.shape), atol=1e-10
    )
    # From any unconstrained original, the same orthogonal matrix and the same gradients.
    x = rng.standard_normal(shape)
    g = rng.standard_normal(shape)
    for m, lib in ((ours, tocha), (theirs, torch)):
        with lib.no_grad():
            m.parametrizations.weight.original.copy_(lib.from_numpy(x))
        (m.weight * lib.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(
        ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-10
    )
    np.testing.assert_allclose(
        ours.parametrizations.weight.original.grad.numpy(),
        theirs.parametrizations.weight.original.grad.numpy(),
        atol=1e-10,
    )


@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 4)])
def test_orthogonal_trivialization_completes_wide_and_tall_matrices(shape):
    w = np.random.default_rng(0).standard_normal(shape)
    m = orthogonal(_with_weight(tocha, w))
    n = max(shape[-2:])
    assert tuple(m.parametrizations.weight[0].base.shape) == shape[:-2] + (n, n)
    q = m.weight.detach().numpy()
    gram = np.swapaxes(q, -1, -2) @ q if shape[-2] >= shape[-1] else q @ np.swapaxes(q, -1, -2)
    np.testing.assert_allclose(
        gram, np.broadcast_to(np.eye(gram.shape[-1]), gram.shape), atol=1e-10
    )


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_gradcheck(orthogonal_map):
    m = orthogonal(nn.Linear(4, 3).double(), orthogonal_map=orthogonal_map)
    parametrization = m.parametrizations.weight[0]
    x = tocha.randn(3, 4, dtype=tocha.float64, requires_grad=True)
    assert tocha.autograd.gradcheck(parametrization, (x,))


def test_orthogonal_assignment_matches_torch(torch):
    rng = np.random.default_rng(0)
    w, q = rng.standard_normal((3, 3)), np.linalg.qr(rng.standard_normal((3, 3)))[0]

    def assign(lib, fn):
        m = fn(_with_weight(lib, w))
        m.weight = lib.from_numpy(q)
        same = m.weight.detach().numpy()
        m.weight = lib.from_numpy(2 * q)
        doubled = m.weight.detach().numpy()
        bad = _error(lambda: setattr(m, "weight", lib.zeros(4, 4, dtype=lib.float64)))
        fixed = fn(_with_weight(lib, w), use_trivialization=False)
        refused = _error(lambda: setattr(fixed, "weight", lib.from_numpy(q)))
        return same, doubled, bad, refused, m.parametrizations.weight.original.detach().numpy()

    same, doubled, bad, refused, original = assign(tocha, orthogonal)
    theirs = assign(torch, torch.nn.utils.parametrizations.orthogonal)
    np.testing.assert_allclose(same, q, atol=1e-12)
    np.testing.assert_allclose(doubled, theirs[1], atol=1e-12)
    np.testing.assert_allclose(original, theirs[4])
    assert (bad, refused) == (theirs[2], theirs[3])
    assert bad[0] == "ValueError" and refused[0] == "NotImplementedError"


ORTHOGONAL_ERRORS = [
    ("Linear", (3, 3), {"orthogonal_map": "foo"}),
    ("Linear", (3, 3), {"name": "nope"}),
    ("BatchNorm1d", (3,), {}),
    ("Linear", (3, 3), {"orthogonal_map": "householder", "complex": True}),
]


@pytest.mark.parametrize(
    "layer,args,kwargs", ORTHOGONAL_ERRORS, ids=[str(i) for i in range(len(ORTHOGONAL_ERRORS))]
)
def test_orthogonal_errors_match_torch(torch, layer, args, kwargs):
    kwargs = dict(kwargs)
    dtype = {"dtype": "complex64"} if kwargs.pop("complex", False) else {}

    def attempt(lib):
        factory = {k: getattr(lib, v) for k, v in dtype.items()}
        fn = lib.nn.utils.parametrizations.orthogonal
        fn(getattr(lib.nn, layer)(*args, **factory), **kwargs)

    got, want = _error(lambda: attempt(tocha)), _error(lambda: attempt(torch))
    assert got == want and got[0] == "ValueError"
