"""Activation functions: the functional forms behind ``tocha.nn`` activation layers.

softmax and log_softmax are one primitive each with a hand-written backward (itself a
primitive, differentiable again); the pointwise activations are one primitive each whose
derivative is written in tocha ops; the rest are cheap composites. Each primitive's forward-mode
rule (`fwd`) sits beside its derivative; a pointwise one is its derivative applied to the
tangent (`pointwise`).
"""

from __future__ import annotations

import math
import warnings

import tocha
from tocha import Tensor
from tocha.autograd.derivatives import d, fwd
from tocha.library import (
    HALF_CHARS,
    REGISTRY,
    TITLE,
    assign,
    autocast_op,
    call,
    check_scalar_converts,
    computed_in_float32,
    defop,
    expect_tensor,
    in_float32,
    index_arg,
    not_a_tensor,
)

from ._dtypes import FLOATING_KINDS, fit_dtype, no_kernel
from ._jvp import plus, pointwise

__all__ = [
    "celu",
    "celu_",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "log_softmax",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "gumbel_softmax",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]

SQRT_HALF = math.sqrt(0.5)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
TANH_K = math.sqrt(2.0 / math.pi)
TANH_C = 0.044715
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _apply(op, input: Tensor, inplace: bool, *args) -> Tensor:
    out = call(op, (input,), *args)
    return assign(input, out) if inplace else out


# A scalar argument is checked for overflow only where ``-65504.0 <= value <= 65504.0`` fails
# (NaN too): the range every floating dtype holds.
def _fits(input: Tensor, value, opmath: bool = False, integral: bool = False) -> None:
    """PyTorch's error where `value` overflows the type the kernel reads it as: `input`'s
    dtype, or with `opmath` float32 for float16/bfloat16. Only for a dtype the kernel has
    (floating, and with `integral` integers too): for others the call reports the dtype."""
    try:
        dtype = input.dtype
    except AttributeError:
        return  # the call reports the non-tensor
    if dtype.is_floating_point or (integral and not dtype.is_complex):
        check_scalar_converts(value, dtype, opmath)


# -- softmax family: one primitive each, with a primitive backward --------------------------
def _softmax_kernel(xp):
    def kernel(x, dim):
        if not x.size:  # the result is empty too (NumPy has no max of an empty dim)
            return x.copy()
        if not x.flags.c_contiguous:  # PyTorch's result is row-major whatever the input's
            x = xp.ascontiguousarray(x)
        if not x.ndim:
            return kernel(x.reshape(1), 0).reshape(())
        if x.dtype.char in HALF_CHARS:
            return _half_softmax(xp, x, dim)
        e = x - x.max(axis=dim, keepdims=True)
        xp.exp(e, out=e)
        e *= 1 / e.sum(axis=dim, keepdims=True)  # one division per row, as PyTorch's kernel
        return e

    return kernel


def _half_softmax(xp, x, dim):
    """float16/bfloat16 softmax in float32, rounded once, as PyTorch's CPU kernel along the
    last dim. (Along another dim, PyTorch rounds the exponentials of the elements its vector
    loop leaves over, which depends on the SIMD width and thread count: 1 ulp apart there.)"""
    e = x.astype(xp.float32)
    e -= e.max(axis=dim, keepdims=True)
    xp.exp(e, out=e)
    e *= 1 / e.sum(axis=dim, keepdims=True)
    return e.astype(x.dtype)


def _log_softmax_kernel(xp):
    def kernel(x, dim):
        if not x.size:  # the result is empty too (NumPy has no max of an empty dim)
            return x.copy()
        if not x.flags.c_contiguous:  # PyTorch's result is row-major whatever the input's
            x = xp.ascontiguousarray(x)
        if not x.ndim:
            return kernel(x.reshape(1), 0).reshape(())
        low = x.dtype if x.dtype.char in HALF_CHARS else None
        if low is not None:
            x = x.astype(xp.float32)
        shifted = x - x.max(axis=dim, keepdims=True)
        total = xp.exp(shifted).sum(axis=dim, keepdims=True)
        if low is not None and dim % x.ndim == x.ndim - 1:
            # PyTorch's last-dim kernel keeps the sum and its log in the input's dtype
            total = xp.log(total.astype(low).astype(xp.float32)).astype(low)
            shifted -= total.astype(xp.float32)
        else:
            shifted -= xp.log(total)
        return shifted if low is None else shifted.astype(low)

    return kernel


