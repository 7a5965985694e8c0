"""A compiled call: the captured graph split into a forward and a backward function of kernel
calls, and run through autograd as one primitive.

With grad inputs, the forward function is declared as a primitive of its own
(`tocha.library.defop`, named ``compiled::graph_<n>`` as custom operators are) whose
outputs are the graph's outputs then the values the backward needs, and whose derivative
(`tocha.autograd.derivatives.d`) runs the backward function: a call goes through the
dispatcher's hot path and records one node, no tape is built for the ops inside, and the
engine delivers the gradients of the grad inputs as for any op (``.grad`` accumulation,
hooks, ``retain_graph``). Without grad mode, or without grad inputs, the forward function
runs alone.
"""

from __future__ import annotations

import itertools
from typing import Any

import tocha
from tocha.autograd.derivatives import d
from tocha.library import bump_version, call, defop, kernel_context, wrap

from . import _fusion, _logging, _passes
from ._capture import Capture, partition
from ._codegen_python import GeneratedFunction, generate

__all__ = ["CompiledGraph"]

_NUMBER = itertools.count()


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
        # the outputs' non-tensor values (the first call's tensors are not kept alive)
        self.template = [None if isinstance(v, tocha.Tensor) else v for v in cap.outputs]
        constants = {n.target: getattr(gm, n.target) for n in gm.graph.nodes if n.op == "get_attr"}
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        inputs = [n for n in placeholders if not n.name.startswith("tangents_")]
        tangents = [n for n in placeholders if n.name.startswith("tangents_")]
        flat = next(n for n in gm.graph.nodes if n.op == "output").args[0]
        n_out = len(cap.outputs)
        self.tensor_outputs = [k for k, v in enumerate(cap.outputs) if isinstance(v, tocha.Tensor)]
        self.n_tensors = len(self.tensor_outputs)
        fwd, bwd, saved = partition(cap)
        out_nodes = [flat[k] for k in self.tensor_outputs]
        fused_fwd = _fusion.fuse(fwd, set(out_nodes) | set(saved), self.device) if fuse else None
        self.forward: GeneratedFunction = generate(
            f"{name}_forward", fwd, inputs, out_nodes + saved, self.device, constants, fused_fwd
        )
        _logging.code(self.forward.source)
        self.op = None
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
            _logging.code(self.backward.source)
            self.grad_present = [g is not None for g in grads]
            self.op = _declare(self)
        position = {k: i for i, k in enumerate(self.tensor_outputs)}
        self.seeds = [position[k] for k in self.differentiable]
        differentiable = set(self.differentiable)
        self.detached = [i for i, k in enumerate(self.tensor_outputs) if k not in differentiable]

    def __call__(self, tensors: list) -> list:
        if self.op is not None and tocha.is_grad_enabled():
            outs = call(self.op, tensors)[: self.n_tensors]
            for i in self.detached:
                outs[i] = wrap(outs[i]._data, self.device)
        else:
            arrays = kernel_context().run(self.forward.fn, *[t._data for t in tensors])
            outs = [wrap(a, self.device) for a in arrays[: self.n_tensors]]
        for i in self.forward.writes:
            bump_version(tensors[i])
        result = list(self.template)
        for k, t in zip(self.tensor_outputs, outs):
            result[k] = t
        return result

    def gradients(self, grads: tuple, out: tuple) -> tuple:
        """The derivative of the compiled primitive: the backward function on the saved
        values and the output gradients, as one gradient per input."""
        device = self.device
        seeds = []
        for i in self.seeds:
            g = grads[i]
            seeds.append(tocha.zeros_like(out[i])._data if g is None else g._data)
        saved = [t._data for t in out[self.n_tensors :]]
        arrays = kernel_context().run(self.backward.fn, *saved, *seeds)
        result: list[Any] = [None] * self.n_inputs
        values = iter(arrays)
        for present, where in zip(self.grad_present, self.grad_inputs):
            if present:
                result[where] = wrap(next(values), device)
        return tuple(result)


def _declare(graph: CompiledGraph) -> Any:
    """The compiled forward as a primitive of its own, with its derivative."""
    name = f"compiled::graph_{next(_NUMBER)}"
    forward = graph.forward.fn
    op = defop(name, lambda xp: forward)

    def formula(grad: Any, out: Any, *args: Any) -> tuple:
        return graph.gradients(grad if isinstance(grad, tuple) else (grad,), out)

    formula.accepts_none = True  # type: ignore[attr-defined]
    d(name, "o", formula)
    return op


def _device_of(inputs: list) -> Any:
    for t in inputs:
        if isinstance(t, tocha.Tensor):
            return t.device
    return tocha.device("cpu")
