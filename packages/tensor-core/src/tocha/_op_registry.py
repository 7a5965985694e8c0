"""The operators defined through ``torch.library``, and ``torch.ops``.

An `Operator` is one overload (``mylib::foo.out``): its schema and its kernels by dispatch
key (``"CPU"``, ``"CUDA"``, ``"Meta"``, ``"Autograd"``, ``"CompositeExplicitAutograd"``,
``"CompositeImplicitAutograd"``), plus what a custom op registers (its fake, backward,
vmap rule, autocast dtypes). `OpOverload` calls one; `OpOverloadPacket` (``torch.ops.ns.foo``)
groups the overloads of a name. A call checks its arguments against the schema, then runs,
as PyTorch's dispatcher: the autocast cast, an Autograd kernel, the custom op's autograd
wrapper, else the kernel of the tensors' device (Composite kernels for any device).
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any

from ._op_schema import FunctionSchema
from ._subclass_dispatch import STATE as SUBCLASSES
from ._subclass_dispatch import _overriding_args as overriding_args

__all__ = ["DISPATCH_KEYS", "OpOverload", "OpOverloadPacket", "Operator", "entry", "ops"]

DISPATCH_KEYS = (
    "CPU",
    "CUDA",
    "Meta",
    "XPU",
    "MPS",
    "HIP",
    "Autograd",
    "AutogradCPU",
    "AutogradCUDA",
    "CompositeExplicitAutograd",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "Autocast",
    "AutocastCPU",
    "AutocastCUDA",
    "FuncTorchBatched",
    "Functionalize",
    "BackendSelect",
    "Python",
)
_BACKEND_KEY = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "xpu": "XPU", "mps": "MPS"}


class Operator:
    """One overload's schema (None until defined) and registrations."""

    def __init__(self, qualname: str, overload: str) -> None:
        self.qualname = qualname
        self.overload = overload
        self.schema: FunctionSchema | None = None
        self.kernels: dict[str, Callable] = {}
        self.custom = None  # the CustomOpDef that defined it, if any
        self.fake: Callable | None = None
        self.autocast: dict[str, Any] = {}  # device type -> the dtype its inputs are cast to
        self.tags: list = []
        self.site = ""
        self.overload_obj = OpOverload(self)


class _Table:
    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], Operator] = {}
        self.packets: dict[str, OpOverloadPacket] = {}


TABLE = _Table()


def entry(qualname: str, overload: str = "") -> Operator:
    """The registry's entry for ``qualname.overload``, created (undefined) on first need, so
    that kernels may be registered before the schema, as PyTorch allows."""
    key = (qualname, overload)
    op = TABLE.entries.get(key)
    if op is None:
        op = TABLE.entries[key] = Operator(qualname, overload)
    return op


def defined(qualname: str) -> dict[str, Operator]:
    """The defined overloads of `qualname`, by overload name (``"default"`` for ``""``)."""
    return {
        (ov or "default"): op
        for (q, ov), op in TABLE.entries.items()
        if q == qualname and op.schema is not None
    }


def _dotted(qualname: str) -> str:
    return qualname.replace("::", ".")


class OpOverload:
    """One overload of an operator, ``torch.ops.ns.foo.default``: call it as the op."""

    def __init__(self, op: Operator) -> None:
        self._op = op

    @property
    def _schema(self) -> FunctionSchema:
        return self._op.schema

    @property
    def tags(self) -> list:
        """The tags (`Tag`) the operator was defined with."""
        return list(self._op.tags)

    @property
    def _overloadname(self) -> str:
        return self._op.overload or "default"

    @property
    def namespace(self) -> str:
        return self._op.qualname.split("::")[0]

    @property
    def _opname(self) -> str:
        return self._op.qualname.split("::")[1]

    @property
    def __name__(self) -> str:
        return f"{self._opname}.{self._overloadname}"

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        return packet(self._op.qualname)

    def name(self) -> str:
        """``"ns::foo"``, with ``.overload`` unless it is the default one."""
        return self._op.qualname + (f".{self._op.overload}" if self._op.overload else "")

    def __repr__(self) -> str:
        return f"<OpOverload(op='{_dotted(self._op.qualname)}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{_dotted(self._op.qualname)}.{self._overloadname}"

    def __hash__(self) -> int:
        return id(self._op)

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        if SUBCLASSES.armed and not SUBCLASSES.disabled:
            found = overriding_args(args, kwargs)
            if found:
                return _handle(self, found, args, kwargs)
        op = self._op
        try:
            values, kw = op.schema.bind(args, kwargs)
        except RuntimeError:
            if _overridden(args, kwargs):
                return _handle(self, _flat([*args, *kwargs.values()]), args, kwargs)
            raise
        return dispatch(op, values, kw)


