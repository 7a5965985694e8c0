"""Loss functions: the functional forms behind the ``tocha.nn`` loss layers.

``cross_entropy`` with class indices (log_softmax + nll, weights, ignore_index, label
smoothing), ``nll_loss``, ``binary_cross_entropy`` and ``ctc_loss`` are one primitive each with
a hand-written backward and a forward rule (`fwd`; class weights are constants in both, as
PyTorch declares them); the other losses are cheap composites of tocha ops.

Every loss takes ``reduction`` ("none", "mean" or "sum"); the legacy ``size_average`` and
``reduce`` arguments override it, with PyTorch's deprecation warning.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from contextlib import nullcontext

import tocha
from tocha import Tensor
from tocha.autograd.derivatives import d, fwd
from tocha.library import (
    GRAD_MODE,
    HALF_CHARS,
    LAYERS,
    TITLE,
    autocast_op,
    call,
    check_scalar_converts,
    defop,
    not_a_tensor,
)

from ._jvp import plus
from .activation import log_softmax_op, logsigmoid, softmax, softmax_backward_op
from .linear import linear, pairwise_distance

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "cross_entropy",
    "linear_cross_entropy",
    "ctc_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

REDUCTIONS = ("none", "mean", "sum")


# -- reductions ------------------------------------------------------------------------------
def _expect_tensors(fn_name: str, names: tuple[str, ...], *values) -> None:
    """PyTorch's TypeError for the first of a loss's tensor arguments (`names`, in order)
    that is not a Tensor."""
    for position, (name, value) in enumerate(zip(names, values), 1):
        if not isinstance(value, Tensor):
            raise not_a_tensor(fn_name, value, name, position)


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """The reduction that the deprecated `size_average` / `reduce` pair names, with a warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        stacklevel=3,
    )
    return ret


