"""Interception: while a `Tracer` records, and only then, tocha's public functions (or, at the
primitive level, every primitive's kernels) are replaced by wrappers that record.

Nothing is patched outside a recording, so untraced code runs exactly as before. At the public
level the wrappers replace the functions in the namespaces' dicts (``tocha``,
``tocha.nn.functional``, ``tocha.linalg``, ``tocha.fft``, ``tocha.special``), the Tensor
class's methods, operators and ``shape``, and the same functions where the traced modules'
code imported them by name. Kernels are wrapped in each op's kernel cache, as the profiler
does, so a primitive run outside any public function (an LSTM's ``rnn_layer``) is recorded
too. Everything is put back when the recording ends, also when the traced code raised.
"""

from __future__ import annotations

import contextlib
import inspect
import operator
import sys
import types
from collections.abc import Iterator
from typing import Any

import tocha
from tocha.fx._patching import torch_alias
from tocha.library import REGISTRY

from ._tracer import Tracer

__all__ = ["recording"]

_NAMESPACES = ("tocha", "tocha.nn.functional", "tocha.linalg", "tocha.fft", "tocha.special")

# Functions that are not ops: never recorded.
_NOT_OPS = frozenset(
    {
        "set_default_dtype",
        "get_default_dtype",
        "set_default_device",
        "get_default_device",
        "manual_seed",
        "seed",
        "initial_seed",
        "save",
        "load",
        "is_tensor",
        "is_storage",
        "is_grad_enabled",
        "is_inference_mode_enabled",
        "compile",
        "vmap",
        "set_printoptions",
        "use_deterministic_algorithms",
        "set_num_threads",
        "get_num_threads",
        "get_rng_state",
        "set_rng_state",
        "is_floating_point",
        "is_complex",
        "is_nonzero",
        "numel",
        "typename",
        "promote_types",
        "result_type",
        "can_cast",
        "broadcast_shapes",
    }
)

# Tensor methods left alone: object protocol, metadata and autograd plumbing.
_SKIP_METHODS = frozenset(
    {
        "__repr__",
        "__format__",
        "__hash__",
        "__reduce_ex__",
        "__array__",
        "__dlpack__",
        "__dlpack_device__",
        "__len__",
        "__iter__",
        "__contains__",
        "__reversed__",
        "__deepcopy__",
        "__setstate__",
        "__getstate__",
        "__array_wrap__",
        "__copy__",
        "register_hook",
        "backward",
        "data_ptr",
        "element_size",
        "is_contiguous",
        "stride",
        "storage_offset",
        "untyped_storage",
        "storage",
        "dim",
        "ndimension",
        "nelement",
        "get_device",
        "is_floating_point",
        "is_complex",
        "is_signed",
        "retain_grad",
        "register_post_accumulate_grad_hook",
        "size",
        "numel",
        "type",
        "is_set_to",
        "is_shared",
        "is_pinned",
        "share_memory_",
        "dim_order",
        "__torch_function__",
    }
)

# Reading a tensor's values into Python: control flow on data.
_DATA_DEPENDENT = frozenset(
    {"__bool__", "__int__", "__float__", "__complex__", "__index__", "item", "tolist", "numpy"}
)

# Operators recorded as tocha's function of the same meaning, the tensor first (the reflected
# forms listed are commutative: ``2 * x`` is ``mul(x, 2)``).
_OPERATORS: dict[str, str] = {
    "__add__": "add",
    "__radd__": "add",
    "__sub__": "sub",
    "__mul__": "mul",
    "__rmul__": "mul",
    "__truediv__": "div",
    "__floordiv__": "floor_divide",
    "__mod__": "remainder",
    "__pow__": "pow",
    "__matmul__": "matmul",
    "__and__": "bitwise_and",
    "__rand__": "bitwise_and",
    "__or__": "bitwise_or",
    "__ror__": "bitwise_or",
    "__xor__": "bitwise_xor",
    "__rxor__": "bitwise_xor",
    "__lshift__": "bitwise_left_shift",
    "__rshift__": "bitwise_right_shift",
    "__eq__": "eq",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "__neg__": "neg",
    "__abs__": "abs",
    "__invert__": "bitwise_not",
}
_INPLACE_OPERATORS = {
    "__iadd__": "add_",
    "__isub__": "sub_",
    "__imul__": "mul_",
    "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_",
    "__imod__": "remainder_",
    "__ipow__": "pow_",
    "__iand__": "bitwise_and_",
    "__ior__": "bitwise_or_",
    "__ixor__": "bitwise_xor_",
}

