"""Normalization: layer_norm, batch_norm, instance_norm, group_norm, rms_norm and
local_response_norm.

layer_norm and batch_norm (training) are one primitive each that also returns the statistics
it computed (as PyTorch's ``native_layer_norm`` and ``native_batch_norm``), so one autograd
node covers the layer. Their first derivative is a fused kernel (``*_backward``, not itself
differentiable); under ``create_graph=True``, or while a transform (a forward-AD level, vmap)
is active, the derivative is written in tocha ops instead, so second derivatives work. Their
forward rules (`fwd`) differentiate the normalization with the saved statistics.
group_norm has a primitive of its own (`groupnorm`), instance_norm reuses batch_norm's;
eval-mode batch_norm, rms_norm and local_response_norm are cheap composites.
"""

from __future__ import annotations

import tocha
from tocha import Tensor
from tocha.autograd.derivatives import d, fwd
from tocha.library import (
    GRAD_MODE,
    HALF_CHARS,
    LAYERS,
    TITLE,
    call,
    computed_in_float32,
    defop,
    not_a_tensor,
)

from ._jvp import plus
from .groupnorm import group_norm_op, widened
from .padding import pad

__all__ = [
    "batch_norm",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "local_response_norm",
    "rms_norm",
]


# -- layer_norm: one primitive over the trailing `nd` dims -----------------------------------
def _rows(x, nd: int):
    """`x` as a 2-D array: one row per normalized slice."""
    n = 1
    for s in x.shape[x.ndim - nd :]:
        n *= s
    return x.reshape(-1, n)


def _row_sums(xp, a):
    """The sum of each row of the 2-D `a`, as a column (a matrix-vector product: NumPy's
    ``sum(axis=1)`` is several times slower)."""
    return (a @ xp.ones(a.shape[1], a.dtype))[:, None]


def _row_dots(xp, a, b):
    """The dot product of each row of `a` with the same row of `b`, as a column."""
    return xp.einsum("ij,ij->i", a, b)[:, None]


def _layer_norm_kernel(xp):
    def kernel(x, *rest):
        *params, nd, eps, affine = rest
        dtype = x.dtype
        x, *params = widened(xp, [x, *params])
        x2 = _rows(x, nd)
        n = x2.shape[1]
        mean = _row_sums(xp, x2) / n
        y = x2 - mean
        rstd = 1 / xp.sqrt(_row_dots(xp, y, y) / n + eps)
        y *= rstd
        y = y.reshape(x.shape)
        if "w" in affine:
            y *= params[0]
        if "b" in affine:
            y += params[-1]
        stat_shape = x.shape[: x.ndim - nd] + (1,) * nd
        mean, rstd = mean.reshape(stat_shape), rstd.reshape(stat_shape)
        if dtype.char in HALF_CHARS and all(p.dtype == dtype for p in rest[:-3]):
            # PyTorch keeps a float16/bfloat16 input's statistics in its dtype (its backward
            # reads them so)
            mean, rstd = mean.astype(dtype), rstd.astype(dtype)
        return y.astype(dtype, copy=False), mean, rstd

    return kernel


