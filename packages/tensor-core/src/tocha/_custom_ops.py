"""Python custom operators, as ``torch.library.custom_op``: a function registered under a
name ``"namespace::name"`` with a schema inferred from its annotations, callable as itself
and as ``tocha.ops.namespace.name``.

A call checks its arguments against the schema and runs the function (or the kernel
`register_kernel` gave the device) without recording autograd history; with a registered
backward (`register_autograd`), calls on tensors that require grad record one autograd
node whose gradient is that backward's, and without one that node's backward raises.
`register_fake` gives the op's shape function (run for meta tensors, and by `opcheck`),
`register_vmap` its rule under ``vmap``, `register_autocast` the dtype autocast runs it in.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ._fake_impl import FakeImplCtx, get_ctx, run_fake
from ._infer_schema import infer_schema
from ._op_autograd import make_function, needs_grad, register_library_autograd
from ._op_registry import entry, no_kernel, ops
from ._op_schema import parse_schema
from ._op_tags import Tag, tags_of

__all__ = [
    "CustomOpDef",
    "FakeImplCtx",
    "custom_op",
    "get_ctx",
    "ops",
    "register_autocast",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "register_vmap",
    "split_qualname",
]

_DEVICE_TYPES = (
    "cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta "
    "hpu mtia privateuseone"
).split()


def split_qualname(qualname: str) -> tuple[str, str]:
    """``"ns::name"`` as ``(ns, name)``; PyTorch's ValueError for a name without one."""
    parts = qualname.split("::")
    if len(parts) != 2:
        raise ValueError(f"not enough values to unpack (expected 2, got {len(parts)})")
    return parts[0], parts[1]


def check_device_type(device_type: str) -> str:
    """`device_type` if it names a device type, else PyTorch's RuntimeError."""
    if device_type.split(":")[0] not in _DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device "
            f"string: {device_type}"
        )
    return device_type.split(":")[0]


def _device_types(device_types) -> list[str | None]:
    if device_types is None:
        return [None]
    if isinstance(device_types, str):
        device_types = [device_types]
    return [check_device_type(d) for d in device_types]


