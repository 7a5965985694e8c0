"""An fx graph (flattened, as tocha.export makes it) written as an ONNX model."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import onnx
import tocha
from onnx import helper, numpy_helper

from ._builder import Builder, is_static, meta_dtype, meta_shape, meta_val, onnx_dtype
from ._emit import lookup, out_of_place
from ._version import __version__
from .errors import OnnxExporterError, UnsupportedOperatorError

IR_VERSION = 10


NAMESPACES = ("tocha.nn.functional", "tocha.linalg", "tocha.fft", "tocha.special", "tocha")


def target_name(target: Any) -> str:
    """How an error names a graph target: a primitive by its registry name, a public function
    by the namespace that publishes it (``tocha.linalg.inv``), a Tensor method as
    ``tocha.Tensor.<name>``."""
    name = getattr(target, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(target, str):
        return target
    short = getattr(target, "__name__", None)
    for namespace in NAMESPACES:
        module = sys.modules.get(namespace)
        if short is not None and module is not None and vars(module).get(short) is target:
            return f"{namespace}.{short}"
    if short is not None and vars(tocha.Tensor).get(short) is target:
        return f"tocha.Tensor.{short}"
    module = getattr(target, "__module__", None) or ""
    qualname = getattr(target, "__qualname__", None) or short or repr(target)
    return f"{module}.{qualname}" if module and module != "builtins" else qualname


class Lifted:
    """Where each placeholder's value comes from: a state_dict key (initializers) or the user.

    Args:
        constants: placeholder name -> (state_dict or constant key, tensor).
        user_inputs: names of the placeholders the caller feeds, in order.
        outputs: names of the nodes the caller gets back (None: every output; buffer
            mutations of a training-mode program are not outputs of the ONNX graph).
    """

    def __init__(
        self,
        constants: Mapping[str, tuple[str, Any]],
        user_inputs: Sequence[str],
        outputs: Sequence[str] | None = None,
    ) -> None:
        self.constants = dict(constants)
        self.user_inputs = list(user_inputs)
        self.outputs = None if outputs is None else set(outputs)


def _tensor_type(
    node: Any, dims: Mapping[int, str] | None, names: dict[str, str]
) -> onnx.TypeProto:
    """The ONNX tensor type of a node's value: `dims` names dynamic axes; a symbolic size
    is named by `names` (from its expression) or by its expression. Symbolic sizes that
    `dims` names are added to `names`."""
    dims = dims or {}
    shape: list[int | str] = []
    for k, size in enumerate(meta_shape(node)):
        if k in dims:
            shape.append(dims[k])
            if not is_static(size):
                names.setdefault(str(size), dims[k])
        elif is_static(size):
            shape.append(int(size))
        else:
            shape.append(names.get(str(size), str(size)))
    return helper.make_tensor_type_proto(onnx_dtype(meta_dtype(node)), shape)


def _flat_outputs(value: Any) -> list:
    """The tensors a graph returns, nested tuples and lists flattened, Nones dropped."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _flat_outputs(item)]
    return [] if value is None else [value]


def _call(b: Builder, node: Any) -> Any:
    """Emit one call node. An in-place call is emitted as its out-of-place form, and the
    tensor it wrote reads as the result from then on."""
    target = node.target
    if node.op == "call_method":
        target = getattr(tocha.Tensor, node.target, node.target)
    emit = lookup(target)
    functional = None if emit is not None else out_of_place(target)
    if functional is not None:
        emit = lookup(functional)
    if emit is None:
        raise UnsupportedOperatorError(target_name(target), b.opset, None)
    try:
        result = emit(b, node, *node.args, **node.kwargs)
    except NotImplementedError as e:
        raise OnnxExporterError(
            f"Exporting '{target_name(target)}' to ONNX is not supported: {e}"
        ) from None
    except (TypeError, ValueError, KeyError, IndexError) as e:
        raise OnnxExporterError(
            f"Exporting node '{node.name}' ('{target_name(target)}') to ONNX failed: {e}"
        ) from e
    if functional is not None and node.args and b.is_value(node.args[0]):
        b.values[node.args[0]] = result
    return result