def _reduction(size_average, reduce, reduction: str) -> str:
    """`reduction`, checked, or the one that legacy arguments name when given."""
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _warn_size(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _weighted(loss: Tensor, weight: Tensor | None, input: Tensor, reduction: str) -> Tensor:
    """`loss` times `weight` reduced as PyTorch's weighted l1/mse/huber losses do."""
    if weight is None:
        return _reduce(loss, reduction)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def _quiet(xp):
    """Silence NumPy's warnings on inf - inf and 0 / 0 inside a kernel (nan is the answer)."""
    errstate = getattr(xp, "errstate", None)
    return nullcontext() if errstate is None else errstate(all="ignore")


# -- nll_loss and cross_entropy: one primitive each ------------------------------------------
def _rows(xp, x, t):
    """`x` as (rows, classes) and `t` as (rows,) int64: (C,), (N, C), (N, C, d1, ...) inputs."""
    idx = t.reshape(-1).astype(xp.int64, copy=False)
    if x.ndim == 1:
        return x[None], idx
    if x.ndim == 2:
        return x, idx
    return xp.moveaxis(x, 1, -1).reshape(-1, x.shape[1]), idx


def _unrows(xp, rows, shape):
    """Rows of class scores back in the layout of an input of `shape`."""
    if len(shape) <= 2:
        return rows.reshape(shape)
    return xp.moveaxis(rows.reshape((shape[0], *shape[2:], shape[1])), -1, 1)


def _targets(xp, idx, w, ignore_index, n_classes, dtype, checked=False):
    """Each row's safe target index, whether it counts, and its weight (0 when ignored).
    Raises IndexError for a target out of bounds, unless `checked` (a backward, whose forward
    checked the same targets)."""
    valid = idx != ignore_index
    if not checked:
        bad = valid & (idx.view(xp.uint64) >= n_classes)
        if xp.count_nonzero(bad):
            raise IndexError(f"Target {int(idx[bad][0])} is out of bounds.")
    safe = idx * valid
    wt = valid.astype(dtype) if w is None else w[safe] * valid
    return safe, valid, wt


def _finish(xp, losses, wt, reduction, x, t):
    """Per-row losses reduced (mean divides by the total target weight)."""
    if reduction == "none":
        return losses.reshape(() if x.ndim == 1 else t.shape)
    total = losses.sum(dtype=losses.dtype)
    if reduction == "mean":
        weight = wt.sum(dtype=wt.dtype)
        total = total / weight if weight else math.nan
    return xp.asarray(total, dtype=losses.dtype)


def _row_scale(g, wt, reduction):
    """The gradient reaching each row: g per row (none), g (sum), g / total weight (mean;
    0 when every target is ignored, as PyTorch)."""
    if reduction == "none":
        return g.reshape(-1)
    if reduction == "mean":
        weight = wt.sum(dtype=wt.dtype)
        return g / weight if weight else g * 0
    return g


def _half_nll(xp, x, t, w, reduction, ignore_index):
    """A reduced float16/bfloat16 nll_loss as PyTorch's CPU kernel sums it: in the input's
    dtype (each step rounded), with its cascade of eight partial sums that a row (in row
    order, ignored rows skipped) moves up a level when its index is a multiple of 16 (of 256
    for the next level, ...); mean divides by the total weight, also in that dtype."""
    low = x.dtype
    rows, idx = _rows(xp, x, t)
    safe, valid, wt = _targets(xp, idx, w, ignore_index, rows.shape[1], low)
    terms = rows[xp.arange(rows.shape[0]), safe] * wt  # rounded, as PyTorch's product
    n = rows.shape[0]
    power = max(4, math.ceil(math.log2(n)) // 8 if n > 1 else 0)
    step = 1 << power
    # level 0 is flushed after each counted row whose index is a multiple of `step`
    flushes = xp.flatnonzero(valid & (xp.arange(n) % step == 0))
    ends = list(flushes + 1) + [n]
    levels = [[low.type(0), low.type(0)] for _ in range(8)]  # (loss, weight) per level
    start = 0
    for k, end in enumerate(ends):
        loss, weight = levels[0]
        for value, count in zip(terms[start:end].tolist(), wt[start:end].tolist()):
            loss = low.type(loss - low.type(value))
            weight = low.type(weight + low.type(count))
        levels[0] = [loss, weight]
        start = end
        if k == len(ends) - 1:
            break
        b = int(flushes[k])
        for j in range(7):
            if j and b & ((step - 1) << (j * power)):
                break
            up, here = levels[j + 1], levels[j]
            levels[j + 1] = [low.type(up[0] + here[0]), low.type(up[1] + here[1])]
            levels[j] = [low.type(0), low.type(0)]
    total, total_weight = low.type(0), low.type(0)
    for loss, weight in levels:
        total, total_weight = low.type(total + loss), low.type(total_weight + weight)
    if w is None:
        total_weight = low.type(int(xp.count_nonzero(valid)))
    if reduction == "mean":
        total = low.type(total / total_weight) if total_weight else low.type(math.nan)
    return xp.asarray(total, dtype=low)


def _nll_kernel(xp):
    def kernel(x, t, w, reduction, ignore_index):
        if reduction != "none" and x.dtype.char in HALF_CHARS and x.size:
            return _half_nll(xp, x, t, w, reduction, ignore_index)
        if _plain(x.ndim, w, reduction, ignore_index, 0) and x.shape[0] and t[t.argmin()] >= 0:
            try:
                picked = x[xp.arange(x.shape[0]), t]
            except IndexError:  # the general path names the target
                pass
            else:
                loss = -picked.sum(dtype=picked.dtype)
                return xp.asarray(loss / x.shape[0] if reduction == "mean" else loss, x.dtype)
        rows, idx = _rows(xp, x, t)
        safe, _, wt = _targets(xp, idx, w, ignore_index, rows.shape[1], x.dtype)
        picked = rows[xp.arange(rows.shape[0]), safe]
        return _finish(xp, -(picked * wt), wt, reduction, x, t)

    return kernel


def _nll_backward_kernel(xp):
    def kernel(g, t, w, shape, reduction, ignore_index):
        if _plain(len(shape), w, reduction, ignore_index, 0) and t.size and t[t.argmin()] >= 0:
            # every target counted (the forward checked their bounds): its plain case
            rows = xp.zeros(shape, g.dtype)
            rows[xp.arange(shape[0]), t] = -(g / shape[0] if reduction == "mean" else g)
            return rows
        n_classes = shape[1] if len(shape) > 1 else shape[0]
        idx = t.reshape(-1).astype(xp.int64, copy=False)
        safe, _, wt = _targets(xp, idx, w, ignore_index, n_classes, g.dtype, checked=True)
        rows = xp.zeros((idx.shape[0], n_classes), g.dtype)
        rows[xp.arange(idx.shape[0]), safe] = -_row_scale(g, wt, reduction) * wt
        return _unrows(xp, rows, shape)

    return kernel


def _row_max(xp, rows, ar):
    """Each row's maximum; through argmax for short rows, where NumPy's max is far slower."""
    if rows.shape[1] > 256:
        return rows.max(axis=1)
    return rows[ar, rows.argmax(axis=1)]


def _plain(ndim, w, reduction, ignore_index, smoothing) -> bool:
    """The common case, which `_ce_plain` (and nll_loss's kernels) serve: (N, C) scores, no
    class weight or smoothing, a reduced loss, and an ignore_index no class index can equal."""
    return ndim == 2 and w is None and not smoothing and reduction != "none" and ignore_index < 0


def _row_starts(xp, n: int, c: int):
    """``arange(n) * c``: where each row of an (n, c) C-ordered array starts in its flat form
    (cached: flat indexing by ``t + starts`` is far faster than NumPy's 2-D fancy indexing)."""
    key = (xp, n, c)
    starts = _ROW_STARTS.get(key)
    if starts is None:
        if len(_ROW_STARTS) > 64:
            _ROW_STARTS.clear()
        starts = _ROW_STARTS[key] = xp.arange(0, n * c, c)
    return starts


_ROW_STARTS: dict = {}


def _in_bounds(t, c: int) -> bool:
    """Whether every class index lies in [0, c) (argmin/argmax: cheaper than NumPy's min)."""
    return t[t.argmin()] >= 0 and t[t.argmax()] < c


def _row_sums(xp, rows):
    """Each row's sum: a matrix-vector product for float32/float64 (NumPy's reduction along
    a short last axis costs twice as much), else a reduction."""
    dtype = rows.dtype
    if dtype.char not in "fd":
        return xp.add.reduce(rows, axis=1)
    key = (xp, rows.shape[1], dtype)
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) > 64:
            _ONES.clear()
        ones = _ONES[key] = xp.ones(rows.shape[1], dtype)
    return xp.matmul(rows, ones)


_ONES: dict = {}


def _ce_plain(xp, x, t, reduction):
    """Cross entropy's `_plain` case in a few cheap NumPy calls (rows through flat indices);
    None when some target is negative (ignored) or out of bounds, which the general path
    reports."""
    n, c = x.shape
    if not n or not c or not _in_bounds(t, c):
        return None
    starts = _row_starts(xp, n, c)
    row_max = x.reshape(-1)[x.argmax(axis=1) + starts]
    probs = xp.subtract(x, row_max[:, None])
    if not probs.flags.c_contiguous:  # its flat form must be a view (the backward's too)
        probs = xp.ascontiguousarray(probs)
    picked = probs.reshape(-1)[t + starts]
    xp.exp(probs, out=probs)
    total = _row_sums(xp, probs)
    probs /= total[:, None]
    losses = xp.log(total, out=total)
    losses -= picked
    loss = xp.add.reduce(losses)
    return xp.asarray(loss / n if reduction == "mean" else loss, dtype=losses.dtype), probs


def _ce_kernel(xp):
    """Cross entropy with class indices; returns the loss and the softmax probabilities (one
    row per target), which the backward reuses."""

    def kernel(x, t, w, reduction, ignore_index, smoothing):
        if _plain(x.ndim, w, reduction, ignore_index, smoothing):
            result = _ce_plain(xp, x, t, reduction)
            if result is not None:
                return result
        rows, idx = _rows(xp, x, t)
        n, c = rows.shape
        safe, valid, wt = _targets(xp, idx, w, ignore_index, c, x.dtype)
        ar = xp.arange(n)
        probs = rows - _row_max(xp, rows, ar)[:, None]
        picked = probs[ar, safe]
        smooth = None
        if smoothing > 0:
            smooth = xp.einsum("ij->i", probs) if w is None else probs @ w
        xp.exp(probs, out=probs)
        total = xp.einsum("ij->i", probs)
        probs /= total[:, None]
        lse = xp.log(total)
        losses = (lse - picked) * wt
        if smooth is not None:
            losses *= 1 - smoothing
            losses += (lse * (c if w is None else w.sum()) - smooth) * valid * (smoothing / c)
        return _finish(xp, losses, wt, reduction, x, t), probs

    return kernel


def _ce_backward_kernel(xp):
    """``g * (Q softmax(x) - q)`` per row, q the (smoothed, weighted) target distribution;
    `x` gives only its shape (it is an input for the double backward)."""

    def kernel(g, x, t, probs, w, reduction, ignore_index, smoothing):
        if _plain(x.ndim, w, reduction, ignore_index, smoothing) and t.size and t[t.argmin()] >= 0:
            # every target counted (the forward checked their bounds): _ce_plain's case
            n, c = probs.shape
            # a Python float: NumPy's arithmetic on 0-dim arrays costs several times more, and
            # float32's quotient rounded from float64's is float32's own
            scale = float(g) / n if reduction == "mean" else float(g)
            grad = probs * scale
            if not grad.flags.c_contiguous:  # its flat form must be a view
                grad = xp.ascontiguousarray(grad)
            grad.reshape(-1)[t + _row_starts(xp, n, c)] -= scale
            return grad
        n, c = probs.shape
        idx = t.reshape(-1).astype(xp.int64, copy=False)
        safe, valid, wt = _targets(xp, idx, w, ignore_index, c, x.dtype, checked=True)
        scale = _row_scale(g, wt, reduction)
        hit = scale * wt * (1 - smoothing)
        if smoothing > 0:
            spread = scale * valid * (smoothing / c)
            grad = probs * (hit + spread * (c if w is None else w.sum()))[:, None]
            grad -= spread[:, None] if w is None else spread[:, None] * w
        else:
            grad = probs * hit[:, None]
        grad[xp.arange(n), safe] -= hit
        return _unrows(xp, grad, x.shape)

    return kernel


nll_loss_op = defop("nll_loss", _nll_kernel)
nll_loss_backward_op = defop("nll_loss_backward", _nll_backward_kernel)
# What a backend fusing cross entropy reuses: the layout of rows, the target checks and the
# reductions.
_CE_PARTS = {
    "rows": _rows,
    "unrows": _unrows,
    "targets": _targets,
    "finish": _finish,
    "row_scale": _row_scale,
}
cross_entropy_op = defop("cross_entropy_loss", _ce_kernel, parts=_CE_PARTS)
cross_entropy_backward_op = defop(
    "cross_entropy_loss_backward", _ce_backward_kernel, parts=_CE_PARTS
)


def _with_weight(op, tensors: tuple, weight: Tensor | None, *args):
    """Call `op` with the optional class weight as the argument after `tensors` (a Tensor
    input when given, a None argument otherwise)."""
    if weight is None:
        return call(op, tensors, None, *args)
    return call(op, (*tensors, weight), *args)


def _class_dim(x) -> int:
    return 1 if x.dim() > 1 else 0


def _target_weights(t: Tensor, w: Tensor | None, ignore_index: int, dtype):
    """Per-target weight in tocha ops (0 where ignored) and whether each target counts."""
    valid = t != ignore_index
    if w is None:
        return valid.to(dtype), valid
    return w[tocha.where(valid, t, 0)] * valid, valid


def _ce_backward_backward(gg, _, g, x, t, probs, w, reduction, ignore_index, smoothing):
    """Derivatives of ``S * (Q softmax(x) - q)`` by g (through S) and by x (through softmax,
    recomputed from x: the saved probabilities are a function of x, covered by its Jacobian)."""
    cd = _class_dim(x)
    c = x.shape[cd]
    wt, valid = _target_weights(t, w, ignore_index, x.dtype)
    total_w = c if w is None else w.sum()
    q_sum = wt * (1 - smoothing) + valid * (smoothing / c) * total_w
    scale = g / wt.sum() if reduction == "mean" else g
    p = softmax(x, cd)
    pg = p * gg
    grad_x = (scale * q_sum).unsqueeze(cd) * (pg - p * pg.sum(cd, keepdim=True))
    weighted_gg = gg if w is None else gg * w.reshape((c,) + (1,) * (x.dim() - cd - 1))
    row = (
        q_sum * pg.sum(cd)
        - valid * (smoothing / c) * weighted_gg.sum(cd)
        + (1 - smoothing) * _with_weight(nll_loss_op, (gg, t), w, "none", ignore_index)
    )
    if reduction != "none":
        row = row.sum() / wt.sum() if reduction == "mean" else row.sum()
    return row, grad_x, None, None, None, None, None, None


def _ce_grad(g, out, x, t, w, reduction, ignore_index, smoothing):
    """The gradient of the probabilities output is always zero (it never leaves
    cross_entropy)."""
    grad = _with_weight(
        cross_entropy_backward_op, (g[0], x, t, out[1]), w, reduction, ignore_index, smoothing
    )
    return grad, None, None, None, None, None


_ce_grad.accepts_none = True


# -- forward rules: class weights are constants here as backward (PyTorch's declaration) ----
def _nll_jvp(tangents, out, x, t, w, reduction, ignore_index):
    """nll_loss is linear in the input: the op on its tangent."""
    if tangents[0] is None:
        return None
    return _with_weight(nll_loss_op, (tangents[0], t), w, reduction, ignore_index)


def _nll_backward_jvp(tangents, out, g, t, w, shape, reduction, ignore_index):
    """nll_loss_backward is linear in the gradient: the op on its tangent."""
    if tangents[0] is None:
        return None
    return _with_weight(nll_loss_backward_op, (tangents[0], t), w, shape, reduction, ignore_index)


def _class_rows(x):
    """`x` laid out as cross entropy's probabilities: one row of classes per target."""
    if x.dim() <= 2:
        return x.reshape(-1, x.shape[-1])
    return x.movedim(1, -1).reshape(-1, x.shape[1])


def _ce_jvp(tangents, out, x, t, w, reduction, ignore_index, smoothing):
    """Cross entropy's tangent: each target's loss depends on its own row only, so it is that
    row's gradient (the backward at a unit gradient) dotted with the row's tangent. The
    probabilities, a softmax of the rows, take the softmax's tangent."""
    loss, probs = out
    tx = tangents[0]
    if tx is None:
        return None, None
    unit = tocha.ones_like(loss)
    rows_grad = _with_weight(
        cross_entropy_backward_op, (unit, x, t, probs), w, reduction, ignore_index, smoothing
    )
    product = rows_grad * tx
    t_loss = product.sum(_class_dim(x)) if reduction == "none" else product.sum()
    return t_loss, call(softmax_backward_op, (_class_rows(tx), probs), 1)


def _ce_backward_jvp(tangents, out, g, x, t, probs, w, reduction, ignore_index, smoothing):
    """The tangent of ``S * (Q softmax(x) - q)`` (see `_ce_backward_backward`): linear in g;
    by x through the softmax recomputed from x (the probabilities' own tangent is that of a
    function of x, so it is not counted twice)."""
    by_g = None
    if tangents[0] is not None:
        by_g = _with_weight(
            cross_entropy_backward_op,
            (tangents[0], x, t, probs),
            w,
            reduction,
            ignore_index,
            smoothing,
        )
    by_x = None
    if tangents[1] is not None:
        cd = _class_dim(x)
        c = x.shape[cd]
        wt, valid = _target_weights(t, w, ignore_index, x.dtype)
        total_w = c if w is None else w.sum()
        q_sum = wt * (1 - smoothing) + valid * (smoothing / c) * total_w
        scale = g / wt.sum() if reduction == "mean" else g
        t_p = call(softmax_backward_op, (tangents[1], softmax(x, cd)), cd)
        by_x = (scale * q_sum).unsqueeze(cd) * t_p
    return plus(by_g, by_x)


d(
    "nll_loss",
    "12",
    lambda g, out, x, t, w, reduction, ignore_index: (
        _with_weight(nll_loss_backward_op, (g, t), w, tuple(x.shape), reduction, ignore_index),
        None,
        None,
        None,
        None,
    ),
)
fwd("nll_loss", _nll_jvp)
d(
    "nll_loss_backward",
    "12",
    lambda gg, out, g, t, w, shape, reduction, ignore_index: (
        _with_weight(nll_loss_op, (gg, t), w, reduction, ignore_index),
        None,
        None,
        None,
        None,
        None,
    ),
)
fwd("nll_loss_backward", _nll_backward_jvp)
d("cross_entropy_loss", "012o1", _ce_grad)
fwd("cross_entropy_loss", _ce_jvp)
d("cross_entropy_loss_backward", "0124", _ce_backward_backward)
fwd("cross_entropy_loss_backward", _ce_backward_jvp)


def _check_class_target(input: Tensor, target: Tensor, weight: Tensor | None, name: str):
    """PyTorch's shape and dtype checks of nll_loss_nd (class-index targets)."""
    ndim = input.dim()
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    if ndim != 1 and target.dim() and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target "
            f"batch_size ({target.shape[0]})."
        )
    if ndim <= 2 and target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if ndim == 4 and target.dim() != 3:
        raise RuntimeError(
            f"only batches of spatial targets supported (3D tensors) but got "
            f"targets of dimension: {target.dim()}"
        )
    if ndim > 2 and target.shape[1:] != input.shape[2:]:
        if ndim == 4:
            raise RuntimeError(
                f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}"
            )
        raise RuntimeError(
            f"Expected target size {list(input.shape[:1] + input.shape[2:])}, "
            f"got {list(target.shape)}"
        )
    if target.dtype not in (tocha.int64, tocha.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {TITLE[target.dtype]}"
        )
    if ndim == 1 and target.dim() == 1 and target.shape[0] != 1:
        raise ValueError(
            f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}"
        )
    classes = input.shape[1] if ndim > 1 else input.shape[0]
    if weight is not None and (weight.dim() != 1 or weight.shape[0] != classes):
        raise RuntimeError(
            f"{name}weight tensor should be defined either for all {classes} "
            f"classes or no classes but got weight tensor of shape: "
            f"{list(weight.shape)}"
        )
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {TITLE[input.dtype]} but found {TITLE[weight.dtype]}"
        )


