"""Multi-head attention, as ``torch.nn.MultiheadAttention`` (which PyTorch keeps in
``torch.nn.modules.activation``; ``tocha.nn.modules.activation`` re-exports it)."""

from __future__ import annotations

import tocha
from tocha import Tensor

from .. import init
from .._functional.attention import _canonical_mask, _multi_head_attention, _none_or_dtype
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention of queries over keys and values in `num_heads` parallel heads:
    ``concat(head_1, ..., head_h) @ W_o`` with ``head_i = softmax(q W_qi (k W_ki).T / sqrt(d))
    v W_vi``.

    Args:
        embed_dim: model dimension E (of the queries and the output).
        num_heads: number of heads; E must divide by it.
        dropout: dropout probability on the attention weights (training only).
        bias: whether the input and output projections have biases.
        add_bias_kv: learn one more key and value appended to the sequences.
        add_zero_attn: append a zero key and value to the sequences.
        kdim, vdim: feature sizes of keys and values (default E); when they differ from E
            the projections are ``q_proj_weight``, ``k_proj_weight`` and ``v_proj_weight``
            instead of the packed ``in_proj_weight``.
        batch_first: inputs and outputs are ``(N, L, E)`` rather than ``(L, N, E)``.

    Shape:
        query ``(L, E)``, ``(L, N, E)`` or ``(N, L, E)``; key ``(S, kdim)``...; value
        ``(S, vdim)``...; output as query, weights ``(N, L, S)`` (or ``(N, num_heads, L, S)``).

    Example:
        >>> mha = nn.MultiheadAttention(8, 2)
        >>> x = tocha.randn(5, 3, 8)
        >>> out, weights = mha(x, x, x)
        >>> out.shape, weights.shape
        (tocha.Size([5, 3, 8]), tocha.Size([3, 5, 5]))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(tocha.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(tocha.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(tocha.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(tocha.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(tocha.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(tocha.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(tocha.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """Xavier-uniform projections, zero biases, Xavier-normal bias_k and bias_v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def merge_masks(
        self, attn_mask: Tensor | None, key_padding_mask: Tensor | None, query: Tensor
    ) -> tuple[Tensor | None, int | None]:
        """One mask and its type from `attn_mask` (``(L, L)`` or ``(N * num_heads, L, L)``,
        type 0) and `key_padding_mask` (``(N, L)``, type 1), `query` being ``(N, L, E)``.

        A key padding mask alone comes back as it is, with type 1. Otherwise the masks are
        expanded to ``(N, num_heads, L, L)`` and added (a logical or for boolean masks),
        with type 2; with neither, ``(None, None)``.
        """
        if attn_mask is None:
            return (key_padding_mask, 1) if key_padding_mask is not None else (None, None)
        batch, seq_len = query.shape[0], query.shape[1]
        if attn_mask.dim() == 2:
            merged = attn_mask.view(1, 1, seq_len, seq_len).expand(batch, self.num_heads, -1, -1)
        else:
            merged = attn_mask.view(batch, -1, seq_len, seq_len)
        if key_padding_mask is not None:
            padding = key_padding_mask.view(batch, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
            merged = merged + padding
        return merged, 2

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """The attention output and, with `need_weights`, the attention weights (averaged
        over heads with `average_attn_weights`). Masks: bool (True hides) or float (added);
        `key_padding_mask` ``(N, S)``, `attn_mask` ``(L, S)`` or ``(N * num_heads, L, S)``;
        `is_causal` is a hint that `attn_mask` is the causal mask."""
        key_padding_mask = _canonical_mask(
            key_padding_mask,
            "key_padding_mask",
            _none_or_dtype(attn_mask),
            "attn_mask",
            query.dtype,
        )
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        separate = not self._qkv_same_embed_dim
        return _multi_head_attention(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            self.training,
            key_padding_mask,
            need_weights,
            attn_mask,
            separate,
            self.q_proj_weight,
            self.k_proj_weight,
            self.v_proj_weight,
            average_attn_weights,
            is_causal,
            self.batch_first and query.dim() == 3,
        )
