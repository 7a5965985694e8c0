"""Recurrent layers against torch.nn: RNN (tanh, relu), LSTM (proj_size), GRU and the cells with
identical weights (outputs, final states, input/state/parameter gradients, train and eval,
batch_first, bidirectional, stacks, unbatched and packed inputs); float64 gradcheck of the fused
primitives in reverse and forward mode, and forward over reverse; forward-mode tangents of the
layers and cells against torch.autograd.forward_ad; the packing utilities of nn.utils.rnn;
errors, reprs, state dicts."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn as nn
from tests.nn.forward_ad import (
    assert_same_tangents,
    check_forward_over_reverse,
    directions,
    module_tangents,
    parameter_directions,
)
from tocha.autograd import gradcheck
from tocha.nn._functional import rnn as F_rnn
from tocha.nn.utils import rnn as rnn_utils

T, B, IN, H = 5, 3, 4, 6


def _to_tocha(t, requires_grad=False):
    return tocha.from_numpy(t.detach().numpy().copy()).requires_grad_(requires_grad)


def _pair(torch, name, args, kwargs, dtype="float64"):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    ours = getattr(nn, name)(*args, **kwargs).to(getattr(tocha, dtype))
    ours.load_state_dict({k: _to_tocha(v) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _close(ours, theirs, dtype="float64"):
    tol = 1e-5 if dtype == "float32" else 1e-10
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def _flat(out):
    """The tensors of a layer's result: (output, h) or (output, (h, c)) or a cell's."""
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in _flat(item)]
    if hasattr(out, "batch_sizes"):
        return [out.data]
    return [out]


def _check_step(torch, ours, theirs, inputs_t, dtype="float64"):
    """Run both with the same inputs, compare results, then backward of a random weighting
    of every result and compare the gradients of inputs and parameters."""
    inputs_o = [
        _to_tocha(t, t.requires_grad) if isinstance(t, torch.Tensor) else t for t in inputs_t
    ]
    out_t, out_o = _flat(theirs(*_nest(inputs_t))), _flat(ours(*_nest(inputs_o)))
    assert len(out_t) == len(out_o)
    for a, b in zip(out_o, out_t):
        _close(a, b, dtype)
    gen = np.random.default_rng(1)
    weights = [gen.standard_normal(tuple(t.shape)) for t in out_t]
    sum(((t * torch.from_numpy(w).to(t.dtype)).sum() for t, w in zip(out_t, weights))).backward()
    sum(((t * tocha.from_numpy(w).to(t.dtype)).sum() for t, w in zip(out_o, weights))).backward()
    for a, b in zip(_leaves(inputs_o), _leaves(inputs_t)):
        _close(a.grad, b.grad, dtype)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        _close(p.grad, q.grad, dtype)


def _nest(inputs):
    """`(x, h, c)` becomes `(x, (h, c))`: LSTM's state pair."""
    return (inputs[0], tuple(inputs[1:])) if len(inputs) == 3 else tuple(inputs)


def _leaves(inputs):
    return [t for t in inputs if not isinstance(t, str) and t.requires_grad]


def _randn(torch, *shape, dtype="float64"):
    return torch.randn(*shape, dtype=getattr(torch, dtype)).requires_grad_()


LAYER_CASES = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "batch_first": True}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"bias": False, "batch_first": True}),
    ("LSTM", {"proj_size": 3}),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "bidirectional": True, "bias": False}),
    ("GRU", {"batch_first": True, "num_layers": 2}),
]


def _states(torch, name, kwargs, batch, dtype="float64"):
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    h = _randn(torch, layers, batch, kwargs.get("proj_size") or H, dtype=dtype)
    if name == "LSTM":
        return [h, _randn(torch, layers, batch, H, dtype=dtype)]
    return [h]


@pytest.mark.parametrize("name,kwargs", LAYER_CASES)
@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("train", [True, False])
def test_layer_matches_torch(torch, name, kwargs, with_state, train):
    ours, theirs = _pair(torch, name, (IN, H), kwargs)
    ours.train(train)
    theirs.train(train)
    shape = (B, T, IN) if kwargs.get("batch_first") else (T, B, IN)
    inputs = [_randn(torch, *shape)]
    if with_state:
        inputs += _states(torch, name, kwargs, B)
    _check_step(torch, ours, theirs, inputs)


