"""Walking nested samples: `default_collate` (a list of samples to one batch),
`default_convert` (NumPy values to tensors) and `pin` (a batch into page-locked memory).

All three rebuild the containers they walk through as the same type where they can: see
`_rebuilt`.
"""

from __future__ import annotations

import collections.abc
import copy
from collections.abc import Sequence

import numpy as np

import tocha

__all__ = ["default_collate", "default_convert", "pin"]

# NumPy dtype kinds (as in ``dtype.str``) that do not become tensors: bytes, str, object.
_NOT_NUMERIC_KINDS = frozenset("SaUO")

_UNSUPPORTED = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _numeric(array: np.ndarray) -> bool:
    return array.dtype.str[1] not in _NOT_NUMERIC_KINDS


def _rebuilt(template, values):
    """A container like `template` holding `values` (a dict for a mapping, a list for a
    sequence): a mutable one is copied and refilled (it may carry more than its items), an
    immutable one is built from `values`; a plain dict or list when the type refuses."""
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(template)(values)
    except TypeError:
        return values


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def default_convert(data):
    """Convert the NumPy arrays and scalars in `data` into tensors, through mappings,
    namedtuples and sequences; anything else is returned as it is. Plain tuples become
    lists; arrays of strings or objects stay arrays.

    It is the DataLoader's ``collate_fn`` when batching is off (``batch_size=None``).

    Example::

        >>> default_convert({"x": np.array([1, 2]), "y": 3})
        {'x': tensor([1, 2]), 'y': 3}
    """
    if isinstance(data, tocha.Tensor):
        return data
    if isinstance(data, np.ndarray):
        return tocha.as_tensor(data) if _numeric(data) else data
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return tocha.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt(data, {key: default_convert(value) for key, value in data.items()})
    if _is_namedtuple(data):
        return type(data)(*map(default_convert, data))
    if isinstance(data, tuple):
        return [default_convert(item) for item in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt(data, [default_convert(item) for item in data])
    return data


def _stack_arrays(batch: Sequence[np.ndarray]) -> tocha.Tensor:
    if not _numeric(batch[0]):
        raise TypeError(_UNSUPPORTED.format(batch[0].dtype))
    return tocha.from_numpy(np.stack(batch))


# The batch of a list of leaf samples, by the type of the first sample (first match wins:
# NumPy's float64 is also a Python float, bool is also an int).
_LEAF_BATCHES = (
    (tocha.Tensor, lambda batch: tocha.stack(batch, 0)),
    (np.ndarray, _stack_arrays),
    ((np.bool_, np.number, np.object_), tocha.as_tensor),
    (float, lambda batch: tocha.tensor(batch, dtype=tocha.float64)),
    (int, tocha.tensor),
    ((str, bytes), lambda batch: batch),
)


def default_collate(batch: Sequence):
    """Turn a list of samples into a batch, as ``torch.utils.data.default_collate``.

    ======================  ===========================================================
    sample                  batch
    ======================  ===========================================================
    Tensor, NumPy array     one tensor stacked along a new first dimension
    NumPy scalar            a 1-D tensor of its dtype
    float / int / bool      a float64 / int64 / bool tensor
    str, bytes              the samples as they are (a list, or a tuple for a column)
    Mapping                 the same mapping type, each key's values collated
    namedtuple              the same namedtuple, each field collated
    tuple / other sequence  a list / the same sequence type, each position collated
    ======================  ===========================================================

    Example::

        >>> default_collate([(0, "a"), (1, "b")])
        [tensor([0, 1]), ('a', 'b')]
    """
    first = batch[0]
    for types, make_batch in _LEAF_BATCHES:
        if isinstance(first, types):
            return make_batch(batch)
    if isinstance(first, collections.abc.Mapping):
        return _rebuilt(first, {key: default_collate([s[key] for s in batch]) for key in first})
    if _is_namedtuple(first):
        return type(first)(*map(default_collate, zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(column) for column in zip(*batch)]
        return columns if isinstance(first, tuple) else _rebuilt(first, columns)
    raise TypeError(_UNSUPPORTED.format(type(first)))


def pin(data):
    """`data` with every tensor in it (and every object with a ``pin_memory`` method) copied
    into page-locked memory, through mappings, namedtuples and sequences."""
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt(data, {key: pin(value) for key, value in data.items()})
    if _is_namedtuple(data):
        return type(data)(*map(pin, data))
    if isinstance(data, collections.abc.Sequence):
        return _rebuilt(data, [pin(item) for item in data])
    return data