def _softmax_backward_kernel(xp):
    def kernel(g, out, dim):
        gy = g * out
        gy -= out * gy.sum(axis=dim, keepdims=True)
        return gy

    return kernel


def _log_softmax_backward_kernel(xp):
    def kernel(g, out, dim):
        return g - xp.exp(out) * g.sum(axis=dim, keepdims=True)

    return kernel


softmax_op = defop("softmax", _softmax_kernel)
log_softmax_op = defop("log_softmax", _log_softmax_kernel)
softmax_backward_op = defop("softmax_backward_data", _softmax_backward_kernel, opmath=True)
log_softmax_backward_op = defop(
    "log_softmax_backward_data", _log_softmax_backward_kernel, opmath=True
)


def _softmax_backward_backward(gg, _, g, out, dim):
    """y = out * (g - sum(g * out)): gradients by g and by out."""
    total = (gg * out).sum(dim, keepdim=True)
    grad_out = gg * (g - (g * out).sum(dim, keepdim=True)) - g * total
    return call(softmax_backward_op, (gg, out), dim), grad_out, None


def _log_softmax_backward_backward(gg, _, g, out, dim):
    """y = g - exp(out) * sum(g): gradients by g and by out."""
    e = out.exp()
    grad_g = gg - (gg * e).sum(dim, keepdim=True)
    return grad_g, -gg * e * g.sum(dim, keepdim=True), None


def _softmax_backward_jvp(t, y, g, out, dim):
    """Tangent of ``out * (g - sum(g * out))``: the op itself in g, and by out
    ``t_out * (g - sum(g * out)) - out * sum(g * t_out)``."""
    by_g = None if t[0] is None else call(softmax_backward_op, (t[0], out), dim)
    by_out = None
    if t[1] is not None:
        total = (g * out).sum(dim, keepdim=True)
        by_out = t[1] * (g - total) - out * (g * t[1]).sum(dim, keepdim=True)
    return plus(by_g, by_out)


def _log_softmax_backward_jvp(t, y, g, out, dim):
    """Tangent of ``g - exp(out) * sum(g)``: the op itself in g, and by out
    ``-exp(out) * t_out * sum(g)``."""
    by_g = None if t[0] is None else call(log_softmax_backward_op, (t[0], out), dim)
    by_out = None if t[1] is None else -out.exp() * t[1] * g.sum(dim, keepdim=True)
    return plus(by_g, by_out)


