"""The tracer: runs a program once on real example values while recording a flat graph.

Tensors are known by their arrays: ``values`` maps ``id(tensor._data)`` to the node that
computed it (an in-place op keeps the array, and the array takes the node of the op that
wrote it last). Calls are recorded by the wrappers `_intercept` installs, at nesting depth 0
only: what a recorded call runs inside is not recorded. At the public level those wrappers
are tocha's public functions; at the primitive level (`run_decompositions`) they are the
kernels of every primitive, and in-place kernel writes (``out=``) become the out-of-place
primitive whose result the written array takes (functionalisation).

With dynamic dimensions, every recorded call also runs on *shadow* values: the inputs with
each dynamic dimension one larger (or smaller). A dimension of a result whose shadow size
differs depends on the dynamic sizes; a size query on it returns a `SymInt`.

Export refuses Python values read from traced tensors (``bool``, ``item()``...:
GuardOnDataDependentSymNode). Within `specialising` (what ``tocha.jit.trace`` uses) they
are the example's values after a warning at the user's line, and the sizes the user's code
reads are recorded (``x.view(x.size(0), -1)`` follows the input's batch), as
``torch.jit.trace`` does.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import math
import operator
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

import tocha
from tocha.fx._patching import torch_alias
from tocha.fx.graph import Graph
from tocha.fx.node import Node
from tocha.fx.passes.shape_prop import TensorMetadata

from . import ops
from ._dims import ValueRanges
from ._errors import GuardOnDataDependentSymNode, UserError, with_footer
from ._symint import SizeName, SymInt

__all__ = [
    "Tracer",
    "module_type_name",
    "named_placeholder",
    "specialising",
    "state_name",
    "tensor_metadata",
]

_ndarray = np.ndarray
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_SIZE = tocha.Tensor.size

# The warning category under which tracers started now specialise Python values read from
# traced tensors (None: they raise GuardOnDataDependentSymNode, as export does).
_SPECIALISE: contextvars.ContextVar[type[Warning] | None] = contextvars.ContextVar(
    "specialise", default=None
)
# What each conversion makes of a tensor, as torch.jit.trace's warnings name it; a
# conversion missing here (``__index__``) specialises without a warning, as in PyTorch.
_CONVERTED_TO = {
    "__bool__": "a Python boolean",
    "__int__": "a Python integer",
    "__float__": "a Python float",
    "__complex__": "a Python complex",
    "item": "a Python number",
    "tolist": "a Python list",
    "numpy": "a NumPy array",
}


@contextlib.contextmanager
def specialising(category: type[Warning]) -> Iterator[None]:
    """Within the block, tracers specialise Python values read from traced tensors
    (``bool(x.sum() > 0)``, ``x.item()``...): each conversion warns `category` at the user's
    line and returns the example's value, which the trace keeps as a constant."""
    token = _SPECIALISE.set(category)
    try:
        yield
    finally:
        _SPECIALISE.reset(token)


