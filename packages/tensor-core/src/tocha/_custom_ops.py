"""Python custom operators, as ``torch.library.custom_op``: a function registered under a
name ``"namespace::name"``, callable as itself and as ``tocha.ops.namespace.name``, with an
optional backward (`register_autograd`) and shape function (`register_fake`).

tocha runs every op eagerly, so a custom op runs its function; the fake (meta) function is
kept for programs that ask for it (``op._abstract_fn``) and is not needed to run. With a
registered backward, calls on tensors that require grad record one autograd node whose
gradient is that backward's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["CustomOpDef", "custom_op", "register_fake", "register_autograd", "ops"]


class CustomOpDef:
    """A custom operator: `name` (``"namespace::name"``), the function it runs, and what is
    registered for it. Call it as the function."""

    def __init__(self, namespace: str, name: str, fn: Callable, mutates_args, schema) -> None:
        self._namespace = namespace
        self._name = name
        self._init_fn = fn
        self._mutates_args = mutates_args
        self._schema = schema
        self._abstract_fn: Callable | None = None
        self._backward_fn: Callable | None = None
        self._setup_context_fn: Callable | None = None
        functools.update_wrapper(self, fn)

    @property
    def name(self) -> str:
        return f"{self._namespace}::{self._name}"

    def register_fake(self, fn: Callable) -> Callable:
        """Register `fn`, which computes the output's shape and dtype, as the op's fake."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward: Callable, *, setup_context: Callable | None = None):
        """Register ``backward(ctx, *grads) -> grads`` (one per input, None for those without
        one) and ``setup_context(ctx, inputs, output)``, which saves what backward needs."""
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._backward_fn is not None and _needs_grad(args):
            return _with_backward(self)(*args, **kwargs)
        return self._init_fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self.name})>"


def _needs_grad(args) -> bool:
    import tocha

    return tocha.is_grad_enabled() and any(
        isinstance(a, tocha.Tensor) and a.requires_grad for a in args
    )


def _with_backward(op: CustomOpDef) -> Callable:
    """The op as an autograd Function applying its registered backward."""
    import tocha

    try:
        from tocha.autograd import Function
    except ImportError as exc:  # gradients are asked for, so tocha-autograd is installed
        raise ImportError(f"{op.name}'s backward needs tocha-autograd") from exc

    class CustomOpFunction(Function):
        @staticmethod
        def forward(ctx, *args):
            with tocha.no_grad():
                output = op._init_fn(*args)
            if op._setup_context_fn is not None:
                op._setup_context_fn(ctx, args, output)
            return output

        @staticmethod
        def backward(ctx, *grads):
            result = op._backward_fn(ctx, *grads)
            return tuple(result) if isinstance(result, (tuple, list)) else (result,)

    CustomOpFunction.__name__ = CustomOpFunction.__qualname__ = op._name
    return CustomOpFunction.apply


class _OpNamespace:
    """``tocha.ops.<namespace>``: its custom ops by name."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._ops: dict[str, CustomOpDef] = {}

    def __getattr__(self, name: str) -> CustomOpDef:
        try:
            return self._ops[name]
        except KeyError:
            raise AttributeError(
                f"'_OpNamespace' 'torch.ops.{self._name}' object has no attribute '{name}'"
            ) from None

    def __dir__(self) -> list[str]:
        return sorted(self._ops)


class _Ops:
    """``tocha.ops``, as ``torch.ops``: the namespaces of the registered custom ops."""

    def __init__(self) -> None:
        self._namespaces: dict[str, _OpNamespace] = {}

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._namespaces[name]
        except KeyError:
            raise AttributeError(
                f"'_Ops' object has no attribute '{name}': no custom op of namespace "
                f"'{name}' is registered (tocha's own ops are not in torch.ops)"
            ) from None

    def __dir__(self) -> list[str]:
        return sorted(self._namespaces)


ops = _Ops()


def _split(qualname: str) -> tuple[str, str]:
    namespace, sep, name = qualname.partition("::")
    if not sep or not namespace or not name or "::" in name:
        raise ValueError(
            f"Expected there to be a namespace in {qualname}, i.e. The operator name should "
            f"look something like ns::foo"
        )
    return namespace, name


def custom_op(
    name: str,
    fn: Callable | None = None,
    /,
    *,
    mutates_args: Iterable[str] | str,
    device_types: str | Iterable[str] | None = None,
    schema: str | None = None,
):
    """Register `fn` as the custom operator `name` (``"namespace::name"``); as a decorator
    when `fn` is omitted. Returns its `CustomOpDef`, also ``tocha.ops.namespace.name``.
    `mutates_args` names the arguments `fn` writes to (``()`` for none); RuntimeError when
    the name is taken."""
    namespace, short = _split(name)

    def register(fn: Callable) -> CustomOpDef:
        space = ops._namespaces.setdefault(namespace, _OpNamespace(namespace))
        if short in space._ops:
            raise RuntimeError(
                f"Tried to register an operator ({name}) with the same name as an existing operator"
            )
        op = CustomOpDef(namespace, short, fn, mutates_args, schema)
        space._ops[short] = op
        return op

    return register if fn is None else register(fn)


def _lookup(op: str | CustomOpDef) -> CustomOpDef:
    if isinstance(op, CustomOpDef):
        return op
    if not isinstance(op, str):
        raise TypeError(f"expected a custom op or its name (str), got {type(op).__name__}")
    namespace, short = _split(op)
    space = ops._namespaces.get(namespace)
    if space is None or short not in space._ops:
        raise RuntimeError(f"operator {op} does not exist: register it with custom_op first")
    return space._ops[short]


def register_fake(op: str | CustomOpDef, fn: Callable | None = None, /, **kwargs):
    """Register the fake (shape and dtype) function of the custom op `op`; as a decorator
    when `fn` is omitted."""
    target = _lookup(op)
    return target.register_fake if fn is None else target.register_fake(fn)


def register_autograd(
    op: str | CustomOpDef, backward: Callable, /, *, setup_context: Callable | None = None
) -> None:
    """Register the backward of the custom op `op` (`CustomOpDef.register_autograd`)."""
    _lookup(op).register_autograd(backward, setup_context=setup_context)
