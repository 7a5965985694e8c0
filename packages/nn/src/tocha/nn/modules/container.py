"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, overload

from tocha import Tensor

from ..parameter import Parameter
from .module import Module, _addindent, typename

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index(i: int, n: int, kind: str) -> int:
    i = operator.index(i)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range")
    return i % n


def _pairs(pairs, method: str, kind: str) -> list[tuple[Any, Any]]:
    """The ``(key, value)`` pairs of a mapping or of an iterable of pairs, checked as the
    ``update`` of `kind` (whose qualified name is `method`) checks them."""
    if isinstance(pairs, (Mapping, ModuleDict, ParameterDict)):
        return list(pairs.items())
    if not isinstance(pairs, Iterable):
        raise TypeError(
            f"{method} should be called with an iterable of key/value pairs, but got "
            f"{type(pairs).__name__}"
        )
    checked = []
    for j, pair in enumerate(pairs):
        if not isinstance(pair, Iterable):
            raise TypeError(
                f"{kind} update sequence element #{j} should be Iterable; is{type(pair).__name__}"
            )
        pair = tuple(pair)
        if len(pair) != 2:
            raise ValueError(
                f"{kind} update sequence element #{j} has length {len(pair)}; 2 is required"
            )
        checked.append(pair)
    return checked


class Container(Module):
    """Deprecated: a Module whose keyword arguments are its children (warns)."""

    def __init__(self, **kwargs: Module) -> None:
        super().__init__()
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now implemented in "
            "`nn.Module`. Subclass that instead.",
            FutureWarning,
            stacklevel=2,
        )
        for name, module in kwargs.items():
            self.add_module(name, module)


class Sequential(Module):
    """Modules called in order, each on the previous one's output: ``Sequential(m1, m2)``
    or ``Sequential(OrderedDict(name=m, ...))``."""

    def __init__(self, *args: Module | OrderedDict[str, Module]) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input

    @overload
    def __getitem__(self, idx: int) -> Module: ...
    @overload
    def __getitem__(self, idx: slice) -> Sequential: ...
    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        return self._modules[keys[_index(idx, len(keys), "Sequential")]]

    def __setitem__(self, idx: int, module: Module) -> None:
        keys = list(self._modules)
        setattr(self, keys[_index(idx, len(keys), "Sequential")], module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), "")]]
        for key in targets:
            del self._modules[key]
        self._renumber()

    def _renumber(self) -> None:
        items = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(items):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        return self.extend(list(other))

    def _check_factor(self, other) -> None:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other: int) -> Sequential:
        """A new Sequential holding this one's modules (the same objects) `other` times."""
        self._check_factor(other)
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other: int) -> Sequential:
        self._check_factor(other)
        return self.extend(list(self) * (other - 1))

    def append(self, module: Module) -> Sequential:
        """Add `module` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert `module` before position `index`."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items = list(self._modules.values())
        items.insert(index % (n + 1) if index < 0 else index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self

    def extend(self, sequential) -> Sequential:
        """Append every module of `sequential`."""
        for module in sequential:
            self.append(module)
        return self

    def pop(self, key: int) -> Module:
        module = self[key]
        del self[key]
        return module


class ModuleList(Module):
    """A list of modules, registered as submodules ``"0"``, ``"1"``..."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @overload
    def __getitem__(self, idx: int) -> Module: ...
    @overload
    def __getitem__(self, idx: slice) -> ModuleList: ...
    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), "")]]
        for key in targets:
            del self._modules[key]
        items = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(items):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other) -> ModuleList:
        return ModuleList([*self, *other])

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def pop(self, key: int) -> Module:
        module = self[key]
        del self[key]
        return module

    def __repr__(self) -> str:
        """The modules, runs of equal reprs compressed (``(0-2): 3 x Linear(...)``)."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = []  # [start, end, repr]
        for i, text in enumerate(reprs):
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = []
        for start, end, text in runs:
            head = f"({start})" if start == end else f"({start}-{end}): {end - start + 1} x"
            lines.append(_addindent(f"{head}{':' if start == end else ''} {text}", 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered as submodules under their keys."""

    def __init__(
        self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
    ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def update(self, modules) -> None:
        """Add the pairs of a mapping or of an iterable of ``(key, module)`` pairs."""
        for key, module in _pairs(modules, "ModuleDict.update", "ModuleDict"):
            self[key] = module


class ParameterList(Module):
    """A list of parameters (tensors given are wrapped as Parameters)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self), "ParameterList")))

    def __setitem__(self, idx: int, param) -> None:
        idx = _index(idx, len(self), "ParameterList")
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, params: Iterable[Any]) -> ParameterList:
        return self.extend(params)

    def append(self, value) -> ParameterList:
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values) -> ParameterList:
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        lines = []
        for i, p in enumerate(self):
            if isinstance(p, Tensor):
                size = "x".join(str(s) for s in p.size())
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({i}): {kind} containing: [{p.dtype} of size {size}]")
            else:
                lines.append(f"  ({i}): Object of type: {type(p).__name__}")
        return "\n".join(lines)


class ParameterDict(Module):
    """A dict of parameters (tensors given are wrapped as Parameters)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def keys(self) -> Iterable[str]:
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        return (self[k] for k in self._keys)

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def get(self, key: str, default: Any = None) -> Any:
        """The value under `key`, or `default` when there is none."""
        return self[key] if key in self else default

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value under `key`, after storing `default` there (wrapped as a Parameter when
        it is a tensor) if the key was absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted ``(key, value)`` pair."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict mapping each of `keys` to `default`."""
        return ParameterDict((key, default) for key in keys)

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameter objects."""
        return ParameterDict(list(self.items()))

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def update(self, parameters) -> None:
        """Add the pairs of a mapping or of an iterable of ``(key, value)`` pairs."""
        for key, value in _pairs(parameters, "ParametersDict.update", "ParameterDict"):
            self[key] = value

    def __or__(self, other) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        lines = []
        for key, p in self.items():
            if isinstance(p, Tensor):
                size = "x".join(str(s) for s in p.size())
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({key}): {kind} containing: [{typename(p)} of size {size}]")
            else:
                lines.append(f"  ({key}): Object of type: {type(p).__name__}")
        return "\n".join(lines)
