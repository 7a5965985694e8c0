"""`jacrev`, `jacfwd` and `hessian`: whole Jacobians as `vmap` over `vjp` (one cotangent per
output element) or over `jvp` (one tangent per input element).

For an output leaf of shape ``O`` and an input leaf of shape ``I`` the Jacobian block has
shape ``O + I``. The result has the output's structure, each leaf replaced by the
structure of the differentiated arguments (one pytree for an int `argnums`, a tuple of them
for a tuple)."""

from __future__ import annotations

import functools

import tocha

from . import _args
from ._jvp import jvp
from ._pytree import tree_flatten, tree_map, tree_unflatten
from ._vjp import vjp
from ._vmap import vmap


def _offsets(leaves) -> list[tuple[int, int]]:
    """``(start, numel)`` of each leaf in the flat concatenation of all of them."""
    spans, start = [], 0
    for leaf in leaves:
        spans.append((start, leaf.numel()))
        start += leaf.numel()
    return spans


def _identity_rows(leaves) -> list:
    """One basis per leaf for the flat concatenation of `leaves` (N elements in all): leaf
    k's is ``(N, *leaf.shape)``, row r one-hot at flat position r when r falls in leaf k."""
    spans = _offsets(leaves)
    total = sum(n for _, n in spans)
    rows = []
    for leaf, (start, n) in zip(leaves, spans):
        eye = tocha.eye(total, dtype=leaf.dtype, device=leaf.device)
        rows.append(eye[:, start : start + n].reshape((total, *leaf.shape)))
    return rows


def _partial(func, args: tuple, positions: tuple, kwargs: dict):
    """`func` as a function of the arguments at `positions` only."""

    def call(*chosen):
        return func(*_args.replace(args, positions, chosen), **kwargs)

    return call


def _check_chunk_size(chunk_size) -> None:
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None):
    """A function computing the Jacobian of `func` with respect to the arguments `argnums`
    names, by reverse mode: `vmap` over the `vjp` of every output element (`chunk_size`
    of them at a time when given). With `has_aux`, `func` returns ``(output, aux)`` and the
    function ``(jacobian, aux)``. Block shapes: see the module docstring.

    Example:
        >>> jacrev(tocha.sin)(x)  # (n, n), diagonal x.cos(), for x of shape (n,)
    """
    _check_chunk_size(chunk_size)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        positions = _args.select(args, argnums)
        primals = [args[p] for p in positions]
        result = vjp(_partial(func, args, positions, kwargs), *primals, has_aux=has_aux)
        output, vjp_fn = result[0], result[1]
        out_leaves, out_spec = tree_flatten(output)
        basis = tree_unflatten(_identity_rows(out_leaves), out_spec)
        rows, in_spec = tree_flatten(vmap(vjp_fn, chunk_size=chunk_size)(basis))
        blocks = []
        for out, (start, n) in zip(out_leaves, _offsets(out_leaves)):
            per_input = [r[start : start + n].reshape(out.shape + r.shape[1:]) for r in rows]
            block = tree_unflatten(per_input, in_spec)
            blocks.append(block[0] if isinstance(argnums, int) else block)
        jacobian = tree_unflatten(blocks, out_spec)
        return (jacobian, result[2]) if has_aux else jacobian

    return wrapper


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """A function computing the Jacobian of `func` with respect to the arguments `argnums`
    names, by forward mode: `vmap` (with `randomness`) over the `jvp` of every input
    element. With `has_aux`, `func` returns ``(output, aux)`` and the function
    ``(jacobian, aux)``. Block shapes: see the module docstring.

    Example:
        >>> jacfwd(tocha.sin)(x)  # (n, n), diagonal x.cos(), for x of shape (n,)
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        positions = _args.select(args, argnums)
        primals = tuple(args[p] for p in positions)
        in_leaves, in_spec = _args.tensor_leaves(primals)
        call = _partial(func, args, positions, kwargs)

        def push(basis):
            result = jvp(call, primals, basis, has_aux=has_aux)
            return (result[1], result[2]) if has_aux else result[1]

        basis = tree_unflatten(_identity_rows(in_leaves), in_spec)
        result = vmap(push, randomness=randomness)(basis)
        pushed, aux = result if has_aux else (result, None)
        out_leaves, out_spec = tree_flatten(pushed)
        spans = _offsets(in_leaves)
        blocks = []
        for rows in out_leaves:
            out_shape = rows.shape[1:]
            per_input = [
                rows[start : start + n].movedim(0, -1).reshape(out_shape + leaf.shape)
                for leaf, (start, n) in zip(in_leaves, spans)
            ]
            block = tree_unflatten(per_input, in_spec)
            blocks.append(block[0] if isinstance(argnums, int) else block)
        jacobian = tree_unflatten(blocks, out_spec)
        if has_aux:
            return jacobian, tree_map(lambda t: t[0], aux)
        return jacobian

    return wrapper


def hessian(func, argnums=0):
    """A function computing the Hessian of `func` (which returns a scalar, or a tensor: then
    one Hessian per element) with respect to the arguments `argnums` names: forward over
    reverse, ``jacfwd(jacrev(func, argnums), argnums)``. For an input of shape ``I`` and a
    0-dim output the Hessian has shape ``I + I``.

    Example:
        >>> hessian(lambda x: (x ** 3).sum())(x)  # diag(6 x)
    """
    return jacfwd(jacrev(func, argnums), argnums)
