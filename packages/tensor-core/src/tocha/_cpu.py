"""The CPU backend: NumPy arrays in host memory. Declared under the ``tocha.backends`` entry
point group like any plugin; `register` returns the backend object."""

from __future__ import annotations

import contextvars
import ctypes
import os
import sys

import numpy as np

from ._backend import Backend
from ._device import CPU, device

# PyTorch's CPU kernels are silent on overflow, division by zero and invalid values, where
# NumPy warns. NumPy keeps its error state in a context variable: tocha runs its kernels in a
# copy of this context, in which that state is "ignore", and leaves the caller's own NumPy
# code as it was (``kernel_context().run(kernel, *args)``). A fresh copy costs about 0.1 us
# a call and may be entered from any thread, also from inside another kernel; kernels see none
# of the caller's other context variables.
_KERNEL_CONTEXT = contextvars.Context()
_KERNEL_CONTEXT.run(np.seterr, all="ignore")
kernel_context = _KERNEL_CONTEXT.copy

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # glibc's ceiling on 64-bit systems


def keep_freed_memory() -> None:
    """Ask glibc to keep freed memory for reuse rather than give it back to the OS at once,
    so that the fresh arrays every op makes do not page-fault each time (PyTorch's CPU
    allocator caches in the same spirit). The setting is the whole process's, so tocha makes
    it only when asked: ``TOCHA_MALLOC_TUNING=1`` in the environment when tocha is imported."""
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)
    mallopt(M_TRIM_THRESHOLD, 4 * MMAP_THRESHOLD_MAX)


if os.environ.get("TOCHA_MALLOC_TUNING") == "1":
    keep_freed_memory()


class CPUBackend(Backend):
    device_type = "cpu"
    xp = np
    array_type = np.ndarray

    def normalize(self, dev: device) -> device:
        """CPU tensors live on ``cpu`` whatever index was asked (``cpu:1`` too), as in PyTorch."""
        return CPU

    def asarray(self, data, dtype=None, dev=None):
        return np.asarray(data, dtype=dtype)

    def from_host(self, array, dev):
        return np.array(array, copy=True)

    def to_host(self, array):
        return array

    # Whether new generators draw PyTorch's values (`tocha.compat.use_pytorch_random`).
    pytorch_random = os.environ.get("TOCHA_PYTORCH_RANDOM") == "1"

    def new_generator(self, seed: int, dev: device):
        """NumPy's PCG64, or PyTorch's CPU stream when `pytorch_random` is set: the same seed
        then gives PyTorch's values (`tocha._cpu_random`)."""
        if not self.pytorch_random:
            return super().new_generator(seed, dev)
        from ._cpu_random import MersenneStream

        return MersenneStream(seed)

    def generator_state(self, gen) -> bytes:
        if isinstance(gen, np.random.Generator):
            return super().generator_state(gen)
        return gen.state()

    def set_generator_state(self, gen, state: bytes) -> None:
        if isinstance(gen, np.random.Generator):
            super().set_generator_state(gen, state)
        else:
            gen.set_state(state)


def register() -> CPUBackend:
    return CPUBackend()
