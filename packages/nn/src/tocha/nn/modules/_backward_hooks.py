"""Module backward hooks: identity autograd Functions around a module's inputs and outputs
catch the gradients that flow through them."""

from __future__ import annotations

import warnings

from tocha import Tensor
from tocha.autograd import Function


class _Identity(Function):
    """Returns its tensor arguments unchanged; `on_backward(grads)` sees (and may replace)
    their gradients."""

    @staticmethod
    def forward(ctx, on_backward, *tensors):
        ctx.on_backward = on_backward
        ctx.set_materialize_grads(False)  # an output that got no gradient is seen as None
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        replaced = ctx.on_backward(grads)
        return (None, *(grads if replaced is None else replaced))


def _split(values):
    """`values` (a tensor or a tuple) as a tuple, and the positions of the tensors that join
    the graph: as in PyTorch, once one of them requires grad, every floating point or
    complex tensor among them does (and gets a gradient, which its caller drops)."""
    items = values if isinstance(values, tuple) else (values,)
    tensors = [i for i, v in enumerate(items) if isinstance(v, Tensor)]
    if not any(items[i].requires_grad for i in tensors):
        return items, []
    positions = [
        i
        for i in tensors
        if items[i].requires_grad or items[i].is_floating_point() or items[i].is_complex()
    ]
    return items, positions


def _rebuild(items, positions, wrapped, was_tuple):
    items = list(items)
    for i, t in zip(positions, wrapped):
        items[i] = t
    return tuple(items) if was_tuple else items[0]


class BackwardHookTracker:
    """Calls a module's full backward pre-hooks with the gradients of its outputs, then its
    backward hooks with the gradients of its inputs and outputs."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0

    def wrap_inputs(self, args: tuple) -> tuple:
        items, positions = _split(args)
        self.n_inputs = len(items)
        self.input_positions = positions
        if not positions or not self.hooks:
            return args
        wrapped = _Identity.apply(self._on_input_grads, *(items[i] for i in positions))
        return _rebuild(items, positions, wrapped, True)

    def wrap_outputs(self, output):
        was_tuple = isinstance(output, tuple)
        items, positions = _split(output)
        if not positions:
            return output
        wrapped = _Identity.apply(self._on_output_grads, *(items[i] for i in positions))
        return _rebuild(items, positions, wrapped, was_tuple)

    def _on_output_grads(self, grads):
        for hook in self.pre_hooks:
            result = hook(self.module, grads)
            if result is not None:
                grads = tuple(result)
        self.grad_outputs = grads
        if not self.input_positions and self.hooks:
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients. See "
                "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.register_full_backward_hook for more details.",
                stacklevel=2,
            )
            self._call_hooks((None,) * self.n_inputs)
        return grads

    def _on_input_grads(self, grads):
        full = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grads):
            full[i] = g
        result = self._call_hooks(tuple(full))
        if result is None:
            return None
        return tuple(result[i] for i in self.input_positions)

    def _call_hooks(self, grad_input):
        replaced = None
        for hook in self.hooks:
            result = hook(
                self.module, grad_input if replaced is None else replaced, self.grad_outputs
            )
            if result is not None:
                replaced = tuple(result)
        return replaced
