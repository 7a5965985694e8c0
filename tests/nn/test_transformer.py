"""Transformers against torch.nn with identical weights (load_state_dict): encoder and decoder
layers, their stacks and nn.Transformer; outputs, input and parameter gradients in eval mode
and in train mode with dropout 0; norm_first both ways; relu, gelu and callable activations;
masks, key padding masks and is_causal; batch_first and unbatched inputs; state_dict keys,
reprs, the causal mask and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tocha
import tocha.nn as nn
import tocha.nn.functional as F

pytestmark = [
    pytest.mark.filterwarnings("ignore:Support for mismatched"),
    pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
]

D, NHEAD, FF = 8, 2, 16
S, T, N = 5, 4, 3


def _copy_weights(torch, ours, theirs) -> None:
    """Load torch's weights into `ours`, the layer-norm and bias parameters randomised first
    (they start at ones and zeros) so that every parameter's role is tested."""
    rng = np.random.default_rng(11)
    with torch.no_grad():
        for p in theirs.parameters():
            if p.dim() == 1:
                p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    ours.load_state_dict(
        {k: tocha.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    )


def _activation(torch, kind):
    """The activation argument for torch and for tocha."""
    if kind == "callable":
        return torch.nn.functional.silu, F.silu
    if kind == "module":
        return torch.nn.GELU(approximate="tanh"), nn.GELU(approximate="tanh")
    return kind, kind


def _pair(torch, name, *args, activation="relu", train=False, **kwargs):
    act_t, act_o = _activation(torch, activation)
    theirs = getattr(torch.nn, name)(*args, activation=act_t, **kwargs).double()
    ours = getattr(nn, name)(*args, activation=act_o, **kwargs).double()
    _copy_weights(torch, ours, theirs)
    ours.train(train)
    theirs.train(train)
    return ours, theirs


def _input(torch, shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape)
    return (
        torch.from_numpy(x.copy()).requires_grad_(),
        tocha.from_numpy(x.copy()).requires_grad_(),
    )


def _close(ours, theirs) -> None:
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-9)


def _check(torch, ours, theirs, inputs, kwargs_t, kwargs_o) -> None:
    """Outputs, input gradients and parameter gradients equal."""
    out_t = theirs(*(p[0] for p in inputs), **kwargs_t)
    out_o = ours(*(p[1] for p in inputs), **kwargs_o)
    assert tuple(out_o.shape) == tuple(out_t.shape)
    _close(out_o, out_t)
    g = np.random.default_rng(7).standard_normal(tuple(out_t.shape))
    out_t.backward(torch.from_numpy(g))
    out_o.backward(tocha.from_numpy(g))
    for t, o in inputs:
        _close(o.grad, t.grad)
    params_t = dict(theirs.named_parameters())
    names = [name for name, _ in ours.named_parameters()]
    assert names == list(params_t)
    for name, p in ours.named_parameters():
        _close(p.grad, params_t[name].grad)


def _masks(torch, kind, tgt, src, batched):
    """attention mask and key padding mask (torch, tocha) pairs for a mask kind."""
    rng = np.random.default_rng(3)
    attn = padding = None
    if kind in ("causal", "causal_padding"):
        attn = np.triu(np.full((tgt, src), -np.inf), 1)
    if kind == "bool":
        attn = rng.random((tgt, src)) > 0.6
        attn[:, 0] = False
    if kind in ("padding", "causal_padding"):
        padding = rng.random((N, src) if batched else (src,)) > 0.6
        padding[..., 0] = False
    return [
        None if m is None else (torch.from_numpy(m.copy()), tocha.from_numpy(m.copy()))
        for m in (attn, padding)
    ]


def _split(pairs, names):
    kwargs_t, kwargs_o = {}, {}
    for name, pair in zip(names, pairs):
        if pair is not None:
            kwargs_t[name], kwargs_o[name] = pair
    return kwargs_t, kwargs_o


LAYER_CASES = [
    # norm_first, activation, batch_first, batched, mask kind, train
    (False, "relu", False, True, None, False),
    (True, "relu", False, True, None, True),
    (False, "gelu", True, True, "causal", False),
    (True, "gelu", True, True, "padding", True),
    (False, "callable", False, True, "bool", True),
    (True, "module", True, True, "causal_padding", False),
    (False, "relu", False, False, "causal", True),
    (True, "gelu", True, False, "padding", False),
]


