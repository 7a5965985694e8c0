"""Custom differentiable operations: subclass `Function` with `forward` and `backward`."""

from __future__ import annotations

import functools
from typing import Any

from tocha import Tensor, no_grad
from tocha.library import GRAD_MODE

from ._engine import FREED_MESSAGE
from ._graph import AutogradMeta, edges_of, new_node
from ._record import TensorMeta, _version_counter

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` a Function's forward and backward share."""

    def __init__(self) -> None:
        self._saved: tuple[Tensor | None, ...] | None = None
        self._versions = ()
        self._released = False
        self._dirty = ()
        self._non_differentiable = ()
        self.materialize_grads = True
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (or None) for backward, checked against later in-place changes."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{tensors.index(t)} is of type {type(t).__name__}"
                )
        self._saved = tensors
        self._versions = tuple(
            (t, _version_counter(t), _version_counter(t)[0]) for t in tensors if t is not None
        )

    @property
    def saved_tensors(self) -> tuple[Tensor, ...]:
        """The tensors given to `save_for_backward` (None where None was saved: the
        annotation is PyTorch's)."""
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        for _, vc, version in self._versions:
            if vc[0] != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: it is at version {vc[0]}; expected version "
                    f"{version} instead."
                )
        return () if self._saved is None else self._saved  # type: ignore[return-value]

    def mark_dirty(self, *tensors) -> None:
        """Declare the inputs that forward modified in place (and returns)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that have no gradient."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zeros (True) or None for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class _FunctionMeta(type):
    def __init__(cls, name, bases, namespace):
        super().__init__(name, bases, namespace)
        cls._backward_name = name + "Backward"


class Function(metaclass=_FunctionMeta):
    """Base of custom autograd operations.

    Define ``forward(ctx, *args)`` (or ``forward(*args)`` with
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)`` returning
    one gradient per forward argument; call ``MyFunction.apply(*args)``.
    """

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for "
            "your custom autograd.Function to use it with backward mode "
            "AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = FunctionCtx()
        tensors = [a for a in args if isinstance(a, Tensor)]
        tracked = GRAD_MODE.grad_enabled and any(t.requires_grad for t in tensors)
        ctx.needs_input_grad = tuple(
            isinstance(a, Tensor) and a.requires_grad and tracked for a in args
        )
        with no_grad():
            if _has_setup_context(cls):
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if not tracked:
            return output
        return _record_function(cls, ctx, args, output)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        raise NotImplementedError


def _has_setup_context(cls) -> bool:
    return cls.setup_context is not Function.setup_context


def _record_function(cls, ctx, args, output):
    outputs = output if isinstance(output, tuple) else (output,)
    edges, nrs = edges_of(args)
    node = new_node(
        cls.__name__,
        _formula(cls, len(args)),
        edges,
        nrs,
        [TensorMeta(a) if isinstance(a, Tensor) else None for a in args],
        (ctx,),
        list(ctx._versions),
        tuple(TensorMeta(t) if isinstance(t, Tensor) else None for t in outputs),
    )
    node.materialize = ctx.materialize_grads
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    results = []
    for i, t in enumerate(outputs):
        if not isinstance(t, Tensor):
            results.append(t)
            continue
        if any(t is a for a in args) and id(t) not in dirty:
            t = t.view_as(t)
        if id(t) in non_diff or t._data.dtype.kind not in "fcV":
            results.append(t)
            continue
        if id(t) in dirty and t._ag is not None and t._ag.grad_fn is None and t._ag.requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        t._ag = AutogradMeta(True, node, i)
        results.append(t)
    node.out_meta = tuple(TensorMeta(t) if isinstance(t, Tensor) else None for t in results)
    return tuple(results) if isinstance(output, tuple) else results[0]


def _formula(cls, n_args: int):
    def formula(grad, out, ctx):
        grads = grad if isinstance(grad, tuple) else (grad,)
        result = cls.backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != n_args:
            if len(result) > n_args and all(r is None for r in result[n_args:]):
                return result[:n_args]
            raise RuntimeError(
                f"function {cls._backward_name} returned an incorrect number of gradients "
                f"(expected {n_args}, got {len(result)})"
            )
        return result

    return formula


def once_differentiable(fn):
    """Run a Function's backward with grad mode off: its result is not differentiable."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper
