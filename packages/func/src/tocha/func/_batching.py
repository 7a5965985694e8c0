"""The batching layer: each op on batched tensors gets its batched result from the op's
batching rule (`_batching_rules.RULES`), or from a loop over the examples.

A rule is ``rule(op, args, out, levels, xp) -> physical result`` (one array, or a tuple for
an op with several outputs), each with one leading dimension per vmap level of `levels`;
``args`` are the op's arguments as the dispatcher received them and ``out`` its result on
the first example (its dtype and per-example shape). A rule returns NotImplemented for
arguments it does not cover; the loop then runs the op's kernel once per example, after a
one-time warning naming the op, so that nothing is silently wrong.
"""

from __future__ import annotations

import warnings

import numpy as np

import tocha
from tocha import Tensor
from tocha.autograd.transforms import LEAF_GRADIENTS
from tocha.library import LAYERS, backend_of, kernel_context

from ._batched import (
    VMAP,
    BatchedTensor,
    aligned,
    batch_shape,
    batched,
    examples_summed,
    union_levels,
)
from ._batching_rules import RULES

LOOPED: set = set()  # ops that fell back to the loop (each warned about once)


def batching_layer(op, args, out):
    """`op`'s batched result when an argument is batched, else `out` unchanged."""
    levels = union_levels(args)
    if not levels:
        return out
    dev = next(a for a in args if isinstance(a, Tensor))._device
    xp = backend_of(dev).xp
    rule = RULES.get(op.name)
    result = NotImplemented
    if rule is not None:
        result = kernel_context().run(rule, op, args, out, levels, xp)
    if result is NotImplemented:
        result = _loop(op, args, out, levels, xp)
    if type(out) is tuple:
        return tuple(_wrap(r, o, levels, dev) for r, o in zip(result, out))
    return _wrap(result, out, levels, dev)


def _wrap(physical, logical, levels, dev):
    if type(physical) is not np.ndarray:
        physical = backend_of(dev).asarray(physical)
    expected = logical._data
    if physical.dtype != expected.dtype:
        physical = physical.astype(expected.dtype)
    if physical.shape[len(levels) :] != expected.shape:
        got = list(physical.shape[len(levels) :])
        raise RuntimeError(
            f"vmap: the batching rule gave an example of shape {got} where the op gives "
            f"{list(expected.shape)}"
        )
    return batched(physical, levels, dev)


def _loop(op, args, out, levels, xp):
    """Run `op`'s kernel once per example and stack the results."""
    if op.name not in LOOPED:
        LOOPED.add(op.name)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching "
            f"rule for {op.name}. vmap runs it once per example instead.",
            UserWarning,
            stacklevel=4,
        )
    tensors = [a for a in args if isinstance(a, Tensor)]
    shape = batch_shape(tensors, levels)
    physical = [aligned(a, levels) if isinstance(a, Tensor) else None for a in args]
    kernel = op.kernels[tensors[0]._device]
    results = []
    for index in np.ndindex(*shape):
        call = []
        for a, p in zip(args, physical):
            if p is None:
                call.append(a)
            else:
                call.append(p[tuple(i if n != 1 else 0 for i, n in zip(index, p.shape))])
        results.append(kernel(*call))
    if not results:  # an empty batch
        if type(out) is tuple:
            return tuple(xp.zeros(tuple(shape) + o._data.shape, o._data.dtype) for o in out)
        return xp.zeros(tuple(shape) + out._data.shape, out._data.dtype)
    if type(out) is tuple:
        return tuple(_stack([r[j] for r in results], shape, xp) for j in range(len(out)))
    return _stack(results, shape, xp)


def _stack(examples, shape, xp):
    first = xp.asarray(examples[0])
    for e in examples:
        if xp.asarray(e).shape != first.shape:
            raise RuntimeError(
                "vmap: the op gives results of different shapes for different examples "
                "(a data-dependent shape), which vmap cannot batch"
            )
    return xp.stack([xp.asarray(e) for e in examples]).reshape(tuple(shape) + first.shape)


def write_batched(target, result) -> bool:
    """An in-place op's `result` written into `target` when either is batched (True), or
    False to let the plain write happen."""
    if type(target) is not BatchedTensor and type(result) is not BatchedTensor:
        return False
    levels = union_levels([target, result])
    if type(target) is not BatchedTensor or target._levels != levels:
        raise RuntimeError(
            "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists "
            "a Tensor `other` in extra_args that has more elements than `self`. This happened "
            "due to `other` being vmapped over but `self` not being vmapped over in a vmap. "
            "Please try to use out-of-place operators instead of inplace arithmetic."
        )
    target._physical[...] = aligned(result, levels)
    return True


def random_draw() -> None:
    """A random op inside vmap: refused under randomness="error"; under "different",
    counted until a batching rule (dropout's) draws per example, and the CPU generator's
    state kept, so that the rule draws the whole batch from where the op drew its first
    example (PyTorch's values: one draw of the batched shape)."""
    if not VMAP.active:
        return
    modes = [VMAP.randomness[level] for level in VMAP.active]
    if "error" in modes:
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use "
            "the 'same' or 'different' randomness flags on vmap or perform the randomness "
            "operation out of vmap"
        )
    if "different" in modes:
        VMAP.unbatched_draws += 1
        VMAP.draw_state = tocha.get_rng_state()


def settle_leaf_gradient(grad, leaf):
    """A leaf's gradient from a backward through vmap (``grad(vmap(f))``): summed over the
    batch of the levels that have exited and that the leaf is not batched over (the leaf
    was shared by every example). The sum is differentiable, forward and backward, when the
    gradient carries a tangent or a history (``jvp(grad(f))``, ``jacrev(jacrev(f))``)."""
    if type(grad) is not BatchedTensor:
        return grad
    keep = set(VMAP.active)
    if type(leaf) is BatchedTensor:
        keep.update(leaf._levels)
    drop = [level for level in grad._levels if level not in keep]
    if not drop:
        return grad
    return examples_summed(grad, drop)


def install() -> None:
    LAYERS.batching = batching_layer
    LAYERS.write = write_batched
    LAYERS.draw = random_draw
    LEAF_GRADIENTS.settle = settle_leaf_gradient