@pytest.mark.parametrize("norm_first,activation,batch_first,batched,mask,train", LAYER_CASES)
def test_encoder_layer_matches_torch(
    torch, norm_first, activation, batch_first, batched, mask, train
):
    ours, theirs = _pair(
        torch,
        "TransformerEncoderLayer",
        D,
        NHEAD,
        FF,
        dropout=0.0 if train else 0.1,
        activation=activation,
        train=train,
        norm_first=norm_first,
        batch_first=batch_first,
    )
    shape = ((N, S, D) if batch_first else (S, N, D)) if batched else (S, D)
    kwargs_t, kwargs_o = _split(
        _masks(torch, mask, S, S, batched), ("src_mask", "src_key_padding_mask")
    )
    if mask == "causal":
        kwargs_t["is_causal"] = kwargs_o["is_causal"] = True
    _check(torch, ours, theirs, [_input(torch, shape, 0)], kwargs_t, kwargs_o)


@pytest.mark.parametrize("norm_first,activation,batch_first,batched,mask,train", LAYER_CASES)
def test_decoder_layer_matches_torch(
    torch, norm_first, activation, batch_first, batched, mask, train
):
    ours, theirs = _pair(
        torch,
        "TransformerDecoderLayer",
        D,
        NHEAD,
        FF,
        dropout=0.0 if train else 0.1,
        activation=activation,
        train=train,
        norm_first=norm_first,
        batch_first=batch_first,
    )
    lead = (lambda n: (N, n) if batch_first else (n, N)) if batched else (lambda n: (n,))
    inputs = [_input(torch, lead(T) + (D,), 0), _input(torch, lead(S) + (D,), 1)]
    tgt_masks = _masks(torch, mask, T, T, batched)
    memory_masks = _masks(torch, "bool" if mask else None, T, S, batched)
    kwargs_t, kwargs_o = _split(
        tgt_masks + memory_masks,
        ("tgt_mask", "tgt_key_padding_mask", "memory_mask", "memory_key_padding_mask"),
    )
    if mask == "causal":
        kwargs_t["tgt_is_causal"] = kwargs_o["tgt_is_causal"] = True
    _check(torch, ours, theirs, inputs, kwargs_t, kwargs_o)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("mask", [None, "causal", "causal_padding"])
def test_encoder_stack_matches_torch(torch, norm_first, mask):
    layer_t = torch.nn.TransformerEncoderLayer(D, NHEAD, FF, norm_first=norm_first)
    layer_o = nn.TransformerEncoderLayer(D, NHEAD, FF, norm_first=norm_first)
    theirs = (
        torch.nn.TransformerEncoder(layer_t, 2, torch.nn.LayerNorm(D), enable_nested_tensor=False)
        .double()
        .eval()
    )
    ours = (
        nn.TransformerEncoder(layer_o, 2, nn.LayerNorm(D), enable_nested_tensor=False)
        .double()
        .eval()
    )
    _copy_weights(torch, ours, theirs)
    kwargs_t, kwargs_o = _split(_masks(torch, mask, S, S, True), ("mask", "src_key_padding_mask"))
    _check(torch, ours, theirs, [_input(torch, (S, N, D), 0)], kwargs_t, kwargs_o)


@pytest.mark.parametrize("norm", [False, True])
def test_decoder_stack_matches_torch(torch, norm):
    theirs = torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(D, NHEAD, FF, dropout=0.0, batch_first=True),
        3,
        torch.nn.LayerNorm(D) if norm else None,
    ).double()
    ours = nn.TransformerDecoder(
        nn.TransformerDecoderLayer(D, NHEAD, FF, dropout=0.0, batch_first=True),
        3,
        nn.LayerNorm(D) if norm else None,
    ).double()
    _copy_weights(torch, ours, theirs)
    kwargs_t, kwargs_o = _split(_masks(torch, "causal", T, T, True), ("tgt_mask",))
    inputs = [_input(torch, (N, T, D), 0), _input(torch, (N, S, D), 1)]
    _check(torch, ours, theirs, inputs, kwargs_t, kwargs_o)


