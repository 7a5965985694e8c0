"""Lazy modules, as ``torch.nn.modules.lazy``: `LazyModuleMixin` infers the shapes of a
module's parameters from its first input."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import tocha

from ..parameter import is_lazy
from .module import Module

# Type checkers see the mixin as the Module it is mixed into.
if TYPE_CHECKING:
    _Base = Module
else:
    _Base = object

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin(_Base):
    """A mixin for modules whose parameters (`UninitializedParameter`) and buffers
    (`UninitializedBuffer`) take their shapes from the first input.

    Before the first forward, a forward pre-hook calls ``initialize_parameters`` with the
    forward's arguments; that must materialize every uninitialized parameter and buffer
    (else RuntimeError). The hooks are then removed and the module becomes its
    `cls_to_become` (``LazyLinear`` becomes ``Linear``). An uninitialized module may be
    given to an optimizer, saved in a state dict, and loaded from one: loading an
    initialized tensor into an uninitialized one materializes it with the loaded shape.
    """

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(_lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        """Uninitialized tensors are saved as themselves (they cannot be detached)."""
        super()._save_to_state_dict(destination, prefix, True)
        if keep_vars:
            return
        for name in itertools.chain(self._parameters, self._buffers):
            value = destination.get(prefix + name)
            if value is not None and not is_lazy(value):
                destination[prefix + name] = value.detach()

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Infer the parameters' shapes from the forward's arguments and materialize them."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether any of this module's own parameters or buffers is uninitialized."""
        return any(
            is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values())
        )

    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. "
            "Run a dummy forward pass to correctly initialize the modules"
        )


def _lazy_load_hook(
    module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
) -> None:
    """Materialize each uninitialized tensor that the state dict holds initialized, in the
    loaded shape, so that the load then copies into it."""
    for name, tensor in itertools.chain(module._parameters.items(), module._buffers.items()):
        key = prefix + name
        if is_lazy(tensor) and key in state_dict and not is_lazy(state_dict[key]):
            with tocha.no_grad():
                tensor.materialize(state_dict[key].shape)


def _infer_parameters(module, args, kwargs) -> None:
    """The forward pre-hook: initialize from the first call's arguments, then become the
    non-lazy class."""
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    del module._initialize_hook
    del module._load_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become