class OpOverloadPacket:
    """``torch.ops.ns.foo``: the overloads of a name by overload name; calling it calls the
    overload whose schema accepts the arguments."""

    def __init__(self, qualname: str) -> None:
        self._qualified_op_name = qualname

    @property
    def __name__(self) -> str:
        return self._qualified_op_name.split("::")[1]

    @property
    def _overload_names(self) -> list[str]:
        return list(defined(self._qualified_op_name))

    def overloads(self) -> list[str]:
        """The names of its overloads (``"default"`` for the unnamed one)."""
        return self._overload_names

    @property
    def default(self) -> OpOverload:
        return self.__getattr__("default")

    def __getattr__(self, name: str) -> OpOverload:
        if name.startswith("__"):
            raise AttributeError(name)
        found = defined(self._qualified_op_name).get(name)
        if found is None:
            raise AttributeError(
                f"The underlying op of '{_dotted(self._qualified_op_name)}' has no overload "
                f"name '{name}'"
            )
        return found.overload_obj

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._overload_names))

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{_dotted(self._qualified_op_name)}')>"

    def __str__(self) -> str:
        return _dotted(self._qualified_op_name)

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        if SUBCLASSES.armed and not SUBCLASSES.disabled:
            found = overriding_args(args, kwargs)
            if found:
                return _handle(self, found, args, kwargs)
        overloads = defined(self._qualified_op_name)
        ordered = sorted(overloads.items(), key=lambda kv: kv[0] != "default")
        first_error = None
        for _, op in ordered:
            try:
                values, kw = op.schema.bind(args, kwargs)
            except RuntimeError as exc:
                first_error = first_error or exc
                continue
            return dispatch(op, values, kw)
        if _overridden(args, kwargs):
            return _handle(self, _flat([*args, *kwargs.values()]), args, kwargs)
        raise first_error


def _flat(values) -> list:
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flat(v))
        else:
            out.append(v)
    return out


def _overridden(args, kwargs) -> bool:
    """Whether an argument's type takes the call over (``__torch_function__``: a tracer's
    proxy); asked only of calls whose arguments the schema refused."""
    from .overrides import has_torch_function

    return has_torch_function(_flat([*args, *kwargs.values()]))


def _handle(op, relevant: list, args, kwargs):
    """The call handed to the ``__torch_function__`` of the `relevant` arguments."""
    from .overrides import handle_torch_function

    return handle_torch_function(op, relevant, *args, **kwargs)


def packet(qualname: str) -> OpOverloadPacket:
    found = TABLE.packets.get(qualname)
    if found is None:
        found = TABLE.packets[qualname] = OpOverloadPacket(qualname)
    return found


class _OpNamespace:
    """``torch.ops.<namespace>``: its operators by name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        qualname = f"{self.name}::{op_name}"
        if not defined(qualname):
            raise AttributeError(
                f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'"
            )
        return packet(qualname)

    def __dir__(self) -> list[str]:
        prefix = f"{self.name}::"
        return sorted(
            {q[len(prefix) :] for (q, _), op in TABLE.entries.items() if q.startswith(prefix)}
        )

    def __repr__(self) -> str:
        return f"<module 'torch.ops.{self.name}' from 'torch.ops'>"


class _Ops:
    """``torch.ops``: a namespace object for every name (its operators are looked up when
    asked for)."""

    def __init__(self) -> None:
        self._namespaces: dict[str, _OpNamespace] = {}
        self.loaded_libraries: set[str] = set()

    def load_library(self, path: str) -> None:
        """Load the shared library at `path`, as PyTorch does to register C++ operators;
        tocha has no C++ dispatcher, so operators such a library defines for PyTorch do not
        appear in ``tocha.ops`` (OSError when the library cannot be loaded)."""
        import ctypes
        import os

        path = os.path.realpath(path)
        ctypes.CDLL(path)
        self.loaded_libraries.add(path)

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("_"):
            raise AttributeError(name)
        space = self._namespaces.get(name)
        if space is None:
            space = self._namespaces[name] = _OpNamespace(name)
        return space

    def __dir__(self) -> list[str]:
        return sorted({q.split("::")[0] for q, _ in TABLE.entries})


ops = _Ops()


# -- dispatch -------------------------------------------------------------------------------
def device_type_of(values, kw) -> str:
    """The device type of the first tensor among a call's arguments (cpu when none)."""
    import tocha

    for value in (*values, *kw.values()):
        if isinstance(value, tocha.Tensor):
            return value.device.type
        if isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, tocha.Tensor):
                    return item.device.type
    return "cpu"


# Ops whose Autograd kernel this thread is running: a call of the op from inside it (an
# autograd.Function's forward calling the op) goes on to the backend kernel.
_THREAD = threading.local()


def dispatch(op: Operator, values: list, kw: dict) -> Any:
    """Run `op` on its bound arguments, as PyTorch's dispatcher would."""
    device = device_type_of(values, kw)
    custom = op.custom
    if op.autocast:
        cast = _autocast_call(op, device, values, kw)
        if cast is not None:
            return cast
    autograd = op.kernels.get("Autograd")
    if autograd is not None:
        below = _THREAD.__dict__.setdefault("below_autograd", set())
        if op not in below:
            below.add(op)
            try:
                return autograd(*values, **kw)
            finally:
                below.discard(op)
    if custom is not None:
        return custom._call(device, values, kw)
    output = backend_kernel(op, device)(*values, **kw)
    if "CompositeImplicitAutograd" not in op.kernels or _has_backend(op):
        _warn_on_backward(op, output)
    return output


def _has_backend(op: Operator) -> bool:
    return any(k not in ("Autograd", "CompositeImplicitAutograd", "Meta") for k in op.kernels)


def _warn_on_backward(op: Operator, output) -> None:
    """PyTorch's warning when a gradient flows through an op without an autograd kernel."""
    import tocha

    outputs = output if isinstance(output, (tuple, list)) else (output,)
    for t in outputs:
        if isinstance(t, tocha.Tensor) and t.requires_grad:
            t.register_hook(functools.partial(_warn, op.qualname))


def _warn(qualname: str, grad):
    warnings.warn(
        f"{qualname}: an autograd kernel was not registered to the Autograd key(s) but we are "
        "trying to backprop through it. This may lead to silently incorrect behavior. This "
        "behavior is deprecated and will be removed in a future version of PyTorch. If your "
        "operator is differentiable, please ensure you have registered an autograd kernel to "
        "the correct Autograd key (e.g. DispatchKey::Autograd, "
        "DispatchKey::CompositeImplicitAutograd). If your operator is not differentiable, or "
        "to squash this warning and use the previous behavior, please register "
        "torch::CppFunction::makeFallthrough() to DispatchKey::Autograd.",
        UserWarning,
        stacklevel=2,
    )


def _autocast_call(op: Operator, device: str, values: list, kw: dict):
    """The op run on its inputs cast to its autocast dtype, when autocast is on for
    `device`; None otherwise."""
    import tocha

    dtype = op.autocast.get(device)
    if dtype is None or not tocha.is_autocast_enabled(device):
        return None

    def cast(value):
        if isinstance(value, tocha.Tensor):
            floating = value.is_floating_point() and value.dtype != tocha.float64
            return value.to(dtype) if floating else value
        if isinstance(value, (list, tuple)):
            return type(value)(cast(v) for v in value)
        return value

    with tocha.autocast(device, enabled=False):
        return op.overload_obj(*map(cast, values), **{k: cast(v) for k, v in kw.items()})


def backend_kernel(op: Operator, device: str) -> Callable:
    """The kernel `op` runs for tensors of `device`; NotImplementedError if it has none."""
    key = _BACKEND_KEY.get(device, device.upper())
    kernels = op.kernels
    if key == "Meta" and "Meta" not in kernels and op.fake is not None:
        return op.fake
    for candidate in (key, "CompositeExplicitAutograd", "CompositeImplicitAutograd"):
        found = kernels.get(candidate)
        if found is not None:
            return found
    raise no_kernel(op, key, list(kernels))


def no_kernel(op: Operator, key: str, keys: list[str]) -> NotImplementedError:
    """PyTorch's error for an operator without a kernel for dispatch key `key`."""
    name = op.qualname + (f".{op.overload}" if op.overload else "")
    known = ", ".join(keys) or "none"
    return NotImplementedError(
        f"Could not run '{name}' with arguments from the '{key}' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build). If you are a Facebook "
        "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
        f"possible resolutions. '{name}' is only "
        f"available for these backends: [{known}]."
    )