d("softmax", "o", lambda g, out, x, dim: (call(softmax_backward_op, (g, out), dim), None))
# softmax's Jacobian is symmetric: its tangent is its backward applied to the input's tangent
fwd("softmax", lambda t, out, x, dim: call(softmax_backward_op, (t[0], out), dim))
d("log_softmax", "o", lambda g, out, x, dim: (call(log_softmax_backward_op, (g, out), dim), None))
fwd("log_softmax", lambda t, out, x, dim: t[0] - (out.exp() * t[0]).sum(dim, keepdim=True))
d("softmax_backward_data", "01", _softmax_backward_backward)
fwd("softmax_backward_data", _softmax_backward_jvp)
d("log_softmax_backward_data", "01", _log_softmax_backward_backward)
fwd("log_softmax_backward_data", _log_softmax_backward_jvp)


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(input: Tensor, dim, dtype, name: str, kernel: str):
    expect_tensor(name, input)
    if dim is None:
        dim = _get_softmax_dim(name, input.dim(), 4)
    elif type(dim) is not int:
        if isinstance(dim, bool) or not hasattr(type(dim), "__index__"):
            raise TypeError(
                f"{name}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}"
            )
        dim = dim.__index__()
    ndim = max(input.dim(), 1)
    if not -ndim <= dim < ndim:
        if not -(2**63) <= dim < 2**63:
            raise ValueError("Overflow when unpacking long long")
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, "
            f"{ndim - 1}], but got {dim})"
        )
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point and input.numel():
        if dim % ndim != ndim - 1:
            kernel = kernel.replace("_lastdim", "")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[input.dtype]}'")
    return input, dim % ndim if input.dim() else None


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: tocha.dtype | None = None
) -> Tensor:
    """``exp(x_i) / sum_j exp(x_j)`` along `dim` (computed in `dtype` when given).

    Example:
        >>> F.softmax(tocha.tensor([1.0, 2.0]), dim=0)
        tensor([0.2689, 0.7311])
    """
    x, dim = _softmax_input(input, dim, dtype, "softmax", "softmax_lastdim_kernel_impl")
    return call(softmax_op, (x,), dim)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: tocha.dtype | None = None
) -> Tensor:
    """``x_i - log(sum_j exp(x_j))`` along `dim`, computed stably (in `dtype` when given)."""
    x, dim = _softmax_input(input, dim, dtype, "log_softmax", "log_softmax_lastdim_kernel_impl")
    return call(log_softmax_op, (x,), dim)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: tocha.dtype | None = None
) -> Tensor:
    """``softmax(-x)`` along `dim`."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("softmin", input, "input", 1)
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    x = input.to(dtype) if dtype is not None else input
    return softmax(-x, dim)


# -- pointwise primitives: kernel against xp, derivative in tocha ops -----------------------
def _elu_kernel(xp):
    def kernel(x, alpha, scale, input_scale):
        if x.dtype.char not in "fdg":
            if x.dtype.char in HALF_CHARS:
                return in_float32(kernel)(x, alpha, scale, input_scale)
            raise no_kernel("elu_cpu", x.dtype)
        neg = xp.expm1(xp.minimum(x, 0) * input_scale)
        neg *= alpha
        out = xp.where(x > 0, x, neg)
        if scale != 1:
            out *= scale
        return out

    return kernel


def _gelu_kernel(xp):
    erf = REGISTRY["erf"].generic(xp)

    def kernel(x, approximate):
        if x.dtype.kind not in FLOATING_KINDS:
            raise no_kernel("GeluKernelImpl", x.dtype)
        if approximate == "tanh":
            inner = xp.tanh(TANH_K * (x + TANH_C * x * x * x))
        else:
            inner = erf(x * SQRT_HALF)
        inner += 1
        inner *= x
        inner *= 0.5
        return inner  # (float16/bfloat16 come through `half` or as float32: opmath)

    def half(x, approximate):
        """float16's erf GELU as PyTorch's vectorized kernel computes it: in float32, with
        erf approximated by Abramowitz and Stegun's formula 7.1.26 (bfloat16 and the tanh
        form: the float32 GELU, rounded)."""
        if x.dtype.char != "e" or approximate == "tanh":
            return NotImplemented
        z = x.astype(xp.float32)
        a = xp.abs(z) * xp.float32(SQRT_HALF)
        t = 1 / (1 + xp.float32(AS_P) * a)
        poly = xp.float32(AS_A[4]) * t
        for coefficient in AS_A[3::-1]:
            poly += xp.float32(coefficient)
            poly *= t
        tail = poly * xp.exp(-(a * a))
        out = xp.where(z < 0, tail - 1, 1 - tail)  # erf(z / sqrt 2), its sign z's
        out += 1
        out = z * xp.float32(0.5) * out
        return out.astype(x.dtype)

    kernel.half = half
    return kernel


# Abramowitz and Stegun 7.1.26: erf(a) ~ 1 - (a1 t + ... + a5 t^5) exp(-a^2), t = 1 / (1 + p a)
AS_P = 0.3275911
AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _softplus_kernel(xp):
    def kernel(x, beta, threshold):
        if x.dtype.char not in "fdg":
            if x.dtype.char in HALF_CHARS:
                return in_float32(kernel)(x, beta, threshold)
            raise no_kernel("softplus_cpu", x.dtype)
        bx = x * beta
        return xp.where(bx > threshold, x, xp.logaddexp(bx, 0) / beta)

    return kernel


def _mish_kernel(xp):
    def kernel(x):
        if x.dtype.char not in "fdg":
            if x.dtype.char in HALF_CHARS:
                return in_float32(kernel)(x)
            raise no_kernel("mish_cpu", x.dtype)
        return x * xp.tanh(xp.logaddexp(x, 0))

    return kernel


def _silu_kernel(xp):
    def kernel(x):
        if x.dtype.char not in "fdgFDG":
            if x.dtype.char in HALF_CHARS:
                return in_float32(kernel)(x)
            raise no_kernel("silu_cpu", x.dtype)
        return x / (1 + xp.exp(-x))

    return kernel


# NumPy's type characters of the dtypes of each kind, float16 and bfloat16 left out
_CHARS = {"f": "fdg", "V": "", "i": "bhilqp", "u": "BHILQP", "b": "?", "c": "FDG"}


def _kernel(
    fn, name: str, accepts: str = FLOATING_KINDS, integers: bool = False, opmath: bool = False
):
    """A kernel factory from a function of (xp, x, *args), for x of the NumPy dtype kinds in
    `accepts` (else PyTorch's error for its kernel `name`); the result keeps x's dtype (see
    `fit_dtype`). With `opmath`, float16 and bfloat16 are computed in float32 and rounded
    once, as PyTorch's kernels do (`tocha.library.in_float32`): the dtype test the kernel
    makes anyway sends them there, and the wider dtypes need no test of the result's."""

    def make(xp):
        if not opmath:

            def kernel(x, *args):
                if x.dtype.kind not in accepts:
                    raise no_kernel(name, x.dtype)
                out = fn(xp, x, *args)
                return out if out.dtype == x.dtype else fit_dtype(out, x.dtype, integers)

            return kernel
        direct = "".join(_CHARS[k] for k in accepts)

        def opmath_kernel(x, *args):
            if x.dtype.char not in direct:
                if x.dtype.char in HALF_CHARS:
                    return in_float32(opmath_kernel)(x, *args)
                if x.dtype.kind not in accepts:
                    raise no_kernel(name, x.dtype)
            return fn(xp, x, *args)  # float32 and wider keep their dtype

        return opmath_kernel

    return make


def _gelu_backward_kernel(xp):
    erf = REGISTRY["erf"].generic(xp)

    def kernel(g, x, approximate):
        """``g * gelu'(x)``."""
        if approximate == "tanh":
            x2 = x * x
            t = xp.tanh(TANH_K * (x + TANH_C * x2 * x))
            dt = (1 - t * t) * (TANH_K * (1 + 3 * TANH_C * x2))
            out = g * (0.5 * (1 + t) + 0.5 * x * dt)
            return out if out.dtype == g.dtype else fit_dtype(out, g.dtype)
        # g * (Phi(x) + x phi(x)) = g/2 * (1 + erf(x / sqrt 2) + 2 x phi(x)), in place.
        out = xp.multiply(x, x, out=xp.empty_like(x))
        out *= -0.5
        xp.exp(out, out=out)
        out *= x
        out *= 2 * INV_SQRT_2PI
        out += erf(x * SQRT_HALF)
        out += 1
        out *= g
        out *= 0.5
        return out if out.dtype == g.dtype else fit_dtype(out, g.dtype)

    return kernel


def _gelu_second(x, approximate):
    """``gelu''(x)``, in tocha ops."""
    if approximate == "tanh":
        x2 = x * x
        du = TANH_K * (1 + 3 * TANH_C * x2)
        t = (TANH_K * (x + TANH_C * x2 * x)).tanh()
        sech2 = 1 - t * t
        return sech2 * du + 0.5 * x * sech2 * (6 * TANH_K * TANH_C * x - 2 * t * du * du)
    return (-0.5 * x * x).exp() * INV_SQRT_2PI * (2 - x * x)


def _gelu_backward_backward(gg, _, g, x, approximate):
    """Gradients of ``g * gelu'(x)``: by g, ``gelu'(x)``; by x, ``g * gelu''(x)``."""
    second = _gelu_second(x, approximate)
    return call(gelu_backward_op, (gg, x), approximate), gg * g * second, None


def _gelu_backward_jvp(t, out, g, x, approximate):
    """Tangent of ``g * gelu'(x)``: ``t_g * gelu'(x) + g * gelu''(x) * t_x``."""
    by_g = None if t[0] is None else call(gelu_backward_op, (t[0], x), approximate)
    by_x = None if t[1] is None else g * _gelu_second(x, approximate) * t[1]
    return plus(by_g, by_x)


def _silu_slope(x):
    s = x.sigmoid()
    return s * (1 + x * (1 - s))


def _silu_grad(g, out, x):
    """g times the conjugate slope (PyTorch's convention for complex x)."""
    slope = _silu_slope(x)
    return g * (slope.conj() if slope.is_complex() else slope)


def _mish_grad(g, out, x):
    t = call(softplus_op, (x,), 1.0, 20.0).tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


def _elu_grad(g, out, x, alpha, scale, input_scale):
    neg = (x * input_scale).exp() * (alpha * scale * input_scale)
    return g * tocha.where(x > 0, scale, neg), None, None, None


elu_op = defop("elu", _elu_kernel)
gelu_op = defop("gelu", _gelu_kernel, opmath=True, layout="elementwise")
gelu_backward_op = defop("gelu_backward", _gelu_backward_kernel, opmath=True)
silu_op = defop("silu", _silu_kernel)
mish_op = defop("mish", _mish_kernel)
softplus_op = defop("softplus", _softplus_kernel)
leaky_relu_op = defop(
    "leaky_relu",
    _kernel(lambda xp, x, slope: xp.where(x > 0, x, x * slope), "leaky_relu_cpu", opmath=True),
)
hardtanh_op = defop(
    "hardtanh",
    _kernel(lambda xp, x, low, high: xp.clip(x, low, high), "hardtanh", "fViubc", integers=True),
)
hardsigmoid_op = defop(
    "hardsigmoid", _kernel(lambda xp, x: xp.clip(x + 3, 0, 6) / 6, "hardsigmoid_cpu", opmath=True)
)
hardswish_op = defop(
    "hardswish",
    _kernel(lambda xp, x: x * xp.clip(x + 3, 0, 6) / 6, "hardswish_cpu", opmath=True),
)
log_sigmoid_op = defop(
    "log_sigmoid",
    _kernel(
        lambda xp, x: xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))),
        "log_sigmoid_cpu",
        opmath=True,
    ),
)
threshold_op = defop(
    "threshold",
    _kernel(
        lambda xp, x, th, value: xp.where(x <= th, xp.asarray(value, x.dtype), x),
        "threshold_cpu",
        "fViu",
    ),
)
softshrink_op = defop(
    "softshrink",
    _kernel(
        lambda xp, x, lambd: xp.where(xp.abs(x) > lambd, x - xp.sign(x) * lambd, 0 * x),
        "softshrink_check",
        opmath=True,
    ),
)
hardshrink_op = defop(
    "hardshrink",
    _kernel(lambda xp, x, lambd: xp.where(xp.abs(x) > lambd, x, 0 * x), "hardshrink_cpu"),
)