def _layer_norm_backward_kernel(xp):
    """``dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))`` per row (``gw = g * w``),
    with the weight and bias gradients. Every row or column reduction is a matrix-vector
    product of ``P = g * (x - mean)`` or of `g` (NumPy's einsum and row sums are slower; rstd
    enters through the vector), and P's memory then holds ``gw``: P is a `scratch` buffer
    kept between calls (a fresh full-size temporary cost as much as the arithmetic, in page
    faults), and the centred input becomes the result."""

    def kernel(g, x, mean, rstd, *rest):
        *w, nd, affine = rest
        dtype, param_dtype = x.dtype, w[0].dtype if w else x.dtype
        g, x, mean, rstd, *w = widened(xp, [g, x, mean, rstd, *w])
        g2, x2 = _rows(g, nd), _rows(x, nd)
        rows, n = x2.shape
        r = rstd.reshape(-1)
        centred = x2 - mean.reshape(-1, 1)
        key = (xp.__name__, centred.shape, centred.dtype.str)
        p = _SCRATCH.pop(key, None)
        p = xp.multiply(g2, centred, out=p if p is not None else xp.empty_like(centred))
        grads = []
        if "w" in affine:
            grads.append((r.astype(p.dtype, copy=False) @ p).reshape(w[0].shape))
        if "b" in affine:
            grads.append((xp.ones(rows, g2.dtype) @ g2).reshape(x.shape[x.ndim - nd :]))
        weight = w[0].reshape(-1) if w else xp.ones(n, g2.dtype)
        proj = (p @ weight) * (r * r / -n)  # -rstd * mean(gw * xhat)
        centre = (g2 @ weight) / n  # mean(gw)
        centred *= proj[:, None]
        centred += xp.multiply(g2, weight, out=p) if w else g2
        centred -= centre[:, None]
        centred *= rstd.reshape(-1, 1)
        _keep_scratch(key, p)
        grads = [gr.astype(param_dtype, copy=False) for gr in grads]
        return (centred.reshape(x.shape).astype(dtype, copy=False), *grads)

    return kernel


_SCRATCH: dict = {}  # (array module, shape, dtype) -> a free buffer (taken by pop: threadsafe)


def _keep_scratch(key, buffer) -> None:
    """Keep `buffer` for the next call of its shape (a few shapes at most)."""
    if len(_SCRATCH) >= 4:
        _SCRATCH.clear()
    _SCRATCH[key] = buffer


layer_norm_op = defop("native_layer_norm", _layer_norm_kernel)
layer_norm_backward_op = defop(
    "native_layer_norm_backward", _layer_norm_backward_kernel, differentiable=False
)


def _normalized(x: Tensor, dims: tuple, eps: float) -> tuple[Tensor, Tensor]:
    """``(x - mean) * rstd`` and ``rstd`` over `dims`, in tocha ops (differentiable)."""
    centered = x - x.mean(dims, keepdim=True)
    rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    return centered * rstd, rstd


def _norm_backward(g, x, w, dims, eps, shape):
    """The input gradient of ``(x - mean) * rstd * w`` over `dims`, in tocha ops, with the
    weight broadcast to `x` by `shape`; also xhat for the parameter gradients."""
    xhat, rstd = _normalized(x, dims, eps)
    gw = g if w is None else g * w.reshape(shape)
    dx = rstd * (gw - gw.mean(dims, keepdim=True) - xhat * (gw * xhat).mean(dims, keepdim=True))
    return dx, xhat


def _layer_norm_grad(grads, out, x, *rest):
    *params, nd, eps, affine = rest
    g = grads[0]
    w = params[0] if "w" in affine else None
    if not (GRAD_MODE.grad_enabled or GRAD_MODE.transforms):
        weights = params[:1] if w is not None else ()
        result = call(layer_norm_backward_op, (g, x, out[1], out[2], *weights), nd, affine)
        return (*result, None, None, None)
    lead = tuple(range(x.dim() - nd))
    dx, xhat = _norm_backward(g, x, w, tuple(range(x.dim() - nd, x.dim())), eps, x.shape[-nd:])
    result = [dx]
    if "w" in affine:
        result.append((g * xhat).sum(lead))
    if "b" in affine:
        result.append(g.sum(lead))
    return (*result, None, None, None)


