"""The testdev backend: NumPy arrays standing in for another device's memory."""

import numpy as np

from tocha.backends import Backend


class TestDevBackend(Backend):
    """Runs every op's generic kernel with NumPy, except those in `unsupported`.

    Transfers copy both ways, as they would to a real device, so a testdev tensor never
    shares memory with a CPU one.
    """

    device_type = "testdev"
    xp = np
    unsupported = frozenset({"matmul", "sin"})

    def from_host(self, array, dev):
        return np.array(array, copy=True)

    def to_host(self, array):
        return np.array(array, copy=True)
