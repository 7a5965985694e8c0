"""Pruning, as ``torch.nn.utils.prune``: zeroing some of a module's parameter entries (or
whole channels) by a mask.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, stores the mask (1 keeps an
entry, 0 prunes it) as the buffer ``<name>_mask``, and makes ``<name>`` a plain attribute,
``<name>_mask * <name>_orig``, that the pruning method, a forward pre-hook of the module,
recomputes before each forward. Pruning the same tensor again computes the new mask on what
the old one kept and combines the two, the methods gathered in a `PruningContainer` that
replaces the old hook. `remove` makes the pruning permanent.

Example::

    >>> m = tocha.nn.Linear(3, 4)
    >>> prune.l1_unstructured(m, "weight", amount=0.5)  # the 6 smallest |w| become 0
    Linear(in_features=3, out_features=4, bias=True)
    >>> list(m.state_dict())
    ['bias', 'weight_orig', 'weight_mask']
    >>> prune.remove(m, "weight")  # weight is a parameter again, its zeros kept
    Linear(in_features=3, out_features=4, bias=True)
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any

import tocha
from tocha import Tensor

from ..modules.module import Module
from .convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


def _size_text(shape) -> str:
    """A shape as PyTorch's messages print it."""
    return f"torch.Size([{', '.join(map(str, shape))}])"


def _check_amount(amount) -> None:
    """Refuse, at construction, an amount that is neither a non-negative int (a count) nor a
    float in [0, 1] (a fraction)."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if isinstance(amount, numbers.Integral):
        bad = amount < 0
    else:
        bad = float(amount) > 1.0 or float(amount) < 0.0
    if bad:
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a "
            "non-negative integer"
        )


def _how_many(amount, total: int) -> int:
    """How many of `total` entries or channels `amount` prunes: an int as it is (at most
    `total`), a fraction of `total` rounded to the nearest (ties to even)."""
    if isinstance(amount, numbers.Integral):
        if amount > total:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={total}"
            )
        return amount
    return round(amount * total)


def _check_structured(t: Tensor, dim: int) -> None:
    """Structured pruning needs a tensor of 2 dims or more, and a `dim` below its count."""
    if t.dim() <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {_size_text(t.shape)} with {t.dim()} dims"
        )
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {_size_text(t.shape)}")


def _channels_mask(t: Tensor, dim: int, channels: Tensor, default_mask: Tensor) -> Tensor:
    """Ones on the `channels` (a bool or index tensor) of `t` along `dim`, zeros elsewhere,
    times `default_mask`."""
    dim = dim % t.dim()
    mask = tocha.zeros_like(t)
    mask[tuple(channels if d == dim else slice(None) for d in range(t.dim()))] = 1
    mask *= default_mask.to(dtype=mask.dtype)
    return mask


def _pruning_hooks(module: Module, name: str) -> list:
    """The keys of `module`'s forward pre-hooks that prune its `name`."""
    return [
        key
        for key, hook in module._forward_pre_hooks.items()
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name
    ]


