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

DEFAULT_OPSET = 20  # torch.onnx's default in PyTorch 2.13
CONVERT_FROM = 18  # the opset written for another one, then converted (as torch.onnx does)
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


# The opset since which each op takes its axes as an input, an attribute before.
_AXES_INPUT_SINCE = {
    "ReduceSum": 13, "Squeeze": 13, "Unsqueeze": 13, "ReduceMean": 18, "ReduceMax": 18,
    "ReduceMin": 18, "ReduceProd": 18, "ReduceL1": 18, "ReduceL2": 18, "ReduceLogSum": 18,
    "ReduceLogSumExp": 18, "ReduceSumSquare": 18,
}  # fmt: skip
# Ops that onnx's version converter has no adapter for from the versions the emitters
# write, though their older forms say the same for what the emitters write (the newer
# versions added types, or attributes left at their defaults): they cross the conversion in
# a domain of their own and are rewritten for the target (`_restore_passed`).
_PASSED = frozenset(
    {
        "Add", "Sub", "Mul", "Div", "Pow", "Relu", "LeakyRelu", "PRelu", "Where",
        "BatchNormalization", "Reshape", "Identity", "Split", "CumSum", "LSTM", "GRU", "RNN",
        "LessOrEqual", "GreaterOrEqual", "ScatterND", "ScatterElements", "Shape",
        # type-only changes at version 13
        "Transpose", "Concat", "Gather", "GatherElements", "GatherND", "Sqrt", "Tanh",
        "Sigmoid", "Erf", "Neg", "Exp", "Log", "Abs", "Floor", "Ceil", "Reciprocal", "Sign",
        "Expand", "Tile", "MatMul", "Gemm", "Cast", "Less", "Greater", "Equal", "Max", "Min",
        "Mod", "Sum", "Mean", "Flatten", "NonZero", "IsNaN", "Size", "Clip", "Slice",
        *_AXES_INPUT_SINCE,
    }
)  # fmt: skip
_PASS_DOMAIN = "tocha.passthrough"


def _pass_through(model: onnx.ModelProto) -> onnx.ModelProto:
    model = copy_model(model)
    passed = False
    for node in _all_nodes(model.graph):
        if node.domain in ("", "ai.onnx") and node.op_type in _PASSED:
            node.domain = _PASS_DOMAIN
            passed = True
    if passed:
        model.opset_import.append(onnx.helper.make_opsetid(_PASS_DOMAIN, 1))
    return model


def _restore_passed(model: onnx.ModelProto, opset: int) -> None:
    """Back in the default domain, Split as `opset` writes it: below 18 without
    ``num_outputs`` (equal parts are Split's default), below 13 with the sizes as the
    ``split`` attribute instead of an input."""
    constants = {t.name: t for t in model.graph.initializer}
    if opset < 15:
        _split_shape_ranges(model.graph)
    for node in _all_nodes(model.graph):
        if node.domain != _PASS_DOMAIN:
            continue
        node.domain = ""
        since = _AXES_INPUT_SINCE.get(node.op_type)
        if since is not None and opset < since and len(node.input) > 1:
            _input_as_attribute(node, 1, "axes", constants)
            kept = [a for a in node.attribute if a.name != "noop_with_empty_axes"]
            del node.attribute[:]
            node.attribute.extend(kept)
        if node.op_type != "Split":
            continue
        if opset < 18:
            kept = [a for a in node.attribute if a.name != "num_outputs"]
            del node.attribute[:]
            node.attribute.extend(kept)
        if opset < 13 and len(node.input) > 1:
            _input_as_attribute(node, 1, "split", constants)
    used = {name for node in _all_nodes(model.graph) for name in node.input}
    used.update(o.name for o in model.graph.output)
    kept_constants = [t for t in model.graph.initializer if t.name in used]
    if len(kept_constants) != len(model.graph.initializer):  # inputs made attributes
        del model.graph.initializer[:]
        model.graph.initializer.extend(kept_constants)
    kept_imports = [o for o in model.opset_import if o.domain != _PASS_DOMAIN]
    del model.opset_import[:]
    model.opset_import.extend(kept_imports)


