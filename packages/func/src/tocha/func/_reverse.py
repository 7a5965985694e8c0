"""Reverse mode for the transforms (`grad`, `vjp`): the tensors to differentiate with
respect to, whether the gradients must stay differentiable, and what is handed back.

A transform differentiates `f` at inputs ``x`` through tocha's tape:

- An input that something outside tracks (it requires grad while grad mode is on: an outer
  `grad`, a model's parameters) is replaced by a view of it, so that the gradients found
  stay connected to it; any other input by a fresh leaf (``x.detach().requires_grad_()``,
  which a batched tensor under `vmap` supports too). An input carrying a forward-mode
  tangent (inside `jvp`, `jacfwd`) keeps it either way.
- The gradients are computed with ``create_graph=True`` when what `f` computed is connected
  to a tensor requiring grad other than those fresh leaves (an outer transform's input, or a
  tensor captured by `f`): then an outer transform or ``.backward()`` differentiates them
  again, as nested ``grad(grad(f))`` and `hessian` need. Otherwise no graph of the gradients
  is recorded, and what the transform returns is detached from its fresh leaves.
"""

from __future__ import annotations

import tocha
from tocha import Tensor
from tocha.autograd.forward_ad import make_dual, unpack_dual


def _tangent(t: Tensor):
    return unpack_dual(t).tangent


def track(t: Tensor, outer_grad: bool) -> Tensor:
    """The tensor to differentiate with respect to in place of input `t` (see the module
    docstring); `outer_grad` says whether grad mode was on where the transform was called."""
    if not (t.is_floating_point() or t.is_complex()):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if outer_grad and t.requires_grad:
        return t.view_as(t)
    if _tangent(t) is not None:
        leaf = t.view_as(t)
        return leaf.requires_grad_()
    return t.detach().requires_grad_()


def reaches_outside(outputs, own) -> bool:
    """Whether the graph behind `outputs` reaches a leaf requiring grad that is not one of
    `own` (the transform's fresh leaves): a walk over ``grad_fn.next_functions`` that stops
    at the first such leaf."""
    own_ids = {id(t) for t in own}
    stack = []
    for out in outputs:
        if not out.requires_grad:
            continue
        if out.grad_fn is None:
            if id(out) not in own_ids:
                return True
            continue
        stack.append(out.grad_fn)
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            if id(variable) not in own_ids:
                return True
            continue
        for next_node, _ in node.next_functions:
            if next_node is not None:
                stack.append(next_node)
    return False


def keep_graph(outputs, tracked, outer_grad: bool) -> bool:
    """Whether gradients of `outputs` with respect to `tracked` (made by `track`) must be
    differentiable again."""
    if not outer_grad:
        return False
    if not all(t.is_leaf for t in tracked):  # views of inputs tracked outside
        return True
    return reaches_outside(outputs, tracked)


def release(t: Tensor, graph: bool) -> Tensor:
    """What a transform hands back for `t`: `t` itself when gradients keep their graph,
    else `t` detached, with its forward-mode tangent when it has one."""
    if graph or not isinstance(t, Tensor):
        return t
    tangent = _tangent(t)
    out = t.detach()
    if tangent is not None:
        out = make_dual(out, tangent)
    return out


def gradients(outputs, cotangents, tracked, graph: bool, retain_graph: bool) -> list:
    """The gradients of `outputs` (weighted by `cotangents`) with respect to each of
    `tracked`: zeros where an input does not reach them. Outputs that do not require grad
    (independent of the inputs, or not floating point) contribute nothing."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [tocha.zeros_like(t) for t in tracked]
    found = tocha.autograd.grad(
        [o for o, _ in pairs],
        tracked,
        [c for _, c in pairs],
        retain_graph=retain_graph,
        create_graph=graph,
        allow_unused=True,
    )
    return [g if g is not None else tocha.zeros_like(t) for g, t in zip(found, tracked)]
