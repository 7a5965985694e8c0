"""The ONNX graph under construction: value names, nodes, constants and initializers.

Emitters receive a `Builder` and the fx node they translate. A value of the fx graph maps to
an ONNX value name (a str), or, for a node that returns a tuple, to a tuple of them. Symbolic
sizes (``x.size(0)``, ``n * 2``) are int64 tensors of shape ``[1]``, so that they join shape
tensors with one Concat.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import onnx
import tocha
from onnx import helper, numpy_helper


def np_dtype(dtype: tocha.dtype) -> np.dtype:
    """The NumPy dtype of a tocha dtype."""
    return np.dtype(dtype.np)


def onnx_dtype(dtype: tocha.dtype) -> int:
    """The ``onnx.TensorProto`` element type of a tocha dtype."""
    return helper.np_dtype_to_tensor_dtype(np_dtype(dtype))


class Builder:
    """Collects the nodes and constants of one ONNX graph.

    Args:
        opset: the ``ai.onnx`` opset version the nodes are written for.
        target: the opset the model is converted to afterwards (`opset` when None): an
            emitter writes an operator newer than it (LayerNormalization below 17) as
            older ones.
    """

    def __init__(self, opset: int, target: int | None = None) -> None:
        self.opset = opset
        self.target = opset if target is None else target
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.values: dict[Any, Any] = {}
        self._used: set[str] = set()
        self._consts: dict[tuple, str] = {}

    def fresh(self, hint: str) -> str:
        """A value name not used yet, made from `hint`."""
        name, k = hint, 0
        while name in self._used:
            k += 1
            name = f"{hint}_{k}"
        self._used.add(name)
        return name

    def reserve(self, name: str) -> None:
        """Mark `name` as taken (graph inputs, outputs and initializers)."""
        self._used.add(name)

    def op(self, op_type: str, inputs: Sequence[str | None], outputs: int = 1, **attrs: Any):
        """Append one node; its output name, or a list of `outputs` names when more than one.
        A None input is an omitted optional input."""
        names = [self.fresh(f"{op_type.lower()}") for _ in range(outputs)]
        ins = ["" if i is None else i for i in inputs]
        while ins and ins[-1] == "":
            ins.pop()
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, ins, names, name=names[0], **attrs))
        return names[0] if outputs == 1 else names

    def reduce(self, op_type: str, x: str, axes: Sequence[int], keepdims: bool = True) -> str:
        """A Reduce* node over `axes` (an input since opset 18, ReduceSum's since 13; an
        attribute before)."""
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, [x, self.ints(list(axes))], keepdims=int(keepdims))
        return self.op(op_type, [x], axes=list(axes), keepdims=int(keepdims))

    def const(self, value: Any, dtype: Any = None) -> str:
        """A constant tensor (an initializer), shared between equal constants."""
        array = np.asarray(value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._consts:
            name = self.fresh("const")
            self.initializers.append(numpy_helper.from_array(array, name))
            self._consts[key] = name
        return self._consts[key]

    def ints(self, values: Sequence[Any]) -> str:
        """A 1-D int64 tensor from ints and symbolic sizes: fx nodes, the names of `[1]`
        tensors, and symbolic ints (int subclasses) whose ``node`` is a graph value."""
        values = [self.symbolic(v) for v in values]
        if all(isinstance(v, (int, np.integer)) for v in values):
            return self.const(np.array([int(v) for v in values], dtype=np.int64))
        parts = []
        for v in values:
            if isinstance(v, (int, np.integer)):
                parts.append(self.const(np.array([int(v)], dtype=np.int64)))
            elif isinstance(v, str):
                parts.append(v)
            else:
                parts.append(self.value(v))
        return self.op("Concat", parts, axis=0)

    def symbolic(self, v: Any) -> Any:
        """The graph node of a symbolic int (tocha.export's sizes carry theirs), else `v`."""
        if isinstance(v, int) and not is_static(v) and self.is_value(getattr(v, "node", None)):
            return v.node
        return v

    def value(self, arg: Any) -> Any:
        """The ONNX name (or tuple of names) of an fx graph value."""
        try:
            return self.values[arg]
        except (KeyError, TypeError):
            raise TypeError(f"not a value of the graph: {arg!r}") from None

    def is_value(self, arg: Any) -> bool:
        """Whether `arg` is a value of the graph (an fx node already translated)."""
        try:
            return arg in self.values
        except TypeError:
            return False

    def scalar(self, value: Any, like: tocha.dtype) -> str:
        """A 0-d constant of dtype `like`."""
        return self.const(np.array(value, dtype=np_dtype(like)))

    def operand(self, arg: Any, dtype: tocha.dtype) -> str:
        """`arg` (a graph value, a Python number or a tensor constant) as dtype `dtype`,
        with a Cast when the graph value's dtype differs."""
        if self.is_value(arg):
            have = meta_dtype(arg)
            name = self.value(arg)
            if have is not None and have != dtype:
                return self.op("Cast", [name], to=onnx_dtype(dtype))
            return name
        if isinstance(arg, tocha.Tensor):
            return self.const(arg.detach().numpy().astype(np_dtype(dtype)))
        return self.scalar(arg, dtype)


def meta_val(node: Any) -> Any:
    """The example value an fx node carries in ``meta['val']`` (None when it has none)."""
    meta = getattr(node, "meta", None)
    return None if meta is None else meta.get("val")


def meta_dtype(node: Any) -> tocha.dtype | None:
    """The dtype of an fx node's tensor value, None for a non-tensor."""
    val = meta_val(node)
    return getattr(val, "dtype", None) if val is not None and hasattr(val, "shape") else None


def meta_shape(node: Any) -> tuple:
    """The shape of an fx node's tensor value: ints, and for dynamic dimensions the
    symbolic sizes of ``meta['tensor_meta']`` (int subclasses named by an expression)."""
    meta = getattr(node, "meta", None) or {}
    tensor_meta = meta.get("tensor_meta")
    if hasattr(tensor_meta, "shape"):
        return tuple(tensor_meta.shape)
    val = meta_val(node)
    if val is None or not hasattr(val, "shape"):
        raise ValueError(f"node {getattr(node, 'name', node)!r} carries no tensor meta['val']")
    return tuple(val.shape)


def rank(node: Any) -> int:
    """The number of dimensions of an fx node's tensor value."""
    return len(meta_shape(node))


def is_static(size: Any) -> bool:
    """Whether a size from ``meta['val']`` is a concrete int (a symbolic size of a dynamic
    dimension is an int subclass that carries its expression)."""
    return type(size) is int or isinstance(size, np.integer)


def static_dim(node: Any, dim: int) -> int:
    """Dimension `dim` of an fx node's value, which must be a concrete int."""
    size = meta_shape(node)[dim]
    if not is_static(size):
        raise ValueError(
            f"dimension {dim} of {getattr(node, 'name', node)!r} must be static for ONNX export"
        )
    return int(size)
