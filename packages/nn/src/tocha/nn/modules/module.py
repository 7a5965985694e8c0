"""`Module`: the base class of every layer and model."""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Iterator
from typing import Any

import tocha
from tocha import Tensor
from tocha.library import TITLE, wrap

from ..parameter import Buffer, Parameter, UninitializedBuffer, is_lazy

__all__ = [
    "Module",
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_parameter_registration_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
]

_GLOBAL_FORWARD_PRE_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_FORWARD_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_BACKWARD_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_BACKWARD_PRE_HOOKS: OrderedDict = OrderedDict()
# Hooks run when any module registers a parameter, a buffer or a submodule.
_GLOBAL_PARAMETER_REGISTRATION_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_BUFFER_REGISTRATION_HOOKS: OrderedDict = OrderedDict()
_GLOBAL_MODULE_REGISTRATION_HOOKS: OrderedDict = OrderedDict()
# The ids of the global forward hooks registered with_kwargs / always_call.
_GLOBAL_FORWARD_HOOKS_WITH_KWARGS: dict[int, bool] = {}
_GLOBAL_FORWARD_HOOKS_ALWAYS_CALLED: dict[int, bool] = {}
_REPORT_BUG = (
    "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
    "bug-report.yml to report this bug."
)
# The state_dict key suffix of a module's extra state (`Module.get_extra_state`).
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"
# The registries under PyTorch's names, which libraries read and clear.
_global_forward_pre_hooks = _GLOBAL_FORWARD_PRE_HOOKS
_global_forward_hooks = _GLOBAL_FORWARD_HOOKS
_global_backward_hooks = _GLOBAL_BACKWARD_HOOKS
_global_backward_pre_hooks = _GLOBAL_BACKWARD_PRE_HOOKS
_global_parameter_registration_hooks = _GLOBAL_PARAMETER_REGISTRATION_HOOKS
_global_buffer_registration_hooks = _GLOBAL_BUFFER_REGISTRATION_HOOKS
_global_module_registration_hooks = _GLOBAL_MODULE_REGISTRATION_HOOKS
_global_forward_hooks_with_kwargs = _GLOBAL_FORWARD_HOOKS_WITH_KWARGS
_global_forward_hooks_always_called = _GLOBAL_FORWARD_HOOKS_ALWAYS_CALLED


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Removes a hook from the dict it was registered in."""

    _next_id = itertools.count()

    def __init__(self, *hooks_dicts):
        self.hooks_dicts = hooks_dicts
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        for hooks in self.hooks_dicts:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_hook(hooks: OrderedDict, hook, prepend: bool = False, *flags: dict) -> RemovableHandle:
    """Register `hook` in `hooks`; its handle also removes its id from the `flags` dicts."""
    handle = RemovableHandle(hooks, *flags)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """A forward pre-hook run before every module's forward."""
    return _add_hook(_GLOBAL_FORWARD_PRE_HOOKS, hook)