class Tracer:
    """One recording; see the module docstring. `primitive`: record kernels instead of public
    functions."""

    def __init__(self, primitive: bool = False, *, specialise: type[Warning] | None = None) -> None:
        self.graph = Graph()
        self.primitive = primitive
        self.specialise = specialise or _SPECIALISE.get()
        self.values: dict[int, tuple[Node, Any]] = {}
        self.pending: dict[int, tuple[Node, int, Any]] = {}
        self.shadows: dict[int, Any] = {}
        self.symbols: list[Any] = []
        self.dynamic = False
        self.depth = 0
        self.kernel_depth = 0
        self.state_end: Node | None = None
        self.lifted: list[tuple[str, tocha.Tensor, Node]] = []
        self.named_constants: dict[int, str] = {}
        self.size_nodes: dict[tuple[Node, int], SymInt] = {}
        self.keep: list[Any] = []
        self.thread = threading.get_ident()
        self.module_paths: dict[int, str] = {}
        self.module_stack: dict[str, tuple[str, str]] = {}
        self.module_calls: dict[str, int] = {}

    def add(
        self, target: Any, args: tuple, kwargs: dict | None = None, name: str | None = None
    ) -> Node:
        """A ``call_function`` node made now, stamped with the module calls under way
        (``meta['nn_module_stack']``)."""
        node = self.graph.create_node("call_function", target, args, kwargs, name=name)
        if self.module_stack:
            node.meta["nn_module_stack"] = dict(self.module_stack)
        return node

    def call_module(self, module: Any, call: Any, args: tuple, kwargs: dict) -> Any:
        """Run ``call(*args, **kwargs)``, the call of `module`, with the nodes it records
        stamped with its qualified path (a module outside the exported one is not named)."""
        path = self.module_paths.get(id(module))
        if path is None or self.passive():
            return call(*args, **kwargs)
        key = "L__self__" + path
        count = self.module_calls.get(key, 0)
        self.module_calls[key] = count + 1
        if count:
            key = f"{key}@{count}"
        self.module_stack[key] = (path, module_type_name(type(module)))
        try:
            return call(*args, **kwargs)
        finally:
            self.module_stack.pop(key, None)

    def passive(self) -> bool:
        """Whether a call now is left unrecorded: inside a recorded call, or on another
        thread."""
        return bool(self.depth) or threading.get_ident() != self.thread

    # -- placeholders ----------------------------------------------------------------------

    def placeholder(self, name: str, value: tocha.Tensor, shadow: Any = None) -> Node:
        node = named_placeholder(self.graph, name)
        self.bind(value, node, shadow)
        return node

    def bind(self, value: tocha.Tensor, node: Node, shadow: Any = None) -> None:
        """`value`'s array is now computed by `node`."""
        arr = value._data
        self.values[id(arr)] = (node, arr)
        self.pending.pop(id(arr), None)
        if shadow is not None:
            self.shadows[id(arr)] = shadow
        node.meta["val"] = value
        node.meta["tensor_meta"] = self.tensor_meta(value, shadow)

    def tensor_meta(self, value: tocha.Tensor, shadow: Any) -> TensorMetadata:
        return tensor_metadata(value, self.sizes(value, shadow))

    def sizes(self, value: tocha.Tensor, shadow: Any) -> list:
        """`value`'s sizes, those depending on a dynamic dimension as names (``s0``)."""
        shape = list(value._data.shape)
        if shadow is None or not isinstance(shadow, tocha.Tensor):
            return shape
        return [
            v if s == v else SizeName(v, self.expression(v, s))
            for v, s in zip(shape, shadow._data.shape)
        ]

    def expression(self, value: int, shadow: int) -> str:
        """The best name for a size that is `value` in the example and `shadow` in the second
        run: a symbol, a multiple of one, or one plus a constant."""
        for dim in self.symbols:
            if (dim.example, dim.shadow) == (value, shadow):
                return str(dim.symbol)
        for dim in self.symbols:
            step = dim.shadow - dim.example
            if step and (shadow - value) % step == 0:
                scale = (shadow - value) // step
                offset = value - scale * dim.example
                if scale > 0 and offset == 0:
                    return f"{scale}*{dim.symbol}"
                if scale == 1:
                    return f"{dim.symbol} + {offset}" if offset > 0 else f"{dim.symbol} - {-offset}"
        return f"u{value}"

    # -- reading values --------------------------------------------------------------------

    def node_of(self, value: tocha.Tensor) -> Node:
        """The node computing `value`; a tensor from outside the trace becomes a lifted
        constant input."""
        arr = value._data
        entry = self.values.get(id(arr))
        if entry is not None and entry[1] is arr:
            return entry[0]
        pending = self.pending.pop(id(arr), None)
        if pending is not None and pending[2] is arr:
            parent, index, _ = pending
            node = self.graph.call_function(operator.getitem, (parent, index))
            if "nn_module_stack" in parent.meta:
                node.meta["nn_module_stack"] = dict(parent.meta["nn_module_stack"])
            shadow = self.shadows.get(id(arr))
            self.bind(value, node, shadow)
            return node
        return self.lift(value)

    def lift(self, value: tocha.Tensor) -> Node:
        name = self.named_constants.get(id(value))
        target = name if name is not None else f"lifted_tensor_{len(self.lifted)}"
        where = (
            self.graph.inserting_before(None)
            if self.state_end is None
            else self.graph.inserting_after(self.state_end)
        )
        with where:
            node = self.graph.placeholder(state_name("c", target))
        self.state_end = node
        self.lifted.append((target, value, node))
        self.keep.append(value)
        self.bind(value, node, value if self.dynamic else None)
        return node

    def traced(self, value: Any) -> bool:
        if not isinstance(value, tocha.Tensor):
            return False
        arr = value._data
        return id(arr) in self.values or id(arr) in self.pending

    def to_args(self, value: Any) -> Any:
        """`value` with Tensors and SymInts replaced by their nodes."""
        if isinstance(value, tocha.Tensor):
            return self.node_of(value)
        if isinstance(value, SymInt):
            return value.node
        if isinstance(value, tuple):
            mapped = tuple(self.to_args(v) for v in value)
            return type(value)(*mapped) if hasattr(value, "_fields") else mapped
        if isinstance(value, list):
            return [self.to_args(v) for v in value]
        if isinstance(value, dict):
            return {k: self.to_args(v) for k, v in value.items()}
        if isinstance(value, slice):
            return slice(
                self.to_args(value.start), self.to_args(value.stop), self.to_args(value.step)
            )
        return value

    def to_shadow(self, value: Any) -> Any:
        """`value` as the shadow run sees it."""
        if isinstance(value, tocha.Tensor):
            self.node_of(value)
            return self.shadows.get(id(value._data), value)
        if isinstance(value, SymInt):
            return value.shadow
        if isinstance(value, tuple):
            mapped = tuple(self.to_shadow(v) for v in value)
            return type(value)(*mapped) if hasattr(value, "_fields") else mapped
        if isinstance(value, list):
            return [self.to_shadow(v) for v in value]
        if isinstance(value, dict):
            return {k: self.to_shadow(v) for k, v in value.items()}
        if isinstance(value, slice):
            return slice(
                self.to_shadow(value.start), self.to_shadow(value.stop), self.to_shadow(value.step)
            )
        return value

    # -- recording public calls ------------------------------------------------------------

    def record_call(self, target: Any, fn: Any, args: tuple, kwargs: dict) -> Any:
        """Run ``fn(*args, **kwargs)`` and record it as a call of `target` when it gives a
        Tensor."""
        self.depth += 1
        try:
            out = fn(*_plain(args), **_plain(kwargs))
        finally:
            self.depth -= 1
        if not _holds_tensor(out):
            return out
        node_args = self.to_args(args)
        node_kwargs = self.to_args(kwargs)
        shadow = None
        if self.dynamic:
            shadow_args = self.to_shadow(args)
            shadow_kwargs = self.to_shadow(kwargs)
            self.depth += 1
            try:
                shadow = fn(*shadow_args, **shadow_kwargs)
            except Exception as exc:
                raise self.specialised(target, exc) from exc
            finally:
                self.depth -= 1
        node = self.add(target, node_args, node_kwargs)
        self.set_result(node, out, shadow)
        return out

    def specialised(self, target: Any, exc: Exception) -> UserError:
        names = [d.name or str(d.symbol) for d in self.symbols]
        label = ", ".join(names)
        lines = [
            f'Constraints violated ({label})! For more information, run with TORCH_LOGS="+dynamic".'
        ]
        for dim in self.symbols:
            lines.append(
                f"  - You marked {dim.name or dim.symbol} as dynamic but your code specialized "
                f"it to be a constant ({dim.example}). If you're using mark_dynamic, either "
                "remove it or use maybe_mark_dynamic. If you're using Dim.DYNAMIC, replace it "
                "with either Dim.STATIC or Dim.AUTO."
            )
        lines.append("Suggested fixes:")
        lines.extend(f"  {d.name or d.symbol} = {d.example}" for d in self.symbols)
        lines.append(f"(the call of {_label(target)} failed at another size: {exc})")
        return UserError(with_footer("\n".join(lines)))

    def set_result(self, node: Node, out: Any, shadow: Any) -> None:
        if isinstance(out, tocha.Tensor):
            self.keep.append(out)
            self.bind(out, node, shadow if isinstance(shadow, tocha.Tensor) else None)
            return
        node.meta["val"] = out
        if isinstance(out, (tuple, list)):
            metas = []
            for i, item in enumerate(out):
                if isinstance(item, tocha.Tensor):
                    arr = item._data
                    self.keep.append(item)
                    self.values.pop(id(arr), None)
                    self.pending[id(arr)] = (node, i, arr)
                    s = shadow[i] if isinstance(shadow, (tuple, list)) else None
                    if isinstance(s, tocha.Tensor):
                        self.shadows[id(arr)] = s
                    metas.append(self.tensor_meta(item, s))
                else:
                    metas.append(None)
            node.meta["tensor_meta"] = tuple(metas)

    # -- sizes -----------------------------------------------------------------------------

    @property
    def records_sizes(self) -> bool:
        """Whether size queries on traced tensors may give `SymInt`s: with dynamic
        dimensions, and when specialising (as torch.jit.trace records ``aten::size``, so that
        ``x.view(x.size(0), -1)`` follows the input's batch size)."""
        return self.dynamic or self.specialise is not None

    def size(self, value: tocha.Tensor, dim: int) -> int:
        """Size `dim` of `value`: a SymInt when it depends on a dynamic dimension, or when
        specialising and the user's code asks (a SymInt whose other size is its own:
        recorded, never guarded; tocha's own modules, which may use it as a plain count, get
        the number)."""
        size = value._data.shape[dim]
        shadow = self.shadows.get(id(value._data)) if self.traced(value) else None
        other = size if shadow is None else shadow._data.shape[dim]
        if other == size and (
            self.specialise is None or not self.traced(value) or not _asked_by_user()
        ):
            return size
        node = self.node_of(value)
        dim %= value.ndim
        known = self.size_nodes.get((node, dim))
        if known is None:
            size_node = self.add(_SIZE, (node, dim), name="sym_size_int")
            if other == size:
                known = _RecordedSize(size, size, size_node, self, str(size), frozenset())
            else:
                symbols = frozenset(
                    d for d in self.symbols if (d.example, d.shadow) == (size, other)
                ) or frozenset(d for d in self.symbols if d.shadow != d.example)
                expr = self.expression(size, other)
                known = SymInt(size, other, size_node, self, expr, symbols)
            size_node.meta["val"] = SizeName(size, known.expr)
            self.size_nodes[(node, dim)] = known
        return known

    def guard(self, size: SymInt, op: str, other: Any, result: bool) -> None:
        """Python branched on ``size <op> other`` (answering `result` for the example, the
        other answer at the other size). An inequality on one dynamic size narrows its range
        (a `Dim`'s declared range must already be that narrow, else PyTorch's UserError);
        ``==`` holding specialises the size: a ``Dim.AUTO`` size becomes static, a size the
        user marked dynamic raises PyTorch's UserError."""
        if op in ("==", "!=") and result == (op == "!="):
            return
        dims = list(size.symbols)
        direct = len(dims) == 1 and size.expr == str(dims[0].symbol)
        if op not in ("==", "!=") and direct and not isinstance(other, SymInt):
            self.narrow(dims[0], op, other, result)
            return
        strict = [d for d in dims if d.strict]
        if strict:
            lines = [_violated(strict)]
            for dim in strict:
                lines.append(
                    f"  - You marked {_dim_name(dim)} as dynamic but your code specialized it "
                    f"to be a constant ({dim.example}). If you're using mark_dynamic, either "
                    "remove it or use maybe_mark_dynamic. If you're using Dim.DYNAMIC, replace "
                    "it with either Dim.STATIC or Dim.AUTO."
                )
            lines.append("Suggested fixes:")
            lines.extend(f"  {_dim_name(d)} = {d.example}" for d in strict)
            raise UserError(with_footer("\n".join(lines)))
        for dim in dims:
            dim.specialized = True

    def generalisation_failed(self, dims: list) -> None:
        """The graph does not compute what the program computes at the other sizes (Python
        code used a dynamic size as a plain number: ``range(n)``, ``[b] * n``): the sizes
        become static, so that ``module()`` refuses other sizes rather than computing wrong
        numbers, with a warning naming them (the graph's metadata keeps their names)."""
        names = ", ".join(_dim_name(d) for d in dims)
        warnings.warn(
            f"export: the traced code used the dynamic size(s) {names} as plain numbers, so "
            "the exported program holds only for the example's sizes "
            f"({', '.join(str(d.example) for d in dims)}); they are now static and module() "
            "refuses other sizes.",
            UserWarning,
            stacklevel=4,
        )
        for dim in dims:
            dim.specialized = True

    def narrow(self, dim: Any, op: str, bound: float, result: bool) -> None:
        """Narrow `dim`'s range to the sizes for which ``size <op> bound`` is `result`."""
        holds = {
            ">": (bound + 1, None),
            ">=": (bound, None),
            "<": (None, bound - 1),
            "<=": (None, bound),
        }
        fails = {
            ">": (None, bound),
            ">=": (None, bound - 1),
            "<": (bound, None),
            "<=": (bound + 1, None),
        }
        lower, upper = (holds if result else fails)[op]
        lower = dim.range.lower if lower is None else max(dim.range.lower, math.ceil(lower))
        upper = dim.range.upper if upper is None else math.floor(upper)
        if isinstance(dim.range.upper, int):
            upper = min(upper, dim.range.upper)
        narrowed = ValueRanges(lower, upper)
        if narrowed == dim.range:
            return
        if dim.strict:
            low = max(2, narrowed.lower)
            bounds = [f"min={low}"] if low > 2 else []
            if isinstance(narrowed.upper, int):
                bounds.append(f"max={narrowed.upper}")
            fix = ", ".join([repr(_dim_name(dim)), *bounds])
            raise UserError(
                with_footer(
                    f"{_violated([dim])}\n  - Not all values of {_dim_name(dim)} = "
                    f"{dim.source} in the specified range satisfy the generated guard {low} "
                    f"<= {dim.source} and {dim.source} <= {narrowed.upper!r}\nSuggested "
                    f"fixes:\n  {_dim_name(dim)} = Dim({fix})"
                )
            )
        dim.range = narrowed

    def sym_node(self, fn: Any, args: tuple, value: int) -> Node:
        return self.add(fn, self.to_args(args))

    # -- data-dependent control flow -------------------------------------------------------

    def python_value(
        self, name: str, fn: Any, value: tocha.Tensor, args: tuple, kwargs: dict
    ) -> Any:
        """``value.<name>(*args, **kwargs)``, a conversion of a traced tensor to a Python value
        (``__bool__``, ``item``...): GuardOnDataDependentSymNode, or when specialising, the
        example's value (the trace keeps it constant), after a warning at the user's line
        when the user's code converts."""
        if self.specialise is None:
            raise self.data_dependent(f"{name}()")
        if _asked_by_user():  # tocha's own code converts silently, as PyTorch's library
            self.warn_conversion(name)
        self.depth += 1
        try:
            return fn(value, *args, **kwargs)
        finally:
            self.depth -= 1

    def warn_conversion(self, name: str) -> None:
        """Warn, at the innermost user frame, that conversion `name` (``__bool__``...) of a
        traced value is kept as a constant; ``__index__`` is silent, as in PyTorch."""
        what = _CONVERTED_TO.get(name)
        if what is None:
            return
        message = (
            f"Converting a tensor to {what} might cause the trace to be incorrect. We can't "
            "record the data flow of Python values, so this value will be treated as a "
            "constant in the future. This means that the trace might not generalize to other "
            "inputs!"
        )
        frame = _user_frame()
        if frame is None:
            warnings.warn(message, self.specialise, stacklevel=3)
            return
        warnings.warn_explicit(
            message,
            self.specialise,
            frame.f_code.co_filename,
            frame.f_lineno,
            frame.f_globals.get("__name__"),
            frame.f_globals.setdefault("__warningregistry__", {}),
            frame.f_globals,
        )

    def data_dependent(self, what: str) -> GuardOnDataDependentSymNode:
        frame = _user_frame()
        where = ""
        if frame is not None:
            info = inspect.getframeinfo(frame)
            code = info.code_context[0].strip() if info.code_context else ""
            where = (
                f'\n\nThe following call raised this error:\n  File "{info.filename}", '
                f"line {info.lineno}, in {info.function}\n    {code}"
            )
        return GuardOnDataDependentSymNode(
            with_footer(
                f"Could not guard on data-dependent expression {what} of a traced tensor: "
                "the program's control flow depends on the values of a tensor, which an "
                "exported graph cannot capture. Use tensor operations (torch.where, "
                "torch.cond) instead of Python control flow on tensor values." + where
            )
        )

    def record_read(
        self, name: str, fn: Any, value: tocha.Tensor, args: tuple, kwargs: dict
    ) -> Any:
        """``value.<name>(*args, **kwargs)``, a Python value read from a traced tensor at the
        primitive level (``make_fx``): it is computed, and recorded as a `python_value` node
        holding the value the trace saw, so that running the graph on other values checks
        that the read still gives it."""
        from tocha.fx.experimental.proxy_tensor import python_value

        self.depth += 1
        try:
            out = fn(value, *args, **kwargs)
        finally:
            self.depth -= 1
        node = self.add(python_value, (self.node_of(value), name, *args, out))
        node.meta["val"] = out
        return out

    # -- recording primitives --------------------------------------------------------------

    def record_kernel(self, op: Any, kernel: Any, device: Any, args: tuple, kwargs: dict) -> Any:
        """Run a primitive's kernel and record it as a call of ``ops.<name>``; a write into
        ``out=`` is recorded as the out-of-place call, whose node the written array takes."""
        rest = {k: v for k, v in kwargs.items() if k != "out"}
        out_array = kwargs.get("out")
        node_args = self.array_args(args, device)
        shadow = None
        self.kernel_depth += 1
        try:
            if self.dynamic:
                try:
                    shadow = kernel(*self.shadow_arrays(args), **rest)
                except Exception as exc:
                    raise self.specialised(ops.get(op.name), exc) from exc
            raw = kernel(*_plain(args), **kwargs)
        finally:
            self.kernel_depth -= 1
        node = self.add(ops.get(op.name), node_args, rest)
        result = out_array if out_array is not None else raw
        wrap = tocha.library.wrap
        if type(result) is tuple:
            result = tuple(_as_ndarray(r) for r in result)
            shadows = (
                None if shadow is None else tuple(wrap(_as_ndarray(s), device) for s in shadow)
            )
            self.set_result(node, tuple(wrap(r, device) for r in result), shadows)
            return raw if out_array is not None else result
        if _is_array(result) or isinstance(result, np.generic):
            result = _as_ndarray(result)
            value = wrap(result, device)
            self.keep.append(value)
            self.bind(value, node, None if shadow is None else wrap(_as_ndarray(shadow), device))
        return raw if out_array is not None else result

    def array_args(self, value: Any, device: Any) -> Any:
        """A kernel's arguments with arrays replaced by their nodes (an unknown array becomes a
        lifted constant), NumPy scalars by Python numbers and NumPy dtypes by tocha's."""
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, SymInt):
            return value.node
        if _is_array(value):
            entry = self.values.get(id(value))
            if entry is not None and entry[1] is value:
                return entry[0]
            return self.node_of(tocha.library.wrap(value, device))
        if isinstance(value, np.dtype):
            return tocha.library.FROM_NP[value]
        if isinstance(value, tuple):
            return tuple(self.array_args(v, device) for v in value)
        if isinstance(value, list):
            return [self.array_args(v, device) for v in value]
        return value

    def shadow_arrays(self, value: Any) -> Any:
        if isinstance(value, SymInt):
            return value.shadow
        if _is_array(value):
            shadow = self.shadows.get(id(value))
            return value if shadow is None else shadow._data
        if isinstance(value, tuple):
            return tuple(self.shadow_arrays(v) for v in value)
        if isinstance(value, list):
            return [self.shadow_arrays(v) for v in value]
        return value


