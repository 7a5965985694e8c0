"""A compiled call: the captured graph split into a forward and a backward function of kernel
calls, and run through autograd as one node.

With grad inputs, a call runs the forward function inside one ``autograd.Function`` whose
backward runs the backward function: no tape is built for the ops inside, and the engine
delivers the gradients of the grad inputs as for any node (``.grad`` accumulation, hooks,
``retain_graph``). Without, the forward function runs alone.
"""

from __future__ import annotations

from typing import Any

import tocha
from tocha.autograd import Function
from tocha.library import bump_version, kernel_context, wrap

from . import _fusion, _logging, _passes
from ._capture import Capture, partition
from ._codegen_python import GeneratedFunction, generate

__all__ = ["CompiledGraph"]


class CompiledGraph:
    """The functions compiled from one `Capture`; calling it with the inputs' tensors (in the
    capture's order) returns the flat outputs."""

    def __init__(self, cap: Capture, fuse: bool, name: str) -> None:
        gm = cap.gm
        _passes.optimize(gm)
        self.n_inputs = len(cap.inputs)
        self.device = _device_of(cap.inputs)
        self.grad_inputs = cap.grad_inputs
        self.differentiable = cap.differentiable
        self.template = list(cap.outputs)
        constants = {n.target: getattr(gm, n.target) for n in gm.graph.nodes if n.op == "get_attr"}
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        inputs = [n for n in placeholders if not n.name.startswith("tangents_")]
        tangents = [n for n in placeholders if n.name.startswith("tangents_")]
        flat = next(n for n in gm.graph.nodes if n.op == "output").args[0]
        n_out = len(cap.outputs)
        self.tensor_outputs = [k for k, v in enumerate(cap.outputs) if isinstance(v, tocha.Tensor)]
        fwd, bwd, saved = partition(cap)
        out_nodes = [flat[k] for k in self.tensor_outputs]
        fused_fwd = _fusion.fuse(fwd, set(out_nodes) | set(saved), self.device) if fuse else None
        self.forward: GeneratedFunction = generate(
            f"{name}_forward", fwd, inputs, out_nodes + saved, self.device, constants, fused_fwd
        )
        self.n_saved = len(saved)
        self.backward: GeneratedFunction | None = None
        if tangents:
            grads = list(flat[n_out:])
            results = [g for g in grads if g is not None]
            fused_bwd = _fusion.fuse(bwd, set(results), self.device) if fuse else None
            self.backward = generate(
                f"{name}_backward",
                bwd,
                saved + tangents,
                results,
                self.device,
                constants,
                fused_bwd,
            )
            self.grad_present = [g is not None for g in grads]
        _logging.code(self.forward.source)
        if self.backward is not None:
            _logging.code(self.backward.source)

    def __call__(self, tensors: list) -> list:
        if self.backward is not None and tocha.is_grad_enabled():
            outs = _Step.apply(self, *tensors)
        else:
            arrays = kernel_context().run(self.forward.fn, *[t._data for t in tensors])
            self._written(tensors)
            n = len(self.tensor_outputs)
            outs = tuple(wrap(a, self.device) for a in arrays[:n])
        result = list(self.template)
        for k, t in zip(self.tensor_outputs, outs):
            result[k] = t
        return result

    def _written(self, tensors: list) -> None:
        for i in self.forward.writes:
            bump_version(tensors[i])


class _Step(Function):
    """One compiled call as one autograd node."""

    @staticmethod
    def forward(ctx: Any, graph: CompiledGraph, *tensors: Any) -> Any:
        arrays = kernel_context().run(graph.forward.fn, *[t._data for t in tensors])
        graph._written(tensors)
        n = len(graph.tensor_outputs)
        ctx.graph = graph
        ctx.saved = arrays[n:]
        outs = tuple(wrap(a, graph.device) for a in arrays[:n])
        differentiable = set(graph.differentiable)
        ctx.mark_non_differentiable(
            *[t for k, t in zip(graph.tensor_outputs, outs) if k not in differentiable]
        )
        return outs

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        graph = ctx.graph
        position = {k: i for i, k in enumerate(graph.tensor_outputs)}
        seeds = [grads[position[k]]._data for k in graph.differentiable]
        arrays = kernel_context().run(graph.backward.fn, *ctx.saved, *seeds)
        result: list[Any] = [None] * (1 + graph.n_inputs)
        values = iter(arrays)
        for present, where in zip(graph.grad_present, graph.grad_inputs):
            if present:
                result[1 + where] = wrap(next(values), graph.device)
        return tuple(result)


def _device_of(inputs: list) -> Any:
    for t in inputs:
        if isinstance(t, tocha.Tensor):
            return t.device
    return tocha.device("cpu")
