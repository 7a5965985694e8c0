"""A storage given to ``asarray`` or ``tensor`` is read as its bytes, as PyTorch reads it
(safetensors' torch loader builds every tensor so): ``asarray`` views the memory, ``tensor``
copies it; an untyped storage's default dtype is int64. The values are PyTorch 2.13's."""

from __future__ import annotations

import numpy as np

import tocha


def _storage():
    return tocha.UntypedStorage.from_buffer(bytes(range(8)), dtype=tocha.uint8)


def test_asarray_views_a_storage_as_the_dtype():
    storage = _storage()
    as_float = tocha.asarray(storage, dtype=tocha.float32)
    np.testing.assert_array_equal(
        as_float.numpy(), np.frombuffer(bytes(range(8)), dtype=np.float32)
    )
    assert tocha.asarray(storage).tolist() == [506097522914230528]
    as_bytes = tocha.asarray(storage, dtype=tocha.uint8)
    as_bytes[0] = 42
    assert storage[0] == 42  # the same memory


def test_tensor_of_a_storage_copies_its_bytes():
    storage = _storage()
    copy = tocha.tensor(storage)
    assert copy.dtype == tocha.int64 and copy.tolist() == [506097522914230528]
    copy[0] = 0
    assert bytes(storage.tolist()) == bytes(range(8))  # the storage is untouched