class CustomOpDef:
    """A custom operator made by `custom_op`: call it as the op; it registers the op's
    kernels, fake, backward, vmap rule and autocast dtype."""

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable, device_types):
        parsed = parse_schema(name + schema)
        if any(a.kwarg_only and a.type.base == "Tensor" for a in parsed.arguments):
            raise NotImplementedError(
                "custom_op with kwarg-only Tensor args. Please make your tensors not "
                f"kwarg-only. Got: {name}{schema}"
            )
        self._namespace = namespace
        self._name = name
        self._init_fn = fn
        self._op = op = entry(f"{namespace}::{name}")
        op.schema = parsed
        op.schema.name = f"{namespace}::{name}"
        op.kernels.clear()
        op.fake = None
        op.custom = self
        self._opoverload = op.overload_obj
        self._devices = device_types
        self._kernels: dict[str | None, Callable] = {}
        self._disabled: set[str] = set()
        self._backward_fn: Callable | None = None
        self._setup_context_fn: Callable | None = None
        self._vmap_fn: Callable | None = None
        self._function = None
        functools.update_wrapper(self, fn)

    @property
    def _qualname(self) -> str:
        return f"{self._namespace}::{self._name}"

    @property
    def _abstract_fn(self) -> Callable | None:
        return self._op.fake

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        return self._opoverload(*args, **kwargs)

    # -- registration ------------------------------------------------------------------
    def register_fake(self, fn: Callable, /) -> Callable:
        """Register `fn`, which computes the output's shape and dtype from the inputs'
        (meta tensors: it must not read their values), as the op's fake. Returns `fn`."""
        self._op.fake = fn
        return fn

    def register_kernel(self, device_types: str | Sequence[str], fn: Callable | None = None, /):
        """Register `fn` as the op's kernel for tensors of `device_types`; a decorator when
        `fn` is omitted. Returns `fn`."""

        def register(fn: Callable) -> Callable:
            for device in _device_types(device_types):
                self._kernels[device] = fn
            return fn

        return register if fn is None else register(fn)

    def register_autograd(
        self, backward: Callable, /, *, setup_context: Callable | None = None
    ) -> None:
        """Register ``backward(ctx, *grads)``, which returns one gradient per positional
        input (None for those without one), and ``setup_context(ctx, inputs, output)``,
        which saves on ctx what backward needs."""
        if self._op.schema.is_mutable:
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self!r} with "
                f"schema {self._op.schema}. Please create a functional operator and register "
                "an autograd formula for that."
            )
        self._backward_fn = backward
        self._setup_context_fn = setup_context
        self._function = None

    def register_vmap(self, func: Callable | None = None, /):
        """Register ``func(info, in_dims, *args, **kwargs) -> (output, out_dims)``, the op's
        rule under ``vmap``; a decorator when `func` is omitted."""

        def register(func: Callable) -> None:
            self._vmap_fn = func
            self._function = None

        return register if func is None else register(func)

    def register_autocast(self, device_type: str, cast_inputs) -> Callable:
        """Under autocast on `device_type`, cast the op's floating-point Tensor inputs to
        `cast_inputs` and run it with autocast off."""
        return register_autocast(self, device_type, cast_inputs)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type: str, enabled: bool = True):
        """A context manager in which the kernel `register_kernel` gave `device_type` is
        off (`enabled` False: the op's own function runs) or on again."""
        was_disabled = device_type in self._disabled
        if enabled:
            self._disabled.discard(device_type)
        else:
            self._disabled.add(device_type)
        try:
            yield
        finally:
            if was_disabled:
                self._disabled.add(device_type)
            else:
                self._disabled.discard(device_type)

    # -- running -----------------------------------------------------------------------
    def _backend_fn(self, device: str) -> Callable:
        if device == "meta" and "meta" not in self._kernels:
            if self._op.fake is None:
                raise self._no_fake()
            return functools.partial(run_fake, self._op)
        kernels = self._kernels
        fn = kernels.get(device) if device not in self._disabled else None
        if fn is None and None in kernels and device not in self._disabled:
            fn = kernels[None]
        if fn is None and (None in self._devices or device in self._devices):
            fn = self._init_fn
        if fn is None:
            keys = sorted(device_key(d) for d in {*self._devices, *kernels} - {None})
            raise no_kernel(self._op, device_key(device), keys)
        return fn

    def _no_fake(self) -> RuntimeError:
        return RuntimeError(
            f"There was no fake impl registered for {self!r}. This is necessary for "
            "torch.compile/export/fx tracing to work. Please use "
            f"`{self._init_fn.__name__}.register_fake` to add an fake impl."
        )

    def _run_backend(self, device: str, values: list, kw: dict) -> Any:
        import tocha

        values = [_detached(v) for v in values]
        kw = {k: _detached(v) for k, v in kw.items()}
        with tocha.no_grad():
            output = self._backend_fn(device)(*values, **kw)
        _check_output(self, output, values, kw)
        return output

    def _call(self, device: str, values: list, kw: dict) -> Any:
        if self._vmap_fn is not None or (
            needs_grad([*values, *kw.values()]) and _returns_tensors(self._op)
        ):
            return self._autograd_function().run(self, values, kw)
        return self._run_backend(device, values, kw)

    def _autograd_function(self):
        if self._function is None:
            self._function = make_function(self)
        return self._function


def _detached(value):
    """The kernel's view of an argument: below autograd, its tensors do not require grad."""
    import tocha

    if isinstance(value, tocha.Tensor):
        return value.detach() if value.requires_grad else value
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(v) for v in value)
    return value


def _returns_tensors(op) -> bool:
    return any(r.type.base == "Tensor" for r in op.schema.returns)


def _check_output(custom: CustomOpDef, output, values: list, kw: dict) -> None:
    """PyTorch's checks on a custom op's result: its type and that it aliases no input."""
    import tocha

    returns = custom._op.schema.returns
    if len(returns) == 1:
        outputs = (output,)
    elif isinstance(output, (tuple, list)):
        outputs = tuple(output)
    elif returns:
        raise TypeError(
            f"Object of type '{type(output).__name__}' is not an instance of 'sequence'"
        )
    else:
        return
    for ret, value in zip(returns, outputs, strict=False):
        base = ret.type.base
        if base == "Tensor" and not ret.type.is_list and not isinstance(value, tocha.Tensor):
            raise RuntimeError(f"Unable to cast {value!r} to Tensor")
        if base in _RETURN_TYPES and not isinstance(value, _RETURN_TYPES[base]):
            raise RuntimeError(
                f"Unable to cast Python instance of type {type(value)} to C++ type '?' "
                "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)"
            )
    inputs = [v for v in (*values, *kw.values()) for v in (v if isinstance(v, list) else [v])]
    produced = [v for v in outputs for v in (v if isinstance(v, (list, tuple)) else [v])]
    tensors_in = [t for t in inputs if isinstance(t, tocha.Tensor)]
    tensors_out = [t for t in produced if isinstance(t, tocha.Tensor)]
    for i, t in enumerate(tensors_out):
        if any(_shares(t, s) for s in tensors_in) or any(
            _shares(t, s) for s in tensors_out[i + 1 :]
        ):
            raise RuntimeError(
                f"{custom._name} (with implementation in {sys.modules[__name__]!r}): The "
                "output of this custom operator (1) must not also be an input to this custom "
                "operator and (2) may not alias any inputs to this custom operator or other "
                "returns. The most common way to trigger this error is if we have y = "
                "custom_op(x) and y and x are the same Tensor. Please instead return a clone "
                "of the offending output tensor(s) (e.g. return x.clone()) or refactor the "
                "custom operator to not return y."
            )


_RETURN_TYPES = {"SymInt": int, "int": int, "float": (int, float), "bool": bool}


def _shares(a, b) -> bool:
    import numpy as np

    if a is b:
        return True
    da, db = a._data, b._data
    if isinstance(da, np.ndarray) and isinstance(db, np.ndarray):
        return da.size > 0 and db.size > 0 and np.may_share_memory(da, db)
    return False


# -- the functional API -------------------------------------------------------------------------
def custom_op(
    name: str,
    fn: Callable | None = None,
    /,
    *,
    mutates_args: Iterable[str] | str,
    device_types: str | Sequence[str] | None = None,
    schema: str | None = None,
    tags=None,
):
    """Register `fn` as the custom operator `name` (``"namespace::name"``); a decorator
    when `fn` is omitted. `mutates_args` names the arguments `fn` writes to (``()`` for
    none, ``"unknown"``); the schema is inferred from `fn`'s annotations unless `schema`
    gives it; `device_types` limits `fn` to tensors of those devices. Returns its
    `CustomOpDef` (also ``tocha.ops.namespace.name``); registering a name again replaces
    the op."""

    def register(fn: Callable) -> CustomOpDef:
        text = schema if schema is not None else infer_schema(fn, mutates_args=mutates_args)
        namespace, short = split_qualname(name)
        if schema is not None:
            _check_schema_mutations(parse_schema(short + schema), mutates_args, schema)
        op = CustomOpDef(namespace, short, text, fn, _device_types(device_types))
        op._op.tags = [Tag.pt2_compliant_tag, *tags_of(tags)]
        return op

    return register if fn is None else register(fn)


def _check_schema_mutations(parsed, mutates_args, schema: str) -> None:
    written = {a.name for a in parsed.arguments if a.is_write}
    if mutates_args == "unknown" or written == set(mutates_args):
        return
    raise ValueError(
        f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
        f"`schema={schema}. The schema suggests that the op mutates {written}which is "
        "different from what was provided to us in `mutates_args`. Please make these "
        "consistent."
    )


