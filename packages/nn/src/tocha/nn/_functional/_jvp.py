"""Helpers the forward-mode rules of tocha-nn's primitives share (`fwd` beside each `d`)."""

from __future__ import annotations

from tocha.autograd.derivatives import d, fwd
from tocha.library import computed_in_float32


def plus(*terms):
    """The sum of the terms that are not None (None when all are): a tangent is the sum of
    the contributions of the arguments that have one."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    return total


def first(result):
    """The first element of a derivative formula's tuple (the input's gradient)."""
    return result[0] if type(result) is tuple else result


def pointwise(name: str, saves: str, grad) -> None:
    """Declare the derivative of a pointwise primitive of one tensor, ``grad(g, out, x,
    *args)`` (g times the derivative at x; first of a tuple when the op takes other
    arguments), and its forward rule: the Jacobian is diagonal, so the tangent is the same
    product with the input's tangent in place of g. float16/bfloat16 gradients are computed
    in float32 and rounded once, as PyTorch's backward kernels compute them."""
    grad = computed_in_float32(grad)
    d(name, saves, grad)
    fwd(name, lambda t, out, x, *args: first(grad(t[0], out, x, *args)))
