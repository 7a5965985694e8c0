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
        self.single = self.template == [None]  # one output, a tensor
        fwd, bwd, saved = partition(cap)
        # Inputs the backward reads are saved by the node as arguments (the last ones, from
        # position `self.first_saved`), not returned as outputs: fewer tensors per call.
        written = {n.args[0] for n in fwd if n.target is tocha.Tensor.copy_}
        index = {n: i for i, n in enumerate(inputs)}
        saved_inputs = [n for n in saved if n in index and n not in written]
        saved_made = [n for n in saved if n not in saved_inputs]
        kept = set(saved_inputs)
        self.order = [i for i, n in enumerate(inputs) if n not in kept]
        self.order += [index[n] for n in saved_inputs]
        self.reorder = self.order != list(range(len(inputs)))
        self.first_saved = len(inputs) - len(saved_inputs)
        params = [inputs[i] for i in self.order]
        out_nodes = [flat[k] for k in self.tensor_outputs]
        keep = set(out_nodes) | set(saved)
        fused_fwd = _fusion.fuse(fwd, keep, self.device) if fuse else None
        results = out_nodes + saved_made
        self.forward: GeneratedFunction = generate(
            f"{name}_forward", fwd, params, results, self.device, constants, fused_fwd
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
                saved_inputs + saved_made + tangents,
                results,
                self.device,
                constants,
                fused_bwd,
            )
            _logging.code(self.backward.source)
            position = {original: i for i, original in enumerate(self.order)}
            self.grad_targets = [
                position[where] for g, where in zip(grads, cap.grad_inputs) if g is not None
            ]
            self.op = _declare(self)
        position = {k: i for i, k in enumerate(self.tensor_outputs)}
        self.seeds = [position[k] for k in self.differentiable]
        differentiable = set(self.differentiable)
        self.detached = [i for i, k in enumerate(self.tensor_outputs) if k not in differentiable]

    def __call__(self, tensors: list) -> list:
        if self.reorder:
            tensors = [tensors[i] for i in self.order]
        if self.op is not None and tocha.is_grad_enabled():
            outs = list(call(self.op, tensors)[: self.n_tensors])
            for i in self.detached:
                outs[i] = wrap(outs[i]._data, self.device)
        else:
            arrays = kernel_context().run(self.forward.fn, *[t._data for t in tensors])
            outs = [wrap(a, self.device) for a in arrays[: self.n_tensors]]
        for i in self.forward.writes:
            bump_version(tensors[i])
        if self.single:
            return outs
        result = list(self.template)
        for k, t in zip(self.tensor_outputs, outs):
            result[k] = t
        return result

    def gradients(self, grads: tuple, out: tuple, args: tuple) -> tuple:
        """The derivative of the compiled primitive: the backward function on the saved
        values (inputs from `args`, the rest from `out`) and the output gradients, as one
        gradient per input."""
        device = self.device
        seeds = []
        for i in self.seeds:
            g = grads[i]
            seeds.append(tocha.zeros_like(out[i])._data if g is None else g._data)
        arrays = kernel_context().run(
            self.backward.fn,
            *[t._data for t in args[self.first_saved :]],
            *[t._data for t in out[self.n_tensors :]],
            *seeds,
        )
        result: list[Any] = [None] * self.n_inputs
        for where, array in zip(self.grad_targets, arrays):
            result[where] = wrap(array, device)
        return tuple(result)


def _declare(graph: CompiledGraph) -> Any:
    """The compiled forward as a primitive of its own, with its derivative."""
    name = f"compiled::graph_{next(_NUMBER)}"
    forward = graph.forward.fn
    op = defop(name, lambda xp: forward)

    def formula(grad: Any, out: Any, *args: Any) -> tuple:
        if not isinstance(out, tuple):  # a node of one output gives it alone
            grad, out = (grad,), (out,)
        return graph.gradients(grad, out, args)

    formula.accepts_none = True  # type: ignore[attr-defined]
    d(name, f"{graph.first_saved}+o", formula)
    return op


def _device_of(inputs: list) -> Any:
    for t in inputs:
        if isinstance(t, tocha.Tensor):
            return t.device
    return tocha.device("cpu")
