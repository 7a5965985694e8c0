"""`ExportedProgram`: a flat graph with its state lifted to inputs, its signature and the
ranges of its dynamic dimensions."""

from __future__ import annotations

import operator
from typing import Any

import tocha
from tocha.fx._codegen import value_annotation
from tocha.fx.graph import Graph
from tocha.fx.graph_module import GraphModule

from ._targets import target_name
from .graph_signature import ExportGraphSignature

__all__ = ["ExportedProgram"]


class ExportedProgram:
    """What `tocha.export.export` returns: `graph_module` (a flat `GraphModule` whose
    placeholders are the parameters, buffers, constants then user inputs, described by
    `graph_signature`), `state_dict`, `constants`, `range_constraints` and
    `example_inputs`. `module()` gives a module to call like the original."""

    def __init__(
        self,
        graph_module: GraphModule,
        graph_signature: ExportGraphSignature,
        state_dict: dict[str, tocha.Tensor],
        constants: dict[str, tocha.Tensor],
        range_constraints: dict[Any, Any],
        example_inputs: tuple[tuple, dict],
        input_layout: Any,
        output_layout: Any,
        input_checks: list[tuple[str, tuple, dict]],
    ) -> None:
        self._graph_module = graph_module
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._constants = constants
        self._range_constraints = range_constraints
        self._example_inputs = example_inputs
        self._input_layout = input_layout
        self._output_layout = output_layout
        self._input_checks = input_checks

    @property
    def graph_module(self) -> GraphModule:
        return self._graph_module

    @property
    def graph(self) -> Graph:
        return self._graph_module.graph

    @property
    def graph_signature(self) -> ExportGraphSignature:
        return self._graph_signature

    @property
    def state_dict(self) -> dict[str, tocha.Tensor]:
        return self._state_dict

    @property
    def constants(self) -> dict[str, tocha.Tensor]:
        return self._constants

    @property
    def tensor_constants(self) -> dict[str, tocha.Tensor]:
        return self._constants

    @property
    def range_constraints(self) -> dict[Any, Any]:
        return self._range_constraints

    @property
    def example_inputs(self) -> tuple[tuple, dict]:
        return self._example_inputs

    @property
    def call_spec(self) -> tuple[Any, Any]:
        return (self._input_layout, self._output_layout)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Unable to call ExportedProgram directly. "
            "You should use `exported_program.module()` instead."
        )

    def parameters(self) -> Any:
        """The parameters, in the signature's order."""
        for name in self._graph_signature.parameters:
            yield self._state_dict[name]

    def named_parameters(self) -> Any:
        for name in self._graph_signature.parameters:
            yield name, self._state_dict[name]

    def buffers(self) -> Any:
        for name in self._graph_signature.buffers:
            yield self._state_value(name)

    def named_buffers(self) -> Any:
        for name in self._graph_signature.buffers:
            yield name, self._state_value(name)

    def _state_value(self, target: str) -> tocha.Tensor:
        if target in self._state_dict:
            return self._state_dict[target]
        return self._constants[target]

    # -- running ---------------------------------------------------------------------------

    def module(self) -> GraphModule:
        """A `GraphModule` called with the original inputs (positional or by name) that
        computes the original outputs: state is read from its own attributes, buffer
        updates are written into them, and inputs whose static sizes differ from the
        example's (or whose dynamic sizes leave their range) raise AssertionError."""
        from ._unlift import unlift

        return unlift(self)

    def run_decompositions(
        self, decomp_table: dict[Any, Any] | None = None, decompose_custom_triton_ops: bool = False
    ) -> ExportedProgram:
        """The same program with every node a primitive (``tocha.export.ops.<name>``): each
        public call is traced down to the primitives the dispatcher runs for it; in-place
        writes become out-of-place primitives, and buffer updates BUFFER_MUTATION outputs.
        `decomp_table` (from `tocha.export.default_decompositions`) names the public
        functions to lower: calls of the others stay as they are. Dynamic sizes become the
        example's."""
        from ._decomp import decompose

        return decompose(self, decomp_table)

    def validate(self) -> None:
        """Check that the graph's placeholders match the signature."""
        placeholders = [n.name for n in self.graph.nodes if n.op == "placeholder"]
        names = [getattr(s.arg, "name", None) for s in self._graph_signature.input_specs]
        if placeholders != names:
            raise RuntimeError(f"graph placeholders {placeholders} do not match {names}")

    # -- printing --------------------------------------------------------------------------

    def __str__(self) -> str:
        code = "\n".join("    " + line if line else line for line in self._readable())
        signature = "\n".join(
            "    " + line if line else "    " for line in str(self._graph_signature).split("\n")
        )
        ranges = "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self._range_constraints.items())
        return (
            f"ExportedProgram:\n{code}\n\nGraph signature: \n{signature}\n"
            f"Range constraints: {ranges}}}\n"
        )

    __repr__ = __str__

    def _readable(self) -> list[str]:
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        params = ", ".join(
            f"{n.name}: {value_annotation(n)}" if value_annotation(n) else n.name
            for n in placeholders
        )
        lines = ["class GraphModule(torch.nn.Module):", f"    def forward(self, {params}):"]
        for node in self.graph.nodes:
            if node.op == "call_function":
                args = ", ".join(
                    [_format(a) for a in node.args]
                    + [f"{k} = {_format(v)}" for k, v in node.kwargs.items()]
                )
                annotation = value_annotation(node)
                typed = f": {annotation}" if annotation else ""
                lines.append(f"        {node.name}{typed} = {_callee(node.target)}({args})")
            elif node.op == "output":
                lines.append(f"        return {_format(node.args[0])}")
        return lines + [""]


def _callee(target: Any) -> str:
    if target is operator.getitem:
        return "operator.getitem"
    try:
        return target_name(target)
    except ValueError:
        return repr(target)


def _format(value: Any) -> str:
    if hasattr(value, "op") and hasattr(value, "name") and hasattr(value, "graph"):
        return value.name
    if isinstance(value, tuple):
        inner = ", ".join(_format(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_format(v)}" for k, v in value.items()) + "}"
    if isinstance(value, slice):
        return f"slice({_format(value.start)}, {_format(value.stop)}, {_format(value.step)})"
    if isinstance(value, tocha.dtype):
        return str(value)
    return repr(value)
