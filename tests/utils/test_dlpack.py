"""tocha.utils.dlpack and tocha.from_dlpack: DLPack capsules and protocol objects shared, not
copied, with PyTorch's errors."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tocha
from tocha.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack


def test_a_capsule_round_trip_shares_memory_both_ways():
    t = tocha.arange(6.0).reshape(2, 3).t()  # a strided view
    u = from_dlpack(to_dlpack(t))
    assert u.shape == t.shape and u.stride() == t.stride()
    t[0, 0] = 9.0
    assert u[0, 0].item() == 9.0
    u.add_(1)  # PyTorch writes through an unversioned capsule too
    assert t.tolist() == [[10.0, 4.0], [2.0, 5.0], [3.0, 6.0]]


def test_the_capsule_keeps_the_memory_alive():
    t = tocha.arange(4, dtype=tocha.int32)
    u = tocha.from_dlpack(to_dlpack(t))
    del t
    gc.collect()
    assert u.tolist() == [0, 1, 2, 3] and u.dtype == tocha.int32


def test_a_capsule_is_consumed_once():
    capsule = to_dlpack(tocha.ones(2))
    from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="DLTensor capsules can be consumed only once"):
        from_dlpack(capsule)


def test_protocol_objects_are_shared():
    a = np.arange(3.0)
    t = from_dlpack(a)
    t[1] = 7.0
    assert a.tolist() == [0.0, 7.0, 2.0]
    assert from_dlpack(t) is t


def test_errors():
    with pytest.raises(TypeError, match="DLPack"):
        from_dlpack([1, 2])
    with pytest.raises(TypeError, match="must be Tensor"):
        to_dlpack(np.ones(2))


def test_device_types_are_dlpacks():
    assert DLDeviceType.kDLCPU == 1 and DLDeviceType.kDLCUDA == 2
    assert tocha.ones(1).__dlpack_device__() == (DLDeviceType.kDLCPU, 0)
