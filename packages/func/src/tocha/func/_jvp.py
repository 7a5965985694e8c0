"""`jvp` and `linearize`: Jacobian-vector products by forward-mode AD
(`tocha.autograd.forward_ad`): the primals are made dual with their tangents and every op
carries the tangent forward with its forward rule. Inside another forward-mode transform
(forward-mode AD has one dual level at a time), by two reverse passes instead."""

from __future__ import annotations

import functools

import tocha
from tocha import Tensor
from tocha.autograd.forward_ad import enter_dual_level, exit_dual_level, make_dual, unpack_dual

from . import _args
from ._pytree import tree_flatten, tree_map, tree_unflatten
from ._reverse import gradients, keep_graph, track

_API = "jvp(f, primals, tangents)"


def _check(primals, tangents) -> tuple[list, list, object]:
    """The leaves of `primals` and `tangents` and their common spec, with torch.func's
    errors for a mismatch."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{_API}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{_API}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {_args.spec_repr(p_spec)} and tangents with structure "
            f"{_args.spec_repr(t_spec)}"
        )
    if not p_leaves:
        raise RuntimeError(f"{_API}: Expected primals to contain at least one Tensor.")
    for what, leaves in (("primals", p_leaves), ("tangents", t_leaves)):
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(
                    f"{_API}: Expected {what} to only contain Tensors, got {type(leaf)}"
                )
    return p_leaves, t_leaves, p_spec


def _enter() -> int | None:
    """A new dual level, or None when one is active (forward-mode AD has one at a time)."""
    try:
        return enter_dual_level()
    except RuntimeError:
        return None


def _by_reverse(func, p_leaves, t_leaves, spec, strict: bool, has_aux: bool):
    """The jvp inside another forward-mode transform (``jacfwd(jacfwd(f))``), by two reverse
    passes: with ``g(u) = J^T u`` (a vjp, linear in u), ``J v`` is the vjp of g along v.
    The active level's tangents flow through both, as through any op."""
    with tocha.enable_grad():
        inputs = [track(p, True) for p in p_leaves]
        output, aux = _args.split_aux(func(*tree_unflatten(inputs, spec)), has_aux, _API)
        out_leaves, out_spec = _args.output_leaves(output, _API)
        tracked = [o for o in out_leaves if o.requires_grad]
        cotangents = [tocha.zeros_like(o).requires_grad_() for o in tracked]
        pulled = gradients(tracked, cotangents, inputs, True, True) if tracked else []
        pairs = [(g, t) for g, t in zip(pulled, t_leaves) if g.requires_grad]
        pushed = iter(
            gradients([g for g, _ in pairs], [t for _, t in pairs], cotangents, True, True)
            if pairs
            else [tocha.zeros_like(c) for c in cotangents]
        )
    if strict and not all(out.requires_grad for out in out_leaves):
        raise RuntimeError(
            "jvp(f, primals, tangents, strict=True): The output of f is independent of the "
            "inputs. This is not allowed with strict=True."
        )
    out_tangents = [next(pushed) if o.requires_grad else tocha.zeros_like(o) for o in out_leaves]
    results = out_leaves + out_tangents
    outer = [t for t in map(_outer_tangent, results) if t is not None]
    graph = keep_graph(results + outer, inputs + cotangents, tocha.is_grad_enabled())
    values = [_released(out, graph) for out in out_leaves]
    out_tangents = [_released(tangent, graph) for tangent in out_tangents]
    result = (tree_unflatten(values, out_spec), tree_unflatten(out_tangents, out_spec))
    return (*result, tree_map(lambda t: _released(t, graph), aux)) if has_aux else result


def _outer_tangent(t):
    return unpack_dual(t).tangent if isinstance(t, Tensor) else None


def _released(t, graph: bool):
    """`t` as `_by_reverse` returns it: detached from its two passes unless something
    outside tracks it, its tangent of the active level too (computed through them)."""
    if graph or not isinstance(t, Tensor):
        return t
    tangent = _outer_tangent(t)
    out = t.detach()
    return out if tangent is None else make_dual(out, tangent.detach())


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)``: `func`'s output and its Jacobian-vector product at
    `primals` in the direction `tangents`, by forward-mode AD (one pass, no backward).

    `primals` is a tuple (``func(*primals)`` must be valid) of tensors or pytrees of
    tensors; `tangents` has its structure and shapes. The output and its tangent have the
    structure of what `func` returns (tensors or pytrees of tensors); with `has_aux`, `func`
    returns ``(output, aux)`` and jvp ``(output, jvp_out, aux)``. An output that does not
    depend on the primals gets a zero tangent (RuntimeError with `strict`).

    Example:
        >>> out, tangent = jvp(tocha.sin, (x,), (tocha.ones_like(x),))  # x.sin(), x.cos()
    """
    p_leaves, t_leaves, spec = _check(primals, tangents)
    level = _enter()
    if level is None:
        return _by_reverse(func, p_leaves, t_leaves, spec, strict, has_aux)
    try:
        duals = [make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        output, aux = _args.split_aux(func(*tree_unflatten(duals, spec)), has_aux, _API)
        out_leaves, out_spec = _args.output_leaves(output, _API)
        values, out_tangents = [], []
        for out in out_leaves:
            value, tangent = unpack_dual(out)
            if tangent is None:
                if strict:
                    raise RuntimeError(
                        "jvp(f, primals, tangents, strict=True): The output of f is "
                        "independent of the inputs. This is not allowed with strict=True."
                    )
                tangent = tocha.zeros_like(value)
            values.append(value)
            out_tangents.append(tangent)
        if has_aux:
            aux = tree_map(lambda t: unpack_dual(t).primal, aux)
    finally:
        exit_dual_level(level=level)
    result = (tree_unflatten(values, out_spec), tree_unflatten(out_tangents, out_spec))
    return (*result, aux) if has_aux else result


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product
    of `func` at `primals` (tangents of the primals' structure, shapes and dtypes), as
    ``jvp(func, primals, tangents)[1]``. Each call of ``jvp_fn`` runs `func` forward again
    (tocha traces nothing), so a random `func` draws anew each time.

    Example:
        >>> out, jvp_fn = linearize(tocha.sin, x)
        >>> jvp_fn(tocha.ones_like(x))  # x.cos()
    """
    p_leaves, p_spec = _args.tensor_leaves(primals)
    output = func(*primals)

    @functools.wraps(func)
    def jvp_fn(*tangents):
        t_leaves, t_spec = _args.tensor_leaves(tangents)
        if t_spec != p_spec:
            raise RuntimeError(
                f"Expected the tangents {_args.spec_repr(t_spec)} to have the same argspec as "
                f"the primals {_args.spec_repr(p_spec)}"
            )
        for i, (t, p) in enumerate(zip(t_leaves, p_leaves)):
            for what in ("shape", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(
                        f"tangent:{i} with {what} {getattr(t, what)} in flattened pytree "
                        f"doesn't match the {what} {getattr(p, what)} of the corresponding "
                        "primal."
                    )
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn
