"""`default_collate` and `default_convert`, as ``torch.utils.data._utils.collate``: turning a
list of samples into a batch, and converting NumPy values of a sample into tensors."""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

import tocha

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtypes of strings and objects, which stay as they are.
np_str_obj_array_pattern = re.compile("[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _rebuild_mapping(data, convert: Callable):
    """A mapping like `data` with ``convert(key)`` as each key's value."""
    try:
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update({key: convert(key) for key in data})
            return clone
        return type(data)({key: convert(key) for key in data})
    except TypeError:  # the mapping type cannot be built from a dict
        return {key: convert(key) for key in data}


def _rebuild_sequence(data, items: list):
    """A sequence of the type of `data` holding `items`, else a list."""
    try:
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(data)(items)
    except TypeError:
        return items


def default_convert(data):
    """Convert the NumPy arrays and scalars of `data` into tensors, through dicts, lists,
    tuples and namedtuples; everything else is returned as it is (tuples become lists).

    It is the DataLoader's ``collate_fn`` when batching is off (``batch_size=None``).

    Example::

        >>> default_convert({"x": np.array([1, 2]), "y": 3})
        {'x': tensor([1, 2]), 'y': 3}
    """
    if isinstance(data, tocha.Tensor):
        return data
    elem_type = type(data)
    if elem_type.__module__ == "numpy" and elem_type is not np.str_:
        if elem_type is np.ndarray and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return tocha.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, lambda key: default_convert(data[key]))
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collate a list of samples, the types in `collate_fn_map` by their function and
    mappings, namedtuples and sequences by recursing into their fields.

    Args:
        batch: the samples.
        collate_fn_map: type (or tuple of types) -> ``fn(batch, *, collate_fn_map)``; the
            exact type of the first sample is looked up first, then each entry by isinstance.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(
            elem, lambda key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
        )
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(sample) == size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Tensors stacked along a new first dimension."""
    return tocha.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """NumPy arrays stacked into one tensor (arrays of strings or objects are refused)."""
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return tocha.from_numpy(np.stack(batch))


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    """NumPy scalars as one 1-D tensor of their dtype."""
    return tocha.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    """Python floats as a float64 tensor."""
    return tocha.tensor(batch, dtype=tocha.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    """Python ints (and bools) as an int64 (bool) tensor."""
    return tocha.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    """Strings and bytes stay a list."""
    return batch


default_collate_fn_map: dict = {
    tocha.Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Turn a list of samples into a batch, as ``torch.utils.data.default_collate``.

    ======================  ===========================================================
    sample                  batch
    ======================  ===========================================================
    Tensor, NumPy array     one tensor stacked along a new first dimension
    NumPy scalar            a 1-D tensor of its dtype
    float / int / bool      a float64 / int64 / bool tensor
    str, bytes              the list as it is
    Mapping                 the same mapping type, each key's values collated
    namedtuple              the same namedtuple, each field collated
    tuple / other sequence  a list / the same sequence type, each position collated
    ======================  ===========================================================

    Example::

        >>> default_collate([(0, "a"), (1, "b")])
        [tensor([0, 1]), ['a', 'b']]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
