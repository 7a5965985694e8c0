"""`ExportedProgram.run_decompositions`: the program traced again at the primitive level.

The program's flat graph runs once on its example values (a copy of its state) while every
kernel the dispatcher runs is recorded as a ``tocha.export.ops`` node. Writes into a
buffer or an input become out-of-place primitives; the last value of each written buffer
(input) is a BUFFER_MUTATION (USER_INPUT_MUTATION) output, before the user outputs, as in
PyTorch. The decomposed graph is specialised to the example's sizes: its dynamic dimensions
become static.
"""

from __future__ import annotations

from typing import Any

import tocha
from tocha.fx.graph_module import GraphModule
from tocha.fx.interpreter import Interpreter

from . import ops
from ._intercept import recording
from ._tracer import Tracer, named_placeholder
from .exported_program import ExportedProgram
from .graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = ["CustomDecompTable", "decompose", "default_decompositions"]


class CustomDecompTable(dict):
    """Which public functions `run_decompositions` lowers to primitives: its keys (the
    values are unused: a function lowers to the primitives the dispatcher runs for it)."""


def default_decompositions() -> CustomDecompTable:
    """Every public function of ``tocha``, ``tocha.nn.functional``, ``tocha.linalg``,
    ``tocha.fft`` and ``tocha.special``, and every Tensor method: delete a key to keep that
    function's calls in the decomposed graph."""
    from ._intercept import public_functions

    table = CustomDecompTable()
    for fn in public_functions():
        table[fn] = None
    return table


class _StackedRun(Interpreter):
    """Runs the program node by node, so that the primitives each node lowers to carry its
    ``nn_module_stack``; a function kept out of the decomposition is recorded as it is."""

    def __init__(self, module: GraphModule, tracer: Tracer, keep: frozenset) -> None:
        super().__init__(module)
        self.tracer = tracer
        self.keep = keep

    def run_node(self, n: Any) -> Any:
        self.tracer.module_stack = dict(n.meta.get("nn_module_stack") or {})
        try:
            return super().run_node(n)
        finally:
            self.tracer.module_stack = {}

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        if target in self.keep and not self.tracer.passive():
            return self.tracer.record_call(target, target, args, kwargs)
        return target(*args, **kwargs)


def decompose(ep: ExportedProgram, table: dict | None = None) -> ExportedProgram:
    """`ep` traced again at the primitive level; with a `table`, the public functions the
    graph calls that are not among its keys are kept as they are."""
    tracer = Tracer(primitive=True)
    keep: frozenset = frozenset()
    if table is not None:
        called = {n.target for n in ep.graph.nodes if n.op == "call_function"}
        keep = frozenset(t for t in called if not isinstance(t, ops.Primitive) and t not in table)
    signature = ep.graph_signature
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    inputs: list[Any] = []
    input_nodes = []
    for node, spec in zip(placeholders, signature.input_specs):
        if isinstance(spec.arg, ConstantArgument):
            inputs.append(spec.arg.value)
            input_nodes.append(named_placeholder(tracer.graph, node.name))
            continue
        if spec.kind is InputKind.USER_INPUT:
            value = node.meta["val"].detach().clone()
        else:
            value = ep.state_dict.get(spec.target)
            if value is None:
                value = ep.constants[spec.target]
            value = value.detach().clone()
        inputs.append(value)
        input_nodes.append(tracer.placeholder(node.name, value))
        if spec.kind is not InputKind.USER_INPUT:
            tracer.state_end = input_nodes[-1]
    with recording(tracer, [], [], keep):
        out = _StackedRun(ep.graph_module, tracer, keep).run(*inputs)
        flat = out if isinstance(out, (tuple, list)) else (out,)
        mutations: list[OutputSpec] = []
        mutated: list[Any] = []
        for value, node, spec in zip(inputs, input_nodes, signature.input_specs):
            if not isinstance(value, tocha.Tensor):
                continue
            current = tracer.node_of(value)
            if current is node:
                continue
            if spec.kind is InputKind.BUFFER:
                mutations.append(
                    OutputSpec(
                        OutputKind.BUFFER_MUTATION, TensorArgument(current.name), spec.target
                    )
                )
            elif spec.kind is InputKind.USER_INPUT:
                mutations.append(
                    OutputSpec(
                        OutputKind.USER_INPUT_MUTATION, TensorArgument(current.name), node.name
                    )
                )
            else:
                continue
            mutated.append(current)
        user_args = [tracer.to_args(v) for v in flat]
    user_specs = []
    for value, arg, spec in zip(flat, user_args, signature.output_specs):
        if isinstance(value, tocha.Tensor):
            user_specs.append(OutputSpec(spec.kind, TensorArgument(arg.name), spec.target))
        else:
            user_specs.append(OutputSpec(spec.kind, ConstantArgument("", value), spec.target))
    tracer.graph.output(tuple(mutated + user_args))
    lifted = [
        InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(node.name), target)
        for target, _, node in tracer.lifted
    ]
    state_specs = [s for s in signature.input_specs if s.kind is not InputKind.USER_INPUT]
    user_inputs = [s for s in signature.input_specs if s.kind is InputKind.USER_INPUT]
    constants = dict(ep.constants)
    constants.update({target: value for target, value, _ in tracer.lifted})
    examples = iter(
        node.meta["val"]
        for node, spec in zip(placeholders, signature.input_specs)
        if spec.kind is InputKind.USER_INPUT and isinstance(spec.arg, TensorArgument)
    )
    checks = [
        entry if entry[1] is None else [entry[0], list(next(examples).shape), {}]
        for entry in ep._input_checks
    ]
    return ExportedProgram(
        GraphModule(tocha.nn.Module(), tracer.graph),
        ExportGraphSignature(state_specs + lifted + user_inputs, mutations + user_specs),
        dict(ep.state_dict),
        constants,
        {},
        ep.example_inputs,
        list(ep.call_spec[0]),
        ep.call_spec[1],
        checks,
    )
