"""Parametrizations: a module's tensor computed by modules from unconstrained originals, as
``torch.nn.utils.parametrize``.

`register_parametrization` moves ``module.<name>`` to
``module.parametrizations.<name>.original`` (or ``original0``, ``original1``... when the
parametrization's ``right_inverse`` returns several tensors) and makes ``module.<name>`` a
property that runs the parametrizations on every access (once per `cached` block).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Sequence

import tocha
from tocha import Tensor

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Compute each parametrized tensor once inside this block (not on every access)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_values(original: Tensor, new: Tensor) -> None:
    """Give `original` the values (and shape) of `new`, keeping the tensor object."""
    if original.shape == new.shape and original.dtype == new.dtype:
        original.copy_(new)
    else:
        original._data = new.detach().clone()._data


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to the original(s) that it holds
    as ``original`` (or ``original0``, ``original1``...)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with tocha.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors "
                f"(list, tuple...). Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: "
                    f"{new.dtype}"
                )
            with tocha.no_grad():
                _set_values(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, value in enumerate(new):
                if not isinstance(value, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of "
                        f"tensors (list, tuple...). Got element {i} of the "
                        f"sequence with type {type(value).__name__}."
                    )
                value = value.detach().clone()
                if isinstance(original, Parameter):
                    value = Parameter(value, original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", value)
        if not unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of "
                    f"the tensor, unless `unsafe` flag is enabled.\nunparametrized "
                    f"dtype: {dtype}\nparametrized dtype: {z.dtype}"
                )
            if z.shape != shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of "
                    f"the tensor, unless `unsafe` flag is enabled.\nunparametrized "
                    f"shape: {shape}\nparametrized shape: {z.shape}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Set the original(s) so that the parametrized tensor becomes `value`."""
        with tocha.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                _set_values(self.original, value)
            else:
                for i, tensor in enumerate(value):
                    _set_values(getattr(self, f"original{i}"), tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    """Give `module` a class of its own (``Parametrized<Class>``) to hold the properties."""
    cls = module.__class__

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict(). "
            "See:\nhttps://pytorch.org/tutorials/beginner/saving_loading_models.html"
            "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
        )

    def deepcopy(self, memo):
        # copy.deepcopy works (pickling does not): a new instance of this class, every
        # attribute deep-copied
        copied = self.__class__.__new__(self.__class__)
        memo[id(self)] = copied
        for name, value in self.__dict__.items():
            object.__setattr__(copied, name, copy.deepcopy(value, memo))
        return copied

    module.__class__ = type(
        f"Parametrized{cls.__name__}",
        (cls,),
        {"__getstate__": getstate, "__deepcopy__": deepcopy},
    )


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` the output of `parametrization` applied to the original
    tensor (a second call on the same name chains another parametrization).

    Example:
        >>> class Symmetric(nn.Module):
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).mT
        >>> m = register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of "
                    f"the tensor, unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {y.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: {x.dtype}"
                )
            if x.shape != y.shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of "
                    f"the tensor, unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {y.shape}\n"
                    f"parametrization(module.{tensor_name}).shape: {x.shape}"
                )
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has parametrizations (on `tensor_name`, when given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Remove the parametrizations of ``module.<tensor_name>``: it becomes a plain
    parameter (or buffer) again, holding the parametrized value (`leave_parametrized`) or
    the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with tocha.no_grad():
                _set_values(original, getattr(module, tensor_name))
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    else:
        raise ValueError(
            "Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
            "that is parametrized in terms of a sequence of tensors."
        )
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class of `module` before parametrizations gave it its own subclass."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Register on `to_module` the parametrizations of `from_module` (all of them, or those
    of `tensor_name`), sharing their modules and original tensors; a parametrized tensor
    `to_module` lacks is first created as a parameter. Returns `to_module`."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        originals = (
            ["original"]
            if hasattr(source, "original")
            else [f"original{i}" for i in range(source.ntensors)]
        )
        for original in originals:
            _register_parameter_or_buffer(target, original, getattr(source, original))
    return to_module