def _norm_jvp(t, x, params, affine, mean, rstd, dims, shape):
    """Tangents of ``(x - mean) * rstd * w + b`` and of mean and rstd over `dims`, from the
    saved statistics (broadcast to x), the weight and bias broadcast to x by `shape`:
    ``t_xhat = rstd * (c - xhat * mean(xhat * c))`` with ``c = t_x - mean(t_x)``, and
    ``t_rstd = -rstd**2 * mean(xhat * c)``."""
    tx, tparams = t[0], t[1 : 1 + len(params)]
    xhat = (x - mean) * rstd
    t_out = t_mean = t_rstd = None
    if tx is not None:
        t_mean = tx.mean(dims, keepdim=True)
        c = tx - t_mean
        proj = (xhat * c).mean(dims, keepdim=True)
        t_out = rstd * (c - xhat * proj)
        t_rstd = -rstd * rstd * proj
        if "w" in affine:
            t_out = t_out * params[0].reshape(shape)
    by_w = by_b = None
    if "w" in affine and tparams[0] is not None:
        by_w = xhat * tparams[0].reshape(shape)
    if "b" in affine and tparams[-1] is not None:
        by_b = tparams[-1].reshape(shape)
    return plus(t_out, by_w, by_b), t_mean, t_rstd


def _layer_norm_jvp(t, out, x, *rest):
    *params, nd, eps, affine = rest
    dims = tuple(range(x.dim() - nd, x.dim()))
    return _norm_jvp(t, x, params, affine, out[1], out[2], dims, x.shape[x.dim() - nd :])


d("native_layer_norm", "0+o12", _layer_norm_grad)
fwd("native_layer_norm", _layer_norm_jvp)


def _affine_code(weight, bias) -> tuple[str, tuple]:
    """Which of weight and bias are given ("wb", "w", "b" or ""), and those tensors."""
    code = ("w" if weight is not None else "") + ("b" if bias is not None else "")
    return code, tuple(t for t in (weight, bias) if t is not None)


def _shape_list(shape) -> list:
    return [shape] if isinstance(shape, int) else list(shape)