def _input_as_attribute(
    node: onnx.NodeProto, index: int, name: str, constants: dict[str, onnx.TensorProto]
) -> None:
    """Input `index` of `node` (the last one, an initializer) as the ints attribute `name`."""
    value = constants.get(node.input[index])
    if value is None:
        raise ValueError(f"{node.op_type} with a computed {name} below its opset")
    values = onnx.numpy_helper.to_array(value).tolist()
    node.attribute.append(onnx.helper.make_attribute(name, values))
    del node.input[index:]


def _split_shape_ranges(graph: onnx.GraphProto) -> None:
    """``Shape(x, start, end)`` (version 15) as ``Slice(Shape(x))`` for older opsets."""
    nodes = []
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                _split_shape_ranges(attribute.g)
        bounds = {a.name: a.i for a in node.attribute if a.name in ("start", "end")}
        if node.op_type != "Shape" or not bounds:
            nodes.append(node)
            continue
        whole = f"{node.output[0]}_whole"
        names = [f"{node.output[0]}_{k}" for k in ("starts", "ends", "axes")]
        end = bounds.get("end", onnx.checker.MAXIMUM_PROTOBUF)
        values = [bounds.get("start", 0), end, 0]
        nodes.append(onnx.helper.make_node("Shape", list(node.input), [whole], domain=node.domain))
        for name, value in zip(names, values):
            tensor = onnx.helper.make_tensor(name, onnx.TensorProto.INT64, [1], [value])
            nodes.append(onnx.helper.make_node("Constant", [], [name], value=tensor))
        nodes.append(onnx.helper.make_node("Slice", [whole, *names], list(node.output)))
    del graph.node[:]
    graph.node.extend(nodes)


def _all_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(attribute.g)
            for sub in attribute.graphs:
                yield from _all_nodes(sub)


def copy_model(model: onnx.ModelProto) -> onnx.ModelProto:
    copied = onnx.ModelProto()
    copied.CopyFrom(model)
    return copied


def _converted(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    """`model` converted to `opset` by onnx's version converter; when it cannot be, a warning
    and the model as it is (as torch.onnx does)."""
    try:
        converted = onnx.version_converter.convert_version(_pass_through(model), opset)
        _restore_passed(converted, opset)
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
        opset_version: the ``ai.onnx`` opset (default 20). Models are written for opsets 17
            to 23; for another, the opset-18 model is converted by onnx's version converter
            (kept at 18, with an OnnxExporterWarning, where it cannot be); operators that
            converter cannot take down but whose older forms say the same are rewritten
            by tocha.
        dynamo: kept for PyTorch's signature: both values take the same path; with False
            the model is saved to `f` and None is returned, as PyTorch's TorchScript exporter.
        external_data: save the weights to a separate file beside `f`.
        dynamic_shapes: the dynamic dimensions of the inputs, as for ``tocha.export.export``
            (``{"x": {0: Dim("batch")}}``).
        export_params: write the weights (otherwise they are graph inputs without values).
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
    native = opset if MIN_OPSET <= opset <= MAX_OPSET else CONVERT_FROM
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
            target_opset=opset,
        )
    if native != opset:
        model_proto = _converted(model_proto, opset)
    onnx_program = ONNXProgram(model_proto, program)
    if f is not None:
        # TorchScript's exporter (dynamo=False) writes one file; a file object holds one too.
        beside = external_data and dynamo and isinstance(f, (str, os.PathLike))
        onnx_program.save(
            f,
            include_initializers=export_params,
            # Without their values the weights are inputs (as TorchScript's exporter writes
            # them), so that the model can be run.
            keep_initializers_as_inputs=keep_initializers_as_inputs or not export_params,
            external_data=beside,
        )
    return onnx_program if dynamo else None
