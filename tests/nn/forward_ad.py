"""Forward-mode checks the tests of tocha-nn share: output tangents computed by tocha and by
PyTorch (`torch.autograd.forward_ad`, through the `torch` fixture) for the same function,
inputs and directions, and forward mode through a backward (forward-over-reverse) against
finite differences."""

from __future__ import annotations

import numpy as np

import tocha
from tocha import Tensor
from tocha.autograd import gradcheck


def directions(arrays, seed: int = 100) -> list:
    """A standard normal tangent for each floating array (None for index arrays)."""
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(a.shape).astype(a.dtype) if a.dtype.kind == "f" else None
        for a in arrays
    ]


def tangents(lib, fn, arrays, dirs) -> list:
    """The output tangents of ``fn(lib, *tensors)`` under `lib`'s forward-mode AD, each input
    made dual with its direction (none where the direction is None), as NumPy arrays (None
    for an output without tangent)."""
    forward_ad = lib.autograd.forward_ad
    with forward_ad.dual_level():
        inputs = [
            lib.from_numpy(a.copy())
            if d is None
            else forward_ad.make_dual(lib.from_numpy(a.copy()), lib.from_numpy(d.copy()))
            for a, d in zip(arrays, dirs)
        ]
        outputs = fn(lib, *inputs)
        if not isinstance(outputs, (tuple, list)):
            outputs = (outputs,)
        result = []
        for out in outputs:
            tangent = forward_ad.unpack_dual(out).tangent
            result.append(None if tangent is None else tangent.numpy(force=True).copy())
    return result


def assert_tangents_match(torch, fn, arrays, dirs=None, rtol=1e-7, atol=1e-9) -> None:
    """tocha's output tangents equal PyTorch's (a missing tangent counts as zeros)."""
    dirs = directions(arrays) if dirs is None else dirs
    assert_same_tangents(
        tangents(tocha, fn, arrays, dirs), tangents(torch, fn, arrays, dirs), rtol, atol
    )


def check_forward_over_reverse(
    fn, inputs, grad_outputs=None, differentiable=None, **kwargs
) -> bool:
    """gradcheck's forward mode on the map (inputs, grad_outputs) -> the gradients of `fn`
    by its inputs (``create_graph=False``): the forward rules of the backward's primitives,
    as Hessian-vector products run them, against finite differences. `differentiable`: per
    input, whether it takes a gradient (default: every floating one)."""
    inputs = tuple(inputs)
    if differentiable is None:
        differentiable = [isinstance(a, Tensor) and a.is_floating_point() for a in inputs]
    if grad_outputs is None:
        generator = tocha.Generator().manual_seed(0)
        outputs = fn(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        grad_outputs = tuple(
            tocha.randn(o.shape, dtype=o.dtype, generator=generator).requires_grad_()
            for o in outputs
            if isinstance(o, Tensor) and o.requires_grad
        )
    n = len(inputs)

    def gradients(*args):
        # a dual input is a fresh tensor without history: it is made to require grad in
        # place (detaching it would drop its tangent)
        inputs = [
            a.requires_grad_() if wanted else a for a, wanted in zip(args[:n], differentiable)
        ]
        with tocha.enable_grad():
            outputs = fn(*inputs)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            outputs = [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]
            leaves = [a for a in inputs if isinstance(a, Tensor) and a.requires_grad]
            grads = tocha.autograd.grad(outputs, leaves, args[n:], allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        gradients,
        inputs + tuple(grad_outputs),
        check_forward_ad=True,
        check_backward_ad=False,
        **kwargs,
    )


def _flat(outputs) -> list:
    """The tensors of a module's (nested) tuple outputs, in order."""
    if isinstance(outputs, (tuple, list)):
        return [t for out in outputs for t in _flat(out)]
    return [outputs]


def module_tangents(lib, module, arrays, dirs, param_dirs: dict) -> list:
    """The output tangents of ``module(*inputs)`` under `lib`'s forward-mode AD, its inputs
    made dual with `dirs` and its parameters with `param_dirs` (by name). Each parameter is
    replaced by a plain dual tensor, as PyTorch's forward-AD tutorial does, so the module is
    spent afterwards."""
    forward_ad = lib.autograd.forward_ad
    with forward_ad.dual_level():
        for name, p in list(module.named_parameters()):
            *path, leaf = name.split(".")
            owner = module.get_submodule(".".join(path))
            delattr(owner, leaf)
            tangent = lib.from_numpy(param_dirs[name].copy())
            setattr(owner, leaf, forward_ad.make_dual(p.detach(), tangent))
        inputs = [
            lib.from_numpy(a.copy())
            if d is None
            else forward_ad.make_dual(lib.from_numpy(a.copy()), lib.from_numpy(d.copy()))
            for a, d in zip(arrays, dirs)
        ]
        result = []
        for out in _flat(module(*inputs)):
            tangent = forward_ad.unpack_dual(out).tangent
            result.append(None if tangent is None else tangent.numpy(force=True).copy())
    return result


def parameter_directions(module, seed: int = 200) -> dict:
    """A standard normal direction for each parameter of `module`, by name."""
    rng = np.random.default_rng(seed)
    return {
        name: rng.standard_normal(tuple(p.shape)).astype(str(p.dtype).split(".")[-1])
        for name, p in module.named_parameters()
    }


def assert_same_tangents(mine, theirs, rtol=1e-7, atol=1e-9) -> None:
    """Two lists of output tangents agree (a missing tangent counts as zeros)."""
    assert len(mine) == len(theirs)
    for i, (m, t) in enumerate(zip(mine, theirs)):
        if t is None:
            assert m is None or not np.any(m), f"output {i}: no tangent expected"
            continue
        m = np.zeros_like(t) if m is None else m
        np.testing.assert_allclose(m, t, rtol=rtol, atol=atol, err_msg=f"tangent of output {i}")