class _RecordedSize(SymInt):
    """A traced tensor's size read while specialising, recorded as torch.jit.trace records
    ``aten::size``. In PyTorch it is a tensor, so the user's code comparing it (``if
    x.size(0) > 2``) or calling ``int``/``float`` on it converts a traced value to a Python
    value: that warns, and the value is kept."""

    def _binary(self, fn: Any, other: Any, reflected: bool, symbol: str) -> Any:
        out = super()._binary(fn, other, reflected, symbol)
        if not isinstance(out, SymInt):
            return out
        return _RecordedSize(int(out), out.shadow, out.node, out.tracer, out.expr, out.symbols)

    def __int__(self) -> int:
        if not _in_tocha(sys._getframe(1)):
            self.tracer.warn_conversion("__int__")
        return int.__int__(self)

    def __float__(self) -> float:
        if not _in_tocha(sys._getframe(1)):
            self.tracer.warn_conversion("__float__")
        return int.__float__(self)

    def _compare(self, fn: Any, other: Any, symbol: str) -> Any:
        result = super()._compare(fn, other, symbol)
        # the caller of the operator (``__gt__``...) that called this
        if result is not NotImplemented and not _in_tocha(sys._getframe(2)):
            self.tracer.warn_conversion("__bool__")
        return result


def tensor_metadata(value: tocha.Tensor, sizes: list) -> TensorMetadata:
    """``node.meta['tensor_meta']`` of `value`, its dynamic sizes named (`SizeName`)."""
    contiguous = value.is_contiguous()
    return TensorMetadata(
        tocha.Size(sizes),
        value.dtype,
        value.requires_grad,
        tuple(value.stride()),
        tocha.contiguous_format if contiguous else None,
        False,
        {},
    )


