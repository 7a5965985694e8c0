"""The graph signature of an `ExportedProgram`: what each placeholder and each output of its
flat graph stands for (a parameter, a buffer, a constant tensor, a user input; a user output,
a buffer's new value)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ConstantArgument",
    "ExportGraphSignature",
    "InputKind",
    "InputSpec",
    "OutputKind",
    "OutputSpec",
    "SymIntArgument",
    "TensorArgument",
]


@dataclass
class TensorArgument:
    """A tensor placeholder or output, by node name."""

    name: str


@dataclass
class SymIntArgument:
    """A symbolic-int placeholder or output, by node name."""

    name: str


@dataclass
class ConstantArgument:
    """A non-tensor input or output baked into the graph."""

    name: str
    value: Any


ArgumentSpec = TensorArgument | SymIntArgument | ConstantArgument


class InputKind(enum.Enum):
    USER_INPUT = 1
    PARAMETER = 2
    BUFFER = 3
    CONSTANT_TENSOR = 4
    CUSTOM_OBJ = 5
    TOKEN = 6


@dataclass
class InputSpec:
    """One placeholder: its kind, its argument, the state it reads (``fc.weight``) and, for a
    buffer, whether it is persistent."""

    kind: InputKind
    arg: ArgumentSpec
    target: str | None
    persistent: bool | None = None

    def __post_init__(self) -> None:
        if self.kind == InputKind.BUFFER:
            assert self.persistent is not None, "Failed to specify persistent flag on BUFFER."


class OutputKind(enum.Enum):
    USER_OUTPUT = 1
    LOSS_OUTPUT = 2
    BUFFER_MUTATION = 3
    GRADIENT_TO_PARAMETER = 4
    GRADIENT_TO_USER_INPUT = 5
    USER_INPUT_MUTATION = 6
    TOKEN = 7
    PARAMETER_MUTATION = 8


@dataclass
class OutputSpec:
    """One output: its kind, its argument and the state it updates (for a mutation)."""

    kind: OutputKind
    arg: ArgumentSpec
    target: str | None


@dataclass
class ExportGraphSignature:
    """The specs of a flat graph's placeholders and outputs, in order."""

    input_specs: list[InputSpec]
    output_specs: list[OutputSpec]

    def _inputs(self, kind: InputKind) -> tuple[str, ...]:
        return tuple(s.target for s in self.input_specs if s.kind == kind and s.target)

    @property
    def parameters(self) -> tuple[str, ...]:
        return self._inputs(InputKind.PARAMETER)

    @property
    def buffers(self) -> tuple[str, ...]:
        return self._inputs(InputKind.BUFFER)

    @property
    def non_persistent_buffers(self) -> tuple[str, ...]:
        return tuple(
            s.target
            for s in self.input_specs
            if s.kind == InputKind.BUFFER and s.persistent is False and s.target
        )

    @property
    def lifted_tensor_constants(self) -> tuple[str, ...]:
        return self._inputs(InputKind.CONSTANT_TENSOR)

    @property
    def user_inputs(self) -> tuple[Any, ...]:
        return tuple(
            s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name
            for s in self.input_specs
            if s.kind == InputKind.USER_INPUT
        )

    @property
    def user_outputs(self) -> tuple[Any, ...]:
        return tuple(
            s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name
            for s in self.output_specs
            if s.kind == OutputKind.USER_OUTPUT
        )

    def _by_kind(self, kind: InputKind) -> dict[str, str]:
        return {
            s.arg.name: s.target
            for s in self.input_specs
            if s.kind == kind and s.target is not None
        }

    @property
    def inputs_to_parameters(self) -> dict[str, str]:
        return self._by_kind(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self) -> dict[str, str]:
        return self._by_kind(InputKind.BUFFER)

    @property
    def inputs_to_lifted_tensor_constants(self) -> dict[str, str]:
        return self._by_kind(InputKind.CONSTANT_TENSOR)

    @property
    def buffers_to_mutate(self) -> dict[str, str]:
        return {
            s.arg.name: s.target
            for s in self.output_specs
            if s.kind == OutputKind.BUFFER_MUTATION and s.target is not None
        }

    @property
    def user_inputs_to_mutate(self) -> dict[str, str]:
        return {
            s.arg.name: s.target
            for s in self.output_specs
            if s.kind == OutputKind.USER_INPUT_MUTATION and s.target is not None
        }

    def __str__(self) -> str:
        lines = ["# inputs"]
        for s in self.input_specs:
            line = f"{s.arg.name}: {s.kind.name}"
            if s.target is not None:
                line += f" target={s.target!r}"
            if s.persistent is not None:
                line += f" persistent={s.persistent}"
            lines.append(line)
        lines += ["", "# outputs"]
        for s in self.output_specs:
            line = f"{getattr(s.arg, 'name', s.arg)}: {s.kind.name}"
            if s.target is not None:
                line += f" target={s.target!r}"
            lines.append(line)
        return "\n".join(lines) + "\n"
