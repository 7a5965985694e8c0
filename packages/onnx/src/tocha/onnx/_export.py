"""tocha.onnx.export: a model traced by tocha.export, written as ONNX."""

from __future__ import annotations

import contextlib
import inspect
import os
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import IO, Any

import onnx
import onnx.version_converter
import tocha
from tocha import export as tocha_export

from ._convert import Lifted, to_model
from ._enums import OperatorExportTypes, TrainingMode
from ._program import ONNXProgram
from .errors import OnnxExporterError, OnnxExporterWarning

DEFAULT_OPSET = 18
MIN_OPSET = 17
MAX_OPSET = 23

_exporting = False


def is_in_onnx_export() -> bool:
    """Returns whether it is in the middle of ONNX export."""
    return _exporting


@contextlib.contextmanager
def _export_context() -> Iterator[None]:
    global _exporting
    before, _exporting = _exporting, True
    try:
        yield
    finally:
        _exporting = before


def _lifted(program: Any) -> Lifted:
    """Placeholders from an ExportedProgram's signature: parameters, buffers and constants
    by their state_dict keys, then the user's inputs."""
    sig = program.graph_signature
    state = dict(program.state_dict)
    constants = dict(getattr(program, "constants", {}) or {})
    lifted: dict[str, tuple[str, Any]] = {}
    for placeholder, key in sig.inputs_to_parameters.items():
        lifted[placeholder] = (key, state[key])
    for placeholder, key in sig.inputs_to_buffers.items():
        lifted[placeholder] = (key, state[key] if key in state else constants[key])
    for placeholder, key in getattr(sig, "inputs_to_lifted_tensor_constants", {}).items():
        lifted[placeholder] = (key, constants[key])
    user_inputs = [name for name in sig.user_inputs if name not in lifted]
    outputs = [name for name in sig.user_outputs if isinstance(name, str)]
    return Lifted(lifted, user_inputs, outputs)


def _argument_names(model: Any, count: int) -> list[str]:
    """The names of the first `count` positional parameters of the model's forward."""
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (AttributeError, TypeError, ValueError):
        return [f"arg{k}" for k in range(count)]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[:count] + [f"arg{k}" for k in range(len(names), count)]


def _named_axes(
    dynamic_axes: Mapping[str, Mapping[int, str] | Sequence[int]],
) -> dict[str, dict[int, str]]:
    """dynamic_axes with every axis named: a list of axes gets ``{name}_dynamic_axes_{k}``."""
    named = {}
    for name, axes in dynamic_axes.items():
        if isinstance(axes, Mapping):
            named[name] = {int(a): str(n) for a, n in axes.items()}
        else:
            named[name] = {int(a): f"{name}_dynamic_axes_{k + 1}" for k, a in enumerate(axes)}
    return named


def _dims_from_shapes(dynamic_shapes: Any, arg_names: list[str]) -> dict[str, dict[int, str]]:
    """Per user input (by argument name), the axes that dynamic_shapes marks dynamic."""
    if isinstance(dynamic_shapes, Mapping):
        items = [(name, dynamic_shapes.get(name)) for name in arg_names]
    else:
        items = list(zip(arg_names, dynamic_shapes))
    dims: dict[str, dict[int, str]] = {}
    for name, spec in items:
        if isinstance(spec, Mapping):
            entries = spec.items()
        elif isinstance(spec, (tuple, list)):
            entries = enumerate(spec)
        else:
            continue
        axes = {
            int(a): getattr(d, "__name__", None) or f"{name}_dim_{a}"
            for a, d in entries
            if d is not None and not isinstance(d, int)
        }
        if axes:
            dims[name] = axes
    return dims


def _shapes_from_axes(
    axes: dict[str, dict[int, str]], input_names: Sequence[str], arg_names: list[str]
) -> dict[str, Any] | None:
    """dynamic_axes (by input name) as dynamic_shapes for tocha.export (by argument name):
    ``Dim.AUTO`` hints, so that an example of size 1 is accepted (and specialised, as
    torch.export does); the ONNX dims take dynamic_axes' names."""
    shapes: dict[str, Any] = {}
    for k, arg in enumerate(arg_names):
        name = input_names[k] if k < len(input_names) else arg
        spec = axes.get(name)
        if spec:
            shapes[arg] = {a: tocha_export.Dim.AUTO for a in spec}
        else:
            shapes[arg] = None
    return shapes if any(v is not None for v in shapes.values()) else None


