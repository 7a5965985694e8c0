"""tocha.utils.checkpoint, as ``torch.utils.checkpoint``: activation checkpointing.

A checkpointed function keeps none of its intermediate tensors for backward: backward runs
it again (with the random state it first saw, so dropout draws the same masks) to get them.
Two implementations, as in PyTorch:

- reentrant (``use_reentrant=True``, the default when it is not given): an autograd
  `Function` whose forward runs the function without grad and keeps only its inputs; its
  backward recomputes under grad and runs a nested backward through the recomputed graph.
  Only ``.backward()`` without ``inputs`` is supported, and only tensor inputs that require
  grad give the function's parameters their gradients.
- non-reentrant (``use_reentrant=False``): the function runs under grad, with saved-tensor
  hooks (`tocha.autograd.graph.saved_tensors_hooks`) that keep a placeholder instead of each
  tensor a node saves; the first placeholder backward unpacks recomputes the function under
  hooks that collect the tensors it saves, in the same order, and stops once it has them
  all. The graph is the function's own, so ``autograd.grad``, keyword arguments and inputs
  that do not require grad work.

tocha-utils does not depend on tocha-autograd: the functions reach it as ``tocha.autograd``,
which imports it on first access (or names the distribution to install).
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import tocha
from tocha import Tensor

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "noop_context_fn",
    "detach_variable",
]

_REENTRANT_DEFAULT = (
    "the use_reentrant parameter should be passed explicitly. {when} use_reentrant=False is "
    "recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two "
    "variants."
)


class CheckpointError(RuntimeError):
    """The recomputation of a non-reentrant checkpoint saved other tensors than its forward."""


def noop_context_fn() -> tuple[
    contextlib.AbstractContextManager, contextlib.AbstractContextManager
]:
    """The default `context_fn`: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor of `inputs` detached, with its ``requires_grad``; other values as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            + type(inputs).__name__
        )
    result = []
    for value in inputs:
        if isinstance(value, Tensor):
            detached = value.detach()
            detached.requires_grad_(value.requires_grad)
            value = detached
        result.append(value)
    return tuple(result)


# -- the state a recomputation must see again ------------------------------------------------
class _State:
    """The CPU random state and the autocast settings at the forward, to recompute under."""

    def __init__(self, args: Iterable, preserve_rng_state: bool) -> None:
        self.rng = tocha.get_rng_state() if preserve_rng_state else None
        types = {"cpu"} | {a.device.type for a in args if isinstance(a, Tensor)}
        self.autocast = [
            (kind, tocha.get_autocast_dtype(kind), tocha.is_autocast_enabled(kind))
            for kind in sorted(types)
        ]

    @contextlib.contextmanager
    def restored(self):
        """Run with the saved random state (the caller's is kept) and autocast settings."""
        outer = tocha.get_rng_state() if self.rng is not None else None
        try:
            if self.rng is not None:
                tocha.set_rng_state(self.rng)
            with contextlib.ExitStack() as stack:
                for kind, dtype, enabled in self.autocast:
                    stack.enter_context(tocha.autocast(kind, dtype=dtype, enabled=enabled))
                yield
        finally:
            if outer is not None:
                tocha.set_rng_state(outer)


# -- reentrant ----------------------------------------------------------------------------------
@functools.cache
def _reentrant_function():
    """The `CheckpointFunction` class, made on first use (it subclasses tocha-autograd's
    `Function`)."""

    class CheckpointFunction(tocha.autograd.Function):
        """The reentrant checkpoint: forward without grad, recompute in backward."""

        @staticmethod
        def forward(ctx, run_function, preserve_rng_state, *args):
            ctx.run_function = run_function
            ctx.state = _State(args, preserve_rng_state)
            ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
            ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
            ctx.set_materialize_grads(False)
            return run_function(*args)

        @staticmethod
        def backward(ctx, *grads):
            inputs = list(ctx.inputs)
            for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
                inputs[i] = t
            detached = detach_variable(tuple(inputs))
            with ctx.state.restored(), tocha.enable_grad():
                outputs = ctx.run_function(*detached)
            if not isinstance(outputs, tuple):
                outputs = (outputs,)
            differentiable = [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]
            if not differentiable:
                raise RuntimeError(
                    "none of output has requires_grad=True, this checkpoint() is not necessary"
                )
            roots, root_grads = [], []
            for output, grad in zip(outputs, grads):
                if isinstance(output, Tensor) and output.requires_grad and grad is not None:
                    roots.append(output)
                    root_grads.append(grad)
            if roots:
                tocha.autograd.backward(roots, root_grads)
            input_grads = tuple(t.grad if isinstance(t, Tensor) else None for t in detached)
            return (None, None, *input_grads)

    return CheckpointFunction


def __getattr__(name: str) -> Any:
    if name == "CheckpointFunction":
        return _reentrant_function()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _reentrant(function, preserve_rng_state: bool, args: tuple) -> Any:
    if tocha.is_grad_enabled() and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3
        )
    return _reentrant_function().apply(function, preserve_rng_state, *args)


# -- non-reentrant ------------------------------------------------------------------------------
class _Holder:
    """What a node keeps in place of a tensor the checkpointed function saved."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class _StopRecomputation(Exception):
    """Raised from the recomputation's pack hook once every saved tensor is back."""


