"""``torch.library.Library``, the older registration API: a library of a namespace defines
operators from schema strings (kind ``"DEF"``, or ``"FRAGMENT"`` for one of several) and
registers Python kernels for them under dispatch keys (any kind, ``"IMPL"`` only that).
Its registrations last as long as the object: `_destroy` (or its garbage collection)
takes them back. `define`, `impl` and `impl_abstract` are the functional forms."""

from __future__ import annotations

import contextlib
import sys
import warnings
import weakref
from collections.abc import Callable

from ._custom_ops import check_device_type, device_key, register_fake, split_qualname
from ._op_registry import DISPATCH_KEYS, TABLE, OpOverload, entry
from ._op_schema import parse_schema
from ._op_tags import tags_of

__all__ = ["Library", "define", "fallthrough_kernel", "impl", "impl_abstract"]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_DEF_SITES: dict[str, str] = {"aten": "aten/src/ATen/RegisterSchema.cpp:6", "prim": "", "prims": ""}
_BUILTIN_NAMESPACES = ("aten", "prim", "prims")
_KEEP_ALIVE: list[Library] = []
_WARNED_OVERRIDE: list[bool] = []


def _site(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return "unknown"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def fallthrough_kernel(*args, **kwargs):
    """A kernel that lets the call fall through to the next dispatch key."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class Library:
    """Registrations of operators of namespace `ns`: `kind` ``"DEF"`` (the one library
    that defines the namespace), ``"FRAGMENT"`` (one of several that define it) or
    ``"IMPL"`` (kernels only); `dispatch_key` is the default key of its kernels."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        site = _site()
        if kind == "DEF":
            if ns in _DEF_SITES:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If "
                    "you were trying to specify implementations, consider using "
                    "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to "
                    "define operators for a single namespace in a distributed way, you can use "
                    "TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  Previous registration "
                    f"of TORCH_LIBRARY was registered at {_DEF_SITES[ns]}; latest registration "
                    f"was registered at {site}"
                )
            _DEF_SITES[ns] = site
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._site = site
        self._op_defs: set[tuple[str, str]] = set()
        self._registered: list[tuple[tuple[str, str], str, Callable]] = []
        self._finalizer = weakref.finalize(self, _undo, ns, kind, self._op_defs, self._registered)

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define the operator that `schema` (``"foo(Tensor x) -> Tensor"``) describes in
        this library's namespace; returns its name as written."""
        site = _site()
        if self.kind == "IMPL":
            raise RuntimeError(
                f'def("{schema.split("(")[0]}"): Cannot define an operator inside of a '
                "TORCH_LIBRARY_IMPL block.  All def()s should be placed in the (unique) "
                "TORCH_LIBRARY block for their namespace.  (Error occurred while processing "
                f"TORCH_LIBRARY_IMPL block at {self._site})"
            )
        parsed = parse_schema(schema)
        written = parsed.name
        if "::" in parsed.name:
            ns = parsed.name.split("::")[0]
            if ns != self.ns:
                raise RuntimeError(
                    f"Explicitly provided namespace ({ns}) in schema string does not match "
                    f"namespace of enclosing TORCH_LIBRARY block ({self.ns}).  Move this "
                    "definition to the (unique) TORCH_LIBRARY block corresponding to this "
                    "namespace (and consider deleting the namespace from your schema "
                    f"string.)  (Error occurred while processing TORCH_LIBRARY block at "
                    f"{self._site})"
                )
        else:
            parsed.name = f"{self.ns}::{parsed.name}"
        op = entry(parsed.name, parsed.overload_name)
        if op.schema is not None:
            raise RuntimeError(
                f"Tried to register an operator ({parsed}) with the same name and overload "
                "name multiple times. Each overload's schema should only be registered with a "
                "single call to def(). Duplicate registration: registered at "
                f"{site}. Original registration: registered at {op.site}"
            )
        op.schema, op.site, op.custom, op.tags = parsed, site, None, tags_of(tags)
        self._op_defs.add((op.qualname, op.overload))
        return written

    def impl(
        self,
        op_name: str | OpOverload,
        fn: Callable,
        dispatch_key: str = "",
        *,
        with_keyset: bool = False,
        allow_override: bool = True,
    ) -> None:
        """Register `fn` as the kernel of the operator `op_name` (in this namespace, or an
        `OpOverload`) for `dispatch_key` (``"CPU"``, ``"CUDA"``, ``"Meta"``,
        ``"Autograd"``, ``"CompositeImplicitAutograd"``...; the library's own key, else
        CompositeImplicitAutograd, when omitted)."""
        if isinstance(op_name, OpOverload):
            qualname, overload = op_name._op.qualname, op_name._op.overload
        else:
            name = op_name.split("::", 1)[1] if "::" in op_name else op_name
            qualname = f"{self.ns}::{name.split('.')[0]}"
            overload = name.split(".", 1)[1] if "." in name else ""
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if key not in DISPATCH_KEYS:
            raise RuntimeError(f"could not parse dispatch key: {key}")
        if self.dispatch_key and dispatch_key and dispatch_key != self.dispatch_key:
            raise RuntimeError(
                f'impl("{qualname.split("::")[1]}", ...): Explicitly provided dispatch key '
                f"({dispatch_key}) is inconsistent with the dispatch key of the enclosing "
                f"TORCH_LIBRARY_IMPL block ({self.dispatch_key}).  Please declare a separate "
                "TORCH_LIBRARY_IMPL block for this dispatch key and move your impl() there.  "
                f"(Error occurred while processing TORCH_LIBRARY_IMPL block at {self._site})"
            )
        if fn is fallthrough_kernel:
            return
        if qualname.split("::")[0] in _BUILTIN_NAMESPACES:
            warnings.warn(
                f"Library.impl({qualname!r}, ..., {key!r}): tocha's built-in operators run "
                "their own kernels; this registration does not change what "
                f"torch.{qualname.split('::')[1]} computes",
                UserWarning,
                stacklevel=2,
            )
        op = entry(qualname, overload)
        if key in op.kernels and not _WARNED_OVERRIDE:
            _WARNED_OVERRIDE.append(True)
            warnings.warn(
                "Warning only once for all operators,  other operators may also be "
                "overridden.\n  Overriding a previously registered kernel for the same "
                f"operator and the same dispatch key\n  operator: {op.schema}\n"
                f"  dispatch key: {key}",
                UserWarning,
                stacklevel=2,
            )
        if key == "Meta" and op.custom is None:
            op.fake = fn
        op.kernels[key] = fn
        self._registered.append(((qualname, overload), key, fn))

    def fallback(self, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False):
        """Fallback kernels for a whole namespace are not supported by tocha."""
        raise NotImplementedError("Library.fallback: tocha has no per-key fallback kernels")

    def _destroy(self) -> None:
        """Take back this library's definitions and kernels."""
        self._finalizer()


