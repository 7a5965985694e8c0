"""`Proxy`: the stand-in value a traced program computes with; each operation on it records
a node in the tracer's graph instead of computing."""

from __future__ import annotations

import dis
import inspect
import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import tocha

from .node import Node

if TYPE_CHECKING:
    from ._symbolic_trace import Tracer

__all__ = ["Attribute", "ParameterProxy", "Proxy", "TraceError"]


# A tensor's own fields: tocha's functions read them from their arguments, and a Proxy has
# none (the call then fails, and is handed to `Proxy.__torch_function__`).
_TENSOR_SLOTS = frozenset(vars(tocha.Tensor)["__slots__"])


class TraceError(ValueError):
    """A traced program used a symbolic value where a concrete one is required (control
    flow, iteration)."""


class _LenError(TraceError, RuntimeError):
    """``len`` of a Proxy: a RuntimeError, as torch.fx raises, and a TraceError."""


class Proxy:
    """Wraps `node`: operators, method calls and attribute reads on a Proxy add nodes to
    ``tracer``'s graph and return new Proxies. Control flow on a Proxy (``if``, ``bool``,
    iteration) raises `TraceError`."""

    def __init__(self, node: Node, tracer: Tracer | None = None) -> None:
        if tracer is None:
            from ._symbolic_trace import Tracer

            tracer = Tracer()
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if (k.startswith("__") and k.endswith("__")) or k in _TENSOR_SLOTS:
            raise AttributeError(k)
        return Attribute(self, k)

    @classmethod
    def __torch_function__(
        cls, orig_method: Any, types: tuple, args: tuple = (), kwargs: dict | None = None
    ) -> Proxy:
        """A tocha function called on Proxies (outside a symbolic trace too, as with
        ``GraphAppendingTracer``): a ``call_function`` node in their tracer's graph, or a
        ``call_method`` node for a Tensor method."""
        kwargs = kwargs or {}
        tracer = _tracer_of((args, kwargs))
        name = getattr(orig_method, "__name__", None)
        if (
            name is not None
            and getattr(tocha.Tensor, name, None) is orig_method
            and getattr(tocha, name, None) is not orig_method  # a function is also a method
        ):
            return tracer.create_proxy("call_method", name, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__ = d

    def __deepcopy__(self, memo: dict[int, Any]) -> Proxy:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator[Proxy]:
        count = _unpack_count(inspect.currentframe())
        if count is not None:
            return (self[i] for i in range(count))
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise _LenError(
            "'len' is not supported in symbolic tracing by default. If you want this call "
            "to be recorded, please call torch.fx.wrap('len') at module scope"
        )

    def keys(self) -> Any:
        return self.tracer.keys(self)

    def __hash__(self) -> int:
        return id(self)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})


def _tracer_of(value: Any) -> Any:
    """The tracer of the first Proxy in `value` (nested in tuples, lists and dicts)."""
    if isinstance(value, Proxy):
        return value.tracer
    items = value.values() if isinstance(value, dict) else value
    if isinstance(value, (tuple, list, dict)):
        for item in items:
            tracer = _tracer_of(item)
            if tracer is not None:
                return tracer
    return None


def _unpack_count(frame: Any) -> int | None:
    """When the code calling ``__iter__`` (whose frame is `frame`) is unpacking
    (``a, b = proxy``), the number of names unpacked into."""
    caller = frame.f_back if frame is not None else None
    if caller is None:
        return None
    instructions = list(dis.get_instructions(caller.f_code))
    for i, inst in enumerate(instructions):
        if inst.offset == caller.f_lasti:
            for candidate in instructions[i : i + 2]:
                if candidate.opname == "UNPACK_SEQUENCE":
                    return int(candidate.argval)
            return None
    return None


class Attribute(Proxy):
    """``proxy.name``: becomes a ``call_method`` node when called, or a ``getattr``
    ``call_function`` node when used as a value."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


class ParameterProxy(Proxy):
    """A get_attr Proxy for a parameter whose ``shape``, ``size()``, ``dim()``, ``ndim``,
    ``numel()`` and ``nelement()`` are the parameter's concrete values
    (``Tracer.param_shapes_constant``)."""

    def __init__(self, tracer: Tracer, node: Node, name: str, param: Any) -> None:
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self) -> Any:
        return self.param.shape

    def size(self, dim: int | None = None) -> Any:
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self) -> int:
        return self.param.dim()

    @property
    def ndim(self) -> int:
        return self.param.ndim

    def numel(self) -> int:
        return self.param.numel()

    def nelement(self) -> int:
        return self.param.nelement()


_BINARY_MAGIC = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "floordiv": operator.floordiv,
    "truediv": operator.truediv,
    "mod": operator.mod,
    "pow": operator.pow,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "matmul": operator.matmul,
}
_COMPARISONS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "gt": operator.gt,
    "le": operator.le,
    "ge": operator.ge,
}
_UNARY_MAGIC = {
    "neg": operator.neg,
    "pos": operator.pos,
    "invert": operator.invert,
    "abs": operator.abs,
}


def _install_magic_methods() -> None:
    def forward(fn: Any) -> Any:
        def method(self: Proxy, *rest: Any) -> Proxy:
            return self.tracer.create_proxy("call_function", fn, (self, *rest), {})

        return method

    def reflected(fn: Any) -> Any:
        def method(self: Proxy, other: Any) -> Proxy:
            return self.tracer.create_proxy("call_function", fn, (other, self), {})

        return method

    for name, fn in {**_BINARY_MAGIC, **_COMPARISONS, **_UNARY_MAGIC}.items():
        setattr(Proxy, f"__{name}__", forward(fn))
    for name, fn in _BINARY_MAGIC.items():
        setattr(Proxy, f"__r{name}__", reflected(fn))
    Proxy.__getitem__ = forward(operator.getitem)  # type: ignore[attr-defined]
    Proxy.__hash__ = lambda self: id(self)  # type: ignore[method-assign]


_install_magic_methods()


def __getattr__(name: str) -> Any:
    # GraphAppendingTracer subclasses Tracer, which imports this module: made on first use.
    if name == "GraphAppendingTracer":
        from ._symbolic_trace import GraphAppendingTracer

        return GraphAppendingTracer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
