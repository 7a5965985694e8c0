"""A compiled call: the captured graph split into a forward and a backward function of kernel
calls, and run through autograd as one primitive.

With grad inputs, the forward function is declared as a primitive of its own
(`tocha.library.defop`, named ``compiled::graph_<n>`` as custom operators are) whose outputs
are the graph's outputs, and whose derivative (`tocha.autograd.derivatives.d`) runs the
backward function: a call goes through the dispatcher's hot path and records one node, no
tape is built for the ops inside, and the engine delivers the gradients of the grad inputs
as for any op (``.grad`` accumulation, hooks, ``retain_graph``). The node saves the inputs
the backward reads as its arguments; the intermediate values it reads travel in a list
given as the primitive's last argument (freed with the node's saved values), or, when no
input is saved (so that the engine would not free them after a backward), as extra outputs.
Without grad mode, or without grad inputs, the forward function runs alone.

The per-call code (`run`, and the derivative's `formula`) is generated for the graph: the
inputs' order, the outputs' template and the gradients' positions are written into it.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import tocha
from tocha.autograd.derivatives import d
from tocha.fx.experimental.proxy_tensor import python_value
from tocha.library import (
    GRAD_MODE,
    LAYERS,
    backend_of,
    bump_version,
    defop,
    kernel_context,
    wrap,
)

from . import _codegen_rows, _fusion, _logging, _passes
from ._capture import Capture, partition
from ._codegen_python import GeneratedFunction, generate
from ._dynamic import NotGeneral

__all__ = ["CompiledGraph"]

_NUMBER = itertools.count()


class CompiledGraph:
    """The functions compiled from one `Capture`; calling it with the inputs' tensors (in the
    capture's order, a list) returns the flat outputs, as `run` does with them as
    arguments."""

    def __init__(self, cap: Capture, fuse: bool, name: str, symbols: dict | None = None) -> None:
        gm = cap.gm
        _passes.optimize(gm)
        self.n_inputs = len(cap.inputs)
        self.device = _device_of(cap.inputs)
        self.differentiable = cap.differentiable
        constants = {n.target: getattr(gm, n.target) for n in gm.graph.nodes if n.op == "get_attr"}
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        inputs = [n for n in placeholders if not n.name.startswith("tangents_")]
        tangents = [n for n in placeholders if n.name.startswith("tangents_")]
        flat = next(n for n in gm.graph.nodes if n.op == "output").args[0]
        n_out = len(cap.outputs)
        self.tensor_outputs = [k for k, v in enumerate(cap.outputs) if isinstance(v, tocha.Tensor)]
        self.n_tensors = len(self.tensor_outputs)
        fwd, bwd, saved = partition(cap)
        self.checks_values = any(n.target is python_value for n in fwd)
        # Inputs the backward reads are saved by the node as arguments (the last ones, from
        # position `self.first_saved`), not returned as outputs: fewer tensors per call.
        written = {n.args[0] for n in fwd if n.target is tocha.Tensor.copy_}
        index = {n: i for i, n in enumerate(inputs)}
        saved_inputs = [n for n in saved if n in index and n not in written]
        saved_made = [n for n in saved if n not in saved_inputs]
        kept = set(saved_inputs)
        self.order = [i for i, n in enumerate(inputs) if n not in kept]
        self.order += [index[n] for n in saved_inputs]
        self.first_saved = len(inputs) - len(saved_inputs)
        differentiable = set(self.differentiable)
        detached = [i for i, k in enumerate(self.tensor_outputs) if k not in differentiable]
        params = [inputs[i] for i in self.order]
        out_nodes = [flat[k] for k in self.tensor_outputs]
        keep = set(out_nodes) | set(saved)
        fused_fwd = _fusion.fuse(fwd, keep, self.device) if fuse else None
        kernels = _codegen_rows.row_kernels(self.device) if fuse else None
        traced = bool(tangents)
        self.boxed = traced and bool(saved_made) and bool(saved_inputs)
        results = out_nodes + ([] if self.boxed else saved_made)
        self.forward: GeneratedFunction = generate(
            f"{name}_forward",
            fwd,
            params,
            results,
            self.device,
            constants,
            fused_fwd,
            stash=saved_made if self.boxed else None,
            bare=traced and len(results) == 1,
            kernels=kernels,
            symbols=symbols,
        )
        _logging.code(self.forward.source)
        self.op = None
        self.formula = None
        if symbols is not None and len(self.differentiable) > 1:
            # the derivative makes zeros of an output's captured shape for a missing gradient
            raise NotGeneral("several differentiable outputs")
        if traced:
            grads = list(flat[n_out:])
            bwd_results = [g for g in grads if g is not None]
            fused_bwd = _fusion.fuse(bwd, set(bwd_results), self.device) if fuse else None
            self.backward = generate(
                f"{name}_backward",
                bwd,
                saved_inputs + saved_made + tangents,
                bwd_results,
                self.device,
                constants,
                fused_bwd,
                kernels=kernels,
                symbols=symbols,
            )
            _logging.code(self.backward.source)
            position = {original: i for i, original in enumerate(self.order)}
            targets = [position[where] for g, where in zip(grads, cap.grad_inputs) if g is not None]
            outputs = [cap.outputs[k] for k in self.tensor_outputs]
            self.formula = _formula(self, targets, outputs, len(results), len(saved_made))
            self.op = _declare(self, self.formula, len(saved_made) and not self.boxed)
        self.run = _runner(self, [cap.outputs[k] for k in range(n_out)], detached, len(results))

    def __call__(self, tensors: list) -> list:
        return self.run(*tensors)


def _runner(graph: CompiledGraph, template: list, detached: list[int], n_results: int) -> Any:
    """``run(*tensors)``: the flat outputs of a call on the inputs (capture order)."""
    env: dict[str, Any] = {
        "_op": graph.op,
        "_fwd": graph.forward.fn,
        "_run": kernel_context,
        "_wrap": wrap,
        "_dev": graph.device,
        "_bump": bump_version,
        "_G": GRAD_MODE,
        "_L": LAYERS,
    }
    args = [f"t{i}" for i in range(graph.n_inputs)]
    ordered = [args[i] for i in graph.order]
    arrays = "".join(f", {t}._data" for t in ordered)
    lines = []
    if graph.op is not None:
        # the compiled primitive's call, as the dispatcher's (the guards checked the devices
        # and that autocast is off), then its record on the tape
        box = ", []" if graph.boxed else ""
        if box:
            lines.append("b = []")
            box = ", b"
        lines.append(f"r = _run().run(_fwd{arrays}{box})")
        wrapped = ", ".join(f"_wrap(r[{i}], _dev)" for i in range(n_results))
        lines.append("o = _wrap(r, _dev)" if n_results == 1 else f"o = ({wrapped},)")
        lines.append("if _G.grad_enabled or _G.transforms:")
        lines.append(f"    o = _L.autograd(_op, ({', '.join(ordered)}{box},), o)")
        outs = ["o"] if n_results == 1 else [f"o[{i}]" for i in range(graph.n_tensors)]
        for i in detached:
            outs[i] = f"_wrap({outs[i]}._data, _dev)"
    else:
        lines.append(f"r = _run().run(_fwd{arrays})")
        outs = [f"_wrap(r[{i}], _dev)" for i in range(graph.n_tensors)]
    for i in graph.forward.writes:
        lines.append(f"_bump({ordered[i]})")
    items = []
    outs_iter = iter(outs)
    for k, value in enumerate(template):
        if isinstance(value, tocha.Tensor):
            items.append(next(outs_iter))
        else:
            env[f"_v{k}"] = value
            items.append(f"_v{k}")
    lines.append(f"return [{', '.join(items)}]")
    source = f"def run({', '.join(args)}):\n" + "".join(f"    {line}\n" for line in lines)
    exec(compile(source, "<tocha.compile run>", "exec"), env)
    return env["run"]


def _formula(
    graph: CompiledGraph, targets: list[int], outputs: list, n_results: int, n_made: int
) -> Any:
    """The derivative of the compiled primitive, ``formula(grad, out, *args)``: the backward
    function on the saved values (inputs from `args`, the rest from the box or `out`) and
    the output gradients, as one gradient per argument."""
    xp = np if graph.device.type == "cpu" else backend_of(graph.device).xp
    env: dict[str, Any] = {
        "_bwd": graph.backward.fn,
        "_run": kernel_context,
        "_wrap": wrap,
        "_dev": graph.device,
        "_zeros": xp.zeros,
    }
    args = [f"x{i}" for i in range(graph.n_inputs)] + (["box"] if graph.boxed else [])
    lines = []
    seeds = []
    position = {k: i for i, k in enumerate(graph.tensor_outputs)}
    for j, k in enumerate(graph.differentiable):
        i = position[k]
        if n_results == 1:
            lines.append(f"g{j} = grad._data")
        else:
            env[f"_s{j}"] = (tuple(outputs[i].shape), outputs[i]._data.dtype)
            lines.append(f"g{j} = grad[{i}]")
            lines.append(f"g{j} = _zeros(*_s{j}) if g{j} is None else g{j}._data")
        seeds.append(f"g{j}")
    saved = [f"x{i}._data" for i in range(graph.first_saved, graph.n_inputs)]
    if graph.boxed:
        saved.append("*box")
    else:
        saved += [f"out[{graph.n_tensors + j}]._data" for j in range(n_made)]
    lines.append(f"r = _run().run(_bwd, {', '.join(saved + seeds)})")
    result = ["None"] * len(args)
    for j, where in enumerate(targets):
        result[where] = f"_wrap(r[{j}], _dev)"
    lines.append(f"return ({', '.join(result)},)")
    source = f"def formula(grad, out, {', '.join(args)}):\n" + "".join(
        f"    {line}\n" for line in lines
    )
    exec(compile(source, "<tocha.compile formula>", "exec"), env)
    formula = env["formula"]
    formula.accepts_none = True
    return formula


def _declare(graph: CompiledGraph, formula: Any, saves_outputs: bool) -> Any:
    """The compiled forward as a primitive of its own, with its derivative."""
    name = f"compiled::graph_{next(_NUMBER)}"
    forward = graph.forward.fn
    op = defop(name, lambda xp: forward)
    d(name, f"{graph.first_saved}+{'o' if saves_outputs else ''}", formula)
    return op


def _device_of(inputs: list) -> Any:
    for t in inputs:
        if isinstance(t, tocha.Tensor):
            return t.device
    return tocha.device("cpu")
