"""PyTorch's names for the backward nodes of ops whose node PyTorch names by the call: its op
is a composite there, and the node printed (``grad_fn=<...>``) is its last step's.

``x[0]`` is SelectBackward0 and ``x[1:]`` SliceBackward0 (tocha records one ``getitem``);
``F.linear`` of a matrix is AddmmBackward0 (MmBackward0 without a bias); a reduction over
dims is ``SumBackward1``; ``cross_entropy`` is NllLossBackward0. The node's class keeps the
op's name; `Node.name` (what printing and ``repr`` show) gives PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable

from tocha import Tensor

from ._graph import NODE_TYPES, TensorMeta, node_type

__all__ = ["NAMERS"]


def _shape(meta) -> tuple:
    return tuple(meta.shape if isinstance(meta, Tensor) else meta.raw_shape)


def _basic_indexing(node) -> str:
    """The view op PyTorch applies last for a basic-indexing key (ints, slices, None,
    Ellipsis): ``Select`` for an int, ``Slice`` for a slice that does not take the whole
    dim (or any slice alone), ``Unsqueeze`` for None; ``Alias`` when nothing changes."""
    shape, key = _shape(node.input_meta[0]), node.saved[1]
    if type(key) is slice:  # alone, even a whole-dim slice is a Slice
        return "Slice"
    key = key if type(key) is tuple else (key,)
    last, dim = "Alias", 0
    for item in key:
        if item is Ellipsis:
            dim += len(shape) - sum(k is not None and k is not Ellipsis for k in key)
        elif item is None:
            last = "Unsqueeze"
        elif isinstance(item, slice):
            if item.indices(shape[dim]) != (0, shape[dim], 1):
                last = "Slice"
            dim += 1
        else:
            last = "Select"
            dim += 1
    return last


def _linear(node) -> str:
    rank, biased = len(_shape(node.input_meta[0])), len(node.input_meta) > 2
    if rank == 2:
        return "Addmm" if biased else "Mm"
    if rank == 1 and not biased:
        return "Squeeze", 4
    return "View" if biased else "UnsafeView"


def _matmul(node):
    a, b = len(_shape(node.input_meta[0])), len(_shape(node.input_meta[1]))
    if a == 2 and b == 2:
        return "Mm"
    if a == 1 and b == 1:
        return "Dot"
    if a == 2 and b == 1:
        return "Mv"
    if a == 1:
        return "Squeeze", 4
    return "UnsafeView"


def _reduction(op: str) -> Callable:
    def name(node):
        return (op, 0) if node.saved[1] is None else (op, 1)

    return name


def _cross_entropy(node):
    target, label_smoothing = node.input_meta[1], node.saved[5]
    if len(_shape(target)) == len(_shape(node.input_meta[0])):  # class probabilities
        return "Div", 1
    return "NllLoss" if not label_smoothing else "Add"


def _sub(node):
    return ("Rsub", 1) if not isinstance(node.input_meta[0], (Tensor, TensorMeta)) else "Sub"


def _pow(node):
    return ("Pow", 1) if isinstance(node.input_meta[1], (Tensor, TensorMeta)) else "Pow"


def _named_as(step: str, number: int = 0) -> Callable:
    return lambda node: (step, number)


# op -> its node's name (a step name, or a step name and PyTorch's overload number)
NAMERS: dict[str, Callable] = {
    "getitem": _basic_indexing,
    "linear": _linear,
    "matmul": _matmul,
    "sum": _reduction("Sum"),
    "mean": _reduction("Mean"),
    "cross_entropy_loss": _cross_entropy,
    "sub": _sub,
    "pow": _pow,
    "clamp": _named_as("Clamp", 1),
    "max_dim": _named_as("Max"),
    "min_dim": _named_as("Min"),
    "to_dtype": _named_as("ToCopy"),
    "narrow": _named_as("Slice"),
    "native_dropout": _named_as("Mul"),
    "norm": _named_as("LinalgVectorNorm"),
}


def _named(op: str, namer: Callable) -> type:
    base = node_type(op)

    def name(self) -> str:
        step = namer(self)
        step, number = step if type(step) is tuple else (step, 0)
        return f"{step}Backward{number}"

    return type(
        base.__name__, (base,), {"__slots__": (), "__module__": base.__module__, "name": name}
    )


for _op, _namer in NAMERS.items():
    NODE_TYPES[_op] = _named(_op, _namer)