def state_name(prefix: str, target: str) -> str:
    """The placeholder name of the state at `target`, as PyTorch names it: ``p_fc_weight``
    for parameter ``fc.weight`` (``b_`` buffers, ``c_`` constants), a leading ``self_``
    dropped (``self_attn.in_proj_weight`` is ``p_attn_in_proj_weight``)."""
    return f"{prefix}_{target.replace('.', '_').removeprefix('self_')}"


def module_type_name(cls: type) -> str:
    """`cls` by module and qualified name, as ``nn_module_stack`` names module types; under
    the torch alias (``python -m tocha.run``) tocha's own classes are named from ``torch``."""
    module = cls.__module__
    if module.startswith("tocha.") and torch_alias() is not None:
        module = "torch" + module[len("tocha") :]
    return f"{module}.{cls.__qualname__}"


def named_placeholder(graph: Graph, name: str) -> Node:
    """A placeholder called `name` even where that shadows a builtin (``input``), as in
    PyTorch's exported graphs."""
    node = graph.placeholder(name)
    if node.name != name and not any(n.name == name for n in graph.nodes):
        node.name = name
    return node


def _is_array(value: Any) -> bool:
    """Whether `value` is a backend array (NumPy's, CuPy's, or another array API
    namespace's)."""
    return type(value) is _ndarray or (
        (hasattr(value, "__array_namespace__") or hasattr(value, "__cuda_array_interface__"))
        and not isinstance(value, np.generic)
    )