class BasePruningMethod(ABC):
    """Abstract base of the pruning methods: a subclass gives `compute_mask` and a
    ``PRUNING_TYPE`` (``"unstructured"``, ``"structured"`` with a ``dim`` attribute, or
    ``"global"``), which says what a later pruning of the same tensor works on.

    An applied method is the forward pre-hook of its module and knows the tensor it prunes
    by ``_tensor_name``."""

    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        """Set ``module.<name>`` to the mask times the original (before each forward)."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask of `t` (the importance scores of the tensor to prune), pruning on top of
        `default_mask` (ones for a tensor not pruned yet), which it must respect."""

    def apply_mask(self, module: Module) -> Tensor:
        """``module.<name>_mask * module.<name>_orig``: the pruned tensor."""
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        *args: Any,
        importance_scores: Tensor | None = None,
        **kwargs: Any,
    ) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``: reparametrize it as
        ``<name>_orig`` and ``<name>_mask`` and add the forward pre-hook that recomputes
        ``<name>``. The mask is computed from `importance_scores` (of the parameter's shape;
        the parameter itself by default). On a tensor pruned before, the new mask is computed
        on what the old one kept and combined with it, the hook becoming a `PruningContainer`
        of every method applied. Returns the hook."""
        keys = _pruning_hooks(module, name)
        if len(keys) > 1:
            raise AssertionError(
                f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                f"{module}. Use a PruningContainer."
            )
        previous = module._forward_pre_hooks.pop(keys[0]) if keys else None
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if previous is not None:
            container = previous
            if not isinstance(container, PruningContainer):
                container = PruningContainer(previous)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is not None and importance_scores.shape != orig.shape:
            raise AssertionError(
                f"importance_scores should have the same shape as parameter {name} of "
                f"{module}, got {_size_text(importance_scores.shape)} vs "
                f"{_size_text(orig.shape)}"
            )
        first = previous is None
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = tocha.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            scores = orig if importance_scores is None else importance_scores
            mask = method.compute_mask(scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # the parameter back under its name (now the last one)
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        return method

    def prune(
        self,
        t: Tensor,
        default_mask: Tensor | None = None,
        importance_scores: Tensor | None = None,
    ) -> Tensor:
        """`t` pruned: ``t * compute_mask(importance_scores or t, default_mask or ones)``,
        without touching any module."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(
                "importance_scores should have the same shape as tensor t, got "
                f"{_size_text(importance_scores.shape)} vs {_size_text(t.shape)}"
            )
        if default_mask is None:
            default_mask = tocha.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: the parameter ``<name>_orig`` (the same object) takes
        the pruned values and its name back; ``<name>_mask`` goes. The caller removes the
        hook (the function `remove` does both)."""
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = pruned.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied in turn to one tensor, in order; its mask is the last
    method's, computed on what the earlier ones kept (the entries, for an unstructured
    method; the channels along its ``dim``, for a structured one; all, for a global one).

    Takes one method (whose tensor it then prunes) or none; iterating gives the methods."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod | None) -> None:
        """Append `method`, which must prune the container's tensor."""
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """`default_mask` (as `t`'s dtype) with the last method's mask written over the part
        it computes on: the kept entries, the kept channels, or everything."""
        method = self._pruning_methods[-1]
        kind = method.PRUNING_TYPE
        mask = default_mask.to(dtype=t.dtype)  # `default_mask` itself when of t's dtype,
        # written in place as PyTorch's is (`apply` passes a copy of the module's mask)
        if kind == "unstructured":
            part: Any = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    'Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                    "`dim` defined."
                )
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            others = [d for d in range(ndim) if d != dim]
            kept = default_mask.sum(dim=others) != 0
            part = tuple(kept if d == dim else slice(None) for d in range(ndim))
        elif kind == "global":
            part = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[part], default_mask=mask[part])
        mask[part] = partial.to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is the default one (all ones on a fresh tensor)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:
        """Reparametrize ``module.<name>`` with a mask of ones."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` entries (an int) or that fraction of them (a float in [0, 1]) drawn
    at random: those of the largest ``rand_like`` values."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        count = _how_many(self.amount, t.nelement())
        mask = default_mask.clone(memory_format=tocha.contiguous_format)
        if count != 0:
            draws = tocha.rand_like(t).reshape(-1)
            mask.view(-1)[tocha.topk(draws, k=count).indices] = 0
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float) -> BasePruningMethod:
        """Prune ``module.<name>`` by `amount` random entries."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries (an int) or that fraction of them (a float in [0, 1]) of
    smallest absolute value (of equal ones, the first)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        count = _how_many(self.amount, t.nelement())
        mask = default_mask.clone(memory_format=tocha.contiguous_format)
        if count != 0:
            smallest = tocha.topk(t.abs().reshape(-1), k=count, largest=False).indices
            mask.view(-1)[smallest] = 0
        return mask

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: int | float,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        """Prune the `amount` entries of ``module.<name>`` of smallest ``|importance|``."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim` (an int, or a fraction of them as a float
    in [0, 1]) drawn at random: those of the smallest ``rand(channels)`` values."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        channels = t.shape[self.dim]
        count = _how_many(self.amount, channels)
        if count == 0:
            return default_mask
        draws = tocha.rand(channels)
        kept = tocha.ones(channels, dtype=tocha.bool)
        kept[tocha.topk(draws, k=count, largest=False).indices] = False
        return _channels_mask(t, self.dim, kept, default_mask)

    @classmethod
    def apply(
        cls, module: Module, name: str, amount: int | float, dim: int = -1
    ) -> BasePruningMethod:
        """Prune `amount` random channels of ``module.<name>`` along `dim`."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` (an int, or a fraction of them as a float in
    [0, 1]) of smallest `n`-norm, the norm taken over every other dim as ``tocha.norm``'s
    ``p`` (an int, a float, ``inf``, ``-inf``, ``'fro'`` or ``'nuc'``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: int | float | str, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        channels = t.shape[self.dim]
        count = _how_many(self.amount, channels)
        dim = self.dim % t.dim()
        norms = tocha.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        if count == 0:
            return default_mask
        kept = tocha.topk(norms, k=channels - count, largest=True).indices
        return _channels_mask(t, dim, kept, default_mask)

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: int | float,
        n: int | float | str,
        dim: int,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        """Prune the `amount` channels of ``module.<name>`` along `dim` of smallest
        `n`-norm of the importance scores."""
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes where the given `mask` (of the tensor's shape) is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {_size_text(default_mask.shape)} must match self.mask "
                f"shape {_size_text(self.mask.shape)}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> BasePruningMethod:
        """Prune ``module.<name>`` where `mask` is 0."""
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Reparametrize ``module.<name>`` as ``<name>_orig`` and a mask of ones
    ``<name>_mask`` without pruning anything. Returns `module`."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Prune `amount` entries of ``module.<name>`` (a count, or a fraction in [0, 1]) chosen
    at random among those not pruned yet. Returns `module`.

    Example::

        >>> m = prune.random_unstructured(tocha.nn.Linear(2, 3), name="weight", amount=1)
        >>> int((m.weight == 0).sum())
        1
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None
) -> Module:
    """Prune the `amount` entries of ``module.<name>`` (a count, or a fraction in [0, 1]) of
    smallest absolute value of `importance_scores` (the parameter by default), among those
    not pruned yet. Returns `module`."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Prune `amount` channels of ``module.<name>`` along `dim` (a count, or a fraction in
    [0, 1]) chosen at random among those not pruned yet. Returns `module`."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Module,
    name: str,
    amount: int | float,
    n: int | float | str,
    dim: int,
    importance_scores: Tensor | None = None,
) -> Module:
    """Prune the `amount` channels of ``module.<name>`` along `dim` (a count, or a fraction
    in [0, 1]) of smallest `n`-norm of `importance_scores` (the parameter by default), among
    those not pruned yet. Returns `module`.

    Example::

        >>> m = prune.ln_structured(tocha.nn.Conv2d(5, 3, 2), "weight", 0.3, n=2, dim=0)
        >>> m.weight_mask.sum(dim=(1, 2, 3))  # one filter of three pruned
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable,
    pruning_method: type[BasePruningMethod],
    importance_scores: dict | None = None,
    **kwargs: Any,
) -> None:
    """Prune the tensors of `parameters` (``(module, name)`` pairs) as one: their entries
    not pruned yet, flattened and concatenated, go through ``pruning_method(**kwargs)`` (an
    unstructured method, e.g. `L1Unstructured` with ``amount``), and each tensor gets its
    part of the mask by `custom_from_mask`. `importance_scores` maps pairs to scores (the
    parameter itself for a pair it lacks).

    Example::

        >>> net = tocha.nn.Sequential(tocha.nn.Linear(3, 4), tocha.nn.Linear(4, 2))
        >>> pairs = [(net[0], "weight"), (net[1], "weight")]
        >>> prune.global_unstructured(pairs, prune.L1Unstructured, amount=10)
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector(
        [
            importance_scores.get((module, name), getattr(module, name))
            for module, name in parameters
        ]
    )
    default_mask = parameters_to_vector(
        [
            getattr(module, name + "_mask", tocha.ones_like(getattr(module, name)))
            for module, name in parameters
        ]
    )
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":  # type: ignore[attr-defined]
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"  # type: ignore[attr-defined]
        )
    container.add_pruning_method(method)
    mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        size = param.numel()
        custom_from_mask(module, name, mask=mask[start : start + size].view_as(param))
        start += size


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where `mask` (of its shape) is 0, on top of any earlier
    pruning. Returns `module`."""
    CustomFromMask.apply(module, name, mask=mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent: ``<name>`` becomes a parameter again
    (the ``<name>_orig`` object) holding the pruned values; ``<name>_orig``,
    ``<name>_mask`` and the hook go. Returns `module`.

    Raises:
        ValueError: ``module.<name>`` is not pruned.
    """
    keys = _pruning_hooks(module, name)
    if not keys:
        raise ValueError(
            f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
        )
    module._forward_pre_hooks[keys[0]].remove(module)
    del module._forward_pre_hooks[keys[0]]
    return module


def is_pruned(module: Module) -> bool:
    """Whether `module` or any module inside it has a pruning hook."""
    return any(
        isinstance(hook, BasePruningMethod)
        for _, sub in module.named_modules()
        for hook in sub._forward_pre_hooks.values()
    )
