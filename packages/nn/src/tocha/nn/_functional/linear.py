"""Linear maps, embeddings and distances: linear, bilinear, embedding, embedding_bag, one_hot,
normalize, cosine_similarity, pairwise_distance.

`linear` and `embedding` are one primitive each (their derivatives and forward rules in tocha
ops); the rest are composites.
"""

from __future__ import annotations

import numpy as np

import tocha
from tocha import Tensor
from tocha.autograd.derivatives import d, fwd
from tocha.library import (
    FROM_NP,
    GRAD_MODE,
    HALF_CHARS,
    LAYERS,
    TITLE,
    autocast_op,
    call,
    defop,
    expect_tensor,
    in_float32,
    index_arg,
    not_a_tensor,
)

from ._dtypes import c_type
from ._jvp import plus

__all__ = [
    "bilinear",
    "cosine_similarity",
    "embedding",
    "embedding_bag",
    "linear",
    "normalize",
    "one_hot",
    "pairwise_distance",
]


# -- linear: x @ w.T + b as one node --------------------------------------------------------
def _linear_kernel(xp):
    def kernel(x, w, b=None):
        if b is not None and b.dtype != x.dtype:  # NumPy would cast the bias silently
            raise RuntimeError(
                f"self and mat2 must have the same dtype, but got {TITLE[FROM_NP[b.dtype]]} "
                f"and {TITLE[FROM_NP[x.dtype]]}"
            )
        if x.dtype.char in HALF_CHARS:  # PyTorch's: a float32 product and sum, rounded once
            return in_float32(kernel)(x, w, b)
        out = x @ w.T
        if b is not None:
            out += b
        return out

    return kernel


def _conj(t):
    """The conjugate of a complex tensor (metadata, and real tensors, unchanged)."""
    return t.conj() if isinstance(t, Tensor) and t.is_complex() else t


def _linear_grad(g, out, x, w, b=None, needs=(True, True, True)):
    """Gradients by x, w and b; none for an input whose gradient is not wanted (the input
    of a first layer). Complex operands are conjugated (PyTorch's convention)."""
    if g.is_complex():
        x, w = _conj(x), _conj(w)
    grad_x = g @ w if needs[0] else None
    grad_w = None
    if needs[1]:
        if x.dim() == 1:
            grad_w = g.unsqueeze(-1) * x
        elif x.dim() == 2:
            grad_w = g.mT @ x
        else:
            grad_w = g.reshape(-1, g.shape[-1]).mT @ x.reshape(-1, x.shape[-1])
    if b is None:
        return grad_x, grad_w
    return grad_x, grad_w, g if g.dim() == 1 else g.sum(tuple(range(g.dim() - 1)))


def _linear_jvp(t, out, x, w, b=None):
    """``t_x @ w.T + x @ t_w.T + t_b``: linear in input and in weight, affine in bias."""
    return plus(
        None if t[0] is None else call(linear_op, (t[0], w)),
        None if t[1] is None else call(linear_op, (x, t[1])),
        None if b is None else t[2],
    )


linear_op = defop("linear", _linear_kernel)
_linear_grad.takes_needs = True
d("linear", "01", _linear_grad, needed_by={"0": "1", "1": "0"})
fwd("linear", _linear_jvp)


def _shape_text(shape) -> str:
    return "x".join(str(n) for n in shape)


@autocast_op("linear", inline=True)
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``.

    Shape:
        input ``(*, in_features)``, weight ``(out_features, in_features)``, bias
        ``(out_features)``; output ``(*, out_features)``.
    """
    try:
        same = input.dtype == weight.dtype
    except AttributeError:
        expect_tensor("linear", input, "input", 1)
        expect_tensor("linear", weight, "weight", 2)
        raise
    if not same:
        if GRAD_MODE.autocast is not None:  # the dispatcher casts operands of one dtype
            return LAYERS.autocast_call("linear", linear, (input, weight, bias), {})
        if bias is not None:
            raise RuntimeError(
                f"mat1 and mat2 must have the same dtype, but got {TITLE[input.dtype]} and "
                f"{TITLE[weight.dtype]}"
            )
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {c_type(input.dtype)} != "
            f"{c_type(weight.dtype)}"
        )
    if weight.dim() != 2 or input.dim() == 0 or input.shape[-1] != weight.shape[1]:
        if weight.dim() == 1 and input.dim() >= 1 and bias is None:
            return tocha.matmul(input, weight)  # a vector weight: PyTorch's dot product per row
        if weight.dim() == 2 and input.dim() >= 1:
            rows = input.numel() // max(input.shape[-1], 1) if input.dim() > 1 else 1
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                f"{_shape_text(reversed(weight.shape))})"
            )
        raise RuntimeError(
            f"linear: weight must be 2-D, input at least 1-D, got weight of "
            f"{weight.dim()} dims and input of {input.dim()} dims"
        )
    if bias is None:
        return call(linear_op, (input, weight))
    return call(linear_op, (input, weight, bias))


@autocast_op("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_k = x1 @ weight[k] @ x2 + bias_k``.

    Shape:
        input1 ``(*, in1)``, input2 ``(*, in2)``, weight ``(out, in1, in2)``; output
        ``(*, out)``.
    """
    for position, (name, t) in enumerate((("input1", input1), ("input2", input2)), 1):
        expect_tensor("bilinear", t, name, position)
    expect_tensor("bilinear", weight, "weight", 3)
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    for i, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if a != b:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got {a} and {b}"
            )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
            f"expected {weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
            f"expected {weight.shape[2]}"
        )
    out = tocha.einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias


# -- embedding ------------------------------------------------------------------------------
def check_rows(indices, n: int) -> None:
    """IndexError unless every index names one of `n` rows."""
    if indices.size and (indices.max() >= n or indices.min() < 0):
        raise IndexError("index out of range in self")


def _embedding_kernel(xp):
    def kernel(weight, indices, padding_idx, scale_grad_by_freq, sparse):
        if indices.size and not weight.shape[0]:  # PyTorch's index_select of no rows
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        check_rows(indices, weight.shape[0])
        return weight[indices]

    return kernel


def _embedding_grad(g, out, weight, indices, padding_idx, scale_grad_by_freq, sparse):
    flat = indices.reshape(-1)
    rows = g.reshape(-1, weight.shape[-1])
    if sparse:
        return _sparse_embedding_grad(flat, rows, weight, padding_idx, scale_grad_by_freq)
    if padding_idx is not None:
        rows = rows * (flat != padding_idx).unsqueeze(1)
    if scale_grad_by_freq:
        counts = tocha.bincount(flat, minlength=weight.shape[0])
        rows = rows / counts[flat].unsqueeze(1).to(g.dtype)
    zeros = tocha.zeros(weight.shape, dtype=g.dtype, device=g.device)
    return zeros.index_put((flat,), rows, accumulate=True), None, None, None


def _sparse_embedding_grad(flat, rows, weight, padding_idx, scale_grad_by_freq):
    """The weight's gradient as a sparse COO tensor, as PyTorch's for ``sparse=True``: one
    entry per index read (uncoalesced), none for `padding_idx`."""
    if scale_grad_by_freq:
        raise RuntimeError(
            "embedding_backward: scale_grad_by_freq not supported with sparse gradients"
        )
    if padding_idx is not None:
        keep = flat != padding_idx
        flat, rows = flat[keep], rows[keep]
    grad = tocha.sparse_coo_tensor(flat.to(tocha.int64).unsqueeze(0), rows, tuple(weight.shape))
    return grad, None, None, None, None


embedding_op = defop("embedding", _embedding_kernel)
d("embedding", "1", _embedding_grad)
# the rows of the weight's tangent at the indices (padding_idx, scale_grad_by_freq and sparse
# only shape the gradient)
fwd("embedding", lambda t, out, weight, indices, *args: call(embedding_op, (t[0], indices), *args))