pointwise("elu", "0", _elu_grad)
d("gelu", "0", lambda g, out, x, approximate: (call(gelu_backward_op, (g, x), approximate), None))
fwd("gelu", lambda t, out, x, approximate: call(gelu_backward_op, (t[0], x), approximate))
d("gelu_backward", "01", _gelu_backward_backward)
fwd("gelu_backward", _gelu_backward_jvp)
d("silu", "0", computed_in_float32(_silu_grad))  # PyTorch's backward: opmath
fwd("silu", lambda t, out, x: t[0] * _silu_slope(x))
pointwise("mish", "0", _mish_grad)
pointwise(
    "softplus",
    "0",
    lambda g, out, x, beta, th: (
        g * tocha.where(x * beta > th, 1.0, (x * beta).sigmoid()),
        None,
        None,
    ),
)
pointwise("leaky_relu", "0", lambda g, out, x, slope: (g * tocha.where(x > 0, 1.0, slope), None))
pointwise("hardtanh", "0", lambda g, out, x, low, high: (g * ((x > low) & (x < high)), None, None))
pointwise("hardsigmoid", "0", lambda g, out, x: g * ((x > -3) & (x < 3)) / 6)
pointwise(
    "hardswish",
    "0",
    # PyTorch's: 0 from -3 down, 1 from 3 up (the ends included)
    lambda g, out, x: g * tocha.where(x <= -3, 0.0, tocha.where(x < 3, x / 3 + 0.5, 1.0)),
)
pointwise("log_sigmoid", "0", lambda g, out, x: g * (-x).sigmoid())
pointwise("threshold", "0", lambda g, out, x, th, value: (g * (x <= th).logical_not(), None, None))
pointwise("softshrink", "0", lambda g, out, x, lambd: (g * (x.abs() > lambd), None))
pointwise("hardshrink", "0", lambda g, out, x, lambd: (g * (x.abs() > lambd), None))


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(0, x)`` elementwise."""
    return tocha.relu_(input) if inplace else tocha.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place `relu`."""
    return tocha.relu_(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else `value`."""
    return _threshold(input, threshold, value, inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place `threshold`."""
    return _threshold(input, threshold, value, True)


def _threshold(input: Tensor, bound: float, value: float, inplace: bool) -> Tensor:
    if not -65504.0 <= bound <= 65504.0:
        _fits(input, bound, True, True)
    if not -65504.0 <= value <= 65504.0:
        _fits(input, value, False, True)
    return _apply(threshold_op, input, inplace, bound, value)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """``x`` clamped to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    try:
        dtype = input.dtype
    except AttributeError:
        raise not_a_tensor("hardtanh", input) from None
    if dtype is tocha.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if dtype == tocha.uint8 and min_val < 0:
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if not -65504.0 <= min_val <= max_val <= 65504.0:
        for bound in (min_val, max_val):
            check_scalar_converts(bound, dtype)
    return _apply(hardtanh_op, input, inplace, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place `hardtanh`."""
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    if not -65504.0 <= alpha <= 65504.0:
        _fits(input, alpha, True)
    return _apply(elu_op, input, inplace, alpha, 1.0, 1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place `elu`."""
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return _apply(elu_op, input, inplace, SELU_ALPHA, SELU_SCALE, 1.0)


def selu_(input: Tensor) -> Tensor:
    """In-place `selu`."""
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    if not -65504.0 <= alpha <= 65504.0:
        _fits(input, alpha, True)
    return _apply(elu_op, input, inplace, alpha, 1.0, 1.0 / alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place `celu`."""
    return celu(input, alpha, True)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``negative_slope * x``."""
    if not -65504.0 <= negative_slope <= 65504.0:
        _fits(input, negative_slope, True)
    return _apply(leaky_relu_op, input, inplace, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place `leaky_relu`."""
    return leaky_relu(input, negative_slope, True)


@autocast_op("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """`leaky_relu` with a learnt slope, one per channel (dim 1) or one shared."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("prelu", input, "input", 1)
    if not isinstance(weight, Tensor):
        raise not_a_tensor("prelu", weight, "weight", 2)
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}"
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"prelu_cpu\" not implemented for '{TITLE[input.dtype]}'")
    n = weight.numel()
    channels = input.shape[1] if input.dim() >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(
            f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{n} and channel size = {channels}."
        )
    if n != 1 and input.dim() >= 2:
        weight = weight.reshape((n,) + (1,) * (input.dim() - 2))
    elif input.dim() == 1 and n != 1:
        weight = weight.reshape(n)
    else:
        weight = weight.reshape(())
    return tocha.where(input > 0, input, weight * input)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomised leaky ReLU: in training, each negative input gets a slope drawn uniformly
    from ``[lower, upper]``; in evaluation, the slope is their mean."""
    expect_tensor("rrelu", input, "input", 1)
    for name, bound in (("lower", lower), ("upper", upper)):
        if not math.isfinite(bound):
            raise RuntimeError(f"rrelu: {name} bound must be finite, got {bound:g}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if input.dtype is tocha.float32 and max(abs(lower), abs(upper)) > _FLOAT32_MAX:
        raise RuntimeError("value cannot be converted to type float without overflow")
    if not isinstance(training, bool):
        raise TypeError(
            f"rrelu(): argument 'training' (position 4) must be bool, not {type(training).__name__}"
        )
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    # as PyTorch's: one float64 uniform per input <= 0, in order (the others' slope is 1),
    # mapped to [lower, upper] with the bounds in the input's precision
    with tocha.no_grad():
        negative = input <= 0
        count = int(negative.sum())
        low, high = tocha.tensor([lower, upper], dtype=input.dtype).tolist()
        drawn = tocha.rand(count, dtype=tocha.float64, device=input.device)
        drawn = drawn * (high - low) + low
        slopes = tocha.ones_like(input)
        slopes[negative] = drawn.to(input.dtype)
    out = input * slopes
    return assign(input, out) if inplace else out


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place `rrelu`."""
    return rrelu(input, lower, upper, training, True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` (Phi the standard normal CDF), or its tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return call(gelu_op, (input,), approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)``."""
    return _apply(silu_op, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return _apply(mish_op, input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``."""
    return _apply(hardsigmoid_op, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    return _apply(hardswish_op, input, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``."""
    if not (-65504.0 <= beta <= 65504.0 and -65504.0 <= threshold <= 65504.0):
        _fits(input, beta, True)
        _fits(input, threshold, True)
    return call(softplus_op, (input,), beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably."""
    return call(log_sigmoid_op, (input,))


_FLOAT32_MAX = 3.4028234663852886e38


def _largest(dtype) -> float:
    return tocha.finfo(dtype).max if dtype.is_floating_point else math.inf


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above `lambd`, ``x + lambd`` below ``-lambd``, else 0."""
    if not 0 <= lambd <= 65504.0 and not 0 <= lambd <= _largest(input.dtype):  # NaN too
        top = tocha.finfo(input.dtype).max
        raise RuntimeError(
            f"lambda must be in range [0, {top:g}] for input dtype "
            f"{TITLE[input.dtype]}, but found {lambd:g}"
        )
    return call(softshrink_op, (input,), lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    if not -65504.0 <= lambd <= 65504.0:
        _fits(input, lambd)
    return call(hardshrink_op, (input,), lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - input.tanh()


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))``."""
    return tocha.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return tocha.tanh(input)


@computed_in_float32
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)``, `a` and `b` the halves of `input` along `dim`."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"glu_cpu\" not implemented for '{TITLE[input.dtype]}'")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % input.dim()} is size {size}"
        )
    half = size // 2
    a, b = input.narrow(dim, 0, half), input.narrow(dim, half, half)  # halves of 0 too
    return a * b.sigmoid()


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A sample of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g`` standard Gumbel noise. `hard` returns the one-hot of the largest entry, whose
    gradient is the soft sample's (straight-through)."""
    if type(dim) is not int:
        dim = index_arg("softmax", dim, "dim")
    gumbels = -tocha.empty_like(logits).exponential_().log()
    soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.max(dim, keepdim=True)[1]
    one_hot = tocha.zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot - soft.detach() + soft