def _converted(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    """`model` converted to `opset` by onnx's version converter; when it cannot be, a warning
    and the model as it is (as torch.onnx does)."""
    try:
        converted = onnx.version_converter.convert_version(model, opset)
        onnx.checker.check_model(converted, full_check=True)
    except Exception as e:  # the converter raises RuntimeError, checker ValidationError
        warnings.warn(
            f"Failed to convert the model to the target opset version {opset}: {e}. "
            f"The model is kept at opset version {model.opset_import[0].version}.",
            OnnxExporterWarning,
            stacklevel=3,
        )
        return model
    return converted


def export(
    model: Any,
    args: tuple[Any, ...] = (),
    f: str | os.PathLike | IO[bytes] | None = None,
    *,
    kwargs: dict[str, Any] | None = None,
    verbose: bool | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    dynamo: bool = True,
    external_data: bool = True,
    dynamic_shapes: dict[str, Any] | tuple[Any, ...] | list[Any] | None = None,
    custom_translation_table: dict[Any, Any] | None = None,
    report: bool = False,
    optimize: bool = True,
    verify: bool = False,
    profile: bool = False,
    dump_exported_program: bool = False,
    artifacts_dir: str | os.PathLike = ".",
    export_params: bool = True,
    keep_initializers_as_inputs: bool = False,
    dynamic_axes: Mapping[str, Mapping[int, str]] | Mapping[str, Sequence[int]] | None = None,
    training: TrainingMode = TrainingMode.EVAL,
    operator_export_type: OperatorExportTypes = OperatorExportTypes.ONNX,
    do_constant_folding: bool = True,
    custom_opsets: Mapping[str, int] | None = None,
    export_modules_as_functions: bool | Collection[type] = False,
    autograd_inlining: bool = True,
) -> ONNXProgram | None:
    """Export a model into ONNX format.

    The model is traced with ``tocha.export.export(model, args, kwargs, dynamic_shapes=...,
    strict=False)`` (an ExportedProgram is used as it is); each node of the flattened graph is
    written as ONNX operators of the default domain, parameters and buffers as initializers
    named by their state_dict keys. The model is checked with
    ``onnx.checker.check_model(full_check=True)``.

    Args:
        model: a ``tocha.nn.Module`` or a ``tocha.export.ExportedProgram``.
        args: example positional inputs (a tensor alone is taken as ``(tensor,)``).
        f: a path (or binary file object, with `external_data` False) the model is also
            saved to; with `external_data`, the weights go beside it in ``f + ".data"``.
        kwargs: example keyword inputs.
        input_names, output_names: names of the graph's inputs and outputs, in order.
        opset_version: the ``ai.onnx`` opset (default 18). Models are written for opsets 17
            to 23; for another, the opset-18 model is converted by onnx's version converter
            (kept at 18, with an OnnxExporterWarning, where it cannot be).
        dynamo: kept for PyTorch's signature: both values take the same path; with False
            the model is saved to `f` and None is returned, as PyTorch's TorchScript exporter.
        external_data: save the weights to a separate file beside `f`.
        dynamic_shapes: the dynamic dimensions of the inputs, as for ``tocha.export.export``
            (``{"x": {0: Dim("batch")}}``).
        export_params: write the weights (otherwise they become graph inputs).
        keep_initializers_as_inputs: list the weights as graph inputs too.
        dynamic_axes: ``{input or output name: {axis: name}}`` or ``{name: [axes]}``: axes of
            any size (inputs' axes become dynamic dimensions of the traced program).
        training, operator_export_type, do_constant_folding, custom_opsets,
            export_modules_as_functions, autograd_inlining: deprecated in PyTorch and
            ignored: the model is written in the mode it is in, as ONNX operators.

    Returns:
        An :class:`ONNXProgram` (None when `dynamo` is False).

    Raises:
        tocha.onnx.errors.UnsupportedOperatorError: a node has no ONNX translation.
        tocha.onnx.errors.OnnxExporterError: the model cannot be written as ONNX.

    Example:
        >>> program = tocha.onnx.export(tocha.nn.Linear(3, 2), (tocha.randn(4, 3),),
        ...                             input_names=["x"], dynamic_axes={"x": {0: "batch"}})
        >>> program.model_proto.graph.input[0].name
        'x'
    """
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    native = opset if MIN_OPSET <= opset <= MAX_OPSET else DEFAULT_OPSET
    if custom_translation_table:
        raise NotImplementedError("tocha.onnx does not support custom_translation_table")
    if isinstance(args, tocha.Tensor):
        args = (args,)
    args = tuple(args)
    if kwargs is None and args and isinstance(args[-1], dict):
        args, kwargs = args[:-1], args[-1]
    if dynamic_shapes is not None and dynamic_axes is not None:
        warnings.warn(
            "dynamic_axes is ignored when dynamic_shapes is given", UserWarning, stacklevel=2
        )
        dynamic_axes = None
    axes = _named_axes(dynamic_axes or {})
    input_names = list(input_names or [])
    with _export_context():
        if isinstance(model, tocha_export.ExportedProgram):
            program = model
            arg_names: list[str] = []
        else:
            arg_names = _argument_names(model, len(args))
            if dynamic_shapes is None and axes:
                dynamic_shapes = _shapes_from_axes(axes, input_names, arg_names)
            elif dynamic_shapes is not None:
                by_arg = _dims_from_shapes(dynamic_shapes, arg_names)
                for k, arg in enumerate(arg_names):
                    if arg in by_arg:
                        axes.setdefault(
                            input_names[k] if k < len(input_names) else arg, by_arg[arg]
                        )
            try:
                program = tocha_export.export(
                    model, args, kwargs, dynamic_shapes=dynamic_shapes, strict=False
                )
            except OnnxExporterError:
                raise
            except Exception as e:
                raise OnnxExporterError(
                    f"Failed to export the model with tocha.export.export: {type(e).__name__}: {e}"
                ) from e
        lifted = _lifted(program)
        placeholder_names = lifted.user_inputs
        names = [
            input_names[k] if k < len(input_names) else placeholder_names[k]
            for k in range(len(placeholder_names))
        ]
        model_proto = to_model(
            program.graph,
            lifted,
            root=program.graph_module,
            opset=native,
            input_names=names,
            output_names=output_names,
            dynamic_dims=axes,
            export_params=True,
            keep_initializers_as_inputs=False,
        )
    if native != opset:
        model_proto = _converted(model_proto, opset)
    onnx_program = ONNXProgram(model_proto, program)
    if f is not None:
        onnx_program.save(
            f,
            include_initializers=export_params,
            keep_initializers_as_inputs=keep_initializers_as_inputs,
            external_data=external_data,
        )
    return onnx_program if dynamo else None