def register_module_forward_hook(
    hook, *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """A forward hook run after every module's forward (before the module's own), as
    ``hook(module, args, output)``, or ``hook(module, args, kwargs, output)`` `with_kwargs`;
    with `always_call` it also runs when the call raises."""
    handle = _add_hook(
        _GLOBAL_FORWARD_HOOKS,
        hook,
        False,
        _GLOBAL_FORWARD_HOOKS_WITH_KWARGS,
        _GLOBAL_FORWARD_HOOKS_ALWAYS_CALLED,
    )
    if with_kwargs:
        _GLOBAL_FORWARD_HOOKS_WITH_KWARGS[handle.id] = True
    if always_call:
        _GLOBAL_FORWARD_HOOKS_ALWAYS_CALLED[handle.id] = True
    return handle


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """A backward hook run for every module."""
    return _add_hook(_GLOBAL_BACKWARD_HOOKS, hook)


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """A backward pre-hook run for every module, before the module's own:
    ``hook(module, grad_output)`` may return replacement grad_output."""
    return _add_hook(_GLOBAL_BACKWARD_PRE_HOOKS, hook)


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, param)`` runs whenever a module registers a parameter (not None);
    it may return a parameter to register instead."""
    return _add_hook(_GLOBAL_PARAMETER_REGISTRATION_HOOKS, hook)


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, buffer)`` runs whenever a module registers a buffer (None
    included); it may return a tensor to register instead."""
    return _add_hook(_GLOBAL_BUFFER_REGISTRATION_HOOKS, hook)


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, submodule)`` runs whenever a module registers a submodule; it may
    return a module to register instead."""
    return _add_hook(_GLOBAL_MODULE_REGISTRATION_HOOKS, hook)


def _registered(hooks: OrderedDict, module, name: str, value):
    """`value` as the registration `hooks` leave it (each may return a replacement)."""
    for hook in tuple(hooks.values()):
        result = hook(module, name, value)
        if result is not None:
            value = result
    return value


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _device_of_type(kind: str, device) -> tocha.device:
    """`device` (an index, a device or None) as a device of type `kind`."""
    if device is None:
        return tocha.device(kind)
    if isinstance(device, int):
        return tocha.device(kind, device)
    return tocha.device(device)


class Module:
    """Base class of neural-network modules, as `torch.nn.Module`.

    Parameters, buffers and submodules assigned as attributes are registered; ``forward``
    defines the computation and calling the module runs it with its hooks.
    """

    training: bool
    _version = 1
    call_super_init = False
    dump_patches = False

    def __init__(self, *args, **kwargs) -> None:
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks_always_called", {})
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_state_dict_hooks", OrderedDict())
        setattr_(self, "_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # -- calling ------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _GLOBAL_FORWARD_PRE_HOOKS
            or _GLOBAL_FORWARD_HOOKS
            or _GLOBAL_BACKWARD_HOOKS
            or _GLOBAL_BACKWARD_PRE_HOOKS
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        ran: set[int] = set()  # the forward hooks already called
        output = None
        try:
            for hook_id, hook in itertools.chain(
                _GLOBAL_FORWARD_PRE_HOOKS.items(), self._forward_pre_hooks.items()
            ):
                if self._forward_pre_hooks_with_kwargs.get(hook_id):
                    result = hook(self, args, kwargs)
                    if result is not None:
                        if not (isinstance(result, tuple) and len(result) == 2):
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of "
                                f"(new_args, new_kwargs), but got {result}."
                            )
                        args, kwargs = result
                else:
                    result = hook(self, args)
                    if result is not None:
                        args = result if isinstance(result, tuple) else (result,)
            backward_hooks = list(_GLOBAL_BACKWARD_HOOKS.values()) + list(
                self._backward_hooks.values()
            )
            backward_pre_hooks = list(_GLOBAL_BACKWARD_PRE_HOOKS.values()) + list(
                self._backward_pre_hooks.values()
            )
            tracker = None
            if (backward_hooks or backward_pre_hooks) and tocha.is_grad_enabled():
                from ._backward_hooks import BackwardHookTracker

                tracker = BackwardHookTracker(self, backward_hooks, backward_pre_hooks)
                args = tracker.wrap_inputs(args)
            output = self.forward(*args, **kwargs)
            for hook_id, hook in itertools.chain(
                _GLOBAL_FORWARD_HOOKS.items(), self._forward_hooks.items()
            ):
                ran.add(hook_id)
                if self._forward_hooks_with_kwargs.get(
                    hook_id
                ) or _GLOBAL_FORWARD_HOOKS_WITH_KWARGS.get(hook_id):
                    result = hook(self, args, kwargs, output)
                else:
                    result = hook(self, args, output)
                if result is not None:
                    output = result
        except Exception:
            self._call_always_hooks(ran, args, kwargs, output)
            raise
        if tracker is not None:
            output = tracker.wrap_outputs(output)
        return output

    def _call_always_hooks(self, ran: set[int], args, kwargs, output) -> None:
        """After a call raised: the ``always_call`` forward hooks not yet called, each on the
        output so far; what they raise is only warned about."""
        for hook_id, hook in itertools.chain(
            _GLOBAL_FORWARD_HOOKS.items(), self._forward_hooks.items()
        ):
            is_global = hook_id in _GLOBAL_FORWARD_HOOKS
            always = (
                _GLOBAL_FORWARD_HOOKS_ALWAYS_CALLED
                if is_global
                else self._forward_hooks_always_called
            )
            if hook_id in ran or not always.get(hook_id):
                continue
            with_kwargs = (
                _GLOBAL_FORWARD_HOOKS_WITH_KWARGS if is_global else self._forward_hooks_with_kwargs
            )
            try:
                if with_kwargs.get(hook_id):
                    result = hook(self, args, kwargs, output)
                else:
                    result = hook(self, args, output)
                if result is not None:
                    output = result
            except Exception as exc:
                kind = "global module" if is_global else "module"
                warnings.warn(
                    f"{kind} forward hook with ``always_call=True`` raised an exception that "
                    f"was silenced as another error was raised in forward: {exc}",
                    stacklevel=3,
                )

    _call_impl = __call__

    # -- hooks --------------------------------------------------------------------------------
    def register_forward_pre_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """`hook(module, args)` (or ``(module, args, kwargs)``) runs before forward and may
        return replacement arguments."""
        handle = _add_hook(
            self._forward_pre_hooks, hook, prepend, self._forward_pre_hooks_with_kwargs
        )
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        """`hook(module, args, output)` runs after forward and may return a new output."""
        handle = _add_hook(
            self._forward_hooks,
            hook,
            prepend,
            self._forward_hooks_with_kwargs,
            self._forward_hooks_always_called,
        )
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` runs when the gradients with respect to the
        module's inputs are computed; it may return replacement grad_input."""
        self._set_backward_hook_kind(True)
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_output)` runs when the gradients with respect to the module's
        outputs are computed; it may return replacement grad_output."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook) -> RemovableHandle:
        """Deprecated: tocha runs it as a full backward hook (`register_full_backward_hook`);
        a module takes hooks of one kind only."""
        self._set_backward_hook_kind(False)
        return _add_hook(self._backward_hooks, hook)

    def _set_backward_hook_kind(self, full: bool) -> None:
        """Record whether the module's backward hooks are full ones; PyTorch refuses both
        kinds on one module."""
        if getattr(self, "_is_full_backward_hook", None) is (not full):
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        object.__setattr__(self, "_is_full_backward_hook", full)

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """`hook(module, prefix, keep_vars)` runs before `state_dict` collects this module."""
        return _add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` runs after `state_dict`."""
        return _add_hook(self._state_dict_hooks, hook)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` runs before this module loads its entries."""
        return _add_hook(self._load_state_dict_pre_hooks, hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        """The older form programs still use: `hook(state_dict, prefix, local_metadata,
        strict, missing_keys, unexpected_keys, error_msgs)`, given the module first only
        `with_module`."""
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        return self.register_load_state_dict_pre_hook(lambda module, *args: hook(*args))

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """`hook(module, incompatible_keys)` runs after `load_state_dict`."""
        return _add_hook(self._load_state_dict_post_hooks, hook)

    # -- registration -------------------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, self.__dict__, self._buffers, self._modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = self.__dict__.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, self.__dict__, self._parameters, self._buffers)
            if _GLOBAL_MODULE_REGISTRATION_HOOKS:
                value = _registered(_GLOBAL_MODULE_REGISTRATION_HOOKS, self, name, value)
            modules[name] = value
        elif self.__dict__.get("_modules") is not None and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            if _GLOBAL_MODULE_REGISTRATION_HOOKS:
                value = _registered(_GLOBAL_MODULE_REGISTRATION_HOOKS, self, name, value)
            self._modules[name] = value
        elif isinstance(value, (Buffer, UninitializedBuffer)) or (
            self.__dict__.get("_buffers") is not None and name in self._buffers
        ):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            persistent = getattr(value, "persistent", name not in self._non_persistent_buffers_set)
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name, *dicts) -> None:
        for d in dicts:
            d.pop(name, None)

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            values = d.get(store)
            if values is not None and name in values:
                return values[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def _check_name(self, name, kind: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            got = f", got: {name}" if kind == "module" else ""
            raise KeyError(f'{kind} name can\'t contain "."{got}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                "be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        if param is not None and _GLOBAL_PARAMETER_REGISTRATION_HOOKS:
            param = _registered(_GLOBAL_PARAMETER_REGISTRATION_HOOKS, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter, e.g. running statistics)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        if isinstance(tensor, Buffer):
            tensor = _plain(tensor)
        if _GLOBAL_BUFFER_REGISTRATION_HOOKS:
            tensor = _registered(_GLOBAL_BUFFER_REGISTRATION_HOOKS, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if _GLOBAL_MODULE_REGISTRATION_HOOKS:
            module = _registered(_GLOBAL_MODULE_REGISTRATION_HOOKS, self, name, module)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path (``"encoder.layers.0"``); "" is self."""
        module = self
        if target == "":
            return module
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{type(module).__name__} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put `module` at a dotted path (``"encoder.layers.0"``). The parent must exist;
        the last name may be new unless `strict`, and must not name something that is not a
        module."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return module._buffers[name]

    # -- iteration ----------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(value))
                yield (module_prefix + ("." if module_prefix else "") + name, value)

    def parameters(self, recurse: bool = True):
        """An iterator over the parameters (of submodules too with `recurse`)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ):
        """An iterator over (dotted name, parameter)."""
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse: bool = True):
        """An iterator over the buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """An iterator over (dotted name, buffer)."""
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def children(self) -> Iterator[Module]:
        """An iterator over the direct submodules."""
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """An iterator over (name, direct submodule)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self) -> Iterator[Module]:
        """An iterator over all modules of the tree, self first."""
        for _, module in self.named_modules():
            yield module

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ):
        """An iterator over (dotted name, module) of the whole tree, self first (as "")."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(
                memo, prefix + ("." if prefix else "") + name, remove_duplicate
            )

    # -- modes and conversions ----------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, batch norm updating its statistics)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with tocha.no_grad():
                    p.grad.zero_()

    def apply(self, fn) -> Module:
        """Call `fn` on every submodule (children first) and on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse: bool = True) -> Module:
        """Replace the data of every parameter, gradient and buffer by ``fn(data)``, keeping
        the Parameter objects (so optimizers holding them stay valid)."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with tocha.no_grad():
                new = fn(param)
            param.data = new
            if param.grad is not None:
                with tocha.no_grad():
                    grad = fn(param.grad)
                param._ag.grad = grad
        for name, buf in self._buffers.items():
            if buf is not None:
                self._buffers[name] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``; floating point dtypes only are cast.
        ``memory_format=`` lays out the 4-D and 5-D ones (``tocha.channels_last``...)."""
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        for arg in args:
            if isinstance(arg, tocha.dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            else:
                device = arg
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )
        if dtype is not None and dtype.is_complex:
            warnings.warn(
                "Complex modules are a new feature under active development whose design may "
                "change, and some modules might not work as expected when using complex "
                "tensors as parameters or buffers. Please file an issue at "
                "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a "
                "complex module does not work as expected.",
                stacklevel=2,
            )

        def convert(t: Tensor) -> Tensor:
            target = (
                dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) else None
            )
            try:
                if memory_format is not None and t.dim() in (4, 5):
                    return t.to(device=device, dtype=target, memory_format=memory_format)
                return t.to(device=device, dtype=target)
            except NotImplementedError as exc:
                if t.is_meta:
                    raise NotImplementedError(
                        f"{exc} Please use tocha.nn.Module.to_empty() instead of "
                        "tocha.nn.Module.to() when moving module from meta to a different device."
                    ) from None
                raise

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Give every parameter and buffer new, uninitialised storage on `device`, keeping
        shapes and dtypes: how a module built on the meta device gets memory."""
        return self._apply(lambda t: tocha.empty_like(t, device=device), recurse=recurse)

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    def xpu(self, device=None) -> Module:
        """Move parameters and buffers to an XPU (`device`: its index or a device)."""
        return self._apply(lambda t: t.to(_device_of_type("xpu", device)))

    def ipu(self, device=None) -> Module:
        """Move parameters and buffers to an IPU (`device`: its index or a device)."""
        return self._apply(lambda t: t.to(_device_of_type("ipu", device)))

    def mtia(self, device=None) -> Module:
        """Move parameters and buffers to an MTIA device (`device`: its index or a device)."""
        return self._apply(lambda t: t.to(_device_of_type("mtia", device)))

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's forward in place with ``tocha.compile(forward, *args,
        **kwargs)``; hooks still run around it."""
        self.forward = tocha.compile(self.forward, *args, **kwargs)

    def _cast(self, dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        return self._cast(tocha.float32)

    def double(self) -> Module:
        return self._cast(tocha.float64)

    def half(self) -> Module:
        return self._cast(tocha.float16)

    def bfloat16(self) -> Module:
        return self._cast(tocha.bfloat16)

    def type(self, dst_type) -> Module:
        """Cast all parameters and buffers to `dst_type` (a dtype or a tensor type such as
        ``tocha.DoubleTensor``), integer buffers included, as ``Tensor.type``."""
        return self._apply(lambda t: t.type(dst_type))

    def share_memory(self) -> Module:
        """Move parameters and buffers into shared memory (needs tocha-mp)."""
        return self._apply(lambda t: t.share_memory_())

    # -- state dicts --------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        extra = getattr(type(self), "get_extra_state", None)
        if extra is not None and extra is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """The state to save under ``<prefix>_extra_state`` in the state dict; a module that
        has such state overrides this and `set_extra_state`."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            f"{_REPORT_BUG}"
        )

    def set_extra_state(self, state) -> None:
        """Restore what `get_extra_state` returned, when a state dict is loaded."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            f"{_REPORT_BUG}"
        )

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An OrderedDict of every parameter and persistent buffer, by dotted name.

        The deprecated positional form ``state_dict(destination, prefix, keep_vars)`` warns.
        """
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.state_dict for details.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        local_metadata = {"version": self._version}
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
        assign=False,
    ) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(
                self,
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
        persistent = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local = {
            **{k: v for k, v in self._parameters.items() if v is not None},
            **{k: v for k, v in persistent.items() if v is not None},
        }
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if is_lazy(param):
                continue
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_size(value.shape)} from checkpoint, the shape in current model is "
                    f"{_size(param.shape)}."
                )
                continue
            if assign:
                if isinstance(param, Parameter):
                    new = (
                        value
                        if isinstance(value, Parameter)
                        else Parameter(value, param.requires_grad)
                    )
                    self._parameters[name] = new
                else:
                    self._buffers[name] = value
            elif param.is_meta and not value.is_meta:
                warnings.warn(
                    f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
                    "parameter in the current model, which is a no-op. (Did you mean to pass "
                    "`assign=True` to assign items in the state dictionary to their "
                    "corresponding key in the module instead of copying them in place?)",
                    stacklevel=2,
                )
            else:
                with tocha.no_grad():
                    param.copy_(value)
        extra_key = prefix + "_extra_state"
        if getattr(type(self), "set_extra_state", None) is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                rest = key[len(prefix) :]
                head = rest.split(".", 1)[0]
                if head not in self._modules and rest not in local:
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from `state_dict` (keys as `state_dict` makes them).
        With `strict`, missing or unexpected keys raise; returns the keys that did not
        match."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)

        def load(module, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            module._load_from_state_dict(
                state_dict, prefix, local_metadata, True, missing, unexpected, errors, assign
            )
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
            result = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, result)

        load(self)
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected)
                    ),
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing)
                    ),
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(errors)
                )
            )
        return _IncompatibleKeys(missing, unexpected)

    # -- printing -----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The module's own settings, shown inside its repr's parentheses."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        for name, module in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(module), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        keys = (
            list(object.__dir__(self))
            + list(self._parameters)
            + list(self._modules)
            + list(self._buffers)
        )
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)

    def __getstate__(self):
        return self.__dict__.copy()


def typename(obj) -> str:
    """PyTorch's name of an object's type in messages: ``torch.FloatTensor`` for tensors."""
    if isinstance(obj, Tensor):
        return f"torch.{TITLE[obj.dtype]}Tensor"
    return type(obj).__name__


def _plain(t: Tensor) -> Tensor:
    plain = wrap(t._data, t._device)
    if t.requires_grad:
        plain.requires_grad_(True)
    return plain


def _size(shape) -> str:
    return f"torch.Size([{', '.join(map(str, shape))}])"
