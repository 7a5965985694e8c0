"""`vjp`: a function's output and the function that pulls cotangents back to its inputs."""

from __future__ import annotations

import tocha
from tocha import Tensor

from . import _args
from ._pytree import tree_flatten, tree_map, tree_unflatten
from ._reverse import gradients, keep_graph, release, track

_API = "vjp(f, *primals)"


def _check_cotangents(leaves, spec, out_leaves, out_spec) -> None:
    if spec != out_spec:
        raise RuntimeError(
            "Expected pytree structure of cotangents to be the same as pytree structure of "
            f"outputs to the function. cotangents: {_args.spec_pprint(spec)}, primal output: "
            f"{_args.spec_pprint(out_spec)}"
        )
    for i, (c, o) in enumerate(zip(leaves, out_leaves)):
        if not isinstance(c, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(c)}")
        if c.shape != o.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and output[{i}] "
                f"has a shape of {o.shape}."
            )


def vjp(func, *primals, has_aux: bool = False):
    """``(output, vjp_fn)`` (with `has_aux`: ``(output, vjp_fn, aux)``, `func` returning
    ``(output, aux)``): ``output = func(*primals)`` and ``vjp_fn(cotangents)``, which for
    cotangents of the output's structure and shapes returns the tuple of vector-Jacobian
    products, one per primal, each of that primal's structure and shapes.

    Primals and outputs are tensors or pytrees of tensors. ``vjp_fn`` may be called many
    times (``retain_graph=True``), and inside `vmap` (with a batch of cotangents: `jacrev`).

    Example:
        >>> out, vjp_fn = vjp(tocha.sin, x)
        >>> (ct,) = vjp_fn(tocha.ones_like(out))  # x.cos()
    """
    outer_grad = tocha.is_grad_enabled()
    with tocha.enable_grad():
        specs, tracked, trees = [], [], []
        for primal in primals:
            leaves, spec = _args.tensor_leaves(primal)
            mine = [track(leaf, outer_grad) for leaf in leaves]
            specs.append((spec, len(mine)))
            tracked.extend(mine)
            trees.append(tree_unflatten(mine, spec))
        output, aux = _args.split_aux(func(*trees), has_aux, _API)
        out_leaves, out_spec = _args.output_leaves(output, _API)
        graph = keep_graph(out_leaves, tracked, outer_grad)

    def vjp_fn(cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        leaves, spec = tree_flatten(cotangents)
        _check_cotangents(leaves, spec, out_leaves, out_spec)
        if create_graph is None:
            create_graph = graph or (
                tocha.is_grad_enabled() and any(c.requires_grad for c in leaves)
            )
        with tocha.enable_grad():
            found = gradients(out_leaves, leaves, tracked, create_graph, retain_graph)
        result, start = [], 0
        for pspec, n in specs:
            result.append(tree_unflatten(found[start : start + n], pspec))
            start += n
        return tuple(result)

    released = tree_unflatten([release(t, graph) for t in out_leaves], out_spec)
    if has_aux:
        return released, vjp_fn, tree_map(lambda t: release(t, graph), aux)
    return released, vjp_fn