def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the trailing `normalized_shape` dims:
    ``(x - mean) / sqrt(var + eps) * weight + bias`` (biased variance).

    Example:
        >>> F.layer_norm(tocha.tensor([[1.0, 3.0]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("layer_norm", input, "input", 1)
    shape = _shape_list(normalized_shape)
    nd = len(shape)
    if nd == 0 or list(input.shape[input.dim() - nd :]) != shape or input.dim() < nd:
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size"
            f"{list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but "
                f"got {name} of shape {list(t.shape)} and normalized_shape = "
                f"{shape}"
            )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"LayerNormKernelImpl\" not implemented for '{TITLE[input.dtype]}'"
        )
    affine, params = _affine_code(weight, bias)
    return call(layer_norm_op, (input, *params), nd, eps, affine)[0]


@computed_in_float32
def rms_norm(
    input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing `normalized_shape` dims;
    `eps` defaults to the machine epsilon of the input's dtype."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("rms_norm", input, "input", 1)
    shape = _shape_list(normalized_shape)
    nd = len(shape)
    if nd == 0:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            "one element, but got normalized_shape = []"
        )
    if input.dim() < nd:
        raise ValueError(f"Input tensor must have at least {nd} dimensions, but got {input.dim()}")
    if list(input.shape[input.dim() - nd :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape "
            f"[*{', '.join(map(str, shape))}], but got input of size"
            f"{list(input.shape)}"
        )
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{TITLE[input.dtype]}'")
    if eps is None:
        eps = tocha.finfo(input.dtype).eps
    dims = tuple(range(input.dim() - nd, input.dim()))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


# -- batch_norm: one primitive for the training forward ---------------------------------------
def _channel_axes(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _per_channel(xp, a, b=None):
    """Per channel (dim 1) sums of `a`, or of ``a * b``, over every other dim."""
    c = a.shape[1]
    a2 = a.reshape(a.shape[0] * c, -1)
    rows = _row_sums(xp, a2) if b is None else _row_dots(xp, a2, b.reshape(a2.shape))
    return rows.reshape(-1, c).sum(axis=0)


def _batch_norm_kernel(xp):
    def kernel(x, *rest):
        *params, eps, affine = rest
        dtype = x.dtype
        x, *params = widened(xp, [x, *params])
        c = x.shape[1]
        n = x.size // c
        shape = (c,) + (1,) * (x.ndim - 2)
        mean = _per_channel(xp, x) / n
        y = x - mean.reshape(shape)
        var = _per_channel(xp, y, y) / n
        half = dtype.char in HALF_CHARS and all(p.dtype == dtype for p in rest[:-2])
        if half and dtype.char == "E":  # PyTorch's bfloat16 kernel rounds the variance
            var = var.astype(dtype).astype(var.dtype)
        invstd = 1 / xp.sqrt(var + eps)
        scale = invstd
        if half:
            # PyTorch keeps a float16/bfloat16 input's statistics in its dtype and
            # normalizes with those (in float32)
            rounded = mean.astype(dtype).astype(mean.dtype)
            y = x - rounded.reshape(shape)
            scale = invstd.astype(dtype).astype(invstd.dtype)
        if "w" in affine:
            scale = scale * params[0]
        y *= scale.reshape(shape)
        if "b" in affine:
            y += params[-1].reshape(shape)
        if half:  # PyTorch's statistics of a float16/bfloat16 input are in its dtype
            return y.astype(dtype, copy=False), mean.astype(dtype), invstd.astype(dtype)
        return y.astype(dtype, copy=False), mean, invstd

    return kernel


def _batch_norm_backward_kernel(xp):
    def kernel(g, x, mean, invstd, *rest):
        *w, affine = rest
        dtype, param_dtype = x.dtype, w[0].dtype if w else x.dtype
        g, x, mean, invstd, *w = widened(xp, [g, x, mean, invstd, *w])
        c = x.shape[1]
        n = x.size // c
        shape = (c,) + (1,) * (x.ndim - 2)
        xhat = x - mean.reshape(shape)
        xhat *= invstd.reshape(shape)
        gsum = _per_channel(xp, g)
        gxhat = _per_channel(xp, g, xhat)
        scale = invstd * w[0] if w else invstd
        xhat *= (gxhat * scale / -n).reshape(shape)
        xhat += g * scale.reshape(shape)
        xhat -= (gsum * scale / n).reshape(shape)
        grads = [xhat.astype(dtype, copy=False)]
        if "w" in affine:
            grads.append(gxhat.astype(param_dtype, copy=False))
        if "b" in affine:
            grads.append(gsum.astype(param_dtype, copy=False))
        return tuple(grads)

    return kernel


batch_norm_op = defop("native_batch_norm", _batch_norm_kernel, layout=(0,))
batch_norm_backward_op = defop(
    "native_batch_norm_backward", _batch_norm_backward_kernel, differentiable=False
)


def _batch_norm_grad(grads, out, x, *rest):
    *params, eps, affine = rest
    g = grads[0]
    w = params[0] if "w" in affine else None
    if not (GRAD_MODE.grad_enabled or GRAD_MODE.transforms):
        weights = params[:1] if w is not None else ()
        result = call(batch_norm_backward_op, (g, x, out[1], out[2], *weights), affine)
        return (*result, None, None)
    dims = _channel_axes(x.dim())
    shape = (-1,) + (1,) * (x.dim() - 2)
    dx, xhat = _norm_backward(g, x, w, dims, eps, shape)
    result = [dx]
    if "w" in affine:
        result.append((g * xhat).sum(dims))
    if "b" in affine:
        result.append(g.sum(dims))
    return (*result, None, None)


def _batch_norm_jvp(t, out, x, *rest):
    *params, eps, affine = rest
    shape = (-1,) + (1,) * (x.dim() - 2)
    mean, invstd = out[1].reshape(shape), out[2].reshape(shape)
    t_out, t_mean, t_invstd = _norm_jvp(
        t, x, params, affine, mean, invstd, _channel_axes(x.dim()), shape
    )
    if t_mean is None:
        return t_out, None, None
    return t_out, t_mean.reshape(-1), t_invstd.reshape(-1)


d("native_batch_norm", "0+o12", _batch_norm_grad)
fwd("native_batch_norm", _batch_norm_jvp)


def _verify_batch_size(size) -> None:
    count = size[0]
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError(
            "Expected more than 1 value per channel when training, got input size "
            f"torch.Size({list(size)})"
        )


def _check_stat(name: str, t: Tensor | None, c: int) -> None:
    if t is not None and not isinstance(t, Tensor):
        raise not_a_tensor("batch_norm", t, name, None)
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel (dim 1) over the batch and spatial dims.

    In training the batch statistics are used, and the running statistics (when given) are
    updated in place: ``running = (1 - momentum) * running + momentum * batch`` (the running
    variance takes the unbiased batch variance). In evaluation the running statistics are used.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("batch_norm", input, "input", 1)
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    arguments = {  # checked as PyTorch's argument parser checks them, in its order
        "weight": weight,
        "bias": bias,
        "running_mean": running_mean,
        "running_var": running_var,
    }
    for position, (name, t) in enumerate(arguments.items(), start=2):
        if t is not None and not isinstance(t, Tensor):
            raise not_a_tensor("batch_norm", t, name, position)
    if input.numel() == 0:  # PyTorch checks nothing more and returns an empty result
        return input.clone()
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(
            f"running_{'mean' if running_mean is None else 'var'} must be "
            "defined in evaluation mode"
        )
    c = input.shape[1] if input.dim() > 1 else 0
    for name, t in (  # PyTorch's order
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        _check_stat(name, t, c)
    if input.dim() == 0:
        raise RuntimeError("batch_norm: expected an input with a batch and a channel dim, got 0-D")
    input.size(1)  # a 1-D input: PyTorch's IndexError for its missing channel dim
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"batch_norm\" not implemented for '{TITLE[input.dtype]}'")
    mixed = _mixed_precision(input, (running_mean, running_var, weight, bias))
    affine, params = _affine_code(weight, bias)
    if training:
        out, mean, invstd = call(batch_norm_op, (input, *params), eps, affine)
        if running_mean is not None or running_var is not None:
            if mean.dtype in _REDUCED:  # its statistics were rounded: blend exact ones
                _update_running_half(running_mean, running_var, input, momentum)
            else:
                _update_running(
                    running_mean, running_var, mean, invstd, eps, momentum, input.numel() // c
                )
        return out
    shape = (-1,) + (1,) * (input.dim() - 2)
    low = mixed or input.dtype in _REDUCED  # computed in float32, as PyTorch's kernel
    if low:
        running_mean, running_var = running_mean.float(), running_var.float()
        weight = None if weight is None else weight.float()
        bias = None if bias is None else bias.float()
    scale = (running_var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    shift = -running_mean * scale
    if bias is not None:
        shift = shift + bias
    if low:
        return (input.float() * scale.reshape(shape) + shift.reshape(shape)).to(input.dtype)
    return input * scale.reshape(shape) + shift.reshape(shape)


_REDUCED = (tocha.bfloat16, tocha.float16)


def _mixed_precision(input: Tensor, params) -> bool:
    """Whether batch norm runs a bfloat16/float16 input with float32 statistics and affine
    parameters (computed in float32, returned in the input's dtype, as PyTorch does on the
    CPU); RuntimeError as PyTorch's for any other mix of dtypes."""
    dtypes = {t.dtype for t in params if t is not None}
    if not dtypes or dtypes == {input.dtype}:
        return False
    if dtypes == {tocha.float32} and input.dtype in _REDUCED:
        return True
    if dtypes == {tocha.float32} and input.dtype is tocha.float64:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")


def _update_running(running_mean, running_var, mean, invstd, eps, momentum, n) -> None:
    """Blend the batch statistics into the running ones, in place (the variance unbiased).
    The statistics are detached: buffers take no tangent under forward-mode AD either."""
    mean, invstd = mean.detach(), invstd.detach()
    with tocha.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
        if running_var is not None:
            var = (invstd.double().pow(-2) - eps) * (n / max(n - 1, 1))
            running_var.mul_(1 - momentum).add_(var.to(running_var.dtype), alpha=momentum)


def _update_running_half(running_mean, running_var, input, momentum) -> None:
    """`_update_running` for a float16/bfloat16 batch norm, as PyTorch's kernel blends: the
    batch's mean and unbiased variance in float32, each running value rounded once."""
    with tocha.no_grad():
        x = input.detach().float()
        dims = (0, *range(2, x.dim()))
        n = x.numel() // x.shape[1]
        var, mean = tocha.var_mean(x, dims, correction=0)
        if running_mean is not None:
            blended = mean * momentum + running_mean.float() * (1 - momentum)
            running_mean.copy_(blended)
        if running_var is not None:
            unbiased = var * (n / max(n - 1, 1))
            running_var.copy_(unbiased * momentum + running_var.float() * (1 - momentum))


def _verify_spatial_size(size) -> None:
    count = 1
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {size}"
        )


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel of each sample over its spatial dims: batch_norm of the input
    seen as one sample of ``N * C`` channels (running statistics averaged over the batch)."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    n, c = input.shape[0], input.shape[1]
    folded = input.reshape(1, n * c, *input.shape[2:])
    stats = [None if t is None else t.repeat(n) for t in (running_mean, running_var)]
    out = batch_norm(folded, stats[0], stats[1], None, None, use_input_stats, momentum, eps)
    with tocha.no_grad():
        for running, batch in zip((running_mean, running_var), stats):
            if running is not None and use_input_stats:
                running.copy_(batch.reshape(n, c).mean(0))
    out = out.reshape(input.shape)
    shape = (-1,) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each group of ``C / num_groups`` channels of each sample, then apply the
    per-channel `weight` and `bias`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("group_norm", input, "input", 1)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and not isinstance(t, Tensor):
            raise not_a_tensor("group_norm", t, name, None)
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"GroupNormKernelImpl\" not implemented for '{TITLE[input.dtype]}'"
        )
    if input.dim() < 2 or input.shape[1] % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by "
            f"num_groups, but got input of shape {list(input.shape)} and "
            f"num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != input.shape[1]):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {list(t.shape)} and input of shape "
                f"{list(input.shape)}"
            )
    affine, params = _affine_code(weight, bias)
    return call(group_norm_op, (input, *params), num_groups, eps, affine)[0]


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """``x / (k + alpha * mean of x**2 over `size` neighbouring channels) ** beta``."""
    if input.dim() < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input "
            f"(got {input.dim()} dimensions)"
        )
    if input.numel() == 0:
        return input
    if not input.dtype.is_floating_point and input.dtype != tocha.int64:
        kernel = "avg_pool2d" if input.dim() == 3 else "avg_pool3d_out_frame"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[input.dtype]}'")
    pads = [0, 0] * (input.dim() - 2) + [size // 2, (size - 1) // 2]
    padded = pad(input * input, pads)
    if GRAD_MODE.autocast is not None and input.dim() > 3:
        # PyTorch averages the window of a 4-D or larger input with avg_pool3d: float32
        # in an autocast region
        window = LAYERS.autocast_call("avg_pool3d", _window_sum, (padded, size, input), {})
    else:
        window = _window_sum(padded, size, input)
    div = (window * (alpha / size) + k) ** beta
    return input / div


def _window_sum(padded: Tensor, size: int, input: Tensor) -> Tensor:
    """The sums over `size` neighbouring channels of the channel-padded `padded`."""
    c = input.shape[1]
    window = padded.narrow(1, 0, c)
    for i in range(1, size):
        window = window + padded.narrow(1, i, c)
    return window