def _batch_of_indices(input, target) -> bool:
    """The common case: (N, C) floating scores and (N,) int64 class indices."""
    if type(input) is not Tensor or type(target) is not Tensor:
        return False
    x, t = input._data, target._data  # plain tensors: their arrays say it all
    return (
        x.ndim == 2
        and t.ndim == 1
        and t.dtype.char in "lq"
        and t.itemsize == 8
        and x.dtype.kind == "f"
        and x.shape[0] == t.shape[0]
    )


def _check_float(input: Tensor, kernel: str) -> None:
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[input.dtype]}'")


def _check_real_floating(d, kernel: str) -> None:
    """PyTorch's error for a loss whose kernel computes in real floating dtypes only (`d`:
    the dtype of the operands' difference)."""
    if not d.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[d]}'")


def _check_flags(fn_name: str, **flags) -> None:
    """PyTorch's TypeError for a flag given as other than a bool (its parser's check)."""
    for name, value in flags.items():
        if value is not True and value is not False:
            raise TypeError(
                f"{fn_name}(): argument '{name}' must be bool, not {type(value).__name__}"
            )


def _check_castable(result, output) -> None:
    """PyTorch's error where a loss computed in dtype `result` is written into a tensor of
    dtype `output` that cannot hold it (float into int64, complex into float)."""
    if not tocha.can_cast(result, output):
        raise RuntimeError(
            f"result type {TITLE[result]} can't be cast to the desired output type {TITLE[output]}"
        )


