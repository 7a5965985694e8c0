"""Memory bombs under ``weights_only=True`` (issue 25, loading under attack): a tiny file
whose pickle turns a tensor into an unbounded Python object (``set`` over a stride-0 tensor of
10^8 rows; ``bytearray`` of an int64 tensor holding 3e9) is refused at once with a clear
error, its peak memory far under 100 MB."""

from __future__ import annotations

import collections
import pickle
import tracemalloc

import pytest

import tocha


class _Reduce:
    """An object that pickles as ``func(*args)``."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


BOMBS = {
    "set_of_stride0_rows": lambda: _Reduce(set, tocha.zeros(1).expand(10**8)),
    "frozenset_of_rows": lambda: _Reduce(frozenset, tocha.zeros(1, 1).expand(10**8, 1)),
    "bytearray_of_a_size": lambda: _Reduce(bytearray, tocha.tensor(3_000_000_000)),
    "bytes_of_a_size": lambda: _Reduce(bytes, tocha.tensor(3_000_000_000)),
    "counter_of_rows": lambda: _Reduce(collections.Counter, tocha.zeros(1).expand(10**8)),
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_bomb_is_refused_within_bounded_memory(tmp_path, name):
    path = tmp_path / "bomb.pt"
    tocha.save(BOMBS[name](), path)
    assert path.stat().st_size < 4096
    tracemalloc.start()
    try:
        with pytest.raises(pickle.UnpicklingError, match="from tensors"):
            tocha.load(path, weights_only=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20


def test_the_same_constructors_still_load_plain_values(tmp_path):
    value = {
        "s": {1, 2},
        "b": bytearray(b"ab"),
        "c": collections.Counter("aab"),
        "t": tocha.ones(2),
    }
    tocha.save(value, tmp_path / "ok.pt")
    loaded = tocha.load(tmp_path / "ok.pt", weights_only=True)
    assert loaded["s"] == {1, 2} and loaded["b"] == bytearray(b"ab")
    assert loaded["c"] == collections.Counter("aab")
    assert loaded["t"].tolist() == [1.0, 1.0]