@pytest.mark.parametrize(
    "batch_first,norm_first,train", [(False, False, False), (True, True, True), (True, False, True)]
)
def test_transformer_matches_torch(torch, batch_first, norm_first, train):
    kwargs = {
        "d_model": D,
        "nhead": NHEAD,
        "num_encoder_layers": 2,
        "num_decoder_layers": 2,
        "dim_feedforward": FF,
        "dropout": 0.0 if train else 0.1,
        "batch_first": batch_first,
        "norm_first": norm_first,
    }
    theirs = torch.nn.Transformer(**kwargs).double().train(train)
    ours = nn.Transformer(**kwargs).double().train(train)
    _copy_weights(torch, ours, theirs)
    lead = (lambda n: (N, n)) if batch_first else (lambda n: (n, N))
    inputs = [_input(torch, lead(S) + (D,), 0), _input(torch, lead(T) + (D,), 1)]
    causal = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    padding = np.zeros((N, S), dtype=bool)
    padding[0, -2:] = True
    kwargs_t = {
        "tgt_mask": causal,
        "src_key_padding_mask": torch.from_numpy(padding),
        "memory_key_padding_mask": torch.from_numpy(padding),
    }
    kwargs_o = {
        "tgt_mask": nn.Transformer.generate_square_subsequent_mask(T, dtype=tocha.float64),
        "src_key_padding_mask": tocha.from_numpy(padding),
        "memory_key_padding_mask": tocha.from_numpy(padding),
    }
    _check(torch, ours, theirs, inputs, kwargs_t, kwargs_o)


def test_train_mode_dropout_is_random():
    layer = nn.TransformerEncoderLayer(D, NHEAD, FF, dropout=0.5)
    x = tocha.randn(S, N, D)
    assert not tocha.allclose(layer(x), layer(x))
    layer.eval()
    assert tocha.equal(layer(x), layer(x))


def test_generate_square_subsequent_mask(torch):
    for size in (1, 4):
        ours = nn.Transformer.generate_square_subsequent_mask(size)
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(size)
        assert ours.dtype == tocha.float32
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=tocha.float64).dtype == (
        tocha.float64
    )


@pytest.mark.parametrize(
    "name,args,kwargs",
    [
        ("TransformerEncoderLayer", (D, NHEAD), {}),
        ("TransformerEncoderLayer", (D, NHEAD, FF), {"bias": False, "norm_first": True}),
        ("TransformerDecoderLayer", (D, NHEAD, FF), {"layer_norm_eps": 1e-6}),
        (
            "Transformer",
            (),
            {
                "d_model": D,
                "nhead": NHEAD,
                "num_encoder_layers": 1,
                "num_decoder_layers": 2,
                "dim_feedforward": FF,
                "bias": False,
            },
        ),
    ],
)
def test_repr_and_state_dict_keys(torch, name, args, kwargs):
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (_, p), (_, q) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert tuple(p.shape) == tuple(q.shape)


def test_module_activation_in_repr(torch):
    ours = nn.TransformerEncoderLayer(D, NHEAD, FF, activation=nn.GELU())
    theirs = torch.nn.TransformerEncoderLayer(D, NHEAD, FF, activation=torch.nn.GELU())
    assert repr(ours) == repr(theirs)
    assert ours.activation_relu_or_gelu == theirs.activation_relu_or_gelu == 2
    assert nn.TransformerEncoderLayer(D, NHEAD, activation="relu").activation_relu_or_gelu == 1
    assert nn.TransformerEncoderLayer(D, NHEAD, activation=F.silu).activation_relu_or_gelu == 0


def test_encoder_stack_copies_layers():
    layer = nn.TransformerEncoderLayer(D, NHEAD, FF)
    encoder = nn.TransformerEncoder(layer, 3, enable_nested_tensor=True)
    assert encoder.num_layers == 3 and len(encoder.layers) == 3
    assert encoder.layers[0] is not layer and encoder.layers[0] is not encoder.layers[1]
    assert tocha.equal(encoder.layers[1].linear1.weight, layer.linear1.weight)
    assert encoder.norm is None


def test_transformer_init_is_xavier():
    model = nn.Transformer(
        d_model=64, nhead=4, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=128
    )
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6 / (64 + 128))
    assert abs(w).max() <= bound and abs(w).max() > 0.9 * bound


def test_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(D, NHEAD, activation="tanh")
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerDecoderLayer(D, NHEAD, activation="tanh")
    model = nn.Transformer(
        d_model=D, nhead=NHEAD, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=FF
    )
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(tocha.randn(S, N, D), tocha.randn(T, N + 1, D))
    with pytest.raises(
        RuntimeError, match="the feature number of src and tgt must be equal to d_model"
    ):
        model(tocha.randn(S, N, D + 1), tocha.randn(T, N, D + 1))
    with pytest.raises(
        AssertionError, match="only bool and floating types of src_mask are supported"
    ):
        model.encoder.layers[0](tocha.randn(S, N, D), src_mask=tocha.zeros(S, S, dtype=tocha.int64))
