"""group_norm's primitive, ``native_group_norm`` (as PyTorch's): an input (N, C, *) is
normalized over each group of ``C / groups`` channels of each sample, then scaled and shifted
per channel; it also returns each group's mean and inverse standard deviation, (N, groups).

The kernels work on ``(N, C, M)`` views (M the spatial size). The forward is one affine map
per (sample, channel): ``y = x * (rstd * w) + (b - mean * rstd * w)``. The backward needs
two per-(sample, channel) sums, of ``g`` and of ``g * x``, from which the weight and bias
gradients and the input gradient ``g * rstd * w + x * c2 + c3`` (c2, c3 per group) follow.
Under ``create_graph=True`` or a transform the derivative is written in tocha ops instead.
"""

from __future__ import annotations

from tocha import Tensor
from tocha.autograd.derivatives import d, fwd
from tocha.library import GRAD_MODE, call, defop

from ._jvp import plus

__all__ = ["group_norm_op", "group_norm_backward_op", "widened"]


def _dims(x, groups: int):
    """N, C, the spatial size M and the size K = C / groups * M of a group."""
    n, c = x.shape[0], x.shape[1]
    m = 1
    for s in x.shape[2:]:
        m *= s
    return n, c, m, c // groups * m


def _count(k: int) -> int:
    """The divisor of a group's mean: its size, 1 for empty groups (whose values are unused)."""
    return max(k, 1)


def _sums(xp, a, b=None):
    """Per (sample, channel) sums over the last axis of the (N, C, M) `a`, or of ``a * b``."""
    if b is None:
        return a @ xp.ones(a.shape[2], a.dtype)
    return xp.einsum("ncm,ncm->nc", a, b)


def widened(xp, arrays):
    """The arrays in float32 where they are of a narrower float (bfloat16, float16: NumPy's
    reductions and einsum take neither well)."""
    return [a.astype(xp.float32) if a.dtype.itemsize < 4 else a for a in arrays]


