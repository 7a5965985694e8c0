"""Higher-level derivatives of functions: `vjp`, `jvp`, `jacobian`, `hessian`, `vhp`, `hvp`.

All are built on reverse mode (`grad`); `jvp` uses the double-backward trick.
"""

from __future__ import annotations

import tocha
from tocha import Tensor

from ._api import grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _tuple(x) -> tuple[tuple, bool]:
    if isinstance(x, Tensor):
        return (x,), False
    return tuple(x), True


def _prepare(inputs, create_graph: bool) -> tuple:
    """Inputs that require grad: the originals when create_graph (so results stay connected
    to them), else detached copies."""
    prepared = []
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"The inputs given to the function must be Tensors, got {type(t)}")
        if create_graph and t.requires_grad:
            prepared.append(t.view_as(t))
        else:
            prepared.append(t.detach().requires_grad_(True))
    return tuple(prepared)


def _grads_or_zeros(outputs, inputs, grad_outputs, create_graph: bool, strict: bool) -> tuple:
    outputs = tuple(o for o in outputs)
    usable = [i for i, o in enumerate(outputs) if o.requires_grad]
    if not usable:
        if strict:
            raise RuntimeError(
                "The output of the user-provided function is independent of "
                "input 0. This is not allowed in strict mode."
            )
        return tuple(tocha.zeros_like(t) for t in inputs)
    grads = grad(
        [outputs[i] for i in usable],
        inputs,
        [grad_outputs[i] for i in usable],
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )
    result = []
    for i, (t, g) in enumerate(zip(inputs, grads)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"The output of the user-provided function is independent "
                    f"of input {i}. This is not allowed in strict mode."
                )
            g = tocha.zeros_like(t)
        result.append(g if create_graph else g.detach())
    return tuple(result)


def _untuple(values, was_tuple: bool):
    return tuple(values) if was_tuple else values[0]


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at `inputs`."""
    inputs, in_tuple = _tuple(inputs)
    with tocha.enable_grad():
        inputs = _prepare(inputs, create_graph)
        outputs, out_tuple = _tuple(func(*inputs))
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided "
                    "function returns a single Tensor with a single element."
                )
            v = (tocha.ones_like(outputs[0]),)
        else:
            v, _ = _tuple(v)
        result = _grads_or_zeros(outputs, inputs, v, create_graph, strict)
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    return _untuple(outs, out_tuple), _untuple(result, in_tuple)


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: the Jacobian-vector product at `inputs`."""
    inputs, in_tuple = _tuple(inputs)
    with tocha.enable_grad():
        inputs = _prepare(inputs, create_graph)
        outputs, out_tuple = _tuple(func(*inputs))
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the "
                    "user-provided function is a single Tensor with a single "
                    "element."
                )
            v = (tocha.ones_like(inputs[0]),)
        else:
            v, _ = _tuple(v)
        dummies = tuple(tocha.zeros_like(o).requires_grad_(True) for o in outputs)
        grads = _grads_or_zeros(outputs, inputs, dummies, True, strict)
        result = _grads_or_zeros(grads, dummies, v, create_graph, strict)
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    return _untuple(outs, out_tuple), _untuple(result, out_tuple)


def jacobian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
):
    """The Jacobian of `func` at `inputs`: for output o and input i a tensor of shape
    ``o.shape + i.shape`` (nested tuples when `func` or `inputs` are tuples)."""
    inputs, in_tuple = _tuple(inputs)
    with tocha.enable_grad():
        inputs = _prepare(inputs, create_graph)
        outputs, out_tuple = _tuple(func(*inputs))
        blocks = []
        for out in outputs:
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(flat.numel()):
                one_hot = tocha.zeros_like(out)
                one_hot.view(-1)[k] = 1
                grads = _grads_or_zeros((out,), inputs, (one_hot,), create_graph, strict)
                for i, g in enumerate(grads):
                    rows[i].append(g)
            per_input = []
            for i, t in enumerate(inputs):
                if rows[i]:
                    per_input.append(tocha.stack(rows[i]).reshape(out.shape + t.shape))
                else:
                    per_input.append(tocha.zeros(out.shape + t.shape, dtype=t.dtype))
            blocks.append(_untuple(per_input, in_tuple))
    return _untuple(blocks, out_tuple)


def hessian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """The Hessian of a scalar function `func` at `inputs`."""
    inputs, in_tuple = _tuple(inputs)

    def gradient(*args):
        with tocha.enable_grad():
            out = func(*args)
            if not isinstance(out, Tensor) or out.numel() != 1:
                raise RuntimeError(
                    "The function given to hessian should return a single "
                    "Tensor with a single element."
                )
            return _grads_or_zeros((out,), args, (tocha.ones_like(out),), True, strict)

    return jacobian(
        gradient if in_tuple else (lambda x: gradient(x)[0]),
        inputs if in_tuple else inputs[0],
        create_graph=create_graph,
        strict=strict,
    )


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a scalar function."""
    inputs, in_tuple = _tuple(inputs)
    with tocha.enable_grad():
        inputs = _prepare(inputs, create_graph)
        out = func(*inputs)
        grads = _grads_or_zeros((out,), inputs, (tocha.ones_like(out),), True, strict)
        v, _ = _tuple(v)
        result = _grads_or_zeros(grads, inputs, v, create_graph, strict)
    return (out if create_graph else out.detach()), _untuple(result, in_tuple)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a scalar function (equal to `vhp`: H is symmetric)."""
    return vhp(func, inputs, v, create_graph, strict)
