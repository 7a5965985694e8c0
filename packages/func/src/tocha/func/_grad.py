"""`grad` and `grad_and_value`: the gradient of a function returning a scalar, as a function
of the same arguments."""

from __future__ import annotations

import functools

import tocha
from tocha import Tensor

from . import _args
from ._pytree import tree_map, tree_unflatten
from ._reverse import gradients, keep_graph, release, track

_API = "grad_and_value(f)(*args)"


def _scalar(output) -> Tensor:
    if not isinstance(output, Tensor):
        raise RuntimeError(f"{_API}: Expected f(*args) to return a Tensor, got {type(output)}")
    if output.dim() != 0:
        raise RuntimeError(
            f"{_API}: Expected f(*args) to return a scalar Tensor, got tensor with "
            f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
        )
    return output


def _grad_and_value(func, argnums, has_aux: bool, args: tuple, kwargs: dict):
    """``(gradients, value, aux)`` of ``func(*args, **kwargs)`` with respect to the
    arguments `argnums` names: the gradients have their structure (one pytree for an int
    argnums, a tuple of them for a tuple)."""
    positions = _args.select(args, argnums)
    outer_grad = tocha.is_grad_enabled()
    with tocha.enable_grad():
        specs, tracked, trees = [], [], []
        for p in positions:
            leaves, spec = _args.tensor_leaves(args[p])
            mine = [track(leaf, outer_grad) for leaf in leaves]
            specs.append((spec, len(mine)))
            tracked.extend(mine)
            trees.append(tree_unflatten(mine, spec))
        result = func(*_args.replace(args, positions, trees), **kwargs)
        output, aux = _args.split_aux(result, has_aux, _API)
        output = _scalar(output)
        graph = keep_graph([output], tracked, outer_grad)
        found = gradients([output], [None], tracked, graph, retain_graph=graph)
    grads, start = [], 0
    for spec, n in specs:
        grads.append(tree_unflatten(found[start : start + n], spec))
        start += n
    grad = grads[0] if isinstance(argnums, int) else tuple(grads)
    value = release(output, graph)
    if has_aux:
        aux = tree_map(lambda t: release(t, graph), aux)
    return grad, value, aux


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """A function computing ``(gradient, value)`` of `func`, which returns a 0-dim tensor
    (with `has_aux`: ``(tensor, aux)``, giving ``(gradient, (value, aux))``).

    `argnums` (int, or tuple of ints) names the positional arguments to differentiate; each
    is a tensor or a pytree (tuple, list, dict) of tensors, and its gradient has its
    structure and shapes (a tuple of them for a tuple `argnums`). Works inside `vmap`
    (per-sample gradients) and nested in itself and the other transforms.

    Example:
        >>> g, value = grad_and_value(lambda x: (x ** 2).sum())(tocha.ones(3))  # g: (3,)
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grad, value, aux = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (grad, (value, aux)) if has_aux else (grad, value)

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """A function computing the gradient of `func` (which returns a 0-dim tensor) with
    respect to the arguments `argnums` names; with `has_aux`, `func` returns
    ``(tensor, aux)`` and the function ``(gradient, aux)``. See `grad_and_value`.

    Example:
        >>> grad(lambda x: x.sin().sum())(x)  # x.cos(), of x's shape
        >>> vmap(grad(loss), in_dims=(None, 0, 0))(params, inputs, targets)  # per sample
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grad_, _, aux = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (grad_, aux) if has_aux else grad_

    return wrapper
