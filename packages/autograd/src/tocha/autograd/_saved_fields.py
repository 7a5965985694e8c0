"""What a node saved for backward, read as PyTorch's nodes show it: ``grad_fn._saved_self``
(an argument), ``grad_fn._saved_result`` (the output), and ``grad_fn._raw_saved_self``, whose
``register_hooks(pack, unpack)`` routes that one saved tensor through hooks."""

from __future__ import annotations

import functools

from tocha import Tensor

from ._graph import TensorMeta, meta_of, output_tensor
from .graph import Packed

# Op name -> the names PyTorch gives its saved arguments, in order (otherwise: self, other).
_ARGUMENT_NAMES = {
    "pow": ("self", "exponent"),
    "mm": ("self", "mat2"),
    "bmm": ("self", "mat2"),
    "mv": ("self", "vec"),
    "dot": ("self", "tensor"),
    "clamp": ("self", "min", "max"),
    "softmax": ("self", "dim"),
    "log_softmax": ("self", "dim"),
    "where": ("condition", "self", "other"),
}
_DEFAULT_NAMES = ("self", "other")

FREED_HOOKS_MESSAGE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward."
)


def saved_properties(op_name: str) -> dict:
    """The properties of the node type of op `op_name`: ``_saved_<name>`` and
    ``_raw_saved_<name>`` for each argument name and ``result`` (properties, not a
    ``__getattr__``, which would slow every attribute read of every node)."""
    names = (*_ARGUMENT_NAMES.get(op_name, _DEFAULT_NAMES), "result")
    return {
        prefix + name: property(functools.partial(saved_field, name=prefix + name))
        for name in names
        for prefix in ("_saved_", "_raw_saved_")
    }


def saved_field(node, name: str):
    """``node._saved_<what>`` or ``node._raw_saved_<what>``; AttributeError when the node has
    no such field."""
    raw = name.startswith("_raw_saved_")
    what = name[len("_raw_saved_") :] if raw else name[len("_saved_") :]
    if what == "result" and (node.released or (node.out_data or (None,))[0] is not None):
        where = ("o", 0)
    else:
        names = _ARGUMENT_NAMES.get(node.op_name, _DEFAULT_NAMES)
        if what not in names or names.index(what) >= len(node.input_meta):
            raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
        where = ("a", names.index(what))
    if node.saved is None:
        if raw:
            return SavedTensor(node, where)
        from ._engine import FREED_MESSAGE

        raise RuntimeError(FREED_MESSAGE)
    if raw:
        if where[0] == "a" and not isinstance(_stored(node, where), (Tensor, Packed)):
            raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
        return SavedTensor(node, where)
    return _value(node, where)


def _stored(node, where):
    kind, i = where
    return node.out_data[i] if kind == "o" else node.saved[i]


def _value(node, where):
    """The saved value as a program sees it: an argument as it was (None for a tensor the
    node did not keep), the output as a tensor of the node's graph."""
    stored = _stored(node, where)
    if type(stored) is Packed:
        stored = stored.unpacked()
    if where[0] == "a":
        return None if type(stored) is TensorMeta else stored
    if isinstance(stored, Tensor):
        return output_tensor(node, stored, stored.device, 0)
    return output_tensor(node, stored, _device_of(node), 0)


def _device_of(node):
    for meta in node.input_meta:
        if isinstance(meta, (Tensor, TensorMeta)):
            return meta.device
    return node.out_meta[0].device


class SavedTensor:
    """One tensor a node saved, whose storing `register_hooks` may change."""

    def __init__(self, node, where):
        self._node = node
        self._where = where

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Keep the tensor as ``pack_hook(tensor)`` from now on, and give backward
        ``unpack_hook(packed)``: no version check then, as with `saved_tensors_hooks`."""
        node = self._node
        if node.saved is None:
            raise RuntimeError(FREED_HOOKS_MESSAGE)
        kind, i = self._where
        stored = _stored(node, self._where)
        if type(stored) is Packed:
            raise RuntimeError("SavedTensor hooks have already been set")
        tensor = _value(node, self._where)
        packed = Packed(pack_hook(tensor), unpack_hook)
        if kind == "o":
            node.out_data = (*node.out_data[:i], packed, *node.out_data[i + 1 :])
            node.versions = [v for v in node.versions if v[0] is not None]
        else:
            node.saved = saved = list(node.saved)
            saved[i] = packed
            node.input_meta = metas = list(node.input_meta)
            metas[i] = meta_of(stored)
            node.versions = [v for v in node.versions if v[0] is not stored]
        node.packed = True