def _metadata(t: Tensor) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Frame:
    """One call of a non-reentrant checkpoint: what its forward saved (as metadata) and
    what the latest recomputation gave back, by position."""

    def __init__(self, function, args, kwargs, state, recompute_context, check, early_stop):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.state = state
        self.recompute_context = recompute_context
        self.check = check
        self.early_stop = early_stop
        self.saved: list[dict] = []
        self.recomputed: dict[int, Tensor] = {}

    def pack(self, t: Tensor) -> _Holder:
        self.saved.append(_metadata(t))
        return _Holder(len(self.saved) - 1)

    def unpack(self, holder: _Holder) -> Tensor:
        if holder.index not in self.recomputed:
            self._recompute()
        return self.recomputed.pop(holder.index)

    def _recompute(self) -> None:
        found: list[Tensor] = []

        def pack(t: Tensor) -> None:
            # Detached, with the flag some derivative formulas read (tocha-nn's linear). The
            # recomputation's own graph keeps nothing: it is dropped without a backward.
            found.append(t.detach().requires_grad_(t.requires_grad))
            if self.early_stop and len(found) == len(self.saved):
                raise _StopRecomputation

        with contextlib.suppress(_StopRecomputation):
            with self.state.restored(), tocha.enable_grad(), self.recompute_context:
                with tocha.autograd.graph.saved_tensors_hooks(pack, lambda _: None):
                    self.function(*self.args, **self.kwargs)
        if len(found) < len(self.saved):
            raise CheckpointError(
                "tocha.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.saved)}\n"
                f"Number of tensors saved during recomputation: {len(found)}.\n"
            )
        if self.check == "default":
            mismatched = [
                (i, before, _metadata(after))
                for i, (before, after) in enumerate(zip(self.saved, found))
                if before != _metadata(after)
            ]
            if mismatched:
                lines = "".join(
                    f"tensor at position {i}:\nsaved metadata: {before}\n"
                    f"recomputed metadata: {after}\n"
                    for i, before, after in mismatched
                )
                raise CheckpointError(
                    "tocha.utils.checkpoint: Recomputed values for the following tensors have "
                    f"different metadata than during the forward pass.\n{lines}.\n"
                )
        self.recomputed = dict(enumerate(found[: len(self.saved)]))


def _non_reentrant(
    function, preserve_rng_state, context_fn, determinism_check, early_stop, args, kwargs
) -> Any:
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    forward_context, recompute_context = context_fn()
    state = _State([*args, *kwargs.values()], preserve_rng_state)
    frame = _Frame(function, args, kwargs, state, recompute_context, determinism_check, early_stop)
    with tocha.autograd.graph.saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


# -- the public functions -----------------------------------------------------------------------
def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[
        [], tuple[contextlib.AbstractContextManager, contextlib.AbstractContextManager]
    ] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)``, keeping none of its intermediate tensors for backward,
    which recomputes them, as ``torch.utils.checkpoint.checkpoint``.

    `use_reentrant` picks the implementation (see the module); not giving it warns and
    picks the reentrant one, as PyTorch 2.13 does. Keyword arguments for `function`,
    `context_fn` (two context managers: around the forward, around the recomputation),
    `determinism_check` (``"default"`` compares the shape, dtype and device of each tensor
    the recomputation saves with the forward's; ``"none"``) and `early_stop` (stop the
    recomputation once it has given back every saved tensor) are for the non-reentrant one.
    With `preserve_rng_state` the recomputation draws the same random numbers as the
    forward (the CPU generator's). `debug` is accepted; tocha prints no operator trace.

    Examples:
        >>> layer = tocha.nn.Linear(4, 4)
        >>> x = tocha.randn(2, 4, requires_grad=True)
        >>> y = checkpoint(lambda t: layer(t).relu(), x, use_reentrant=False)
        >>> y.sum().backward()
    """
    if use_reentrant is None:
        warnings.warn(
            "tocha.utils.checkpoint: "
            + _REENTRANT_DEFAULT.format(
                when="Starting in PyTorch 2.9, calling checkpoint without use_reentrant will "
                "raise an exception."
            ),
            stacklevel=2,
        )
        use_reentrant = True
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _reentrant(function, preserve_rng_state, args)
    return _non_reentrant(
        function, preserve_rng_state, context_fn, determinism_check, early_stop, args, kwargs
    )


def checkpoint_sequential(
    functions: Any, segments: int, input: Any, use_reentrant: bool | None = None, **kwargs: Any
) -> Any:
    """Run `functions` (a list of callables or a `Sequential`) on `input` in `segments`
    checkpointed chunks, the last one not checkpointed (its activations are kept), as
    ``torch.utils.checkpoint.checkpoint_sequential``. `kwargs` (``preserve_rng_state``...)
    go to each `checkpoint`."""
    if use_reentrant is None:
        warnings.warn(
            "tocha.utils.checkpoint.checkpoint_sequential: "
            + _REENTRANT_DEFAULT.format(
                when="In version 2.9 we will raise an exception if use_reentrant is not passed."
            ),
            stacklevel=2,
        )
        use_reentrant = True
    if not isinstance(functions, (list, tuple)):
        functions = list(functions.children())

    def run(start: int, end: int) -> Callable:
        def forward(value):
            for i in range(start, end + 1):
                value = functions[i](value)
            return value

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