def lookup(op) -> Any:
    """The `Operator` entry that `op` (a name, `CustomOpDef` or `OpOverload`) names."""
    from ._op_registry import OpOverload, OpOverloadPacket

    if isinstance(op, CustomOpDef):
        return op._op
    if isinstance(op, OpOverload):
        return op._op
    if isinstance(op, OpOverloadPacket):
        return op.default._op
    if not isinstance(op, str):
        raise ValueError(
            f"register(op): got unexpected type for op: {type(op)}. Expected a str, "
            "CustomOpDef or OpOverload."
        )
    qualname, _, overload = op.partition(".")
    split_qualname(qualname)
    return entry(qualname, "" if overload == "default" else overload)


def register_fake(
    op,
    func: Callable | None = None,
    /,
    *,
    lib=None,
    _stacklevel: int = 1,
    allow_override: bool = True,
):
    """Register the fake (shape and dtype) kernel of the operator `op` (a name such as
    ``"mylib::foo"``, a `CustomOpDef` or an `OpOverload`); a decorator when `func` is
    omitted. Returns `func`."""
    target = lookup(op)

    def register(func: Callable) -> Callable:
        if target.custom is not None:
            return target.custom.register_fake(func)
        if "CompositeImplicitAutograd" in target.kernels:
            raise RuntimeError(
                f"We should not register a meta kernel directly to the operator "
                f"'{target.qualname}', because it has a CompositeImplicitAutograd kernel in "
                "core. Instead we should let the operator decompose, and ensure that we have "
                "meta kernels for the base ops that it decomposes into."
            )
        target.fake = func
        return func

    return register if func is None else register(func)


def register_kernel(op, device_types, func: Callable | None = None, /, *, lib=None):
    """Register `func` as the kernel of the operator `op` for `device_types` (``"cpu"``,
    ``("cpu", "cuda")``, None for every device); a decorator when `func` is omitted."""
    target = lookup(op)

    def register(func: Callable) -> Callable | None:
        if target.custom is not None:
            return target.custom.register_kernel(device_types, func)
        for device in _device_types(device_types):
            key = "CompositeExplicitAutograd" if device is None else device_key(device)
            target.kernels[key] = func
        return None

    return register if func is None else register(func)


def device_key(device_type: str) -> str:
    """The dispatch key of a device type's kernels (``"cpu"`` -> ``"CPU"``)."""
    return {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "mps": "MPS", "xpu": "XPU"}.get(
        device_type, device_type.upper()
    )


def _custom(op, what: str) -> CustomOpDef:
    target = lookup(op)
    if target.schema is None:
        namespace, name = target.qualname.split("::")
        raise AttributeError(f"'_OpNamespace' '{namespace}' object has no attribute '{name}'")
    if target.custom is None:
        raise NotImplementedError(
            f"{what}(op): only custom operators made with torch.library.custom_op are "
            f"supported here, got {target.qualname}"
        )
    return target.custom


def register_autograd(
    op, backward: Callable, /, *, setup_context: Callable | None = None, lib=None
) -> None:
    """Register the backward of the custom op `op` (`CustomOpDef.register_autograd`)."""
    target = lookup(op)
    if target.schema is not None and target.custom is None:
        register_library_autograd(target, backward, setup_context)
        return
    _custom(op, "register_autograd").register_autograd(backward, setup_context=setup_context)


def register_vmap(op, func: Callable | None = None, /, *, lib=None):
    """Register the vmap rule of the custom op `op` (`CustomOpDef.register_vmap`)."""
    return _custom(op, "register_vmap").register_vmap(func)


def register_autocast(op, device_type: str, cast_inputs, /, *, lib=None) -> Callable | None:
    """Under autocast on `device_type`, the operator `op` casts its floating-point Tensor
    inputs to `cast_inputs` and runs with autocast off. Returns the autocast kernel of a
    custom op (None for an operator defined by a `Library`, as PyTorch)."""
    target = lookup(op)
    target.autocast[check_device_type(device_type)] = cast_inputs

    def kernel(*args, **kwargs):
        return target.overload_obj(*args, **kwargs)

    return kernel if target.custom is not None else None
