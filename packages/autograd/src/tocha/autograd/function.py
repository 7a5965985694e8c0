"""Custom differentiable operations: subclass `Function` with `forward` and `backward`, and
`jvp` for forward-mode AD."""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any

from tocha import Tensor, no_grad, zeros_like
from tocha.library import GRAD_MODE, bump_version

from ._engine import FREED_MESSAGE, modified_message
from ._forward import LEVEL, set_tangent, tangent_of
from ._graph import AutogradMeta, Node, edges_of, meta_of, new_node
from ._record import _version_counter
from .graph import HOOKS, Packed, pack

__all__ = [
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "BackwardCFunction",
    "FunctionMeta",
    "InplaceFunction",
]


class _TransformRules:
    """How function transforms built outside tocha-autograd apply a custom Function.

    ``vmap(cls, args, kwargs)``, set by tocha-func: while a vmap level is active, `cls`
    applied to `args` when one of them is batched by a level (through the Function's
    ``vmap`` staticmethod), or NotImplemented to run its forward as usual (the ops batched
    one by one: ``generate_vmap_rule = True``)."""

    __slots__ = ("vmap",)

    def __init__(self):
        self.vmap = None


TRANSFORM_RULES = _TransformRules()


class FunctionCtx:
    """The ``ctx`` a Function's forward, backward and jvp share."""

    def __init__(self) -> None:
        self._saved: tuple[Tensor | None, ...] | None = None
        self._saved_for_forward: tuple[Tensor | None, ...] = ()
        self._in_jvp = False
        self._versions = ()
        self._released = False
        self._dirty = ()
        self._non_differentiable = ()
        self.materialize_grads = True
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (or None) for backward, checked against later in-place changes."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}"
                )
        if HOOKS.stack:  # packed by the saved-tensor hooks, theirs to keep: no version checks
            self._saved = tuple(None if t is None else pack(t) for t in tensors)
            self._versions = ()
            return
        self._saved = tensors
        self._versions = tuple(
            (t, _version_counter(t), _version_counter(t)[0]) for t in tensors if t is not None
        )

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (or None) for `jvp`, where `saved_tensors` reads them."""
        if any(t is not None and not isinstance(t, Tensor) for t in tensors):
            raise AssertionError(
                "save_for_forward expects all arguments to be tensors; you should save "
                "non-tensors as attributes on ctx."
            )
        self._saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor, ...]:
        """The tensors given to `save_for_backward` (in jvp: to `save_for_forward`; None
        where None was saved: the annotation is PyTorch's)."""
        if self._in_jvp:
            return self._saved_for_forward  # type: ignore[return-value]
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        for t, vc, version in self._versions:
            if vc[0] != version:
                meta = t._ag
                made = meta is not None and meta.grad_fn is not None
                producer = (meta.output_nr, meta.grad_fn) if made else None
                raise RuntimeError(modified_message(t, producer, vc[0], version))
        if self._saved is None:
            return ()
        return tuple(t.unpacked() if type(t) is Packed else t for t in self._saved)  # type: ignore[misc]

    def mark_dirty(self, *tensors) -> None:
        """Declare the inputs that forward modified in place (and returns)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that have no gradient."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zeros (True) or None for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node):
    """The node of a custom Function's call (its ``grad_fn``): it also reads as the call's
    ``ctx`` (``grad_fn.saved_tensors``, ``grad_fn.needs_input_grad``, what forward set on
    ctx), as in PyTorch."""

    __slots__ = ()

    def __getattr__(self, name: str):
        ctx = self.__dict__.get("ctx")
        if ctx is None or name.startswith("__"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if name == "saved_tensors" and self.released:
            raise RuntimeError(FREED_MESSAGE)
        return getattr(ctx, name)


class _FunctionMeta(type):
    def __init__(cls, name, bases, namespace):
        super().__init__(name, bases, namespace)
        cls._backward_name = name + "Backward"
        cls._backward_cls = type(
            cls._backward_name,
            (BackwardCFunction,),
            {"__slots__": (), "__module__": "tocha.autograd.function"},
        )


class Function(metaclass=_FunctionMeta):
    """Base of custom autograd operations.

    Define ``forward(ctx, *args)`` (or ``forward(*args)`` with
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)`` returning
    one gradient per forward argument; call ``MyFunction.apply(*args)``. For forward-mode AD
    define ``jvp(ctx, *grad_inputs)``: one tangent per forward argument in (zeros for a
    tensor without one, None for a non-tensor), one per output out (None for none), the
    tensors it needs kept with ``ctx.save_for_forward``. Under `tocha.func.vmap`, a Function
    with ``setup_context`` needs ``generate_vmap_rule = True`` (its forward is batched op by
    op) or a ``vmap`` staticmethod.
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

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    generate_vmap_rule = False

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """The Function over a batch, under `tocha.func.vmap`: called with the inputs'
        batched values, `in_dims` (the batch dim of each, None for one not batched) and
        `info` (``batch_size``, ``randomness``); returns ``(output, out_dims)``."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if kwargs:  # as positional arguments of forward (after ctx, without setup_context)
            args = _bound(cls, args, kwargs)
            kwargs = {}
        if GRAD_MODE.transforms and TRANSFORM_RULES.vmap is not None:
            result = TRANSFORM_RULES.vmap(cls, args, kwargs)
            if result is not NotImplemented:
                return result
        ctx = FunctionCtx()
        tensors = [a for a in args if isinstance(a, Tensor)]
        tracked = GRAD_MODE.grad_enabled and any(t.requires_grad for t in tensors)
        ctx.needs_input_grad = tuple(
            isinstance(a, Tensor) and a.requires_grad and tracked for a in args
        )
        level = LEVEL.current
        tangents = None if level is None else [tangent_of(a, level) for a in args]
        LEVEL.current = None  # forward (and jvp) see no tangents, as in PyTorch
        try:
            with no_grad():
                if _has_setup_context(cls):
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
            if tracked:
                output = _record_function(cls, ctx, args, output)
            if tangents is not None and any(t is not None for t in tangents):
                output = _forward_mode(cls, ctx, args, output, tangents, level)
        finally:
            LEVEL.current = level
        return output

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        raise NotImplementedError


FunctionMeta = _FunctionMeta


class InplaceFunction(Function):
    """A `Function` that may work in place: ``inplace`` is kept for it (legacy API)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def _has_setup_context(cls) -> bool:
    return cls.setup_context is not Function.setup_context


def _bound(cls, args: tuple, kwargs: dict) -> tuple:
    """`apply`'s arguments, given partly by keyword, as forward's positional ones."""
    signature = inspect.signature(cls.forward)
    if not _has_setup_context(cls):
        params = list(signature.parameters.values())[1:]  # without ctx
        signature = signature.replace(parameters=params)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _record_function(cls, ctx, args, output):
    outputs = output if isinstance(output, tuple) else (output,)
    edges, nrs = edges_of(args)
    metas = [meta_of(a) if isinstance(a, Tensor) else None for a in args]
    node = new_node(
        cls.__name__,
        _formula(cls, metas),
        edges,
        nrs,
        metas,
        (ctx,),
        list(ctx._versions),
        tuple(meta_of(t) if isinstance(t, Tensor) else None for t in outputs),
        cls=cls._backward_cls,
    )
    node.ctx = ctx
    node.materialize = ctx.materialize_grads
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    results = []
    for i, t in enumerate(outputs):
        if not isinstance(t, Tensor):
            results.append(t)
            continue
        if id(t) in non_diff or t._data.dtype.kind not in "fcV":
            results.append(t.detach() if any(t is a for a in args) else t)
            continue
        if any(t is a for a in args) and id(t) not in dirty:
            t = t.view_as(t)
        if id(t) in dirty:
            if t._ag is not None and t._ag.grad_fn is None and t._ag.requires_grad:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
            bump_version(t)
        t._ag = AutogradMeta(True, node, i)
        results.append(t)
    node.out_meta = tuple(meta_of(t) if isinstance(t, Tensor) else None for t in results)
    return tuple(results) if isinstance(output, tuple) else results[0]


def _root(t: Tensor) -> Tensor:
    return t if t._base is None else t._base


def _is_differentiable(t) -> bool:
    return isinstance(t, Tensor) and t._data.dtype.kind in "fcV"


def _forward_mode(cls, ctx, args, output, tangents, level):
    """Call the Function's jvp with its inputs' tangents and give the outputs theirs. As in
    PyTorch, the jvp must follow forward's in-place and view behaviour: the tangent of an
    input forward modified in place is modified in place and returned as-is, and an output
    that is a view of an input (or the input itself) gets a view of that input's tangent."""
    grad_inputs = []
    for a, t in zip(args, tangents):
        if t is None and _is_differentiable(a) and ctx.materialize_grads:
            t = zeros_like(a)
        grad_inputs.append(t if _is_differentiable(a) else None)
    dirty = {id(t) for t in ctx._dirty}
    versions = {
        i: _version_counter(t)[0]
        for i, (a, t) in enumerate(zip(args, grad_inputs))
        if id(a) in dirty and t is not None
    }
    ctx._in_jvp = True
    try:
        result = cls.jvp(ctx, *grad_inputs)
    finally:
        ctx._in_jvp = False
    single = not isinstance(output, tuple)
    outputs = [output] if single else list(output)
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outputs):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(outputs)} but got {len(result)})"
        )
    non_diff = {id(t) for t in ctx._non_differentiable}
    for i, (o, r) in enumerate(zip(outputs, result)):
        if r is None:
            continue
        if not isinstance(r, Tensor):
            raise RuntimeError(
                f"expected Variable or None (got {type(r).__name__}) for grad output {i}."
            )
        if not _is_differentiable(o) or id(o) in non_diff:
            raise RuntimeError(
                f"Function's jvp returned a gradient at position {i}, but  the corresponding "
                "forward output is not a differentiable Tensor.You should return None at that "
                "position instead."
            )
        if r.shape != o.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(o.shape)} "
                f"while the given forward gradient is of size {list(r.shape)}."
            )
        source = next((j for j, a in enumerate(args) if o is a), None)
        if source is not None and id(o) in dirty:
            _check_inplace_tangent(r, grad_inputs[source], versions.get(source))
        else:
            view_of = next(
                (j for j, a in enumerate(args) if isinstance(a, Tensor) and _root(o) is _root(a)),
                None,
            )
            if view_of is not None:
                _check_view_tangent(r, grad_inputs[view_of])
            if source is not None:  # an input returned as-is (untracked): its view
                o = outputs[i] = o.view_as(o)
        set_tangent(o, r, level)
    return outputs[0] if single else tuple(outputs)