def _floating_result(input: Tensor, target: Tensor):
    """The dtype an elementwise loss of `input` and `target` is computed in (integers
    promote to the default float dtype)."""
    d = tocha.promote_types(input.dtype, target.dtype)
    return d if d.is_floating_point or d.is_complex else tocha.get_default_dtype()


@autocast_op("nll_loss")
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of class indices given log-probabilities.

    ``loss_i = -weight[t_i] * input[i, t_i]``; "mean" divides the sum by the total weight of
    the targets that are not `ignore_index`.

    Shape:
        input ``(C)``, ``(N, C)`` or ``(N, C, d1, ...)``; target ``()``, ``(N)`` or
        ``(N, d1, ...)`` of int64 (or uint8) in ``[0, C)``.

    Example:
        >>> F.nll_loss(tocha.tensor([[-0.5, -1.0]]), tocha.tensor([1]))
        tensor(1.)
    """
    _expect_tensors("nll_loss", ("input", "target"), input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _check_class_target(input, target, weight, "")
    _check_float(input, "nll_loss_out_frame")
    return _with_weight(nll_loss_op, (input, target), weight, reduction, ignore_index)


@autocast_op("cross_entropy_loss", inline=True)
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy between logits `input` and class indices or class probabilities.

    With class indices it is ``nll_loss(log_softmax(input, 1), target)`` (one primitive); with
    label smoothing ``eps`` the target becomes ``(1 - eps) * onehot + eps / C``. A floating
    `target` of the input's shape holds class probabilities.

    Shape:
        input ``(C)``, ``(N, C)`` or ``(N, C, d1, ...)``; target ``()``, ``(N)``,
        ``(N, d1, ...)`` of class indices, or input's shape of probabilities.

    Example:
        >>> F.cross_entropy(tocha.zeros(2, 4), tocha.tensor([0, 3]))
        tensor(1.3863)
    """
    if GRAD_MODE.autocast is not None:  # tested here: a hot function, not wrapped
        args = (input, target, weight, size_average, ignore_index, reduce, reduction)
        kwargs = {"label_smoothing": label_smoothing}
        return LAYERS.autocast_call("cross_entropy_loss", cross_entropy, args, kwargs)
    _expect_tensors("cross_entropy", ("input", "target"), input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input._data.dtype.char in HALF_CHARS and input.shape != target.shape and input.dim():
        _check_class_target(input, target, weight, "")
        return _half_cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)
    if weight is None and _batch_of_indices(input, target):  # the checks below all pass
        args = (reduction, ignore_index, label_smoothing)
        return call(cross_entropy_op, (input, target), None, *args)[0]
    if input.shape == target.shape:
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing)
    if input.dim() == 0:  # PyTorch's log_softmax over dim 1 of it
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    kernel = "log_softmax_lastdim_kernel_impl" if input.dim() <= 2 else "log_softmax_kernel_impl"
    _check_float(input, kernel)
    _check_class_target(input, target, weight, "")
    return _with_weight(
        cross_entropy_op, (input, target), weight, reduction, ignore_index, label_smoothing
    )[0]


def _half_cross_entropy(input, target, weight, ignore_index, reduction, smoothing):
    """Cross entropy of float16/bfloat16 logits against class indices as PyTorch forms it:
    ``nll_loss(log_softmax(input))`` with both results in the input's dtype, and label
    smoothing composed of them in that dtype."""
    cd = _class_dim(input)
    lsm = call(log_softmax_op, (input,), cd)
    nll = nll_loss(lsm, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not smoothing:
        return nll
    c = input.shape[cd]
    ignored = target == ignore_index
    if weight is not None:
        smooth = -(lsm * weight.reshape((c,) + (1,) * (input.dim() - cd - 1))).sum(cd)
    else:
        smooth = -lsm.sum(cd)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        if weight is not None:
            total = weight.gather(0, target.masked_select(~ignored).flatten()).sum()
        else:
            total = (~ignored).sum()
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - smoothing) * nll + smooth * (smoothing / c)


def _cross_entropy_probs(input, target, weight, ignore_index, reduction, smoothing):
    """Cross entropy against class probabilities (a composite of log_softmax)."""
    if not target.dtype.is_floating_point:
        raise RuntimeError(
            f"Expected floating point type for target with class "
            f"probabilities, got {TITLE[target.dtype]}"
        )
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if input.dim() == 0:
        input.size(1)  # no class dim: PyTorch's IndexError
    if weight is not None and not isinstance(weight, Tensor):
        raise not_a_tensor("cross_entropy_loss", weight, "weight", 3)
    _check_float(input, "log_softmax_lastdim_kernel_impl")
    cd = _class_dim(input)
    c = input.shape[cd]
    if weight is not None and (weight.dim() != 1 or weight.shape[0] != c):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {c} "
            f"classes or no classes but got weight tensor of shape: "
            f"{list(weight.shape)}"
        )
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / c
    loss = call(log_softmax_op, (input,), cd) * target
    if weight is not None:
        loss = loss * weight.reshape((c,) + (1,) * (input.dim() - cd - 1))
    if reduction == "mean":
        n = input.numel() // c if c else 0
        return -loss.sum() / n if n else -loss.sum() * math.nan
    loss = -loss.sum(cd)
    return loss.sum() if reduction == "sum" else loss


