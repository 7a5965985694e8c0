"""The `Optimizer` base class: parameter groups, per-parameter state, state dicts and hooks.

Mirrors ``torch.optim.Optimizer``: ``param_groups`` is a list of dicts (``params`` plus the
group's options), ``state`` maps each parameter to a dict of its state, and
``state_dict()`` / ``load_state_dict()`` use PyTorch's structure (parameters replaced by
their index across groups). Step pre/post hooks run around every subclass's ``step``.
"""

from __future__ import annotations

import functools
import itertools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, TypeAlias

import numpy as np

import tocha
from tocha import Tensor
from tocha.library import bump_version

__all__ = [
    "Optimizer",
    "required",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]

StateDict = dict[str, Any]
# What an optimizer takes as `params`: tensors, or parameter groups (dicts with ``"params"``).
ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]


class _Required:
    """The default of an optimizer argument that every parameter group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class RemovableHandle:
    """A handle that removes the hook it was returned for (``handle.remove()``)."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: OrderedDict):
        self.hooks_dict = hooks_dict
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        self.hooks_dict.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


_global_pre_hooks: OrderedDict = OrderedDict()
_global_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Register a pre hook run before every optimizer's step: ``hook(optimizer, args, kwargs)``."""
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Register a post hook run after every optimizer's step: ``hook(optimizer, args, kwargs)``."""
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


def _hooked_step(step: Callable) -> Callable:
    """`step` wrapped to run the global and the optimizer's step pre and post hooks. As in
    PyTorch, the hooks' `args` are step's whole positional arguments, the optimizer first,
    and a pre hook's replacement `args` must start with it too."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        pre = self._optimizer_step_pre_hooks
        post = self._optimizer_step_post_hooks
        if not (pre or post or _global_pre_hooks or _global_post_hooks):
            return step(self, *args, **kwargs)
        args = (self, *args)
        if pre or _global_pre_hooks:
            for hook in (*_global_pre_hooks.values(), *pre.values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            f"{step} must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {result}."
                        )
                    args, kwargs = result
        out = step(*args, **kwargs)
        if post or _global_post_hooks:
            for hook in (*post.values(), *_global_post_hooks.values()):
                hook(self, args, kwargs)
        return out

    wrapper.hooked = True  # type: ignore[attr-defined]
    return wrapper


def scalar_dtype() -> np.dtype:
    """The dtype of scalar state such as ``step``: float64 when that is the default dtype,
    else float32 (PyTorch's ``_get_scalar_dtype``)."""
    return np.dtype(np.float64 if tocha.get_default_dtype() is tocha.float64 else np.float32)


def to_scalar(value):
    """A Python number from a number or a one-element tensor (a tensor ``lr``)."""
    return value.item() if isinstance(value, Tensor) else value


class Optimizer:
    """Base class for all optimizers.

    Args:
        params (iterable): an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts
            (parameter groups) naming what to optimize.
        defaults (dict): default values of the optimization options, used when a parameter
            group does not give them.
    """

    OptimizerPreHook: TypeAlias = Callable[..., "tuple[tuple, dict] | None"]
    OptimizerPostHook: TypeAlias = Callable[..., None]

    @staticmethod
    def profile_hook_step(func: Callable) -> Callable:
        """`func` (a ``step``) wrapped to run the step pre and post hooks around it; every
        subclass's ``step`` is wrapped so already."""
        return func if getattr(func, "hooked", False) else _hooked_step(func)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._init_hooks()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                "Tensors or dicts, but got " + _typename(params)
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def _init_hooks(self) -> None:
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in (
            "step_pre",
            "step_post",
            "state_dict_pre",
            "state_dict_post",
            "load_state_dict_pre",
            "load_state_dict_post",
        ):
            self.__dict__.setdefault(f"_optimizer_{name}_hooks", OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # -- hooks ---------------------------------------------------------------------------
    @staticmethod
    def _register(hooks: OrderedDict, hook: Callable, prepend: bool = False) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)``, run
        before each ``step``."""
        return self._register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs) -> None``, run after each ``step``."""
        return self._register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Register ``hook(optimizer) -> None``, run before ``state_dict``."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict or None``, run after
        ``state_dict``."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict or None``, run before
        ``load_state_dict`` on a shallow copy of the dict given."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Register ``hook(optimizer) -> None``, run after ``load_state_dict``."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts ---------------------------------------------------------------------
    def state_dict(self) -> StateDict:
        """The optimizer's state as ``{"state": {index: {...}}, "param_groups": [...]}``.

        Parameters are replaced by their index, counted across groups in order; each group
        lists its parameters' indices under ``params``. The state's tensors are the live
        ones, as in PyTorch (deep-copy or save the dict to keep a snapshot).
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update(
                {
                    id(p): i
                    for i, p in enumerate(group["params"], start_index)
                    if id(p) not in param_mappings
                }
            )
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, Tensor) else k): v
            for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a state from `state_dict` (as `state_dict` returns it).

        Tensors in the state are cast to their parameter's device (and floating dtype, except
        ``step``). ValueError if the groups' number or sizes differ from this optimizer's.
        """
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match "
                "the size of optimizer's group"
            )
        id_map = dict(
            zip(
                itertools.chain.from_iterable(g["params"] for g in saved_groups),
                itertools.chain.from_iterable(g["params"] for g in groups),
            )
        )
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v
        param_groups = []
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            param_groups.append(new_group)
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- gradients and steps -------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors: to None (default) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if grad.grad_fn is not None:
                    grad.detach_()
                elif grad.requires_grad:
                    grad.requires_grad_(False)
                grad._data.fill(0)
                bump_version(grad)

    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Perform a single optimization step (`closure` re-evaluates the loss)."""
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (a dict with ``params`` and optional options) to
        ``param_groups``; the options it lacks take the optimizer's defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, "
                "but the ordering of tensors in sets will change between runs. "
                "Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param "
                    "names are missing"
                )
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or getattr(param, "retains_grad", False)
            ):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required "
                    f"optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            import warnings

            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in "
                "future, this will cause an error; see "
                "github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        param_set: set = set()
        for group in self.param_groups:
            param_set.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {current} to the optimizer"
                )
        if not param_set.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


def _typename(obj) -> str:
    """PyTorch's ``torch.typename``: ``tocha.FloatTensor`` for a float32 tensor, else the
    qualified name of the object's type."""
    if isinstance(obj, Tensor):
        return f"tocha.{_TENSOR_TYPES.get(obj.dtype, 'Tensor')}"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


_TENSOR_TYPES = {
    tocha.float32: "FloatTensor",
    tocha.float64: "DoubleTensor",
    tocha.float16: "HalfTensor",
    tocha.int64: "LongTensor",
    tocha.int32: "IntTensor",
    tocha.bool: "BoolTensor",
}


def _cast(param: Tensor, value, key=None):
    """A copy of a loaded state value with its tensors on `param`'s device (and in its floating
    dtype, except ``step``), as PyTorch's ``load_state_dict`` makes it."""
    if isinstance(value, Tensor):
        if key != "step" and param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        if key == "step":
            return value
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast(param, v, key=k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return type(value)(_cast(param, v) for v in value)  # type: ignore[call-arg]
    return value