def _check_inplace_tangent(tangent, given, version) -> None:
    vc = _version_counter(given)
    if version is None or _version_counter(tangent) is not vc or vc[0] == version:
        raise RuntimeError(
            "An inplace custom Function is not modifying the forward mode gradients inplace. "
            "If the forward is modifying an input inplace, then the jvp function must modify "
            "the corresponding gradient inplace."
        )
    if tangent is not given:
        raise RuntimeError(
            "An inplace custom Function is not returning the forward mode gradients as-is. If "
            "the forward is modifying an input inplace, then the jvp function must modify the "
            "gradient inplace and return it as-is."
        )


def _check_view_tangent(tangent, given) -> None:
    if tangent._base is None:
        raise RuntimeError(
            "A custom Function's forward is returning a view (or an input as-is) but the jvp "
            "is not returning a view."
        )
    if given is None or _root(tangent) is not _root(given):
        raise RuntimeError(
            "A custom Function is returning a view but the jvp is not returning a view of the "
            "given grad input."
        )


def _formula(cls, metas: list):
    """The node's formula: the Function's backward, its results checked against the
    arguments (`metas`: a `TensorMeta` per tensor argument, else None)."""
    n_args = len(metas)

    def formula(grad, out, ctx):
        grads = grad if isinstance(grad, tuple) else (grad,)
        result = cls.backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != n_args:
            if len(result) > n_args and all(r is None for r in result[n_args:]):
                result = result[:n_args]
            else:
                raise RuntimeError(
                    f"function {cls._backward_name} returned an incorrect number of gradients "
                    f"(expected {n_args}, got {len(result)})"
                )
        for i, (r, meta) in enumerate(zip(result, metas)):
            if r is None or meta is None:
                continue
            if not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            if not _expandable(meta.raw_shape, r.shape):
                raise RuntimeError(
                    f"Function {cls._backward_name} returned an invalid gradient at index {i} - "
                    f"got {list(r.shape)} but expected shape compatible with "
                    f"{list(meta.raw_shape)}"
                )
        return result

    return formula


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether `shape` broadcasts to `target` (a gradient of `target`'s shape sums to it)."""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


def once_differentiable(fn):
    """Run a Function's backward with grad mode off: its result is not differentiable."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper
