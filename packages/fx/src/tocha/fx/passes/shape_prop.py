"""`ShapeProp`: run a GraphModule on example inputs and record each node's tensor metadata
in ``node.meta['tensor_meta']``."""

from __future__ import annotations

from typing import Any, NamedTuple

import tocha

from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records about a tensor value: as ``torch.fx``'s."""

    shape: tocha.Size
    dtype: tocha.dtype
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: tocha.memory_format | None
    is_quantized: bool
    qparams: dict[str, Any]


def _memory_format(t: tocha.Tensor) -> tocha.memory_format | None:
    if t.is_contiguous():
        return tocha.contiguous_format
    if t.dim() == 4 and t.is_contiguous(memory_format=tocha.channels_last):
        return tocha.channels_last
    if t.dim() == 5 and t.is_contiguous(memory_format=tocha.channels_last_3d):
        return tocha.channels_last_3d
    return None


def _extract_tensor_metadata(result: tocha.Tensor) -> TensorMetadata:
    return TensorMetadata(
        result.shape,
        result.dtype,
        result.requires_grad,
        tuple(result.stride()),
        _memory_format(result),
        False,
        {},
    )


class ShapeProp(Interpreter):
    """Run `gm` node by node (``propagate(*args)``) and store, on each node that produced
    tensors, ``meta['tensor_meta']`` (a `TensorMetadata`, or the same structure of them as
    the value) and ``meta['type']`` (the value's type)."""

    def __init__(self, gm: Any, fake_mode: Any = None) -> None:
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        found = False

        def extract(obj: Any) -> Any:
            nonlocal found
            if isinstance(obj, tocha.Tensor):
                found = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the module on `args` (example inputs), annotating the nodes; returns its
        output."""
        return super().run(*args)
