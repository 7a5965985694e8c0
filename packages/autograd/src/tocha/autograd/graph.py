"""Graph utilities: hooks on the tensors that nodes save for backward, on several tensors'
gradients at once, and the graph's edges."""

from __future__ import annotations

import abc
import threading
from typing import NamedTuple

from tocha import Tensor, no_grad
from tocha.library import bump_version

from ._graph import RECORD_EXTRAS, AccumulateGrad
from ._graph import Node as _RecordedNode
from ._multi_grad_hook import register_multi_grad_hook
from ._running import node_of

__all__ = [
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "allow_mutation_on_saved_tensors",
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
]


class Node(abc.ABC):
    """A node of the backward graph: a tensor's ``grad_fn``, or a leaf's AccumulateGrad."""

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name (``MulBackward0``)."""

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple:
        """``(node, output number)`` of each input's gradient edge."""

    @property
    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict of the node's own, for programs to keep what they like in."""

    @abc.abstractmethod
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after the node computed its gradients."""

    @abc.abstractmethod
    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node."""


Node.register(_RecordedNode)
Node.register(AccumulateGrad)


class _HookState(threading.local):
    stack: tuple = ()
    disabled_message: str | None = None


HOOKS = _HookState()


class Packed:
    """A saved tensor as its pack hook returned it, with the hook that unpacks it."""

    __slots__ = ("value", "unpack")

    def __init__(self, value, unpack):
        self.value = value
        self.unpack = unpack

    def unpacked(self) -> Tensor:
        """The tensor the unpack hook gives back."""
        tensor = self.unpack(self.value)
        if not isinstance(tensor, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type(tensor).__name__}"
            )
        return tensor


def pack(tensor):
    """The form in which a node keeps `tensor`: packed by the innermost hooks (run with
    grad mode off, as in PyTorch)."""
    if HOOKS.disabled_message is not None:
        raise RuntimeError(HOOKS.disabled_message)
    pack_hook, unpack_hook = HOOKS.stack[-1]
    with no_grad():
        return Packed(pack_hook(tensor), unpack_hook)


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it pass through
    ``pack_hook(tensor) -> object`` when saved and ``unpack_hook(object) -> tensor`` when
    backward needs them."""

    def __init__(self, pack_hook, unpack_hook):
        self.hooks = (pack_hook, unpack_hook)

    def __enter__(self):
        if HOOKS.disabled_message is not None:
            raise RuntimeError(HOOKS.disabled_message)
        HOOKS.stack = HOOKS.stack + (self.hooks,)
        RECORD_EXTRAS.active += 1
        return self

    def __exit__(self, *exc):
        HOOKS.stack = HOOKS.stack[:-1]
        RECORD_EXTRAS.active -= 1
        return False


class save_on_cpu(saved_tensors_hooks):
    """Context manager: tensors saved for backward inside it are kept in CPU memory (a copy,
    when `pin_memory`) and moved back to their device when backward needs them."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(tensor):
            kept = tensor.detach().clone().cpu() if pin_memory else tensor.cpu()
            return tensor.device, kept

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager in which registering saved-tensor hooks raises `error_message` (as
    does entering it while some are registered)."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        if HOOKS.stack:
            raise RuntimeError(self.error_message)
        self._prev = HOOKS.disabled_message
        HOOKS.disabled_message = self.error_message
        return self

    def __exit__(self, *exc):
        HOOKS.disabled_message = self._prev
        return False


class allow_mutation_on_saved_tensors:
    """Context manager: tensors saved for backward inside it may be changed in place
    afterwards; backward, which must run inside the same context, sees them as they were
    when saved (each is kept as a copy)."""

    _active = False

    def __enter__(self):
        if allow_mutation_on_saved_tensors._active:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        allow_mutation_on_saved_tensors._active = True
        self._open = True
        state = self

        def unpack(kept):
            if not state._open:
                raise AssertionError(
                    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                    "contextin which the graph was originally recorded."
                )
            return kept

        self._hooks = saved_tensors_hooks(lambda t: t.detach().clone(), unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)
        self._open = False
        allow_mutation_on_saved_tensors._active = False
        return False


class GradientEdge(NamedTuple):
    """Where a gradient enters the graph: a node and which of its outputs. Usable in place
    of a tensor as an input of ``autograd.grad``."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The `GradientEdge` that receives `tensor`'s gradient (a leaf's: its AccumulateGrad
    node)."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    return GradientEdge(node_of(tensor), tensor._ag.output_nr)


def increment_version(tensor) -> None:
    """Bump the version counter of `tensor` (or of each tensor of an iterable), as an
    in-place change would: for writes autograd cannot see."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        bump_version(t)