def _attribute(module: Any, path: str) -> Any:
    obj = module
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _array(value: Any) -> np.ndarray:
    if isinstance(value, tocha.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


class _Signature:
    """The graph's inputs (user inputs, then weights listed as inputs), initializers and
    outputs, as value infos."""

    def __init__(self, b: Builder, dynamic_dims: Mapping[str, Mapping[int, str]]) -> None:
        self.b = b
        self.dynamic_dims = dynamic_dims
        self.sym_names: dict[str, str] = {}
        self.inputs: list[onnx.ValueInfoProto] = []
        self.weights: list[onnx.ValueInfoProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []

    def constant(self, node: Any, key: str, value: Any, export: bool, as_input: bool) -> None:
        """A lifted parameter, buffer or constant: an initializer named `key`."""
        array = _array(value)
        self.b.values[node] = key
        if export:
            self.initializers.append(numpy_helper.from_array(array, key))
        if as_input or not export:
            dtype = helper.np_dtype_to_tensor_dtype(array.dtype)
            self.weights.append(helper.make_tensor_value_info(key, dtype, list(array.shape)))

    def user_input(self, node: Any, name: str) -> None:
        val = meta_val(node)
        if val is None or not hasattr(val, "shape"):
            raise OnnxExporterError(f"input '{node.name}' is not a tensor")
        self.b.values[node] = name
        kind = _tensor_type(node, self.dynamic_dims.get(name), self.sym_names)
        self.inputs.append(helper.make_value_info(name, kind))

    def output(self, node: Any, name: str) -> None:
        source = self.b.value(node) if self.b.is_value(node) else None
        if not isinstance(source, str):
            raise OnnxExporterError(f"output '{name}' is not a tensor the graph computes")
        self.b.nodes.append(helper.make_node("Identity", [source], [name], name=f"{name}_identity"))
        kind = _tensor_type(node, self.dynamic_dims.get(name), self.sym_names)
        self.outputs.append(helper.make_value_info(name, kind))


def _names(given: Sequence[str] | None, count: int, what: str) -> list[str]:
    names = list(given or [])
    if len(names) > count:
        raise ValueError(f"{what} has {len(names)} names but the model has {count} {what[:-6]}s")
    return names


def to_model(
    graph: Any,
    lifted: Lifted,
    *,
    root: Any = None,
    opset: int,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    dynamic_dims: Mapping[str, Mapping[int, str]] | None = None,
    export_params: bool = True,
    keep_initializers_as_inputs: bool = False,
    target_opset: int | None = None,
) -> onnx.ModelProto:
    """Write an fx graph as an ONNX model.

    Args:
        graph: a ``tocha.fx.Graph`` whose nodes are placeholder, get_attr, call_function,
            call_method or output, each with ``meta['val']``.
        lifted: which placeholders are the model's constants and which the user feeds.
        root: the module that ``get_attr`` nodes read from.
        opset: the ``ai.onnx`` opset version.
        input_names, output_names: names of the graph's inputs and outputs, in order
            (by default the names of the placeholders and of the nodes returned).
        dynamic_dims: ``{input or output name: {axis: dim name}}``.
        export_params: write the constants as initializers (otherwise they are inputs).
        keep_initializers_as_inputs: list the initializers as inputs too.
        target_opset: the opset the model will be converted to (`opset` when None); the
            operators newer than it are written as older ones where an emitter knows how.

    Returns:
        The ModelProto, which passed ``onnx.checker.check_model(full_check=True)``.
    """
    b = Builder(opset, target_opset)
    sig = _Signature(b, dict(dynamic_dims or {}))
    nodes = list(graph.nodes)
    users = _names(input_names, len(lifted.user_inputs), "input_names")
    for name in [*(key for key, _ in lifted.constants.values()), *users, *(output_names or [])]:
        b.reserve(name)
    users += [b.fresh(name) for name in lifted.user_inputs[len(users) :]]
    position = {name: k for k, name in enumerate(lifted.user_inputs)}
    for node in nodes:
        if node.op != "placeholder":
            continue
        if node.name in lifted.constants:
            if node.users:
                key, value = lifted.constants[node.name]
                sig.constant(node, key, value, export_params, keep_initializers_as_inputs)
        elif node.name in position:
            sig.user_input(node, users[position[node.name]])
        else:
            raise OnnxExporterError(f"placeholder '{node.name}' is neither an input nor lifted")
    outputs: list = []
    for node in nodes:
        if node.op == "get_attr":
            value = _attribute(root, node.target)
            sig.constant(
                node, b.fresh(node.target), value, export_params, keep_initializers_as_inputs
            )
        elif node.op in ("call_function", "call_method"):
            b.values[node] = _call(b, node)
        elif node.op == "call_module":
            raise UnsupportedOperatorError(f"call_module {node.target}", opset, None)
        elif node.op == "output":
            outputs = _flat_outputs(node.args[0])
            if lifted.outputs is not None:
                outputs = [out for out in outputs if getattr(out, "name", None) in lifted.outputs]
    names = _names(output_names, len(outputs), "output_names")
    for k, out in enumerate(outputs):
        sig.output(out, names[k] if k < len(names) else b.fresh(getattr(out, "name", "output")))
    onnx_graph = helper.make_graph(
        b.nodes,
        "main_graph",
        sig.inputs + sig.weights,
        sig.outputs,
        initializer=sig.initializers + b.initializers,
    )
    model = helper.make_model(
        onnx_graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="tocha",
        producer_version=__version__,
        ir_version=IR_VERSION,
    )
    try:
        onnx.checker.check_model(model, full_check=True)
    except onnx.checker.ValidationError as e:
        raise OnnxExporterError(f"the exported ONNX model is not valid: {e}") from e
    return model