# -- binary cross entropy: a primitive whose derivative matches PyTorch's at 0 and 1 ---------
BCE_EPS = 9.999999960041972e-13  # 1e-12 rounded to float32, as PyTorch's EPSILON


def _bce_kernel(xp):
    def kernel(x, t, w, reduction):
        if ((x < 0) | (x > 1)).any():
            raise RuntimeError("all elements of input should be between 0 and 1")
        with _quiet(xp):
            loss = (t - 1) * xp.maximum(xp.log1p(-x), -100) - t * xp.maximum(xp.log(x), -100)
        if w is not None:
            loss *= w
        if reduction == "none":
            return loss
        total = loss.sum(dtype=loss.dtype)
        if reduction == "mean":
            with _quiet(xp):
                total = total / loss.size
        return xp.asarray(total, loss.dtype)

    return kernel


def _bce_slopes(x, t):
    """The unweighted elementwise loss's derivatives by x and by t."""
    by_x = (x - t) / ((1 - x) * x).clamp_min(BCE_EPS)
    by_t = (-x).log1p().clamp_min(-100) - x.log().clamp_min(-100)
    return by_x, by_t


def _bce_grad(g, out, x, t, w, reduction):
    if reduction == "mean":
        g = g / x.numel()
    if w is not None:
        g = g * w
    by_x, by_t = _bce_slopes(x, t)
    return g * by_x, g * by_t, None, None


def _bce_jvp(tangents, out, x, t, w, reduction):
    """Elementwise: the slopes times the tangents (times the weight, a constant as backward),
    reduced as the loss."""
    by_x, by_t = _bce_slopes(x, t)
    tangent = plus(
        None if tangents[0] is None else by_x * tangents[0],
        None if tangents[1] is None else by_t * tangents[1],
    )
    if tangent is None:
        return None
    if w is not None:
        tangent = tangent * w
    if reduction == "mean":
        return tangent.mean()
    return tangent.sum() if reduction == "sum" else tangent


binary_cross_entropy_op = defop("binary_cross_entropy", _bce_kernel, layout="elementwise")
d("binary_cross_entropy", "012", _bce_grad)
fwd("binary_cross_entropy", _bce_jvp)