@pytest.mark.parametrize("name,kwargs", LAYER_CASES[::2])
def test_layer_unbatched(torch, name, kwargs):
    ours, theirs = _pair(torch, name, (IN, H), kwargs)
    states = [s.detach()[:, 0].clone().requires_grad_() for s in _states(torch, name, kwargs, 1)]
    _check_step(torch, ours, theirs, [_randn(torch, T, IN)] + states)
    _check_step(torch, ours, theirs, [_randn(torch, T, IN)])


@pytest.mark.parametrize("name,kwargs", LAYER_CASES)
def test_layer_float32(torch, name, kwargs):
    ours, theirs = _pair(torch, name, (IN, H), kwargs, "float32")
    shape = (B, T, IN) if kwargs.get("batch_first") else (T, B, IN)
    _check_step(torch, ours, theirs, [_randn(torch, *shape, dtype="float32")], "float32")


@pytest.mark.parametrize("name,kwargs", LAYER_CASES)
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_layer_packed(torch, name, kwargs, enforce_sorted):
    lengths = [5, 4, 4, 2] if enforce_sorted else [2, 5, 1, 4]
    ours, theirs = _pair(torch, name, (IN, H), {**kwargs, "batch_first": False})
    x_t = _randn(torch, 5, len(lengths), IN)
    x_o = _to_tocha(x_t, True)
    states_t = _states(torch, name, kwargs, len(lengths))
    states_o = [_to_tocha(s, True) for s in states_t]
    packed_t = torch.nn.utils.rnn.pack_padded_sequence(x_t, lengths, enforce_sorted=enforce_sorted)
    packed_o = rnn_utils.pack_padded_sequence(x_o, lengths, enforce_sorted=enforce_sorted)
    out_t, hid_t = theirs(packed_t, tuple(states_t) if name == "LSTM" else states_t[0])
    out_o, hid_o = ours(packed_o, tuple(states_o) if name == "LSTM" else states_o[0])
    assert isinstance(out_o, rnn_utils.PackedSequence)
    assert out_o.batch_sizes.tolist() == out_t.batch_sizes.tolist()
    pad_t, len_t = torch.nn.utils.rnn.pad_packed_sequence(out_t, batch_first=True)
    pad_o, len_o = rnn_utils.pad_packed_sequence(out_o, batch_first=True)
    assert len_o.tolist() == len_t.tolist()
    results_o = [pad_o, *_flat(hid_o)]
    results_t = [pad_t, *_flat(hid_t)]
    for a, b in zip(results_o, results_t):
        _close(a, b)
    gen = np.random.default_rng(2)
    weights = [gen.standard_normal(tuple(t.shape)) for t in results_t]
    sum((t * torch.from_numpy(w)).sum() for t, w in zip(results_t, weights)).backward()
    sum((t * tocha.from_numpy(w)).sum() for t, w in zip(results_o, weights)).backward()
    for a, b in zip([x_o, *states_o], [x_t, *states_t]):
        _close(a.grad, b.grad)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        _close(p.grad, q.grad)


def test_dropout_between_layers(torch):
    ours, theirs = _pair(torch, "LSTM", (IN, H), {"num_layers": 3, "dropout": 0.5})
    x = _randn(torch, T, B, IN)
    ours.eval()
    theirs.eval()
    _check_step(torch, ours, theirs, [x])
    ours.train()
    tocha.manual_seed(0)
    a, _ = ours(_to_tocha(x))
    tocha.manual_seed(1)
    b, _ = ours(_to_tocha(x))
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    all_dropped, _ = _pair(torch, "LSTM", (IN, H), {"num_layers": 3, "dropout": 1.0})
    all_dropped.load_state_dict(ours.state_dict())
    out, (h, c) = all_dropped(_to_tocha(x))
    # with dropout 1 the last layer sees only zeros: its output is independent of x
    again, _ = all_dropped(_to_tocha(x) * 3)
    np.testing.assert_allclose(out.detach().numpy(), again.detach().numpy())


CELL_CASES = [
    ("RNNCell", {}),
    ("RNNCell", {"nonlinearity": "relu", "bias": False}),
    ("LSTMCell", {}),
    ("LSTMCell", {"bias": False}),
    ("GRUCell", {}),
    ("GRUCell", {"bias": False}),
]


@pytest.mark.parametrize("name,kwargs", CELL_CASES)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_cell_matches_torch(torch, name, kwargs, batched, with_state):
    ours, theirs = _pair(torch, name, (IN, H), kwargs)
    lead = (B,) if batched else ()
    inputs = [_randn(torch, *lead, IN)]
    if with_state:
        inputs += [_randn(torch, *lead, H) for _ in range(2 if name == "LSTMCell" else 1)]
    _check_step(torch, ours, theirs, inputs)


def test_cell_loop_matches_torch(torch):
    """A cell unrolled over time (its state fed back) equals PyTorch's, gradients included."""
    ours, theirs = _pair(torch, "LSTMCell", (IN, H), {}, "float32")
    xs = _randn(torch, T, B, IN, dtype="float32")
    xo = _to_tocha(xs, True)
    state_t = state_o = None
    outs_t, outs_o = [], []
    for t in range(T):
        state_t = theirs(xs[t], state_t)
        state_o = ours(xo[t], state_o)
        outs_t.append(state_t[0])
        outs_o.append(state_o[0])
    torch.stack(outs_t).pow(2).sum().backward()
    tocha.stack(outs_o).pow(2).sum().backward()
    _close(xo.grad, xs.grad, "float32")
    _close(ours.weight_hh.grad, theirs.weight_hh.grad, "float32")


# -- gradcheck of the fused primitives ------------------------------------------------------
GRADCHECK_CASES = [
    (mode, bidirectional, False) for mode in F_rnn.GATES for bidirectional in (False, True)
] + [("LSTM", True, True)]


@pytest.mark.parametrize("mode,bidirectional,proj", GRADCHECK_CASES)
def test_rnn_gradcheck(mode, bidirectional, proj):
    gen = tocha.Generator().manual_seed(0)
    sizes = (3, 3, 2, 1)
    num_dir = 2 if bidirectional else 1
    gates = F_rnn.GATES[mode] * 3
    out = 2 if proj else 3

    def rand(*shape):
        return (tocha.rand(shape, generator=gen, dtype=tocha.float64) - 0.5).requires_grad_()

    weights = []
    for _ in range(num_dir):
        weights += [rand(gates, 2), rand(gates, out), rand(gates), rand(gates)]
        if proj:
            weights.append(rand(2, 3))
    states = [rand(num_dir, 3, out)] + ([rand(num_dir, 3, 3)] if mode == "LSTM" else [])
    x = rand(sum(sizes), 2)

    def f(x, *rest):
        hx = rest[: len(states)]
        return F_rnn.rnn(
            mode, x, sizes, hx, list(rest[len(states) :]), True, 1, 0.0, False, bidirectional, proj
        )

    assert gradcheck(f, (x, *states, *weights), check_forward_ad=True)


@pytest.mark.parametrize("mode,bidirectional,proj", GRADCHECK_CASES)
def test_rnn_forward_over_reverse(mode, bidirectional, proj):
    """Forward mode through BPTT (rnn_layer_backward's forward rule), on a smaller layer."""
    gen = tocha.Generator().manual_seed(1)
    sizes = (2, 2, 1)
    num_dir = 2 if bidirectional else 1
    gates = F_rnn.GATES[mode] * 2
    out = 1 if proj else 2

    def rand(*shape):
        return (tocha.rand(shape, generator=gen, dtype=tocha.float64) - 0.5).requires_grad_()

    weights = []
    for _ in range(num_dir):
        weights += [rand(gates, 2), rand(gates, out), rand(gates), rand(gates)]
        if proj:
            weights.append(rand(1, 2))
    states = [rand(num_dir, 2, out)] + ([rand(num_dir, 2, 2)] if mode == "LSTM" else [])

    def f(x, *rest):
        hx = rest[: len(states)]
        return F_rnn.rnn(
            mode, x, sizes, hx, list(rest[len(states) :]), True, 1, 0.0, False, bidirectional, proj
        )

    assert check_forward_over_reverse(f, (rand(sum(sizes), 2), *states, *weights))


@pytest.mark.parametrize("cell", ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell"])
def test_cell_gradcheck(cell):
    gen = tocha.Generator().manual_seed(0)
    gates = {"lstm_cell": 4, "gru_cell": 3}.get(cell, 1) * 3

    def rand(*shape):
        return (tocha.rand(shape, generator=gen, dtype=tocha.float64) - 0.5).requires_grad_()

    x, h, c = rand(2, 4), rand(2, 3), rand(2, 3)
    weights = (rand(gates, 4), rand(gates, 3), rand(gates), rand(gates))
    fn = getattr(F_rnn, cell)
    if cell == "lstm_cell":
        f, inputs = (lambda x, h, c, *w: fn(x, (h, c), *w)), (x, h, c, *weights)
    else:
        f, inputs = (lambda x, h, *w: fn(x, h, *w)), (x, h, *weights)
    assert gradcheck(f, inputs, check_forward_ad=True)
    assert check_forward_over_reverse(f, inputs)


# (layer, constructor arguments, input shape): inputs and parameters all get tangents
FORWARD_LAYERS = [
    ("RNN", (IN, H), {"nonlinearity": "relu", "num_layers": 2}, (T, B, IN)),
    ("RNN", (IN, H), {"bidirectional": True}, (T, IN)),
    ("LSTM", (IN, H), {"bidirectional": True, "proj_size": 3}, (T, B, IN)),
    ("LSTM", (IN, H), {"num_layers": 2, "batch_first": True}, (B, T, IN)),
    ("GRU", (IN, H), {"bidirectional": True, "batch_first": True}, (B, T, IN)),
    ("RNNCell", (IN, H), {}, (B, IN)),
    ("LSTMCell", (IN, H), {"bias": False}, (B, IN)),
    ("GRUCell", (IN, H), {}, (B, IN)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", FORWARD_LAYERS)
def test_layer_forward_ad_matches_torch(torch, name, args, kwargs, shape):
    ours, theirs = _pair(torch, name, args, kwargs)
    arrays = [np.random.default_rng(0).standard_normal(shape) * 0.5]
    dirs, param_dirs = directions(arrays), parameter_directions(ours)
    assert_same_tangents(
        module_tangents(tocha, ours, arrays, dirs, param_dirs),
        module_tangents(torch, theirs, arrays, dirs, param_dirs),
    )


def test_double_backward_raises():
    m = nn.LSTM(2, 3).double()
    x = tocha.randn(4, 1, 2, dtype=tocha.float64, requires_grad=True)
    y, _ = m(x)
    (g,) = tocha.autograd.grad(y.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="double backward through tocha's fused recurrent"):
        g.sum().backward()


# -- modules: parameters, reprs, state dicts, errors ----------------------------------------
REPRS = [
    (
        "LSTM",
        (4, 3, 2),
        {"bias": False, "batch_first": True, "dropout": 0.5, "bidirectional": True, "proj_size": 2},
    ),
    ("RNN", (4, 3), {"nonlinearity": "relu"}),
    ("RNN", (4, 3, 1, "relu", False), {}),
    ("GRU", (4, 3), {"num_layers": 2}),
    ("RNNCell", (4, 3), {"nonlinearity": "relu", "bias": False}),
    ("LSTMCell", (4, 3), {}),
    ("GRUCell", (3, 4), {"bias": False}),
]


@pytest.mark.parametrize("name,args,kwargs", REPRS)
def test_repr_and_parameters(torch, name, args, kwargs):
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    ours.load_state_dict({k: _to_tocha(v) for k, v in theirs.state_dict().items()})
    theirs.load_state_dict(
        {k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    )


def test_flat_weights_and_init():
    m = nn.LSTM(4, 16, num_layers=2, bidirectional=True, proj_size=3)
    assert m._flat_weights_names[:5] == [
        "weight_ih_l0",
        "weight_hh_l0",
        "bias_ih_l0",
        "bias_hh_l0",
        "weight_hr_l0",
    ]
    assert m._flat_weights_names[5] == "weight_ih_l0_reverse"
    assert all(a is b for a, b in zip(m._flat_weights, m.parameters()))
    assert [len(w) for w in m.all_weights] == [5] * 4
    m.flatten_parameters()
    bound = 1 / 4
    for p in m.parameters():
        assert -bound <= p.min().item() and p.max().item() <= bound
    m.weight_hh_l0 = nn.Parameter(tocha.zeros(64, 3))
    assert m._flat_weights[1] is m.weight_hh_l0


LAYER_ERRORS = [
    (
        "LSTM",
        lambda: (tocha.randn(5, 2, 5),),
        RuntimeError,
        "input.size(-1) must be equal to input_size. Expected 4, got 5",
    ),
    (
        "LSTM",
        lambda: (tocha.randn(5, 2, 4, dtype=tocha.float64),),
        ValueError,
        "RNN input dtype (torch.float64) does not match weight dtype (torch.float32). Convert "
        "input: input.to(torch.float32), or convert model: model.to(torch.float64)",
    ),
    (
        "LSTM",
        lambda: (tocha.randn(5, 2, 4), (tocha.randn(1, 3, 3), tocha.randn(1, 2, 3))),
        RuntimeError,
        "Expected hidden[0] size (1, 2, 3), got [1, 3, 3]",
    ),
    (
        "LSTM",
        lambda: (tocha.randn(5, 2, 4), (tocha.randn(1, 2, 3), tocha.randn(1, 2, 2))),
        RuntimeError,
        "Expected hidden[1] size (1, 2, 3), got [1, 2, 2]",
    ),
    (
        "LSTM",
        lambda: (tocha.randn(1, 5, 2, 4),),
        ValueError,
        "LSTM: Expected input to be 2D or 3D, got 4D instead",
    ),
    (
        "LSTM",
        lambda: (tocha.randn(5, 2, 4), (tocha.randn(2, 3), tocha.randn(2, 3))),
        RuntimeError,
        "For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors",
    ),
    (
        "GRU",
        lambda: (tocha.randn(5, 4), tocha.randn(1, 1, 3)),
        RuntimeError,
        "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor",
    ),
    (
        "GRU",
        lambda: (tocha.randn(5, 2, 4), tocha.randn(1, 3, 3)),
        RuntimeError,
        "Expected hidden size (1, 2, 3), got [1, 3, 3]",
    ),
    (
        "RNN",
        lambda: (tocha.randn(4),),
        ValueError,
        "RNN: Expected input to be 2D or 3D, got 1D tensor instead",
    ),
    (
        "RNN",
        lambda: (tocha.randn(5, 2, 4), tocha.randn(2, 3)),
        RuntimeError,
        "For batched 3-D input, hx should also be 3-D but got 2-D tensor",
    ),
]


@pytest.mark.parametrize("name,make,exc,message", LAYER_ERRORS)
def test_layer_errors(torch, name, make, exc, message):
    args = make()
    with pytest.raises(exc) as theirs:
        getattr(torch.nn, name)(4, 3)(*[_torch_of(torch, a) for a in args])
    with pytest.raises(exc) as ours:
        getattr(nn, name)(4, 3)(*args)
    assert str(theirs.value) == message
    assert str(ours.value) == message.replace("torch.float", "tocha.float")


def _torch_of(torch, a):
    if isinstance(a, tuple):
        return tuple(_torch_of(torch, t) for t in a)
    return torch.from_numpy(a.numpy())


CELL_ERRORS = [
    ("LSTMCell", lambda: (tocha.randn(2, 5),)),
    ("LSTMCell", lambda: (tocha.randn(2, 4), (tocha.randn(3, 3), tocha.randn(3, 3)))),
    ("LSTMCell", lambda: (tocha.randn(2, 4), (tocha.randn(2, 2), tocha.randn(2, 3)))),
    ("LSTMCell", lambda: (tocha.randn(3, 2, 4),)),
    ("GRUCell", lambda: (tocha.randn(2, 4), tocha.randn(3, 3))),
    ("GRUCell", lambda: (tocha.randn(2, 4), tocha.randn(1, 2, 3))),
    ("GRUCell", lambda: (tocha.randn(2, 4, dtype=tocha.float64),)),
    ("RNNCell", lambda: (tocha.randn(2, 4), tocha.randn(2, 4))),
]


@pytest.mark.parametrize("name,make", CELL_ERRORS)
def test_cell_errors(torch, name, make):
    args = make()
    with pytest.raises(Exception) as theirs:
        getattr(torch.nn, name)(4, 3)(*[_torch_of(torch, a) for a in args])
    with pytest.raises(theirs.type) as ours:
        getattr(nn, name)(4, 3)(*args)
    assert str(ours.value) == str(theirs.value)


CONSTRUCTOR_ERRORS = [
    ("LSTM", (4, 3), {"dropout": 2}),
    ("LSTM", (4, 3), {"proj_size": 3}),
    ("LSTM", (4, 3), {"proj_size": -1}),
    ("GRU", (4, 3), {"proj_size": 2}),
    ("RNN", (4, 3), {"nonlinearity": "gelu"}),
    ("RNN", (0, 3), {}),
    ("RNN", (4, 3), {"num_layers": 0}),
    ("RNN", (4, 3), {"bias": 1}),
    ("RNN", (4.0, 3), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CONSTRUCTOR_ERRORS)
def test_constructor_errors(torch, name, args, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(torch.nn, name)(*args, **kwargs)
    with pytest.raises(theirs.type) as ours:
        getattr(nn, name)(*args, **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_dropout_warning(torch):
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(4, 3, dropout=0.2)


# -- nn.utils.rnn ---------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(
    "enforce_sorted,lengths",
    [(True, [4, 3, 3, 1]), (False, [2, 4, 1, 3]), (True, tocha.tensor([4, 2, 2, 2]))],
)
def test_pack_pad_roundtrip(torch, batch_first, enforce_sorted, lengths):
    x_t = _randn(torch, 4, 4, 3)
    x_o = _to_tocha(x_t, True)
    lengths_t = torch.from_numpy(lengths.numpy()) if isinstance(lengths, tocha.Tensor) else lengths
    p_t = torch.nn.utils.rnn.pack_padded_sequence(x_t, lengths_t, batch_first, enforce_sorted)
    p_o = rnn_utils.pack_padded_sequence(x_o, lengths, batch_first, enforce_sorted)
    _close(p_o.data, p_t.data)
    for a, b in zip(p_o[1:], p_t[1:]):
        assert (a is None and b is None) or a.tolist() == b.tolist()
    assert p_o.batch_sizes.dtype == tocha.int64 and p_o.batch_sizes.device.type == "cpu"
    pad_t, len_t = torch.nn.utils.rnn.pad_packed_sequence(p_t, batch_first, -1.0, 6)
    pad_o, len_o = rnn_utils.pad_packed_sequence(p_o, batch_first, -1.0, 6)
    _close(pad_o, pad_t)
    assert len_o.tolist() == len_t.tolist() and len_o.dtype == tocha.int64
    w = np.random.default_rng(0).standard_normal(tuple(pad_t.shape))
    (pad_t * torch.from_numpy(w)).sum().backward()
    (pad_o * tocha.from_numpy(w)).sum().backward()
    _close(x_o.grad, x_t.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(torch, batch_first, padding_side):
    seqs_t = [_randn(torch, n, 2, 3) for n in (2, 5, 3)]
    seqs_o = [_to_tocha(s, True) for s in seqs_t]
    out_t = torch.nn.utils.rnn.pad_sequence(seqs_t, batch_first, 7.0, padding_side)
    out_o = rnn_utils.pad_sequence(seqs_o, batch_first, 7.0, padding_side)
    _close(out_o, out_t)
    out_t.pow(2).sum().backward()
    out_o.pow(2).sum().backward()
    for a, b in zip(seqs_o, seqs_t):
        _close(a.grad, b.grad)


def test_pack_sequence_unpack_unpad(torch):
    seqs_t = [torch.randn(n, 2, dtype=torch.float64) for n in (2, 5, 3)]
    seqs_o = [_to_tocha(s) for s in seqs_t]
    p_t = torch.nn.utils.rnn.pack_sequence(seqs_t, enforce_sorted=False)
    p_o = rnn_utils.pack_sequence(seqs_o, enforce_sorted=False)
    _close(p_o.data, p_t.data)
    assert p_o.sorted_indices.tolist() == p_t.sorted_indices.tolist()
    assert p_o.unsorted_indices.tolist() == p_t.unsorted_indices.tolist()
    for a, b in zip(rnn_utils.unpack_sequence(p_o), seqs_t):
        _close(a, b)
    padded = rnn_utils.pad_sequence(seqs_o)
    for a, b in zip(rnn_utils.unpad_sequence(padded, tocha.tensor([2, 5, 3])), seqs_t):
        _close(a, b)
    assert repr(rnn_utils.PackedSequence(tocha.ones(3), tocha.tensor([2, 1]))) == repr(
        torch.nn.utils.rnn.PackedSequence(torch.ones(3), torch.tensor([2, 1]))
    )


def test_packed_sequence_to():
    p = rnn_utils.pack_sequence([tocha.ones(3), tocha.ones(2)])
    assert p.to(tocha.float32) is p
    q = p.double()
    assert q.data.dtype == tocha.float64 and q.batch_sizes is p.batch_sizes
    assert isinstance(q, rnn_utils.PackedSequence) and not q.is_cuda
    assert rnn_utils.invert_permutation(tocha.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert rnn_utils.invert_permutation(None) is None


PACK_ERRORS = [
    (lambda m: m.pack_padded_sequence, ((4, 3, 2), [4, 2, 3]), {}),
    (lambda m: m.pack_padded_sequence, ((4, 3, 2), [4, 2, 0]), {}),
    (lambda m: m.pack_padded_sequence, ((4, 3, 2), [4, 3]), {}),
    (lambda m: m.pad_sequence, None, {"padding_side": "up"}),
    (lambda m: m.pad_sequence, [], {}),
]


@pytest.mark.parametrize("fn,args,kwargs", PACK_ERRORS)
def test_pack_errors(torch, fn, args, kwargs):
    def call(lib, mod):
        if args is None:
            return fn(mod)([lib.zeros(2, 3)], **kwargs)
        if args == []:
            return fn(mod)([], **kwargs)
        return fn(mod)(lib.zeros(*args[0]), args[1], **kwargs)

    with pytest.raises(Exception) as theirs:
        call(torch, torch.nn.utils.rnn)
    with pytest.raises(theirs.type) as ours:
        call(tocha, rnn_utils)
    assert str(ours.value) == str(theirs.value)


def test_pad_sequence_shape_mismatch(torch):
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.utils.rnn.pad_sequence([torch.zeros(2, 3), torch.zeros(3, 4)])
    with pytest.raises(RuntimeError) as ours:
        rnn_utils.pad_sequence([tocha.zeros(2, 3), tocha.zeros(3, 4)])
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="Expected total_length to be at least"):
        rnn_utils.pad_packed_sequence(rnn_utils.pack_sequence([tocha.ones(3)]), total_length=2)


@pytest.mark.parametrize("method", ["byte", "char", "short", "int", "long", "half", "double"])
def test_packed_sequence_casts(torch, method):
    def run(lib):
        seqs = [lib.ones(3, 2), lib.ones(1, 2), lib.ones(2, 2)]
        packed = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        cast = getattr(packed, method)()
        return str(cast.data.dtype).split(".")[-1], cast.is_pinned(), tuple(cast.data.shape)

    assert run(tocha) == run(torch)
