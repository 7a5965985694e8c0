"""`jvp` and `linearize`: Jacobian-vector products by forward-mode AD
(`tocha.autograd.forward_ad`): the primals are made dual with their tangents and every op
carries the tangent forward with its forward rule."""

from __future__ import annotations

import functools

import tocha
from tocha import Tensor
from tocha.autograd.forward_ad import enter_dual_level, exit_dual_level, make_dual, unpack_dual

from . import _args
from ._pytree import tree_flatten, tree_map, tree_unflatten

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


def _enter() -> int:
    try:
        return enter_dual_level()
    except RuntimeError as exc:
        raise RuntimeError(
            f"{_API}: nested forward-mode transforms (jvp or jacfwd inside jvp or jacfwd) are "
            "not supported yet: tocha's forward-mode AD has one dual level at a time. Use "
            "reverse mode for the inner or the outer transform (jacrev, vjp, hessian)."
        ) from exc


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