def _undo(ns: str, kind: str, op_defs: set, registered: list) -> None:
    for key, dispatch_key, fn in registered:
        op = TABLE.entries.get(key)
        if op is not None and op.kernels.get(dispatch_key) is fn:
            del op.kernels[dispatch_key]
            if dispatch_key == "Meta" and op.fake is fn:
                op.fake = None
    for key in op_defs:
        TABLE.entries.pop(key, None)
    registered.clear()
    op_defs.clear()
    if kind == "DEF":
        _DEF_SITES.pop(ns, None)


@contextlib.contextmanager
def _scoped_library(*args, **kwargs):
    """A `Library` destroyed when the block ends."""
    lib = Library(*args, **kwargs)
    try:
        yield lib
    finally:
        lib._destroy()


def _lasting_library(ns: str) -> Library:
    lib = Library(ns, "FRAGMENT")
    _KEEP_ALIVE.append(lib)
    return lib


def define(qualname: str, schema: str, *, lib: Library | None = None, tags=()) -> None:
    """Define the operator `qualname` (``"mylib::foo"``) with `schema` (its arguments
    and returns: ``"(Tensor x) -> Tensor"``)."""
    ns, name = split_qualname(qualname)
    if lib is None:
        lib = _lasting_library(ns)
    lib.define(name + schema, tags=tags)


_DEVICE_KEYS = {"default": "CompositeExplicitAutograd"}


def impl(qualname, types="", func: Callable | None = None, *, lib=None):
    """Register `func` as the kernel of the operator `qualname` for `types`: device types
    (``"cpu"``, ``["cpu", "cuda"]``, ``"default"`` for every device) or dispatch keys
    (``"CPU"``, ``"CompositeImplicitAutograd"``...); a decorator when `func` is omitted.
    The older form ``impl(lib, name, dispatch_key="")`` is a decorator registering the
    function in the `Library` `lib` and returning it."""
    if isinstance(qualname, Library):
        return _legacy_impl(qualname, types, func or "")
    keys = []
    for t in [types] if isinstance(types, str) else list(types):
        if t in DISPATCH_KEYS:
            keys.append(t)
        elif t in _DEVICE_KEYS:
            keys.append(_DEVICE_KEYS[t])
        else:
            keys.append(device_key(check_device_type(t)))
    ns = split_qualname(qualname.split(".")[0])[0]

    def register(func: Callable) -> None:
        target = lib if lib is not None else _lasting_library(ns)
        for key in keys:
            target.impl(qualname, func, key)

    if func is None:
        return register
    register(func)
    return None


def _legacy_impl(lib: Library, name: str, dispatch_key: str):
    def register(fn: Callable) -> Callable:
        lib.impl(name, fn, dispatch_key)
        return fn

    return register


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel: int = 1):
    """Deprecated alias of `register_fake`."""
    warnings.warn(
        "`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. Please "
        "use that instead; we will remove `torch.library.impl_abstract` in a future version "
        "of PyTorch.",
        FutureWarning,
        stacklevel=2,
    )
    return register_fake(qualname, func, lib=lib)