def add_affine(xp, out, x3, scale, shift, block: int = 1 << 15) -> None:
    """``out += x3 * scale + shift`` for the (N, C, M) `out` and `x3` and the (N, C) `scale`
    and `shift`, a block of samples at a time: a small temporary is reused by the allocator,
    a full-size one would page-fault."""
    step = max(1, block // max(1, x3[0].size))
    for i in range(0, x3.shape[0], step):
        part = x3[i : i + step] * scale[i : i + step, :, None]
        part += shift[i : i + step, :, None]
        out[i : i + step] += part


def _group_norm_kernel(xp):
    def kernel(x, *rest):
        *params, groups, eps, affine = rest
        n, c, m, k = _dims(x, groups)
        dtype = x.dtype
        x, *params = widened(xp, [x, *params])
        rows = x.reshape(n * groups, k)
        mean = (rows @ xp.ones(k, x.dtype)) / _count(k)
        y = rows - mean[:, None]
        rstd = 1 / xp.sqrt(xp.einsum("ij,ij->i", y, y) / _count(k) + eps)
        scale = xp.repeat(rstd.reshape(n, groups), c // groups, axis=1)
        if "w" in affine:
            scale = scale * params[0]
        y3 = y.reshape(n, c, m)
        y3 *= scale[:, :, None]
        if "b" in affine:
            y3 += params[-1][:, None]
        y = y.reshape(x.shape).astype(dtype, copy=False)
        mean, rstd = mean.reshape(n, groups), rstd.reshape(n, groups)
        if dtype.itemsize == 2 and all(p.dtype == dtype for p in rest[:-3]):
            # PyTorch keeps a float16/bfloat16 input's statistics in its dtype (its backward
            # reads them so)
            mean, rstd = mean.astype(dtype), rstd.astype(dtype)
        return y, mean, rstd

    return kernel


def _group_norm_backward_kernel(xp):
    def kernel(g, x, mean, rstd, *rest):
        *w, groups, affine = rest
        n, c, m, k = _dims(x, groups)
        dtype, param_dtype = x.dtype, w[0].dtype if w else x.dtype
        g, x, mean, rstd, *w = widened(xp, [g, x, mean, rstd, *w])
        per_group = c // groups
        g3, x3 = g.reshape(n, c, m), x.reshape(n, c, m)
        sum_g, sum_gx = _sums(xp, g3), _sums(xp, g3, x3)
        mean_c = xp.repeat(mean, per_group, axis=1)
        rstd_c = xp.repeat(rstd, per_group, axis=1)
        grads = []
        if "w" in affine:
            grads.append(((sum_gx - mean_c * sum_g) * rstd_c).sum(axis=0))
        if "b" in affine:
            grads.append(sum_g.sum(axis=0))
        weight = w[0] if w else xp.ones(c, g.dtype)
        # per group: a = mean of g * w, b = mean of g * w * xhat
        a = (sum_g * weight).reshape(n, groups, per_group).sum(axis=2) / _count(k)
        b = ((sum_gx - mean_c * sum_g) * weight).reshape(n, groups, per_group).sum(axis=2)
        b *= rstd / _count(k)
        c2 = -rstd * rstd * b
        c3 = rstd * (rstd * b * mean - a)
        gx = g3 * (rstd_c * weight)[:, :, None]
        add_affine(xp, gx, x3, xp.repeat(c2, per_group, axis=1), xp.repeat(c3, per_group, axis=1))
        grads = [gr.astype(param_dtype, copy=False) for gr in grads]
        return (gx.reshape(x.shape).astype(dtype, copy=False), *grads)

    return kernel


group_norm_op = defop("native_group_norm", _group_norm_kernel, layout=(0,))
group_norm_backward_op = defop(
    "native_group_norm_backward", _group_norm_backward_kernel, differentiable=False
)


def _grouped(x: Tensor, groups: int) -> Tensor:
    return x.reshape(x.shape[0], groups, -1)


def _channel_shape(x: Tensor) -> tuple:
    return (-1,) + (1,) * (x.dim() - 2)


def _reduce_dims(x: Tensor) -> tuple:
    return (0,) + tuple(range(2, x.dim()))


def _group_norm_grad(grads, out, x, *rest):
    *params, groups, eps, affine = rest
    g = grads[0]
    w = params[0] if "w" in affine else None
    if not (GRAD_MODE.grad_enabled or GRAD_MODE.transforms):
        weights = params[:1] if w is not None else ()
        result = call(group_norm_backward_op, (g, x, out[1], out[2], *weights), groups, affine)
        return (*result, None, None, None)
    xg = _grouped(x, groups)
    centred = xg - xg.mean(2, keepdim=True)
    rstd = ((centred * centred).mean(2, keepdim=True) + eps).rsqrt()
    xhat = centred * rstd
    gw = _grouped(g if w is None else g * w.reshape(_channel_shape(x)), groups)
    dx = rstd * (gw - gw.mean(2, keepdim=True) - xhat * (gw * xhat).mean(2, keepdim=True))
    result = [dx.reshape(x.shape)]
    if "w" in affine:
        result.append((g * xhat.reshape(x.shape)).sum(_reduce_dims(x)))
    if "b" in affine:
        result.append(g.sum(_reduce_dims(x)))
    return (*result, None, None, None)


def _group_norm_jvp(t, out, x, *rest):
    """``t_xhat = rstd * (c - xhat * mean(xhat * c))``, ``c = t_x - mean(t_x)`` per group;
    ``t_rstd = -rstd**2 * mean(xhat * c)``; then the per-channel affine's product rule."""
    *params, groups, eps, affine = rest
    tx, tparams = t[0], t[1 : 1 + len(params)]
    mean, rstd = out[1].unsqueeze(2), out[2].unsqueeze(2)
    xhat = (_grouped(x, groups) - mean) * rstd
    shape = _channel_shape(x)
    t_out = t_mean = t_rstd = None
    if tx is not None:
        txg = _grouped(tx, groups)
        t_mean = txg.mean(2, keepdim=True)
        centred = txg - t_mean
        proj = (xhat * centred).mean(2, keepdim=True)
        t_out = (rstd * (centred - xhat * proj)).reshape(x.shape)
        t_rstd = (-rstd * rstd * proj).squeeze(2)
        t_mean = t_mean.squeeze(2)
        if "w" in affine:
            t_out = t_out * params[0].reshape(shape)
    by_w = by_b = None
    if "w" in affine and tparams[0] is not None:
        by_w = xhat.reshape(x.shape) * tparams[0].reshape(shape)
    if "b" in affine and tparams[-1] is not None:
        by_b = tparams[-1].reshape(shape).expand(x.shape)
    return plus(t_out, by_w, by_b), t_mean, t_rstd


d("native_group_norm", "0+o12", _group_norm_grad)
fwd("native_group_norm", _group_norm_jvp)
