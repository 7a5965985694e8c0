"""The mydev backend: NumPy arrays standing in for another device's memory, two devices."""

from __future__ import annotations

from typing import Any

import numpy as np

from tocha import device
from tocha.backends import Backend


def _neg_kernel(xp: Any) -> Any:
    """An override: the kernel factory of ``neg`` on this backend (here a NumPy ufunc; a real
    backend would call its own library)."""
    return xp.negative


class MyDevBackend(Backend):
    """Runs every op's generic kernel with NumPy, ``neg`` through its own kernel, and refuses
    ``matmul`` (tocha then raises NotImplementedError naming the op and the device)."""

    device_type = "mydev"
    xp = np
    overrides = {"neg": _neg_kernel}
    unsupported = frozenset({"matmul"})

    def __init__(self) -> None:
        self.current = 0
        self.allocated = 0

    def device_count(self) -> int:
        return 2

    def current_device(self) -> int:
        return self.current

    def normalize(self, dev: device) -> device:
        if dev.index is None:
            return device(self.device_type, self.current)
        if dev.index >= self.device_count():
            raise RuntimeError(f"mydev has {self.device_count()} devices, not {dev.index + 1}")
        return dev

    def from_host(self, array: np.ndarray, dev: device) -> np.ndarray:
        self.allocated += array.nbytes
        return np.array(array, copy=True)

    def to_host(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, copy=True)

    def memory_stats(self, dev: device | None = None) -> dict[str, int]:
        return {"allocated_bytes.all.current": self.allocated}
