"""``tocha._dynamo._trace_wrapped_higher_order_op``: the name libraries import from PyTorch's
module of that name, `TransformGetItemToIndex`."""

from __future__ import annotations

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex:
    """PyTorch's mode under which ``tensor[i]``, with ``i`` a 0-d tensor that ``vmap`` maps
    over, indexes per example. tocha has no such mode yet: entering it raises
    NotImplementedError (libraries enter it only to build masks with ``vmap``)."""

    def __enter__(self):
        raise NotImplementedError(
            "torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex is not in "
            "tocha yet"
        )

    def __exit__(self, *exc) -> bool:
        return False
