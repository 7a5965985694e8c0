"""Copying a batch into page-locked host memory, for faster transfers to a GPU."""

from __future__ import annotations

import collections.abc
import copy

import tocha

__all__ = ["pin_memory"]


def pin_memory(data):
    """`data` with every tensor (and every object with a ``pin_memory`` method) pinned,
    through mappings, namedtuples and sequences."""
    if isinstance(data, tocha.Tensor) or hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(sample) for k, sample in data.items()}
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update(pinned)
                return clone
            return type(data)(pinned)
        except TypeError:
            return pinned
    if isinstance(data, tuple):
        if hasattr(data, "_fields"):
            return type(data)(*(pin_memory(sample) for sample in data))
        return type(data)(pin_memory(sample) for sample in data)
    if isinstance(data, collections.abc.Sequence):
        pinned = [pin_memory(sample) for sample in data]
        try:
            return type(data)(pinned)
        except TypeError:
            return pinned
    return data