def _as_ndarray(value: Any) -> Any:
    """A kernel's result as an array: NumPy gives scalars for 0-dim results."""
    return value if _is_array(value) else np.asarray(value)


def _plain(value: Any) -> Any:
    """`value` with SymInts as plain ints: tocha's functions see the example's sizes."""
    if isinstance(value, SymInt):
        return int(value)
    if type(value) in (tuple, list, tocha.Size):
        return type(value)(_plain(v) for v in value)
    if type(value) is dict:
        return {k: _plain(v) for k, v in value.items()}
    return value


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, tocha.Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(isinstance(v, tocha.Tensor) for v in value)
    return False


def _dim_name(dim: Any) -> str:
    return dim.name or str(dim.symbol)


def _violated(dims: list) -> str:
    names = ", ".join(_dim_name(d) for d in dims)
    return f'Constraints violated ({names})! For more information, run with TORCH_LOGS="+dynamic".'


def _label(target: Any) -> str:
    return getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))


def _asked_by_user() -> bool:
    """Whether the code that reached the tracer's machinery (this folder) is the user's, not
    tocha's."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_HERE):
        frame = frame.f_back
    return frame is not None and not _in_tocha(frame)


def _in_tocha(frame: Any) -> bool:
    return frame.f_code.co_filename.startswith(tuple(p + "/" for p in tocha.__path__))


def _user_frame() -> Any:
    """The innermost frame outside tocha's packages."""
    frame = sys._getframe(1)
    while frame is not None and _in_tocha(frame):
        frame = frame.f_back
    return frame
