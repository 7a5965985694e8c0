"""Transformers, as ``torch.nn.modules.transformer``: Transformer, TransformerEncoder,
TransformerDecoder, TransformerEncoderLayer and TransformerDecoderLayer."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import tocha
from tocha import Tensor

from .. import functional as F
from .. import init
from .._functional.attention import _canonical_mask, _none_or_dtype
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """An ``(sz, sz)`` float mask: -inf above the diagonal (future positions), 0 elsewhere."""
    return tocha.triu(tocha.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(
    mask: Tensor | None, is_causal: bool | None = None, size: int | None = None
) -> bool:
    """`is_causal` when given; else whether `mask` is the square subsequent mask."""
    if is_causal is not None or mask is None:
        return is_causal is True
    causal = _generate_square_subsequent_mask(
        size if size is not None else mask.shape[-2], device=mask.device, dtype=mask.dtype
    )
    return mask.shape == causal.shape and bool((mask == causal).all())


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network, each a residual block with layer norm
    (after the residual sum, or before the block with `norm_first`).

    Args:
        d_model: feature size of the inputs.
        nhead: attention heads.
        dim_feedforward: hidden size of the feed-forward network.
        dropout: dropout probability (attention weights and after each block).
        activation: "relu", "gelu" or a callable, between the feed-forward layers.
        layer_norm_eps: eps of the layer norms.
        batch_first: inputs are ``(N, S, E)`` rather than ``(S, N, E)``.
        norm_first: layer norm before each block rather than after the residual sum.
        bias: whether the linear layers and layer norms learn biases.

    Example:
        >>> layer = nn.TransformerEncoderLayer(d_model=16, nhead=4)
        >>> layer(tocha.rand(10, 32, 16)).shape
        tocha.Size([10, 32, 16])
    """

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **factory
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """The layer on `src`; masks as MultiheadAttention's (`src_mask` its attn_mask)."""
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            _none_or_dtype(src_mask),
            "src_mask",
            src.dtype,
        )
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's output (memory), then a feed-forward
    network, each a residual block with layer norm (after the residual sum, or before the
    block with `norm_first`). Arguments as TransformerEncoderLayer's.

    Example:
        >>> layer = nn.TransformerDecoderLayer(d_model=16, nhead=4)
        >>> layer(tocha.rand(20, 32, 16), tocha.rand(10, 32, 16)).shape
        tocha.Size([20, 32, 16])
    """

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **factory
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = (
            _get_activation_fn(activation) if isinstance(activation, str) else activation
        )

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The layer on `tgt` attending to `memory`; `tgt_*` masks go to the self-attention,
        `memory_*` masks to the attention over memory."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(
            x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        )
        return self.norm3(x + self._ff_block(x))

    def _sa_block(
        self,
        x: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(
        self,
        x: Tensor,
        mem: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerEncoder(Module):
    """A stack of `num_layers` copies of `encoder_layer`, then `norm` when given.

    With `enable_nested_tensor`, layers that allow it (`use_nested_tensor`: post-norm,
    batch-first, even head count...; else PyTorch's warning says why not) give what PyTorch's
    nested-tensor fast path gives: in inference (eval mode, no gradient wanted, a left-aligned
    `src_key_padding_mask` and no `mask`), the padded positions of the layers' output are 0.
    tocha has no nested tensors: the real positions are computed with the padding masked.

    Example:
        >>> layer = nn.TransformerEncoderLayer(d_model=16, nhead=4)
        >>> nn.TransformerEncoder(layer, num_layers=2)(tocha.rand(10, 32, 16)).shape
        tocha.Size([10, 32, 16])
    """

    __constants__ = ["norm"]

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_nested(encoder_layer) if enable_nested_tensor else ""
        if why_not:
            warnings.warn(
                f"enable_nested_tensor is True, but self.use_nested_tensor is False because "
                f"{why_not}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """Each layer on `src` in turn; `is_causal=None` detects a causal `mask`."""
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask), "mask", src.dtype
        )
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, False)
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(
                output,
                src_mask=mask,
                is_causal=is_causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        if self._runs_nested(src, mask, src_key_padding_mask):
            output = output.masked_fill((src_key_padding_mask != 0).unsqueeze(-1), 0.0)
        return output if self.norm is None else self.norm(output)

    def _runs_nested(self, src: Tensor, mask, padding) -> bool:
        """Whether PyTorch would run this call on nested tensors (its padded outputs 0)."""
        if not self.use_nested_tensor or self.training or mask is not None or padding is None:
            return False
        if src.dim() != 3 or tocha.is_autocast_enabled():
            return False
        if tocha.is_grad_enabled() and (
            src.requires_grad or any(p.requires_grad for p in self.parameters())
        ):
            return False
        padded = padding != 0
        return not (padded[:, :-1] & ~padded[:, 1:]).any().item()  # left-aligned


def _why_not_nested(layer) -> str:
    """PyTorch's reason an encoder layer cannot run on nested tensors ("" when it can)."""
    if not isinstance(layer, TransformerEncoderLayer):
        return "encoder_layer was not TransformerEncoderLayer"
    attention = layer.self_attn
    reasons = [
        (layer.norm_first, "encoder_layer.norm_first was True"),
        (
            not attention.batch_first,
            "encoder_layer.self_attn.batch_first was not True"
            "(use batch_first for better inference performance)",
        ),
        (
            not attention._qkv_same_embed_dim,
            "encoder_layer.self_attn._qkv_same_embed_dim was not True",
        ),
        (attention.in_proj_bias is None, "encoder_layer.self_attn was passed bias=False"),
        (not layer.activation_relu_or_gelu, "encoder_layer.activation_relu_or_gelu was not True"),
        (
            layer.norm1.eps != layer.norm2.eps,
            "encoder_layer.norm1.eps was not equal to encoder_layer.norm2.eps",
        ),
        (attention.num_heads % 2 == 1, "encoder_layer.self_attn.num_heads is odd"),
    ]
    return next((reason for failed, reason in reasons if failed), "")


class TransformerDecoder(Module):
    """A stack of `num_layers` copies of `decoder_layer`, then `norm` when given.

    Example:
        >>> layer = nn.TransformerDecoderLayer(d_model=16, nhead=4)
        >>> decoder = nn.TransformerDecoder(layer, num_layers=2)
        >>> decoder(tocha.rand(20, 32, 16), tocha.rand(10, 32, 16)).shape
        tocha.Size([20, 32, 16])
    """

    __constants__ = ["norm"]

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Each layer on `tgt` and `memory` in turn; `tgt_is_causal=None` detects a causal
        `tgt_mask`."""
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    """An encoder-decoder transformer ("Attention Is All You Need"): a TransformerEncoder of
    `num_encoder_layers` layers and a TransformerDecoder of `num_decoder_layers`, each ending
    in a LayerNorm (unless `custom_encoder` / `custom_decoder` replace them). Every parameter
    of more than one dimension starts Xavier-uniform.

    Example:
        >>> model = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2,
        ...                        num_decoder_layers=2, dim_feedforward=32)
        >>> model(tocha.rand(10, 32, 16), tocha.rand(20, 32, 16)).shape
        tocha.Size([20, 32, 16])
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        settings = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*settings, **factory),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*settings, **factory),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory),
            )
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Encode `src` into memory, then decode `tgt` attending to it.

        Shape:
            src ``(S, N, E)``, tgt ``(T, N, E)`` (``(N, S, E)``, ``(N, T, E)`` with
            batch_first; ``(S, E)``, ``(T, E)`` unbatched); output as tgt.
        """
        is_batched = src.dim() == 3
        batch = 0 if self.batch_first else 1
        if is_batched and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """An ``(sz, sz)`` causal mask: -inf above the diagonal, 0 elsewhere.

        Example:
            >>> nn.Transformer.generate_square_subsequent_mask(2)
            tensor([[0., -inf],
                    [0., 0.]])
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        """Xavier-uniform initialisation of every parameter of more than one dimension."""
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
