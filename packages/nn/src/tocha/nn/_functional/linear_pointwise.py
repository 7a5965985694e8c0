"""``linear_pointwise``: a linear map followed by an activation, as one primitive.

``linear_pointwise(input, weight, [bias], activation)`` is ``act(input @ weight.T + bias)``
for `activation` one of `ACTIVATIONS` ("none" is the linear map alone). Nothing in eager code
calls it: tocha-compiler's graphs of inference (no gradient) rewrite a ``linear`` whose only
use is one of these activations into it, so that a kernel provider can run both as one call
(oneDNN's matmul with an eltwise post-op). Its built-in kernel is the linear map then the
activation's own kernel; its derivatives are written in tocha ops, so it also works under
autograd and forward-mode AD.

Published as ``tocha.export.ops.linear_pointwise`` (``tocha.library.REGISTRY``).
"""

from __future__ import annotations

import tocha
from tocha.autograd.derivatives import d, fwd
from tocha.library import REGISTRY, call, defop

from .linear import _linear_grad, _linear_jvp, linear_op

__all__: list[str] = []

# activation -> (primitive, its extra arguments)
ACTIVATIONS = {
    "none": None,
    "relu": ("relu", ()),
    "gelu": ("gelu", ("none",)),
    "gelu_tanh": ("gelu", ("tanh",)),
    "tanh": ("tanh", ()),
    "sigmoid": ("sigmoid", ()),
    "silu": ("silu", ()),
}


def _linear_pointwise_kernel(xp):
    linear = REGISTRY["linear"].generic(xp)

    def kernel(x, w, *rest):
        *bias, activation = rest
        out = linear(x, w, *bias)
        spec = ACTIVATIONS[activation]
        if spec is None:
            return out
        name, extra = spec
        return REGISTRY[name].generic(xp)(out, *extra)

    return kernel


def _pre_activation(x, w, bias):
    return call(linear_op, (x, w, *bias))


def _by_activation(g, out, x, w, bias, activation):
    """`g` times the activation's derivative at the pre-activation (tocha ops)."""
    if activation == "none":
        return g
    if activation == "relu":
        return g * (out > 0).to(g.dtype)
    if activation == "tanh":
        return g * (1 - out * out)
    if activation == "sigmoid":
        return g * out * (1 - out)
    z = _pre_activation(x, w, bias)
    if activation == "silu":
        s = tocha.sigmoid(z)
        return g * s * (1 + z * (1 - s))
    return call(REGISTRY["gelu_backward"], (g, z), ACTIVATIONS[activation][1][0])


def _linear_pointwise_grad(g, out, x, w, *rest, needs=(True, True, True)):
    *bias, activation = rest
    gz = _by_activation(g, out, x, w, bias, activation)
    return (*_linear_grad(gz, None, x, w, *bias, needs=needs), None)


def _linear_pointwise_jvp(t, out, x, w, *rest):
    *bias, activation = rest
    tz = _linear_jvp(t, None, x, w, *bias)
    return None if tz is None else _by_activation(tz, out, x, w, bias, activation)


linear_pointwise_op = defop("linear_pointwise", _linear_pointwise_kernel)
_linear_pointwise_grad.takes_needs = True
d("linear_pointwise", "0+o", _linear_pointwise_grad)
fwd("linear_pointwise", _linear_pointwise_jvp)
