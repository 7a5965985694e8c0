"""Primitive callables: ``tocha.export.ops.<name>`` runs the primitive `<name>` of
``tocha.library.REGISTRY`` on Tensors.

Graphs that hold calls reaching the dispatcher without a public function (an LSTM's
``rnn_layer``), and the graphs of `ExportedProgram.run_decompositions`, name these callables
as their targets. A primitive's positional arguments are those of its kernel, with Tensors
where the kernel takes arrays; ``ops.add(x, y)`` computes what the ``add`` kernel computes on
``x``'s and ``y``'s arrays. When the Tensors lead the arguments the call goes through
``tocha.library.call``, so autograd records it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tocha
from tocha.library import CPU, REGISTRY, call, kernel_context, wrap

__all__ = ["Primitive", "get"]


class Primitive:
    """A callable for one registered primitive; ``.name`` is its name in
    ``tocha.library.REGISTRY``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__name__ = name
        self.__qualname__ = name

    def __repr__(self) -> str:
        return f"tocha.export.ops.{self.name}"

    def __reduce__(self) -> Any:
        return (get, (self.name,))

    def __call__(self, *args: Any) -> Any:
        """Run the primitive: Tensors (also inside lists and tuples) are given to the kernel
        as their arrays and dtypes as NumPy's; returns a Tensor or a tuple of them."""
        op = REGISTRY[self.name]
        lead = 0
        while lead < len(args) and isinstance(args[lead], tocha.Tensor):
            lead += 1
        rest = args[lead:]
        if lead and not _holds_tensor(rest) and not _holds_dtype(rest):
            return call(op, args[:lead], *rest)
        device = _first_device(args)
        if device is None:
            device = CPU
        arrays = [_to_array(a) for a in args]
        result = kernel_context().run(op.kernels[device], *arrays)
        if type(result) is tuple:
            return tuple(wrap(np.asarray(r), device) for r in result)
        return wrap(np.asarray(result), device)


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, tocha.Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(_holds_tensor(v) for v in value)
    return False


def _holds_dtype(value: Any) -> bool:
    if isinstance(value, tocha.dtype):
        return True
    if isinstance(value, (tuple, list)):
        return any(_holds_dtype(v) for v in value)
    return False


def _first_device(value: Any) -> Any:
    if isinstance(value, tocha.Tensor):
        return value.device
    if isinstance(value, (tuple, list)):
        for v in value:
            found = _first_device(v)
            if found is not None:
                return found
    return None


def _to_array(value: Any) -> Any:
    if isinstance(value, tocha.Tensor):
        return value._data
    if isinstance(value, tocha.dtype):
        return value.np
    if isinstance(value, (tuple, list)):
        return type(value)(_to_array(v) for v in value)
    return value


_CACHE: dict[str, Primitive] = {}


def get(name: str) -> Primitive:
    """The callable of primitive `name`; AttributeError when no such primitive is
    registered."""
    prim = _CACHE.get(name)
    if prim is None:
        if name not in REGISTRY:
            import tocha.nn  # noqa: F401  (declares tocha-nn's primitives)
        if name not in REGISTRY:
            raise AttributeError(f"tocha.export.ops has no primitive {name!r}")
        prim = _CACHE[name] = Primitive(name)
    return prim


def __getattr__(name: str) -> Primitive:
    if name.startswith("__"):
        raise AttributeError(name)
    return get(name)