# Methods taking sizes as varargs (``x.reshape(2, 3)``) whose function takes one sequence.
_VARARGS = frozenset({"reshape", "permute", "tile", "flip"})


def public_functions() -> list[Any]:
    """Every public op function and Tensor method (what export records)."""
    methods = [
        v
        for k, v in vars(tocha.Tensor).items()
        if isinstance(v, types.FunctionType) and k not in _SKIP_METHODS
    ]
    return list({id(f): f for f in [*_public_functions().values(), *methods]}.values())


def _public_functions() -> dict[int, Any]:
    """Every public op function, by id."""
    found: dict[int, Any] = {}
    for name in _NAMESPACES:
        module = sys.modules.get(name)
        if module is None:
            continue
        for attr, value in vars(module).items():
            if (
                isinstance(value, types.FunctionType)
                and not attr.startswith("_")
                and attr not in _NOT_OPS
                and (value.__module__ or "").startswith("tocha")
            ):
                found.setdefault(id(value), value)
    return found


def _function_wrapper(tracer: Tracer, fn: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if tracer.passive():
            return fn(*args, **kwargs)
        return tracer.record_call(fn, fn, args, kwargs)

    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper


def _method_wrapper(tracer: Tracer, name: str, fn: Any) -> Any:
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if tracer.passive():
            return fn(self, *args, **kwargs)
        if name in _DATA_DEPENDENT and tracer.traced(self):
            return tracer.python_value(name, fn, self, args, kwargs)
        target = _method_target(name, fn)
        if name in _VARARGS and target is not fn and args and all(isinstance(a, int) for a in args):
            return tracer.record_call(
                target, lambda s, sizes, **k: fn(s, *sizes, **k), (self, tuple(args)), kwargs
            )
        return tracer.record_call(target, fn, (self, *args), kwargs)

    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper


_TARGETS: dict[tuple[str, int], Any] = {}


def _method_target(name: str, fn: Any) -> Any:
    """The target a call of Tensor method `name` is recorded as: tocha's function of the same
    meaning when there is one (taking the tensor first, the other arguments alike), else the
    unbound method."""
    key = (name, id(fn))
    target = _TARGETS.get(key)
    if target is None:
        target = _TARGETS[key] = _find_target(name, fn)
    return target


def _find_target(name: str, fn: Any) -> Any:
    if name == "__getitem__":
        return operator.getitem
    if name in _OPERATORS:
        public = _unwrapped(vars(tocha).get(_OPERATORS[name]))
        return public if isinstance(public, types.FunctionType) else fn
    if name in _INPLACE_OPERATORS:
        return _unwrapped(tocha.Tensor.__dict__.get(_INPLACE_OPERATORS[name], fn))
    public = _unwrapped(vars(tocha).get(name))
    if (
        isinstance(public, types.FunctionType)
        and not name.startswith("_")
        and (public is fn or _same_call(fn, public) or name in _VARARGS)
    ):
        return public
    return fn


def _unwrapped(value: Any) -> Any:
    """`value`, or the function it wraps while a recording patches tocha's namespace."""
    return getattr(value, "__wrapped__", value)


def _same_call(method: Any, function: Any) -> bool:
    """Whether ``function(x, ...)`` takes what ``x.method(...)`` takes (``Tensor.where``'s
    arguments differ from ``tocha.where``'s, for one)."""
    try:
        after_self = list(inspect.signature(method).parameters.values())[1:]
        after_input = list(inspect.signature(function).parameters.values())[1:]
    except (TypeError, ValueError):
        return False
    return [(p.name, p.kind) for p in after_self] == [(p.name, p.kind) for p in after_input]


def _size_method(tracer: Tracer, fn: Any) -> Any:
    def size(self: Any, dim: Any = None) -> Any:
        if tracer.passive() or not tracer.records_sizes or not tracer.traced(self):
            return fn(self, dim)
        if dim is None:
            return tocha.Size([tracer.size(self, d) for d in range(self.ndim)])
        fn(self, dim)
        return tracer.size(self, dim)

    return size


def _numel_method(tracer: Tracer, fn: Any) -> Any:
    def numel(self: Any) -> Any:
        if tracer.passive() or not tracer.records_sizes or not tracer.traced(self):
            return fn(self)
        total: Any = 1
        for d in range(self.ndim):
            total = total * tracer.size(self, d)
        return total

    return numel


def _shape_property(tracer: Tracer, prop: property) -> property:
    getter = prop.fget

    def shape(self: Any) -> Any:
        if tracer.passive() or not tracer.records_sizes or not tracer.traced(self):
            return getter(self)
        return tocha.Size([tracer.size(self, d) for d in range(self.ndim)])

    return property(shape)


def _setitem_wrapper(tracer: Tracer, fn: Any) -> Any:
    def setitem(self: Any, key: Any, value: Any) -> None:
        if tracer.passive():
            return fn(self, key, value)
        args = tracer.to_args((self, key, value))
        tracer.depth += 1
        try:
            fn(self, key, value)
            if tracer.dynamic:
                fn(*tracer.to_shadow((self, key, value)))
        finally:
            tracer.depth -= 1
        node = tracer.add(operator.setitem, args)
        node.meta["val"] = None
        return None

    return setitem


_ABSENT = object()


class _Patches:
    """Replacements made in dicts, undone in reverse order."""

    def __init__(self) -> None:
        self.undo: list[tuple[Any, str, Any]] = []

    def set_item(self, mapping: dict, key: str, value: Any) -> None:
        self.undo.append((mapping, key, mapping.get(key, _ABSENT)))
        mapping[key] = value

    def set_attr(self, owner: Any, key: str, value: Any) -> None:
        self.undo.append((owner, key, owner.__dict__[key]))
        setattr(owner, key, value)

    def restore(self) -> None:
        for owner, key, value in reversed(self.undo):
            if isinstance(owner, dict):
                if value is _ABSENT:
                    owner.pop(key, None)
                else:
                    owner[key] = value
            else:
                setattr(owner, key, value)
        self.undo.clear()


def _patch_public(
    tracer: Tracer,
    patches: _Patches,
    code_globals: list[dict],
    classes: list[type],
    only: frozenset | None = None,
) -> None:
    """Wrap the public functions (only those in `only`, at the primitive level)."""
    originals = _public_functions()
    if only is not None:
        originals = {k: fn for k, fn in originals.items() if fn in only}
    cls = tocha.Tensor
    for name, value in list(vars(cls).items()):
        if only is not None:
            if isinstance(value, types.FunctionType) and value in only:
                patches.set_attr(cls, name, _method_wrapper(tracer, name, value))
        elif name == "size":
            patches.set_attr(cls, name, _size_method(tracer, value))
        elif name == "numel":
            patches.set_attr(cls, name, _numel_method(tracer, value))
        elif name == "shape":
            patches.set_attr(cls, name, _shape_property(tracer, value))
        elif name == "__setitem__":
            patches.set_attr(cls, name, _setitem_wrapper(tracer, value))
        elif isinstance(value, types.FunctionType) and name not in _SKIP_METHODS:
            patches.set_attr(cls, name, _method_wrapper(tracer, name, value))
    wrappers = {key: _function_wrapper(tracer, fn) for key, fn in originals.items()}
    alias = torch_alias()
    for name in _NAMESPACES:
        module = sys.modules.get(name)
        if module is None:
            continue
        namespace = vars(module)
        for attr, value in list(namespace.items()):
            if id(value) in wrappers and not attr.startswith("_"):
                patches.set_item(namespace, attr, wrappers[id(value)])
                if alias is not None and module is tocha:
                    patches.set_item(vars(alias), attr, wrappers[id(value)])
    seen: set[int] = set()
    for mapping in code_globals:
        if id(mapping) in seen:
            continue
        seen.add(id(mapping))
        for attr, value in list(mapping.items()):
            if id(value) in wrappers:
                patches.set_item(mapping, attr, wrappers[id(value)])
    for owner in classes:
        for attr, value in list(vars(owner).items()):
            if isinstance(value, staticmethod) and id(value.__func__) in wrappers:
                patches.set_attr(owner, attr, staticmethod(wrappers[id(value.__func__)]))


# Conversions of a tensor to Python that `recording(reads=True)` records, printing included.
_READS = (
    "__repr__",
    "__str__",
    "__format__",
    "tolist",
    "numpy",
    *sorted(_DATA_DEPENDENT - {"numpy", "tolist"}),
)


def _patch_reads(tracer: Tracer, patches: _Patches) -> None:
    cls = tocha.Tensor
    for name in _READS:
        fn = cls.__dict__.get(name)
        if fn is not None:
            patches.set_attr(cls, name, _read_wrapper(tracer, name, fn))


def _patch_module_call(tracer: Tracer, patches: _Patches) -> None:
    """Module calls tell the tracer which module the nodes they record belong to."""
    module_class = tocha.nn.Module
    call = module_class.__call__

    def module_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return tracer.call_module(self, call.__get__(self), args, kwargs)

    patches.set_attr(module_class, "__call__", module_call)


def _read_wrapper(tracer: Tracer, name: str, fn: Any) -> Any:
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if tracer.passive() or tracer.kernel_depth or not tracer.traced(self):
            return fn(self, *args, **kwargs)
        return tracer.record_read(name, fn, self, args, kwargs)

    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper


class _Captured:
    """One op's kernel on one device, recorded while a tracer records."""

    __slots__ = ("kernel", "op", "tracer", "device")

    def __init__(self, kernel: Any, op: Any, tracer: Tracer, device: Any) -> None:
        self.kernel = kernel
        self.op = op
        self.tracer = tracer
        self.device = device

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tracer = self.tracer
        if tracer.kernel_depth or tracer.passive():
            return self.kernel(*args, **kwargs)
        return tracer.record_kernel(self.op, self.kernel, self.device, args, kwargs)


_CAPTURING_CLASSES: dict[type, type] = {}


def _capturing_class(base: type) -> type:
    cls = _CAPTURING_CLASSES.get(base)
    if cls is None:

        def __missing__(self: Any, dev: Any) -> Any:
            kernel = base.__missing__(self, dev)
            captured = self[dev] = _Captured(kernel, self.op, _ACTIVE_TRACER[-1], dev)
            return captured

        cls = type(base.__name__, (base,), {"__slots__": (), "__missing__": __missing__})
        _CAPTURING_CLASSES[base] = cls
    return cls


_ACTIVE_TRACER: list[Tracer] = []


def _patch_kernels(tracer: Tracer) -> Any:
    swapped = []
    for op in list(REGISTRY.values()):
        kernels = op.kernels
        base = type(kernels)
        if base in _CAPTURING_CLASSES.values():
            continue
        for dev, kernel in list(kernels.items()):
            kernels[dev] = _Captured(kernel, op, tracer, dev)
        kernels.__class__ = _capturing_class(base)
        swapped.append((kernels, base))

    def restore() -> None:
        for kernels, base in swapped:
            kernels.__class__ = base
            for dev, kernel in list(kernels.items()):
                if type(kernel) is _Captured:
                    kernels[dev] = kernel.kernel

    return restore


@contextlib.contextmanager
def recording(
    tracer: Tracer,
    code_globals: list[dict],
    classes: list[type],
    keep: frozenset = frozenset(),
    *,
    grad: bool = False,
    reads: bool = False,
) -> Iterator[Tracer]:
    """Record with `tracer` inside the block: public functions (unless the tracer records
    primitives: then only those in `keep`) and kernels are wrapped, then put back.
    `code_globals` and `classes`: the traced code's module globals and classes, whose
    references to public functions (by name, or as static methods) are wrapped too. The
    block runs without grad mode unless `grad` (autograd records, and a backward run inside
    is recorded too); with `reads`, Python values read from traced tensors are recorded
    (`Tracer.record_read`)."""
    patches = _Patches()
    _ACTIVE_TRACER.append(tracer)
    restore_kernels = None
    try:
        if not tracer.primitive:
            _patch_public(tracer, patches, code_globals, classes)
        elif keep:
            _patch_public(tracer, patches, code_globals, classes, keep)
        if reads:
            _patch_reads(tracer, patches)
        _patch_module_call(tracer, patches)
        restore_kernels = _patch_kernels(tracer)
        with contextlib.nullcontext() if grad else tocha.no_grad():
            yield tracer
    finally:
        if restore_kernels is not None:
            restore_kernels()
        patches.restore()
        _ACTIVE_TRACER.pop()