def _check_indices(input: Tensor, fn: str) -> None:
    if not isinstance(input, Tensor):
        raise not_a_tensor(fn, input, "input", 1)
    if input.dtype not in (tocha.int64, tocha.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{TITLE[input.dtype]}Tensor instead "
            f"(while checking arguments for {fn})"
        )


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float):
    """Rescale, in place, the rows of `weight` that `input` reads to norms of at most
    `max_norm`."""
    with tocha.no_grad():
        rows = tocha.unique(input.reshape(-1))
        selected = weight.detach()[rows]
        norms = selected.norm(norm_type, dim=1, keepdim=True)
        scale = tocha.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.detach().index_put_((rows,), selected * scale)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """The rows of `weight` at the indices `input`.

    `padding_idx` rows get no gradient; `max_norm` renormalises (in place) the rows read to
    at most that norm; `scale_grad_by_freq` divides gradients by how often each index occurs.
    With `sparse`, the weight's gradient is a sparse COO tensor holding the rows read.

    Shape:
        input ``(*)`` of int64 or int32, weight ``(num_embeddings, embedding_dim)``; output
        ``(*, embedding_dim)``.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("embedding", input, "input", 1)
    if not isinstance(weight, Tensor):
        raise not_a_tensor("embedding", weight, "weight", 2)
    for name, given in (("scale_grad_by_freq", scale_grad_by_freq), ("sparse", sparse)):
        if given is not True and given is not False:
            raise TypeError(
                f"embedding(): argument '{name}' must be bool, not {type(given).__name__}"
            )
    _check_indices(input, "embedding")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= n:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return call(embedding_op, (weight, input), padding_idx, scale_grad_by_freq, sparse)


def _check_offsets(starts: np.ndarray, length: int) -> None:
    """PyTorch's errors for bag offsets that do not cut an input of `length` indices: the
    first must be 0, none may pass the end, and they may not decrease."""
    if not starts.size:
        return
    if starts[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {starts[0]}"
        )
    if starts[-1] > length:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {length} but got "
            f"offsets[-1] of {starts[-1]}"
        )
    if (np.diff(starts) < 0).any():
        raise RuntimeError(f"offsets must be non-decreasing, but got {starts.tolist()}")


def _bag_ids(input: Tensor, offsets: Tensor | None, include_last_offset: bool):
    """The flat indices, the bag of each, and the number of bags."""
    if input.dim() == 2:
        bags, length = input.shape
        ids = np.repeat(np.arange(bags), length)
        return input.reshape(-1), ids, bags
    starts = offsets.numpy(force=True).astype(np.int64)
    _check_offsets(starts, input.shape[0])
    if include_last_offset:
        starts = starts[:-1]
    bags = len(starts)
    ids = np.searchsorted(starts, np.arange(input.shape[0]), side="right") - 1
    return input, ids, bags


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxima of bags of embeddings, without building the embeddings.

    A 2-D `input` is ``(bags, length)``; a 1-D `input` is cut into bags at `offsets` (the
    start of each bag). Entries equal to `padding_idx` are left out of their bag; an empty
    bag gives zeros. `per_sample_weights` scales each entry (mode "sum" only).
    """
    if isinstance(weight, Tensor) and weight.dim() != 2:  # PyTorch checks weight first
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    if not isinstance(input, Tensor):
        raise not_a_tensor("embedding_bag", input, "input", 1)
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    _check_indices(input, "embedding_bag")  # PyTorch's kernel checks the dtype, after these
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    flat, ids, bags = _bag_ids(input, offsets, include_last_offset)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    keep = np.ones(flat.shape[0], dtype=bool)
    if padding_idx is not None:
        keep = flat.numpy(force=True) != padding_idx
    emb = embedding(flat, weight, padding_idx, None, norm_type, scale_grad_by_freq)
    if per_sample_weights is not None:
        emb = emb * per_sample_weights.reshape(-1, 1)
    dim = weight.shape[1]
    index = tocha.from_numpy(ids).to(weight.device)
    zeros = tocha.zeros((bags, dim), dtype=weight.dtype, device=weight.device)
    if mode == "max":
        mask = tocha.from_numpy(keep).to(weight.device).unsqueeze(1)
        emb = tocha.where(mask, emb, -float("inf"))
        out = zeros.scatter_reduce(
            0, index.unsqueeze(1).expand(-1, dim), emb, "amax", include_self=False
        )
        return tocha.where(out.isneginf(), 0.0, out)
    out = zeros.index_add(0, index, emb)
    if mode == "mean":
        counts = np.bincount(ids[keep], minlength=bags).astype(np.float64)
        counts = tocha.from_numpy(np.maximum(counts, 1)).to(weight.device, weight.dtype)
        out = out / counts.unsqueeze(1)
    return out


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 vectors with a 1 at each index of `tensor` (``num_classes`` long, by default
    ``tensor.max() + 1``).

    Shape:
        ``(*)`` -> ``(*, num_classes)``.
    """
    if not isinstance(tensor, Tensor):
        raise not_a_tensor("one_hot", tensor, "tensor", 1)
    if tensor.dtype != tocha.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if tensor.min().item() < 0:
            raise RuntimeError("Class values must be non-negative.")
        top = tensor.max().item()
        if num_classes == -1:
            num_classes = top + 1
        elif top >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    if tensor.numel() and tensor.numel() * num_classes * 8 >= 2**63:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={[*tensor.shape, num_classes]}"
        )
    classes = tocha.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """``input / max(||input||_p, eps)`` along `dim`."""
    result = input / input.norm(p, dim, keepdim=True).clamp_min(eps)
    if out is None:
        return result
    out.copy_(result)
    return out


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along `dim` (inputs broadcast)."""
    if type(dim) is not int:
        dim = index_arg("cosine_similarity", dim, "dim")
    x1, x2 = tocha.broadcast_tensors(x1, x2)
    common = tocha.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError(
            f"expected common dtype to be floating point, yet common dtype is {TITLE[common]}"
        )
    if not eps >= 0:  # NaN too
        raise RuntimeError(f"eps must be non-negative, got: {eps:g}")
    if 3.4028234663852886e38 < eps < float("inf") and common is not tocha.float64:
        raise RuntimeError("value cannot be converted to type float without overflow")
    x1, x2 = x1.to(common), x2.to(common)
    n1 = x1.norm(2, dim, keepdim=True).clamp_min(eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim."""
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)
