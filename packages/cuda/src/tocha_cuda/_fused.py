"""The cuda backend's overrides: the hot composites as one fused kernel each (``kernels/``),
where the generic kernel over CuPy would launch many.

Each override takes the case its kernel covers (float32 or float64, contiguous rows along
the last axis...) and hands any other to the op's generic kernel, so every input the CPU
accepts works here too. Keyed by op name in `OVERRIDES`; a value is a kernel factory, as
an op's generic kernel is: ``factory(xp) -> kernel``.
"""

from __future__ import annotations

import numpy as np

from tocha.library import REGISTRY

from ._kernels import SCALAR_TYPES, elementwise_grid, library

I32, I64, F64, U64 = np.int32, np.int64, np.float64, np.uint64
# Rows a block of layer_norm's weight and bias gradients sums at least.
PARAM_CHUNK_ROWS = 32


def _fusable(*arrays) -> bool:
    """Whether the kernels cover these arrays: one float32 or float64 dtype, not empty."""
    dtype = arrays[0].dtype
    return dtype in SCALAR_TYPES and arrays[0].size > 0 and all(a.dtype == dtype for a in arrays)


def _generic(name: str, xp):
    return REGISTRY[name].generic(xp)


# -- softmax, log_softmax --------------------------------------------------------------------
def _softmax_factory(name: str, log: bool):
    def factory(xp):
        generic, lib = _generic(name, xp), library(xp)

        def kernel(x, dim):
            if dim is None or dim != x.ndim - 1 or not _fusable(x):
                return generic(x, dim)
            x = xp.ascontiguousarray(x)
            n = x.shape[-1]
            y = xp.empty_like(x)
            args = (x, y, I64(n), I32(log))
            lib.launch_rows("softmax.cu", "softmax_forward", x.dtype, x.size // n, n, args)
            return y

        return kernel

    return factory


def _softmax_backward_factory(name: str, log: bool):
    def factory(xp):
        generic, lib = _generic(name, xp), library(xp)

        def kernel(g, out, dim):
            if dim is None or dim != out.ndim - 1 or g.shape != out.shape or not _fusable(g, out):
                return generic(g, out, dim)
            g, out = xp.ascontiguousarray(g), xp.ascontiguousarray(out)
            n = out.shape[-1]
            dx = xp.empty_like(out)
            args = (g, out, dx, I64(n), I32(log))
            lib.launch_rows("softmax.cu", "softmax_backward", out.dtype, out.size // n, n, args)
            return dx

        return kernel

    return factory


# -- layer_norm ------------------------------------------------------------------------------
def _layer_norm_factory(xp):
    generic, lib = _generic("native_layer_norm", xp), library(xp)

    def kernel(x, *rest):
        *params, nd, eps, affine = rest
        if not _fusable(x, *params):
            return generic(x, *rest)
        x = xp.ascontiguousarray(x)
        n = int(np.prod(x.shape[x.ndim - nd :]))
        rows = x.size // n
        w = xp.ascontiguousarray(params[0]) if "w" in affine else x
        b = xp.ascontiguousarray(params[-1]) if "b" in affine else x
        y = xp.empty_like(x)
        mean, rstd = xp.empty(rows, x.dtype), xp.empty(rows, x.dtype)
        args = (x, w, b, y, mean, rstd, I64(n), F64(eps), I32("w" in affine), I32("b" in affine))
        lib.launch_rows("layer_norm.cu", "layer_norm_forward", x.dtype, rows, n, args)
        stat_shape = x.shape[: x.ndim - nd] + (1,) * nd
        return y, mean.reshape(stat_shape), rstd.reshape(stat_shape)

    return kernel


def _layer_norm_backward_factory(xp):
    generic, lib = _generic("native_layer_norm_backward", xp), library(xp)

    def kernel(g, x, mean, rstd, *rest):
        *w, nd, affine = rest
        if g.shape != x.shape or not _fusable(g, x, mean, rstd, *w):
            return generic(g, x, mean, rstd, *rest)
        g, x = xp.ascontiguousarray(g), xp.ascontiguousarray(x)
        mean, rstd = xp.ascontiguousarray(mean), xp.ascontiguousarray(rstd)
        weight = xp.ascontiguousarray(w[0]) if w else x
        n = int(np.prod(x.shape[x.ndim - nd :]))
        rows = x.size // n
        dx = xp.empty_like(x)
        args = (g, x, mean, rstd, weight, dx, I64(n), I32(bool(w)))
        lib.launch_rows("layer_norm.cu", "layer_norm_backward_input", x.dtype, rows, n, args)
        if not affine:
            return (dx,)
        sums = _layer_norm_param_grads(xp, lib, g, x, mean, rstd, rows, n)
        grads = []
        if "w" in affine:
            grads.append(sums[0].reshape(w[0].shape))
        if "b" in affine:
            grads.append(sums[1].reshape(x.shape[x.ndim - nd :]))
        return (dx, *grads)

    return kernel


def _layer_norm_param_grads(xp, lib, g, x, mean, rstd, rows: int, n: int):
    """The column sums of g * xhat and of g over the rows: chunks of rows summed by one
    kernel, then the chunks summed."""
    chunk = max(PARAM_CHUNK_ROWS, -(-rows // 256))
    chunks = -(-rows // chunk)
    dw, db = xp.empty((chunks, n), x.dtype), xp.empty((chunks, n), x.dtype)
    threads = 256
    lib.launch(
        "layer_norm.cu",
        "layer_norm_backward_params",
        x.dtype,
        (-(-n // threads), chunks),
        (threads,),
        (g, x, mean, rstd, dw, db, I64(rows), I64(n), I64(chunk)),
    )
    return dw.sum(axis=0), db.sum(axis=0)


# -- gelu ------------------------------------------------------------------------------------
def _gelu_factory(xp):
    generic, lib = _generic("gelu", xp), library(xp)

    def kernel(x, approximate):
        if not _fusable(x):
            return generic(x, approximate)
        x = xp.ascontiguousarray(x)
        y = xp.empty_like(x)
        args = (x, y, I64(x.size), I32(approximate == "tanh"))
        lib.launch("gelu.cu", "gelu_forward", x.dtype, *elementwise_grid(x.size), args)
        return y

    return kernel


def _gelu_backward_factory(xp):
    generic, lib = _generic("gelu_backward", xp), library(xp)

    def kernel(g, x, approximate):
        if g.shape != x.shape or not _fusable(g, x):
            return generic(g, x, approximate)
        g, x = xp.ascontiguousarray(g), xp.ascontiguousarray(x)
        dx = xp.empty_like(x)
        args = (g, x, dx, I64(x.size), I32(approximate == "tanh"))
        lib.launch("gelu.cu", "gelu_backward", x.dtype, *elementwise_grid(x.size), args)
        return dx

    return kernel


# -- cross_entropy (class indices, no label smoothing) ---------------------------------------
# The layout of rows, the target checks and the reductions are the op's own (`Op.parts`,
# published by tocha-nn, which declares it).
def _cross_entropy_factory(xp):
    op = REGISTRY["cross_entropy_loss"]
    generic, lib, parts = op.generic(xp), library(xp), op.parts

    def kernel(x, t, w, reduction, ignore_index, smoothing):
        if smoothing > 0 or not _fusable(x, *(() if w is None else (w,))):
            return generic(x, t, w, reduction, ignore_index, smoothing)
        rows, idx = parts["rows"](xp, x, t)
        rows = xp.ascontiguousarray(rows)
        n, c = rows.shape
        safe, _, wt = parts["targets"](xp, idx, w, ignore_index, c, x.dtype)
        wt = xp.ascontiguousarray(wt, dtype=x.dtype)
        probs, losses = xp.empty_like(rows), xp.empty(n, x.dtype)
        args = (rows, xp.ascontiguousarray(safe), wt, probs, losses, I64(c))
        lib.launch_rows("cross_entropy.cu", "cross_entropy_forward", x.dtype, n, c, args)
        return parts["finish"](xp, losses, wt, reduction, x, t), probs

    return kernel


def _cross_entropy_backward_factory(xp):
    op = REGISTRY["cross_entropy_loss_backward"]
    generic, lib, parts = op.generic(xp), library(xp), op.parts

    def kernel(g, x, t, probs, w, reduction, ignore_index, smoothing):
        if smoothing > 0 or not _fusable(g, probs, *(() if w is None else (w,))):
            return generic(g, x, t, probs, w, reduction, ignore_index, smoothing)
        n, c = probs.shape
        idx = t.reshape(-1).astype(xp.int64, copy=False)
        safe, _, wt = parts["targets"](xp, idx, w, ignore_index, c, probs.dtype)
        scale = parts["row_scale"](g, wt, reduction)
        coef = xp.ascontiguousarray(scale * wt, dtype=probs.dtype)
        grad = xp.empty((n, c), probs.dtype)
        args = (xp.ascontiguousarray(probs), xp.ascontiguousarray(safe), coef, grad, I64(n), I64(c))
        lib.launch(
            "cross_entropy.cu",
            "cross_entropy_backward",
            probs.dtype,
            *elementwise_grid(n * c),
            args,
        )
        return parts["unrows"](xp, grad, x.shape)

    return kernel


# -- dropout ---------------------------------------------------------------------------------
def _dropout_factory(xp):
    generic, lib = _generic("native_dropout", xp), library(xp)

    def kernel(x, stream, p):
        if not _fusable(x) or not hasattr(stream, "philox_key"):
            return generic(x, stream, p)
        seed, offset = stream.philox_key()
        x = xp.ascontiguousarray(x)
        y, mask = xp.empty_like(x), xp.empty(x.shape, xp.bool_)
        args = (x, y, mask, I64(x.size), F64(p), F64(1 / (1 - p)), U64(seed), U64(offset))
        lib.launch("dropout.cu", "dropout_forward", x.dtype, *elementwise_grid(x.size), args)
        return y, mask

    return kernel


# -- Adam and AdamW over a whole parameter group ---------------------------------------------
ADAM_AMSGRAD, ADAM_MAXIMIZE, ADAM_DECOUPLED = 1, 2, 4


def _adam_factory(xp):
    generic, lib = _generic("_adam_step", xp), library(xp)

    def kernel(params, grads, states, c):
        dtype = params[0].dtype
        if not _fusable(*params, *grads, *states) or not all(
            a.flags.c_contiguous for a in (*params, *grads)
        ):
            return generic(params, grads, states, c)
        sizes = [p.size for p in params]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        table = np.empty(3 * len(params) + 1, np.int64)
        count = len(params)
        table[:count] = [lib.address(p) for p in params]
        table[count : 2 * count] = [lib.address(g) for g in grads]
        table[2 * count :] = offsets
        device_table = xp.asarray(table)
        step, beta1, beta2 = c["step"], c["beta1"], c["beta2"]
        flags = (
            ADAM_AMSGRAD * bool(c["amsgrad"])
            | ADAM_MAXIMIZE * bool(c["maximize"])
            | ADAM_DECOUPLED * bool(c["decoupled_weight_decay"])
        )
        exp_avg, exp_avg_sq = states[0], states[1]
        max_sq = states[2] if len(states) > 2 else exp_avg_sq
        args = (
            device_table[:count],
            device_table[count : 2 * count],
            device_table[2 * count :],
            I32(count),
            exp_avg,
            exp_avg_sq,
            max_sq,
            I64(int(offsets[-1])),
            F64(c["lr"]),
            F64(beta1),
            F64(beta2),
            F64(c["eps"]),
            F64(c["weight_decay"]),
            F64(c["lr"] / (1 - beta1**step)),
            F64((1 - beta2**step) ** 0.5),
            I32(flags),
        )
        lib.launch("adam.cu", "adam_step", dtype, *elementwise_grid(int(offsets[-1])), args)

    return kernel


OVERRIDES = {
    "softmax": _softmax_factory("softmax", False),
    "log_softmax": _softmax_factory("log_softmax", True),
    "softmax_backward_data": _softmax_backward_factory("softmax_backward_data", False),
    "log_softmax_backward_data": _softmax_backward_factory("log_softmax_backward_data", True),
    "native_layer_norm": _layer_norm_factory,
    "native_layer_norm_backward": _layer_norm_backward_factory,
    "gelu": _gelu_factory,
    "gelu_backward": _gelu_backward_factory,
    "cross_entropy_loss": _cross_entropy_factory,
    "cross_entropy_loss_backward": _cross_entropy_backward_factory,
    "native_dropout": _dropout_factory,
    "_adam_step": _adam_factory,
}
