"""default_collate and default_convert of tocha.utils.data against torch.utils.data."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import tocha
from tocha.utils.data import default_collate, default_convert

Point = namedtuple("Point", "x y")


def as_plain(value):
    """A batch with every tensor (tocha or torch) as (dtype name, shape, values)."""
    if hasattr(value, "numpy") and hasattr(value, "dtype") and not isinstance(value, np.ndarray):
        array = value.numpy()
        return ("tensor", str(array.dtype), array.shape, array.tolist())
    if isinstance(value, dict):
        return (type(value).__name__, {k: as_plain(v) for k, v in value.items()})
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, [as_plain(v) for v in value])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [as_plain(v) for v in value])
    if isinstance(value, np.ndarray):
        return ("ndarray", value.tolist())
    return value


def samples(lib):
    """Batches of every kind of sample default_collate takes, in `lib`'s tensors."""
    return {
        "tensors": [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
        "int tensors": [lib.tensor(1), lib.tensor(2)],
        "numpy arrays": [np.arange(3, dtype=np.int32), np.arange(3, 6, dtype=np.int32)],
        "numpy scalars": [np.float32(1.5), np.float32(2.5)],
        "numpy ints": [np.int16(1), np.int16(7)],
        "numpy bools": [np.bool_(True), np.bool_(False)],
        "floats": [0.5, 1.5],
        "ints": [1, 2],
        "bools": [True, False],
        "strings": ["a", "b"],
        "bytes": [b"a", b"b"],
        "dicts": [{"x": 1, "y": "a"}, {"x": 2, "y": "b"}],
        "ordered dicts": [OrderedDict(a=1.0), OrderedDict(a=2.0)],
        "tuples": [(1, "a"), (2, "b")],
        "lists": [[1, 2.0], [3, 4.0]],
        "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
        "nested": [
            {"p": Point(np.zeros(2), [lib.tensor(1)])},
            {"p": Point(np.ones(2), [lib.tensor(2)])},
        ],
    }


@pytest.mark.parametrize("kind", list(samples(tocha)))
def test_default_collate_agrees_with_torch(torch, kind):
    ours = default_collate(samples(tocha)[kind])
    theirs = torch.utils.data.default_collate(samples(torch)[kind])
    assert as_plain(ours) == as_plain(theirs)


def test_default_collate_types():
    batch = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(batch, Point) and batch.x.dtype is tocha.int64
    assert batch.y.dtype is tocha.float64
    assert isinstance(default_collate([OrderedDict(a=1)]), OrderedDict)
    assert default_collate([np.float32(1)]).dtype is tocha.float32


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([object()])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([np.array(["a"]), np.array(["b"])])


@pytest.mark.parametrize(
    "value",
    [
        np.arange(3),
        np.float64(2.0),
        {"a": np.ones(2), "b": "s"},
        (np.int64(1), 2),
        [np.zeros(1), "x"],
        Point(np.ones(1), 3),
        "text",
        5,
        np.array(["a", "b"]),
    ],
)
def test_default_convert_agrees_with_torch(torch, value):
    assert as_plain(default_convert(value)) == as_plain(torch.utils.data.default_convert(value))


def test_default_convert_keeps_tensors():
    t = tocha.ones(2)
    assert default_convert(t) is t
