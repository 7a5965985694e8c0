"""``tocha.nn.attention.flex_attention``, as ``torch.nn.attention.flex_attention``: attention
whose scores a Python function modifies (`score_mod`) and whose mask a Python function
describes (`create_block_mask`'s `mask_mod`).

Both functions are written for one score, ``mask_mod(b, h, q_idx, kv_idx) -> bool`` and
``score_mod(score, b, h, q_idx, kv_idx) -> score``, with tensor operations; tocha calls each
once on index tensors that broadcast to the whole ``(B, H, Q_LEN, KV_LEN)`` grid (``b`` of
shape ``(B, 1, 1, 1)``, ``kv_idx`` of shape ``(1, 1, 1, KV_LEN)``...), which gives the same
values. tocha computes the attention densely (the block structure is kept for inspection);
gradients flow through it as through any tocha ops.

Example:
    >>> def causal(b, h, q_idx, kv_idx):
    ...     return q_idx >= kv_idx
    >>> mask = create_block_mask(causal, None, None, 4, 4, device="cpu")
    >>> q = k = v = tocha.randn(1, 2, 4, 8)
    >>> flex_attention(q, k, v, block_mask=mask).shape
    tocha.Size([1, 2, 4, 8])
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import NamedTuple

import tocha

__all__ = [
    "AuxOutput",
    "AuxRequest",
    "BlockMask",
    "create_block_mask",
    "flex_attention",
    "noop_mask",
]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


def noop_mask(b, h, q_idx, kv_idx):
    """The mask that keeps every score."""
    return tocha.ones((), dtype=tocha.bool)


@dataclasses.dataclass(frozen=True)
class AuxRequest:
    """Which extra outputs `flex_attention` returns beside the attention (``return_aux``):
    `lse`, the log-sum-exp of each query's scores, and `max_scores`, their maximum."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """`flex_attention`'s extra outputs (None where not requested), each ``(B, H, Q_LEN)``."""

    lse: tocha.Tensor | None = None
    max_scores: tocha.Tensor | None = None


def _grid(batch: int, heads: int, q_len: int, kv_len: int, device) -> tuple:
    """Index tensors ``b, h, q_idx, kv_idx`` that broadcast to the ``(B, H, Q, KV)`` grid."""

    def index(n: int, dim: int) -> tocha.Tensor:
        shape = [1, 1, 1, 1]
        shape[dim] = n
        return tocha.arange(n, device=device).view(shape)

    return index(batch, 0), index(heads, 1), index(q_len, 2), index(kv_len, 3)


def _dense_mask(mask_mod: Callable, batch: int, heads: int, q_len: int, kv_len: int, device):
    """`mask_mod` over the whole grid: a bool tensor ``(B, H, Q_LEN, KV_LEN)``."""
    keep = mask_mod(*_grid(batch, heads, q_len, kv_len, device))
    return tocha.as_tensor(keep, device=device).to(tocha.bool).expand(batch, heads, q_len, kv_len)


def _blocks(kept: tocha.Tensor, rows: int, cols: int) -> tocha.Tensor:
    """Per ``(rows, cols)`` block of the boolean ``kept`` (``(B, H, Q, KV)``, padded with
    False to whole blocks): how many of its entries are kept, ``(B, H, nQ, nKV)``."""
    batch, heads, q_len, kv_len = kept.shape
    n_q, n_kv = -(-q_len // rows), -(-kv_len // cols)
    padded = tocha.zeros(batch, heads, n_q * rows, n_kv * cols, dtype=tocha.int32)
    padded[:, :, :q_len, :kv_len] = kept.to(tocha.int32)
    return padded.view(batch, heads, n_q, rows, n_kv, cols).sum(dim=(3, 5))


def _ordered(selected: tocha.Tensor) -> tuple[tocha.Tensor, tocha.Tensor]:
    """For a boolean ``(..., nKV)``: how many are selected, and the column indices with the
    selected ones first (in order)."""
    count = selected.sum(-1).to(tocha.int32)
    order = tocha.argsort((~selected).to(tocha.int32), dim=-1, stable=True).to(tocha.int32)
    return count, order


class BlockMask:
    """A mask over ``(B, H, Q_LEN, KV_LEN)`` attention scores, in blocks of ``BLOCK_SIZE``:
    for each query block, the key blocks partly kept (`kv_num_blocks`, `kv_indices`) and
    those wholly kept (`full_kv_num_blocks`, `full_kv_indices`), and the `mask_mod` it came
    from. Made by `create_block_mask`."""

    def __init__(
        self,
        seq_lengths: tuple[int, int],
        kv_num_blocks: tocha.Tensor,
        kv_indices: tocha.Tensor,
        full_kv_num_blocks: tocha.Tensor | None,
        full_kv_indices: tocha.Tensor | None,
        BLOCK_SIZE: tuple[int, int],  # noqa: N803 - PyTorch's name
        mask_mod: Callable,
    ) -> None:
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """``(B, H, Q_LEN, KV_LEN)``."""
        return (*self.kv_num_blocks.shape[:2], *self.seq_lengths)

    def to_dense(self) -> tocha.Tensor:
        """The block-level mask, ``(B, H, nQ, nKV)`` int32: 1 where a block is (partly or
        wholly) kept."""
        dense = _scatter_blocks(self.kv_num_blocks, self.kv_indices)
        if self.full_kv_num_blocks is not None:
            dense = dense | _scatter_blocks(self.full_kv_num_blocks, self.full_kv_indices)
        return dense.to(tocha.int32)

    def sparsity(self) -> float:
        """The percentage of blocks that are skipped."""
        dense = self.to_dense()
        return 100.0 * (1 - dense.sum().item() / dense.numel())

    def __repr__(self) -> str:
        return (
            f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, "
            f"mask_mod={getattr(self.mask_mod, '__name__', repr(self.mask_mod))})"
        )


def _scatter_blocks(num_blocks: tocha.Tensor, indices: tocha.Tensor) -> tocha.Tensor:
    n_kv = indices.shape[-1]
    position = tocha.arange(n_kv).view(1, 1, 1, n_kv)
    chosen = position < num_blocks.unsqueeze(-1)
    dense = tocha.zeros(indices.shape, dtype=tocha.bool)
    return dense.scatter(-1, indices.to(tocha.int64), chosen)


def create_block_mask(
    mask_mod: Callable,
    B: int | None,  # noqa: N803 - PyTorch's names
    H: int | None,  # noqa: N803
    Q_LEN: int,  # noqa: N803
    KV_LEN: int,  # noqa: N803
    device="cuda",
    BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,  # noqa: N803
    _compile: bool = False,
) -> BlockMask:
    """The `BlockMask` of ``mask_mod(b, h, q_idx, kv_idx)`` over batch `B` and heads `H`
    (None: one, broadcast over any) and `Q_LEN` × `KV_LEN` scores."""
    batch, heads = B or 1, H or 1
    rows, cols = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    device = tocha.device(device)
    if device.type == "cuda" and not tocha.cuda.is_available():
        device = tocha.device("cpu")
    kept = _dense_mask(mask_mod, batch, heads, Q_LEN, KV_LEN, device)
    counts = _blocks(kept, rows, cols)
    full = counts == rows * cols  # a block that padding reaches is never full
    partial = (counts > 0) & ~full
    kv_num, kv_idx = _ordered(partial)
    full_num, full_idx = _ordered(full)
    return BlockMask((Q_LEN, KV_LEN), kv_num, kv_idx, full_num, full_idx, (rows, cols), mask_mod)


def flex_attention(
    query: tocha.Tensor,
    key: tocha.Tensor,
    value: tocha.Tensor,
    score_mod: Callable | None = None,
    block_mask: BlockMask | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    kernel_options: dict | None = None,
    *,
    return_aux: AuxRequest | None = None,
):
    """Attention of `query` ``(B, Hq, L, E)`` over `key` ``(B, Hkv, S, E)`` and `value`
    ``(B, Hkv, S, Ev)``: ``softmax(score_mod(q·k * scale) masked by block_mask) @ value``,
    ``(B, Hq, L, Ev)``. `scale` defaults to ``1/sqrt(E)``; with `enable_gqa`, each key/value
    head serves ``Hq // Hkv`` query heads. A query whose scores are all masked gets zeros
    (and a log-sum-exp of -inf). With `return_lse`, also returns the log-sum-exp of each
    query's scores ``(B, Hq, L)``; with `return_aux`, an `AuxOutput` with what it requests."""
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise ValueError("NYI: query, key, and value must be 4D tensors")
    batch, q_heads, q_len, head_dim = query.shape
    kv_heads, kv_len = key.shape[1], key.shape[2]
    if q_heads != kv_heads:
        if not enable_gqa:
            raise ValueError(
                f"Expect query and key/value to have the same number of heads but got "
                f"Hq={q_heads} and Hkv={kv_heads}. Try setting enable_gqa=True for GQA."
            )
        if q_heads % kv_heads:
            raise ValueError(
                f"Expect number of query heads to be a multiple of kv heads for GQA but got "
                f"Hq={q_heads} and Hkv={kv_heads}."
            )
        key = key.repeat_interleave(q_heads // kv_heads, dim=1)
        value = value.repeat_interleave(q_heads // kv_heads, dim=1)
    scale = 1.0 / math.sqrt(head_dim) if scale is None else scale
    scores = tocha.matmul(query, key.transpose(-2, -1)) * scale
    grid = _grid(batch, q_heads, q_len, kv_len, query.device)
    if score_mod is not None:
        scores = score_mod(scores, *grid)
    if block_mask is not None:
        keep = block_mask.mask_mod(*grid)
        scores = scores.masked_fill(~tocha.as_tensor(keep, device=query.device), float("-inf"))
    scores = scores.float()
    lse = tocha.logsumexp(scores, dim=-1, keepdim=True)
    # A query whose scores are all masked has lse -inf: its weights are exp(-inf) = 0.
    weights = tocha.exp(scores - lse.masked_fill(lse == float("-inf"), 0.0))
    out = tocha.matmul(weights.to(value.dtype), value)
    lse = lse.squeeze(-1)
    if return_aux is not None:
        aux = AuxOutput(
            lse=lse if return_aux.lse else None,
            max_scores=scores.amax(dim=-1) if return_aux.max_scores else None,
        )
        return out, aux
    if return_lse:
        return out, lse
    return out
