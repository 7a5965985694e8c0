"""The CPU backend: NumPy arrays in host memory. Declared under the ``tocha.backends`` entry
point group like any plugin; `register` returns the backend object."""

from __future__ import annotations

import numpy as np

from ._backend import Backend

# PyTorch's CPU kernels are silent on overflow, division by zero and invalid values.
np.seterr(all="ignore")


class CPUBackend(Backend):
    device_type = "cpu"
    xp = np
    array_type = np.ndarray

    def asarray(self, data, dtype=None, dev=None):
        return np.asarray(data, dtype=dtype)

    def from_host(self, array, dev):
        return np.array(array, copy=True)

    def to_host(self, array):
        return array


def register() -> CPUBackend:
    return CPUBackend()
