"""tocha.export: whole programs as flat graphs, PyTorch's ``torch.export``.

`export(mod, args)` traces a module once on example inputs into an `ExportedProgram`: a
`tocha.fx` graph of calls to tocha's public functions, with parameters, buffers and constant
tensors lifted to inputs (its `graph_signature` says which), `module()` to run it,
`run_decompositions()` to lower it to tocha's primitives (``tocha.export.ops``), and
`save`/`load` to move it between processes without the model's code.
"""

from . import ops
from ._decomp import CustomDecompTable, default_decompositions
from ._dims import Dim, ValueRanges, dims, int_oo
from ._errors import ConstraintViolationError, GuardOnDataDependentSymNode, UserError
from ._export import export
from ._serialize import load, save
from .exported_program import ExportedProgram
from .graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    SymIntArgument,
    TensorArgument,
)
from .unflatten import unflatten

__all__ = [
    "ConstantArgument",
    "ConstraintViolationError",
    "CustomDecompTable",
    "Dim",
    "ExportGraphSignature",
    "ExportedProgram",
    "GuardOnDataDependentSymNode",
    "InputKind",
    "InputSpec",
    "OutputKind",
    "OutputSpec",
    "SymIntArgument",
    "TensorArgument",
    "UserError",
    "ValueRanges",
    "default_decompositions",
    "dims",
    "export",
    "int_oo",
    "load",
    "ops",
    "save",
    "unflatten",
]