@autocast_op("binary_cross_entropy")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``-w * (t * log(x) + (1 - t) * log(1 - x))``, each log clamped at -100 as PyTorch.

    Example:
        >>> F.binary_cross_entropy(tocha.tensor([0.5]), tocha.tensor([1.0]))
        tensor(0.6931)
    """
    _expect_tensors("binary_cross_entropy", ("input", "target"), input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input "
            f"size ({input.size()}) is deprecated. Please ensure they have the same "
            "size."
        )
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {TITLE[target.dtype]} but expected {TITLE[input.dtype]}")
    _check_float(input, "binary_cross_entropy")
    if weight is not None:
        weight = weight.expand(tocha.broadcast_shapes(target.shape, weight.shape))
    return _with_weight(binary_cross_entropy_op, (input, target), weight, reduction)


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """``-w * (pos_weight * t * log(sigmoid(x)) + (1 - t) * log(1 - sigmoid(x)))``, stably.

    Example:
        >>> F.binary_cross_entropy_with_logits(tocha.tensor([0.0]), tocha.tensor([1.0]))
        tensor(0.6931)
    """
    _expect_tensors("binary_cross_entropy_with_logits", ("input", "target"), input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.size()}) must be the same as input size ({input.size()})"
        )
    d = input.dtype
    if not d.is_floating_point:
        _check_float(input, "log_sigmoid_cpu")
    if d is not target.dtype:
        _check_castable(tocha.promote_types(d, target.dtype), target.dtype)
    for extra in (weight, pos_weight):
        if isinstance(extra, Tensor) and extra.dtype.is_complex and not d.is_complex:
            _check_castable(extra.dtype, d)
    if pos_weight is None:
        loss = (1 - target) * input - logsigmoid(input)
    else:
        loss = (1 - target) * input - ((pos_weight - 1) * target + 1) * logsigmoid(input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# -- regression losses -----------------------------------------------------------------------
@autocast_op("l1_loss")
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """``|input - target|`` (times `weight`; "mean" then divides by the weights' sum).

    Example:
        >>> F.l1_loss(tocha.tensor([1.0, 2.0]), tocha.tensor([0.0, 0.0]))
        tensor(1.5000)
    """
    _expect_tensors("l1_loss", ("input", "target"), input, target)
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    return _weighted((input - target).abs(), weight, input, reduction)


@autocast_op("mse_loss")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """``(input - target) ** 2`` (times `weight`; "mean" then divides by the weights' sum).

    Example:
        >>> F.mse_loss(tocha.tensor([1.0, 2.0]), tocha.tensor([0.0, 0.0]))
        tensor(2.5000)
    """
    _expect_tensors("mse_loss", ("input", "target"), input, target)
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _check_real_floating(tocha.promote_types(input.dtype, target.dtype), "mse_cpu")
    diff = input - target
    return _weighted(diff.square(), weight, input, reduction)


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 * z ** 2 / beta`` where ``z = |input - target| < beta``, else ``z - beta / 2``.

    Example:
        >>> F.smooth_l1_loss(tocha.tensor([0.5, 3.0]), tocha.tensor([0.0, 0.0]))
        tensor(1.3125)
    """
    _expect_tensors("smooth_l1_loss", ("input", "target"), input, target)
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if not beta >= 0:  # NaN too
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_real_floating(tocha.promote_types(input.dtype, target.dtype), "smooth_l1_cpu")
    diff = input - target
    z = diff.abs()
    if beta == 0.0:
        return _reduce(z, reduction)
    return _reduce(tocha.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)


@autocast_op("huber_loss")
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 * z ** 2`` where ``z = |input - target| < delta``, else
    ``delta * (z - delta / 2)``; times `weight` when given.

    Example:
        >>> F.huber_loss(tocha.tensor([0.5, 3.0]), tocha.tensor([0.0, 0.0]))
        tensor(1.3125)
    """
    _expect_tensors("huber_loss", ("input", "target"), input, target)
    d = input.dtype
    if d is not target.dtype:
        _check_castable(tocha.promote_types(d, target.dtype), d)
    if not d.is_floating_point:
        _check_float(input, "huber_cpu")
    _warn_size(input, target)
    reduction = _reduction(None, None, reduction)
    if not delta > 0:  # NaN too
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    z = (input - target).abs()
    loss = tocha.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    if weight is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    return _reduce(loss if weight is None else loss * weight, reduction)


@autocast_op("kl_div")
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Kullback-Leibler divergence ``target * (log(target) - input)``, `input` in log space
    (and `target` too when `log_target`). "batchmean" divides the sum by the batch size.

    Example:
        >>> F.kl_div(tocha.tensor([[-1.0, -0.5]]), tocha.tensor([[0.5, 0.5]]), reduction="sum")
        tensor(0.0569)
    """
    _expect_tensors("kl_div", ("input", "target"), input, target)
    _check_flags("kl_div", log_target=log_target)
    if not all(t.is_floating_point() or t.is_complex() for t in (input, target)):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            stacklevel=3,  # the caller's line: the autocast wrapper is one frame
        )
    elif reduction not in ("batchmean", "none", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = tocha.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Poisson negative log likelihood: ``exp(input) - target * input`` (log_input), else
    ``input - target * log(input + eps)``; `full` adds Stirling's term for targets above 1.

    Example:
        >>> F.poisson_nll_loss(tocha.tensor([0.0]), tocha.tensor([1.0]))
        tensor(1.)
    """
    _expect_tensors("poisson_nll_loss", ("input", "target"), input, target)
    _check_flags("poisson_nll_loss", log_input=log_input, full=full)
    if not isinstance(eps, (int, float, Tensor)):
        raise TypeError(
            "poisson_nll_loss(): argument 'eps' (position 5) must be float, not "
            f"{type(eps).__name__}"
        )
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Gaussian negative log likelihood ``0.5 * (log(var) + (input - target) ** 2 / var)``,
    `var` clamped at `eps` (its gradient kept); `full` adds ``0.5 * log(2 pi)``.

    Example:
        >>> F.gaussian_nll_loss(tocha.tensor([1.0]), tocha.tensor([1.0]), 1.0)
        tensor(0.)
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * tocha.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (
            input.dim() == var.dim()
            and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with tocha.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# -- margin and embedding losses -------------------------------------------------------------
@autocast_op("margin_ranking_loss")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``.

    Example:
        >>> F.margin_ranking_loss(tocha.tensor([1.0]), tocha.tensor([2.0]), tocha.tensor([1.0]))
        tensor(1.)
    """
    _expect_tensors("margin_ranking_loss", ("input1", "input2", "target"), input1, input2, target)
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    return _reduce((-target * (input1 - input2) + float(margin)).clamp_min(0), reduction)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``.

    Example:
        >>> F.hinge_embedding_loss(tocha.tensor([0.3, 2.0]), tocha.tensor([1.0, -1.0]))
        tensor(0.1500)
    """
    _expect_tensors("hinge_embedding_loss", ("input", "target"), input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if not -65504.0 <= margin <= 65504.0:
        check_scalar_converts(margin, input.dtype)
    if reduction == "mean" and not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {TITLE[input.dtype]}"
        )
    zeros = tocha.zeros_like(input)
    margin_part = (margin - input).clamp_min(0).to(input.dtype)
    loss = tocha.where(target != 1, margin_part, zeros) + tocha.where(target != -1, input, zeros)
    return _reduce(loss, reduction)


@autocast_op("soft_margin_loss")
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Two-class logistic loss ``log(1 + exp(-target * input))``.

    Example:
        >>> F.soft_margin_loss(tocha.tensor([0.0]), tocha.tensor([1.0]))
        tensor(0.6931)
    """
    _expect_tensors("soft_margin_loss", ("input", "target"), input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if target.requires_grad and tocha.is_grad_enabled():
        raise RuntimeError(
            "The function 'soft_margin_loss' is not differentiable with respect to argument "
            "'target'. This input cannot have requires_grad True."
        )
    d = input.dtype
    if d is not target.dtype or not d.is_floating_point:
        _check_castable(_floating_result(input, target), d)
    return _reduce((-target * input).exp().log1p(), reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """One-versus-all logistic loss, averaged over the classes (last dimension).

    Example:
        >>> F.multilabel_soft_margin_loss(tocha.zeros(1, 2), tocha.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """
    _expect_tensors("multilabel_soft_margin_loss", ("input", "target"), input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``.

    Example:
        >>> F.cosine_embedding_loss(tocha.ones(1, 2), tocha.ones(1, 2), tocha.tensor([1.0]))
        tensor(0.)
    """
    _expect_tensors("cosine_embedding_loss", ("input1", "input2", "target"), input1, input2, target)
    reduction = _reduction(size_average, reduce, reduction)
    dim = target.dim()
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(
            f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with "
            f"sizes {list(input1.shape)} and {list(input2.shape)}."
        )
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + 1e-12
    mag2 = (input2 * input2).sum(dim) + 1e-12
    cos = prod / (mag1 * mag2).sqrt()
    zeros = tocha.zeros_like(cos)
    loss = tocha.where(target == 1, 1 - cos, zeros) + tocha.where(
        target == -1, (cos - margin).clamp_min(0), zeros
    )
    return _reduce(loss, reduction)


def _check_margin_input(input: Tensor) -> None:
    ndim = input.dim()
    if not (
        (ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0) or ndim == 0
    ):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch "
            f"size, but got: {list(input.shape)}"
        )


@autocast_op("multi_margin_loss")
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge loss ``sum_{j != y} w[y] * max(0, margin - x[y] + x[j]) ** p / C``.

    Example:
        >>> F.multi_margin_loss(tocha.tensor([[0.1, 0.2, 0.4, 0.8]]), tocha.tensor([3]))
        tensor(0.3250)
    """
    _expect_tensors("multi_margin_loss", ("input", "target"), input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_margin_input(input)
    rows = input.reshape(-1, input.shape[-1] if input.dim() else 1)
    n, c = rows.shape
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(
            f"multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    idx = target.reshape(n, 1)
    if bool(((idx < 0) | (idx >= c)).any()):
        raise RuntimeError("target out of range")
    z = (margin - rows.gather(1, idx) + rows).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[idx]
    others = tocha.arange(c, device=input.device) != idx
    loss = (z * others).sum(1) / c
    return _reduce(loss.reshape(target.shape), reduction)


@autocast_op("multilabel_margin_loss")
def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-label hinge loss ``sum_{j in y, k not in y} max(0, 1 - (x[j] - x[k])) / C``;
    each target row lists class indices, ended by the first -1.

    Example:
        >>> x = tocha.tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> F.multilabel_margin_loss(x, tocha.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    _expect_tensors("multilabel_margin_loss", ("input", "target"), input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _check_margin_input(input)
    c = input.shape[-1] if input.dim() else 1
    if input.dim() <= 1:
        ok = target.dim() <= 1 and target.numel() == c
    else:
        ok = target.dim() == 2 and tuple(target.shape) == tuple(input.shape)
    if not ok:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    rows, labels = input.reshape(-1, c), target.reshape(-1, c)
    if rows.shape[0] == 0:  # no sample: PyTorch runs no kernel, so checks no dtype
        return tocha.zeros((0,) if reduction == "none" else (), dtype=input.dtype)
    ids = labels.to(tocha.int64) if labels.dtype.is_floating_point else labels  # as read
    if bool(((ids < -1) | (ids >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    if input.dtype not in (tocha.float32, tocha.float64):
        raise NotImplementedError(
            '"multilabel_margin_loss_forward_out_frame" not implemented for '
            f"'{TITLE[input.dtype]}'"
        )
    if target.dtype is not tocha.int64:
        raise RuntimeError(f"expected scalar type Long but found {TITLE[target.dtype]}")
    listed = (labels < 0).cumsum(1) == 0
    idx = tocha.where(listed, labels, 0)
    is_target = (
        tocha.zeros(rows.shape, device=input.device).scatter_add(1, idx, listed.to(tocha.float32))
        > 0
    )
    z = (1 - rows.gather(1, idx).unsqueeze(2) + rows.unsqueeze(1)).clamp_min(0)
    loss = (z * (listed.unsqueeze(2) & ~is_target.unsqueeze(1))).sum((1, 2)) / c
    return _reduce(loss if input.dim() == 2 else loss[0], reduction)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)``, d the p-norm pairwise distance; `swap` uses
    ``min(d(a, n), d(p, n))``.

    Example:
        >>> a = tocha.zeros(1, 2)
        >>> F.triplet_margin_loss(a, a, tocha.ones(1, 2))
        tensor(0.)
    """
    _expect_tensors(
        "triplet_margin_loss", ("anchor", "positive", "negative"), anchor, positive, negative
    )
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if swap is not True and swap is not False:
        raise TypeError(
            f"triplet_margin_loss(): argument 'swap' must be bool, not {type(swap).__name__}"
        )
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(
        anchor,
        positive,
        negative,
        lambda x1, x2: pairwise_distance(x1, x2, p, eps),
        margin,
        swap,
        reduction,
    )


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )


def _triplet(anchor, positive, negative, distance, margin, swap, reduction) -> Tensor:
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = tocha.minimum(dist_neg, distance(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """`triplet_margin_loss` with any distance (default: `pairwise_distance`).

    Example:
        >>> a = tocha.zeros(1, 2)
        >>> F.triplet_margin_with_distance_loss(a, a, tocha.ones(1, 2))
        tensor(0.)
    """
    _expect_tensors(
        "triplet_margin_with_distance_loss",
        ("anchor", "positive", "negative"),
        anchor,
        positive,
        negative,
    )
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(
        anchor, positive, negative, distance_function or pairwise_distance, margin, swap, reduction
    )


# -- CTC: forward-backward over time, vectorised over the batch ------------------------------
def _lse3(xp, a, b, c):
    """Elementwise ``log(exp(a) + exp(b) + exp(c))``; -inf where all three are -inf."""
    m = xp.maximum(xp.maximum(a, b), c)
    m_safe = xp.where(xp.isinf(m), 0, m)
    return m_safe + xp.log(xp.exp(a - m_safe) + xp.exp(b - m_safe) + xp.exp(c - m_safe))


def _shift(xp, a, k: int, fill, right: bool):
    """`a` moved `k` columns right (or left), the vacated columns set to `fill`."""
    out = xp.full(a.shape, fill, dtype=a.dtype)
    keep = max(a.shape[1] - k, 0)
    if right:
        out[:, k:] = a[:, :keep]
    else:
        out[:, :keep] = a[:, k:]
    return out


def _ctc_layout(xp, targets, target_lengths, batch):
    """Targets padded to (N, S), the extended labels (blank between and around), where a
    transition may skip a label, and the target lengths as an array."""
    lengths = xp.asarray(target_lengths, dtype=xp.int64)
    width = int(lengths.max()) if batch else 0
    if targets.ndim == 1:
        starts = xp.cumsum(lengths) - lengths
        pos = starts[:, None] + xp.arange(width)
        pos = xp.minimum(pos, max(targets.shape[0] - 1, 0))
        padded = targets[pos] if targets.shape[0] else xp.zeros((batch, width), xp.int64)
    else:
        padded = targets[:, :width]
    return padded.astype(xp.int64), lengths


def _extended(xp, padded, blank):
    n, width = padded.shape
    ext = xp.full((n, 2 * width + 1), blank, dtype=xp.int64)
    ext[:, 1::2] = padded
    skip = xp.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, skip


def _ctc_kernel(xp):
    def kernel(lp, targets, input_lengths, target_lengths, blank, zero_infinity):
        """The raw losses (zero_infinity is applied by ctc_loss and its backward)."""
        steps, n, _ = lp.shape
        padded, tl = _ctc_layout(xp, targets, target_lengths, n)
        il = xp.asarray(input_lengths, dtype=xp.int64)
        ext, skip = _extended(xp, padded, blank)
        emit = xp.take_along_axis(lp, xp.broadcast_to(ext[None], (steps, *ext.shape)), axis=2)
        neg_inf = xp.asarray(-math.inf, lp.dtype)
        alpha = xp.full((steps, *ext.shape), neg_inf, dtype=lp.dtype)
        with _quiet(xp):
            if steps:
                alpha[0, :, 0] = emit[0, :, 0]
                if ext.shape[1] > 1:
                    alpha[0, :, 1] = xp.where(tl > 0, emit[0, :, 1], neg_inf)
            for t in range(1, steps):
                prev = alpha[t - 1]
                one = _shift(xp, prev, 1, neg_inf, True)
                two = xp.where(skip, _shift(xp, prev, 2, neg_inf, True), neg_inf)
                alpha[t] = _lse3(xp, prev, one, two) + emit[t]
            rows = xp.arange(n)
            last = alpha[xp.maximum(il - 1, 0), rows]
            end = last[rows, 2 * tl]
            before = xp.where(tl > 0, last[rows, xp.maximum(2 * tl - 1, 0)], neg_inf)
            nll = -xp.logaddexp(end, before)
        return xp.where(il == 0, xp.where(tl == 0, 0, math.inf), nll).astype(lp.dtype), alpha

    return kernel


def _ctc_backward_kernel(xp):
    """PyTorch's gradient: ``exp(lp) - posterior`` per class (the gradient through a
    log_softmax that produced `lp`), zero past each input's length."""

    def kernel(g, lp, targets, nll, alpha, input_lengths, target_lengths, blank, zero_infinity):
        steps, n, c = lp.shape
        padded, tl = _ctc_layout(xp, targets, target_lengths, n)
        il = xp.asarray(input_lengths, dtype=xp.int64)
        ext, skip = _extended(xp, padded, blank)
        width = ext.shape[1]
        emit = xp.take_along_axis(lp, xp.broadcast_to(ext[None], (steps, n, width)), axis=2)
        neg_inf = xp.asarray(-math.inf, lp.dtype)
        s = xp.arange(width)
        init = (s == 2 * tl[:, None]) | (s == 2 * tl[:, None] - 1)
        skip_next = _shift(xp, skip, 2, False, False)
        beta = xp.full((steps, n, width), neg_inf, dtype=lp.dtype)
        nxt = xp.full((n, width), neg_inf, dtype=lp.dtype)
        with _quiet(xp):
            for t in range(steps - 1, -1, -1):
                one = _shift(xp, nxt, 1, neg_inf, False)
                two = xp.where(skip_next, _shift(xp, nxt, 2, neg_inf, False), neg_inf)
                rec = _lse3(xp, nxt, one, two) + emit[t]
                here = xp.where(init, emit[t], neg_inf)
                at = (t == il - 1)[:, None]
                nxt = xp.where((t < il - 1)[:, None], rec, xp.where(at, here, neg_inf))
                beta[t] = nxt
            both = alpha + beta
            top = both.max(axis=2, keepdims=True)
            top = xp.where(xp.isinf(top), 0, top)
            flat = (xp.arange(steps)[:, None, None] * n + xp.arange(n)[:, None]) * c + ext
            sums = xp.bincount(
                flat.reshape(-1), weights=xp.exp(both - top).reshape(-1), minlength=steps * n * c
            ).reshape(steps, n, c)
            log_post = xp.log(sums) + top + nll[:, None] - lp
            grad = (xp.exp(lp) - xp.exp(log_post)) * g[:, None]
        live = xp.arange(steps)[:, None] < il
        if zero_infinity:
            live &= ~xp.isinf(nll)
        return xp.where(live[:, :, None], grad, 0).astype(lp.dtype)

    return kernel


ctc_loss_op = defop("ctc_loss", _ctc_kernel)
ctc_loss_backward_op = defop("ctc_loss_backward", _ctc_backward_kernel, differentiable=False)
d(
    "ctc_loss",
    "01o",
    lambda g, out, lp, targets, *args: (
        call(ctc_loss_backward_op, (g[0], lp, targets, out[0], out[1]), *args),
        None,
        None,
        None,
        None,
        None,
    ),
)


def _ctc_jvp(tangents, out, lp, targets, input_lengths, target_lengths, blank, zero_infinity):
    """Each loss's derivative by `lp` is minus the posterior of each class at each step (zero
    past the input's length): the backward's gradient, ``exp(lp) - posterior``, less its
    ``exp(lp)`` term. Where `lp` comes from log_softmax the two agree on every tangent."""
    nll, alpha = out
    args = (input_lengths, target_lengths, blank, zero_infinity)
    unit = tocha.ones_like(nll)
    grad = call(ctc_loss_backward_op, (unit, lp, targets, nll, alpha), *args)
    steps = tocha.arange(lp.shape[0], device=lp.device).unsqueeze(1)
    live = steps < tocha.tensor(input_lengths, device=lp.device)
    if zero_infinity:
        live = live & nll.isfinite()
    posterior = lp.exp() * live.unsqueeze(2) - grad
    return -(posterior * tangents[0]).sum((0, 2)), None


fwd("ctc_loss", _ctc_jvp)


def _lengths(lengths, name: str, batch: int) -> tuple:
    if isinstance(lengths, Tensor):
        lengths = lengths.reshape(-1).tolist()
    elif isinstance(lengths, int):
        lengths = (lengths,)
    values = tuple(int(v) for v in lengths)
    if len(values) != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return values


def _check_ctc_inputs(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths) -> None:
    """PyTorch's checks before the loss's sizes, in its order: integral length tensors, a
    log_probs it can make batched, its kernel's dtypes, then the dims."""
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if isinstance(lengths, Tensor) and (lengths.is_floating_point() or lengths.is_complex()):
            raise RuntimeError(f"{name} must be integral")
    ndim = log_probs.dim()
    if ndim == 0:  # PyTorch unsqueezes an unbatched log_probs at dim 1
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if log_probs.dtype not in (tocha.float32, tocha.float64):
        kind = TITLE[log_probs.dtype]
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{kind}'")
    where = "(while checking arguments for ctc_loss_allocate_outputs)"
    if ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 3-dimensional tensor, but got {ndim + 1}-dimensional tensor "
            f"for argument #1 'log_probs' {where}"
        )
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for "
            f"argument #2 'targets' {where}"
        )


def _check_ctc_sizes(targets: Tensor, il: tuple, tl: tuple, steps: int) -> None:
    where = "(while checking arguments for ctc_loss_allocate_outputs)"
    for what, lengths in (("input_lengths", il), ("target_lengths", tl)):
        if lengths and min(lengths) < 0:
            raise RuntimeError(
                f"Expected {what} to have value at least 0, but got value {min(lengths)} {where}"
            )
    if targets.dim() == 1 and targets.shape[0] != sum(tl):
        raise RuntimeError(
            f"Expected tensor to have size {sum(tl)} at dimension 0, but got size "
            f"{targets.shape[0]} for argument #2 'targets' {where}"
        )
    if targets.dim() == 2 and targets.shape[0] != len(tl):
        raise RuntimeError(
            f"Expected tensor to have size {len(tl)} at dimension 0, but got size "
            f"{targets.shape[0]} for argument #2 'targets' {where}"
        )
    if targets.dim() == 2 and tl and targets.shape[1] < max(tl):
        raise RuntimeError(
            f"Expected tensor to have size at least {max(tl)} at dimension 1, but "
            f"got size {targets.shape[1]} for argument #2 'targets' {where}"
        )
    for length in il:
        if length > steps:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {steps}, but got "
                f"value {length} {where}"
            )


@autocast_op("ctc_loss")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor | tuple,
    target_lengths: Tensor | tuple,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist Temporal Classification loss: ``-log`` of the summed probability of every
    alignment of each target to its input (forward-backward algorithm in log space).

    "mean" divides each sample's loss by its target length, then averages over the batch.
    The gradient is PyTorch's (``exp(log_probs) - posterior``): exact when `log_probs` come
    from log_softmax.

    Shape:
        log_probs ``(T, N, C)`` or ``(T, C)``; targets ``(N, S)`` padded or
        ``(sum(target_lengths),)``; input_lengths and target_lengths ``(N)`` or ``()``.

    Example:
        >>> lp = F.log_softmax(tocha.zeros(5, 1, 3), 2)
        >>> F.ctc_loss(lp, tocha.tensor([[1]]), (5,), (1,))
        tensor(3.2958)
    """
    _expect_tensors("ctc_loss", ("log_probs", "targets"), log_probs, targets)
    reduction = _reduction(None, None, reduction)
    _check_ctc_inputs(log_probs, targets, input_lengths, target_lengths)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)  # 1-D targets are the concatenated form
    steps, batch, classes = log_probs.shape
    il = _lengths(input_lengths, "input_lengths", batch)
    tl = _lengths(target_lengths, "target_lengths", batch)
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    _check_ctc_sizes(targets, il, tl, steps)
    nll = call(ctc_loss_op, (log_probs, targets), il, tl, blank, zero_infinity)[0]
    if zero_infinity:
        nll = tocha.where(nll == math.inf, 0.0, nll)
    if reduction == "mean":
        divisor = tocha.tensor(tl, dtype=nll.dtype, device=nll.device).clamp_min(1)
        return (nll / divisor).mean()
    if reduction == "sum":
        return nll.sum()
    return nll[0] if unbatched else nll


def _check_linear_cross_entropy(input, linear_weight, linear_bias) -> None:
    """PyTorch's shape errors of `linear_cross_entropy`."""
    if isinstance(input, Tensor) and input.dim() not in (1, 2):
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if isinstance(linear_weight, Tensor) and linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    if not (isinstance(input, Tensor) and isinstance(linear_weight, Tensor)):
        return
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    classes = tuple(linear_weight.shape[:-1])
    if isinstance(linear_bias, Tensor) and tuple(linear_bias.shape) != classes:
        raise RuntimeError(f"expected linear_bias shape {classes}, got {tuple(linear_bias.shape)}")
    if len(classes) > 1 and input.dim() == 1:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {linear_weight.shape[-1]}), got unbatched input with "
            f"shape {tuple(input.shape)}"
        )


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options=None,
) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`` (`options`,
    PyTorch's chunking settings, change nothing here: the logits are computed whole).

    `input` is ``(N, in)`` or ``(in)``; `linear_weight` is ``(C, in)``, or ``(C, d1, ...,
    dK, in)`` for a K-dimensional loss whose logits are ``(N, C, d1, ..., dK)``;
    `linear_bias` has `linear_weight`'s shape without its last dim."""
    _check_linear_cross_entropy(input, linear_weight, linear_bias)
    if linear_weight.dim() > 2:
        classes = tuple(linear_weight.shape[:-1])
        flat_bias = None if linear_bias is None else linear_bias.reshape(-1)
        logits = linear(input, linear_weight.reshape(-1, linear_weight.shape[-1]), flat_bias)
        logits = logits.reshape(input.shape[0], *classes)
    else:
        logits = linear(input, linear_weight, linear_bias)
    _check_float(logits, "log_softmax_lastdim_kernel_impl")
    return cross_entropy(
        logits,
        target,
        weight,
        ignore_index=-100 if ignore_index is None else ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )
