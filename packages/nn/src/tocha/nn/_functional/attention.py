"""Attention: scaled_dot_product_attention and multi_head_attention_forward.

The attention core ``softmax(q @ k.T * scale + mask) @ v`` is one primitive
(``scaled_dot_product_attention``) with the softmax fused inside. It returns the output and the
attention probabilities (saved for the backward, and the weights MultiheadAttention returns).
Its first derivative is a fused kernel (``scaled_dot_product_attention_backward``, not itself
differentiable); under ``create_graph=True``, or while a transform (a forward-AD level, vmap) is
active, the derivative is written in tocha ops instead, so second derivatives work. Its forward
rule (`fwd`) differentiates scores, softmax and output in turn. Everything around it
(projections, masks, heads) is a composite.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import tocha
from tocha import Tensor
from tocha.autograd.derivatives import d, fwd
from tocha.library import GRAD_MODE, TITLE, call, defop, not_a_tensor

from ._dtypes import keeping_dtype
from ._jvp import plus
from .linear import linear

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]


# -- the primitive ---------------------------------------------------------------------------
def _swap(x):
    """The last two axes of an array swapped (a view)."""
    return x.swapaxes(-1, -2)


def _sdpa_kernel(xp):
    def kernel(q, k, v, *rest):
        """`rest`: the float mask ("m" in `code`), the scaled keep-mask of dropout ("d"), then
        scale, causal and code; "n" in code: plain softmax (fully masked rows give NaN, not 0).
        """
        *extra, scale, causal, code = rest
        s = q @ _swap(k)
        s *= scale
        if "m" in code:
            mask = extra[0]
            try:
                fits = np.broadcast_shapes(s.shape, mask.shape) == s.shape
            except ValueError:
                tocha.broadcast_shapes(s.shape, mask.shape)  # raises PyTorch's RuntimeError
                raise
            if fits:
                s += mask
            else:
                s = s + mask
        if causal:
            s += xp.triu(xp.full(s.shape[-2:], -xp.inf, dtype=s.dtype), 1)
        top = s.max(axis=-1, keepdims=True)
        if "n" not in code:
            top[top == -xp.inf] = 0
        s -= top
        xp.exp(s, out=s)
        total = s.sum(axis=-1, keepdims=True)
        if "n" not in code:
            total[total == 0] = 1
        s *= 1 / total  # one division per row
        weights = s * extra[-1] if "d" in code else s
        return weights @ v, s

    return kernel


def _sdpa_backward_kernel(xp):
    def kernel(g_out, g_p, q, k, v, p, *rest):
        """Gradients of q, k, v and the mask (those named in `wanted`) from those of the
        output and the probabilities."""
        *keep, scale, wanted = rest
        weights = p * keep[0] if keep else p
        g_s = g_out @ _swap(v)
        if keep:
            g_s *= keep[0]
        g_s += g_p
        g_s -= xp.einsum("...ij,...ij->...i", g_s, p)[..., None]
        g_s *= p
        grads = [None] * 4
        if "v" in wanted:
            grads[2] = _swap(weights) @ g_out
        if "m" in wanted:
            grads[3] = g_s.copy()
        g_s *= scale
        if "q" in wanted:
            grads[0] = g_s @ k
        if "k" in wanted:
            grads[1] = _swap(g_s) @ q
        return tuple(xp.zeros(0, dtype=p.dtype) if g is None else g for g in grads)

    return kernel


sdpa_op = defop("scaled_dot_product_attention", keeping_dtype(_sdpa_kernel))
sdpa_backward_op = defop(
    "scaled_dot_product_attention_backward",
    keeping_dtype(_sdpa_backward_kernel),
    differentiable=False,
)


def _sdpa_grad(grads, out, q, k, v, *rest, needs):
    """Gradients of q, k, v and a float mask from those of the output and the probabilities:
    the fused kernel (only the gradients needed), or tocha ops under create_graph."""
    *extra, scale, causal, code = rest
    g_out, g_p = grads
    p = out[1]
    mask = extra[0] if "m" in code else None
    keep = (extra[-1],) if "d" in code else ()
    wanted = "".join(name for name, need in zip("qkvm", needs[: 3 + (mask is not None)]) if need)
    if not (GRAD_MODE.grad_enabled or GRAD_MODE.transforms):
        result = call(sdpa_backward_op, (g_out, g_p, q, k, v, p, *keep), scale, wanted)
        grads = [g if name in wanted else None for name, g in zip("qkvm", result)]
    else:
        weights = p * keep[0] if keep else p
        g_w = g_out @ v.mT
        g_p = g_p + (g_w * keep[0] if keep else g_w)
        g_s = p * (g_p - (g_p * p).sum(-1, keepdim=True))
        grads = [(g_s @ k) * scale, (g_s.mT @ q) * scale, weights.mT @ g_out, g_s]
    return (*grads[:3], *(grads[3:] if mask is not None else ()), *(None,) * (len(keep) + 3))


def _sdpa_jvp(t, out, q, k, v, *rest):
    """Tangents of the scores ``s = q @ k.T * scale + mask``, of the probabilities
    ``p = softmax(s)``: ``p * (t_s - sum(p * t_s))``, and of the output ``(p * keep) @ v``
    (the dropout keep-mask is a constant)."""
    *extra, scale, causal, code = rest
    p = out[1]
    t_q, t_k, t_v = t[:3]
    keep = extra[-1] if "d" in code else None
    t_s = plus(
        None if t_q is None else (t_q @ k.mT) * scale,
        None if t_k is None else (q @ t_k.mT) * scale,
        t[3] if "m" in code else None,
    )
    t_p = None if t_s is None else p * (t_s - (p * t_s).sum(-1, keepdim=True))
    weights = p if keep is None else p * keep
    by_p = None if t_p is None else (t_p if keep is None else t_p * keep) @ v
    return plus(by_p, None if t_v is None else weights @ t_v), t_p


_sdpa_grad.takes_needs = True
d("scaled_dot_product_attention", "0+o", _sdpa_grad)
fwd("scaled_dot_product_attention", _sdpa_jvp)


def _attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    dropout_p: float,
    causal: bool,
    scale: float,
    nan_rows: bool = False,
) -> tuple[Tensor, Tensor]:
    """The primitive on prepared inputs (float or no mask): the output and the attention
    weights (after dropout)."""
    tensors, code = [q, k, v], "n" if nan_rows else ""
    if mask is not None:
        tensors.append(mask)
        code += "m"
    keep = None
    if dropout_p > 0.0:
        src = k.shape[-2]
        shape = tuple(
            np.broadcast_shapes(
                q.shape[:-1] + (src,), k.shape[:-2] + (1, src), () if mask is None else mask.shape
            )
        )
        keep = tocha.zeros(shape, dtype=q.dtype, device=q.device)
        if dropout_p < 1.0:  # dropout's Bernoulli(1 - p) draw, scaled as dropout scales it
            keep.bernoulli_(1.0 - dropout_p).div_(1.0 - dropout_p)
        tensors.append(keep)
        code += "d"
    out, p = call(sdpa_op, tuple(tensors), scale, causal, code)
    return out, (p if keep is None else p * keep)


def _size(shape) -> str:
    """A shape as PyTorch prints it in messages."""
    return f"torch.Size({list(shape)})"


def _dtype_name(dtype) -> str:
    return TITLE[dtype].lower()


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(query @ key.T * scale + mask) @ value``, dropout applied to the softmax.

    `attn_mask` is a bool mask (True: may attend) or a float mask added to the scores,
    broadcastable to ``(..., L, S)``; `is_causal` (without a mask) hides the keys after each
    query (the top-left aligned lower triangle). `scale` defaults to ``1 / sqrt(E)``. With
    `enable_gqa`, key and value may have fewer heads (dim -3) than query, each shared by a
    group of query heads. Rows that may attend to no key give zeros.

    Shape:
        query ``(..., L, E)``, key ``(..., S, E)``, value ``(..., S, Ev)``; output
        ``(..., L, Ev)``.

    Example:
        >>> q = tocha.ones(1, 2, 4)
        >>> F.scaled_dot_product_attention(q, q, q).shape
        tocha.Size([1, 2, 4])
    """
    if not isinstance(query, Tensor):
        raise not_a_tensor("scaled_dot_product_attention", query, "query", 1)
    if not isinstance(key, Tensor):
        raise not_a_tensor("scaled_dot_product_attention", key, "key", 2)
    if not isinstance(value, Tensor):
        raise not_a_tensor("scaled_dot_product_attention", value, "value", 3)
    for name, given in (("is_causal", is_causal), ("enable_gqa", enable_gqa)):
        if given is not True and given is not False:
            raise TypeError(
                f"scaled_dot_product_attention(): argument '{name}' must be bool, not "
                f"{type(given).__name__}"
            )
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_dtype_name(query.dtype)} key.dtype: {_dtype_name(key.dtype)} and value.dtype: "
            f"{_dtype_name(value.dtype)} instead."
        )
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if query.shape[-2] == 0 or value.shape[-1] == 0:  # an empty result: PyTorch computes
        # nothing (integer inputs give int64)
        numeric = query.dtype.is_floating_point or query.dtype.is_complex
        batch = tocha.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
        shape = (*batch, query.shape[-2], value.shape[-1])
        return tocha.zeros(shape, dtype=query.dtype if numeric else tocha.int64)
    if not query.dtype.is_floating_point:
        if query.dtype.is_complex:
            raise NotImplementedError(
                f"\"softmax_lastdim_kernel_impl\" not implemented for '{TITLE[query.dtype]}'"
            )
        raise RuntimeError(f"expected scalar type Float but found {TITLE[query.dtype]}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"Expected query, key and value to have matching sizes, but got query of size "
            f"{list(query.shape)}, key of size {list(key.shape)} and value of size "
            f"{list(value.shape)}"
        )
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if attn_mask is not None:
        if not isinstance(attn_mask, Tensor):
            raise not_a_tensor("scaled_dot_product_attention", attn_mask, "attn_mask", None)
        if is_causal and not _fused_takes_mask_and_causal(query, key, value, dropout_p):
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be "
                "set when is_causal=True"
            )
        if attn_mask.dtype == tocha.bool:
            attn_mask = tocha.zeros(
                attn_mask.shape, dtype=query.dtype, device=query.device
            ).masked_fill_(~attn_mask, -math.inf)
        elif attn_mask.dtype != query.dtype:
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {_dtype_name(attn_mask.dtype)} and  query.dtype: "
                f"{_dtype_name(query.dtype)} instead."
            )
    if attn_mask is not None and is_causal:
        attn_mask = attn_mask + _causal_mask(query.shape[-2], key.shape[-2], attn_mask)
        is_causal = False
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        heads = query.shape[-3]
        if heads % key.shape[-3] or heads % value.shape[-3]:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in query"
            )
        key = key.repeat_interleave(heads // key.shape[-3], -3)
        value = value.repeat_interleave(heads // value.shape[-3], -3)
    batch = _check_batch_dims(query.shape[:-2], key.shape[:-2])
    _check_batch_dims(batch, value.shape[:-2])
    if not _kernel_allowed(query.device.type):
        raise RuntimeError(
            "No viable backend for scaled_dot_product_attention was found. This is likely due "
            "to turning off both the math kernel and the fused kernels."
        )
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    return _attention(query, key, value, attn_mask, dropout_p, is_causal, scale)[0]


def _check_batch_dims(a: tuple, b: tuple) -> tuple:
    """The broadcast of batch shapes `a` and `b`, or PyTorch's error where they clash."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
    return tuple(max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b))


def _fused_takes_mask_and_causal(query: Tensor, key: Tensor, value: Tensor, dropout_p) -> bool:
    """Whether PyTorch's CPU flash kernel would run this call, which applies an explicit mask
    and `is_causal` together (its math kernel refuses both): 4-D inputs, no dropout, the
    flash kernel enabled."""
    return (
        query.device.type == "cpu"
        and query.dim() == key.dim() == value.dim() == 4
        and dropout_p == 0.0
        and tocha.backends.cuda.flash_sdp_enabled()
    )


def _causal_mask(target: int, source: int, like: Tensor) -> Tensor:
    """The additive ``(target, source)`` mask of `is_causal`: -inf above the diagonal."""
    hidden = tocha.ones(target, source, dtype=tocha.bool, device=like.device).triu(1)
    return tocha.zeros(target, source, dtype=like.dtype, device=like.device).masked_fill_(
        hidden, -math.inf
    )


def _kernel_allowed(device_type: str) -> bool:
    """Whether the switches of ``tocha.backends.cuda`` (`sdpa_kernel` sets them) leave
    tocha's one attention kernel usable: on the CPU it stands for PyTorch's math and flash
    kernels, elsewhere for any of them."""
    flags = tocha.backends.cuda
    if flags.math_sdp_enabled() or flags.flash_sdp_enabled():
        return True
    return device_type != "cpu" and (flags.mem_efficient_sdp_enabled() or flags.cudnn_sdp_enabled())


# -- multi-head attention --------------------------------------------------------------------
def _none_or_dtype(input: Tensor | None):
    """The dtype of `input`, or None."""
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type,
    other_name: str,
    target_type,
    check_other: bool = True,
) -> Tensor | None:
    """A bool mask (True: hidden) as a float mask of `target_type` (0 or -inf); a float mask
    as is. Warns when its dtype differs from the other mask's (`other_type`)."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype != tocha.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. "
            "Use same type for both instead.",
            stacklevel=2,
        )
    if not is_float:
        mask = tocha.zeros(mask.shape, dtype=target_type, device=mask.device).masked_fill_(
            mask, -math.inf
        )
    return mask


def _mha_shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Whether the inputs are batched (3-D query); AssertionError for inconsistent ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or "
                    f"3-D but found {attn_mask.dim()}-D tensor instead"
                )
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(
                    f"Expected `attn_mask` shape to be {expected} but got {_size(attn_mask.shape)}"
                )
        return False
    raise AssertionError(
        "query should be unbatched 2D or batched 3D tensor but received "
        f"{query.dim()}-D query tensor"
    )


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None):
    """q, k and v projected by the rows of `w` (and `b`) packed in q, k, v order; one matmul
    when they are the same tensor (self-attention), two when k is v."""
    e = q.shape[-1]
    if k is v and q is k:
        return linear(q, w, b).chunk(3, -1)
    if k is v:
        w_q, w_kv = w.split([e, 2 * e])
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])
        return (linear(q, w_q, b_q), *linear(k, w_kv, b_kv).chunk(2, -1))
    ws = w.chunk(3)
    bs = (None,) * 3 if b is None else b.chunk(3)
    return tuple(linear(x, w_x, b_x) for x, w_x, b_x in zip((q, k, v), ws, bs))


def _in_projection(
    q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, b: Tensor | None
):
    """q, k and v projected by their own weights (and the thirds of the packed bias `b`)."""
    e_q, e_k, e_v = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, w, shape in (
        ("query", w_q, (e_q, e_q)),
        ("key", w_k, (e_q, e_k)),
        ("value", w_v, (e_q, e_v)),
    ):
        if tuple(w.shape) != shape:
            raise AssertionError(
                f"expecting {name} weights shape of {shape}, but got {_size(w.shape)}"
            )
    bs = (None,) * 3 if b is None else b.chunk(3)
    return tuple(linear(x, w_x, b_x) for x, w_x, b_x in zip((q, k, v), (w_q, w_k, w_v), bs))


def _append_column(mask: Tensor | None) -> Tensor | None:
    """`mask` with one more key column of zeros (for bias_k/bias_v and add_zero_attn)."""
    if mask is None:
        return None
    pad = tocha.zeros((*mask.shape[:-1], 1), dtype=mask.dtype, device=mask.device)
    return tocha.cat([mask, pad], -1)


def _static_heads(name: str, static: Tensor, bsz: int, num_heads: int, head_dim: int) -> Tensor:
    """A given ``(N * num_heads, S, head_dim)`` key or value as ``(N, num_heads, S,
    head_dim)`` heads, checked as PyTorch checks it."""
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(
            f"expecting {name}.size(0) of {bsz * num_heads}, but got {static.shape[0]}"
        )
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static.reshape(bsz, num_heads, static.shape[1], head_dim)


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of ``(L, N, E)`` queries over ``(S, N, E)`` keys and values
    (``(L, E)`` and ``(S, E)`` unbatched), as ``nn.MultiheadAttention``.

    The inputs are projected (packed `in_proj_weight`, or `q/k/v_proj_weight` with
    `use_separate_proj_weight`), split into `num_heads` heads, attended (masks: bool True
    hides, float is added; `key_padding_mask` ``(N, S)``, `attn_mask` ``(L, S)`` or
    ``(N * num_heads, L, S)``), joined and projected by `out_proj_weight`. `static_k` and
    `static_v`, ``(N * num_heads, S, head_dim)``, replace the projected keys and values.

    Returns:
        the output ``(L, N, E)`` and, with `need_weights`, the attention weights
        ``(N, L, S)`` (averaged over heads) or ``(N, num_heads, L, S)``; else None.
    """
    return _multi_head_attention(
        query,
        key,
        value,
        embed_dim_to_check,
        num_heads,
        in_proj_weight,
        in_proj_bias,
        bias_k,
        bias_v,
        add_zero_attn,
        dropout_p,
        out_proj_weight,
        out_proj_bias,
        training,
        key_padding_mask,
        need_weights,
        attn_mask,
        use_separate_proj_weight,
        q_proj_weight,
        k_proj_weight,
        v_proj_weight,
        average_attn_weights,
        is_causal,
        False,
        static_k,
        static_v,
    )


def _multi_head_attention(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training,
    key_padding_mask,
    need_weights,
    attn_mask,
    use_separate_proj_weight,
    q_proj_weight,
    k_proj_weight,
    v_proj_weight,
    average_attn_weights,
    is_causal,
    batch_first,
    static_k=None,
    static_v=None,
):
    """multi_head_attention_forward on ``(L, N, E)`` inputs, or on ``(N, L, E)`` ones with
    `batch_first` (no transposes: the heads are strided views of the projections; the output
    is projected in ``(L, N, E)`` order, and batch_first's is a transposed view of it)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
        batch_first = False
    seq = 1 if batch_first else 0
    bsz, tgt_len, embed_dim = query.shape[1 - seq], query.shape[seq], query.shape[2]
    src_len = key.shape[seq]
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {_size(key.shape[:2])} do not "
                f"match value's {_size(value.shape[:2])}"
            )
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        q, k, v = _in_projection(
            query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias
        )
    else:
        if key.shape != value.shape:
            raise AssertionError(
                f"key shape {_size(key.shape)} does not match value shape {_size(value.shape)}"
            )
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {_size(attn_mask.shape)}, "
                    f"but should be {(tgt_len, src_len)}."
                )
        elif tuple(attn_mask.shape) == (bsz * num_heads, tgt_len, src_len):
            attn_mask = attn_mask.reshape(bsz, num_heads, tgt_len, src_len)
        else:
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, but "
                f"should be {(bsz * num_heads, tgt_len, src_len)}."
            )
    if bias_k is not None and bias_v is not None:
        shape = (bsz, 1, embed_dim) if batch_first else (1, bsz, embed_dim)
        k = tocha.cat([k, bias_k.expand(shape)], seq)
        v = tocha.cat([v, bias_v.expand(shape)], seq)
        attn_mask = _append_column(attn_mask)
        key_padding_mask = _append_column(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # the heads: (N, H, T, head_dim) views of the (T, N, E) or (N, T, E) projections
    order = (0, 2, 1, 3) if batch_first else (1, 2, 0, 3)
    q, k, v = (x.unflatten(-1, (num_heads, head_dim)).permute(order) for x in (q, k, v))
    if static_k is not None:
        k = _static_heads("static_k", static_k, bsz, num_heads, head_dim)
    if static_v is not None:
        v = _static_heads("static_v", static_v, bsz, num_heads, head_dim)
    if k.shape[2] != v.shape[2]:  # a static key or value of another length
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{bsz * num_heads}, {k.shape[2]}] but got: [{bsz * num_heads}, {v.shape[2]}]."
        )
    if add_zero_attn:
        zeros = tocha.zeros((bsz, num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = tocha.cat([k, zeros], 2)
        v = tocha.cat([v, zeros], 2)
        attn_mask = _append_column(attn_mask)
        key_padding_mask = _append_column(key_padding_mask)
    src_len = k.shape[2]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                f"{key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                f"{key_padding_mask.shape[1]}"
            )
        padding = key_padding_mask.reshape(bsz, 1, 1, src_len)
        attn_mask = padding if attn_mask is None else attn_mask + padding
    if not training:
        dropout_p = 0.0

    out, weights = _attention(
        q, k, v, attn_mask, dropout_p, is_causal, 1.0 / math.sqrt(head_dim), nan_rows=need_weights
    )
    # Projected in (T, N, E) order; batch_first gets a transposed view, laid out as PyTorch's
    # (dropout after it draws its mask in that memory order).
    out = out.permute(2, 0, 1, 3)
    out = linear(out.reshape(-1, embed_dim), out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, embed_dim)
    if batch_first:
        out = out.transpose(0, 1)
    if not need_weights:
        return (out if is_batched else out.squeeze(1)), None
    if average_attn_weights:
        weights = weights.mean(1)
    if not is_batched:
        return out.squeeze(1), weights.squeeze(0)
    return out, weights
