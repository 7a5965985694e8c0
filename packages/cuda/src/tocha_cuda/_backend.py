"""The cuda backend: CuPy arrays on NVIDIA GPUs.

`CudaBackend` takes the CuPy module as an argument, so that its logic can be exercised with a
stand-in module over NumPy where there is no GPU (tests/cuda).
"""

from __future__ import annotations

import numpy as np

from tocha import device
from tocha.backends import Backend

from ._fused import OVERRIDES
from ._memory import TrackingAllocator
from ._namespace import kernel_namespace
from ._random import CounterGenerator


def load_cupy():
    """The CuPy module with the submodules kernels use; ImportError saying how to get it."""
    try:
        import cupy
        import cupy.lib.stride_tricks  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"CuPy is not installed or cannot be imported ({exc}): pip install cupy-cuda12x, "
            "or the CuPy build for your CUDA version"
        ) from exc
    return cupy


def count_devices(cp) -> int:
    """The number of GPUs CUDA sees; RuntimeError saying why CUDA cannot be used."""
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError, or a CUDA library that failed to load
        text = f"{type(exc).__name__}: {exc}"
        if "NoDevice" in text or "no CUDA-capable device" in text:
            why = "no CUDA GPU is visible to this process (see CUDA_VISIBLE_DEVICES)"
        elif "Driver" in text or "driver" in text or "Initialization" in text:
            why = "no usable NVIDIA driver was found (is one installed and loaded?)"
        else:
            why = "CUDA cannot be initialised"
        raise RuntimeError(f"{why}: {text}") from exc
    if count == 0:
        raise RuntimeError("No CUDA GPUs are available")
    return count


class CudaBackend(Backend):
    """Runs every op's generic kernel on CuPy, through `kernel_namespace`; devices ``cuda:N``.

    Args:
        cp: the CuPy module (or a stand-in with its API).
    """

    device_type = "cuda"
    overrides = OVERRIDES

    def __init__(self, cp):
        self.cp = cp
        self.count = count_devices(cp)
        self.xp = kernel_namespace(cp)
        self.array_type = cp.ndarray
        pool = cp.get_default_memory_pool()
        self.pool = pool
        self.allocator = TrackingAllocator(
            pool, cp.cuda.memory.OutOfMemoryError, cp.cuda.runtime.memGetInfo, self.current_device
        )
        cp.cuda.set_allocator(self.allocator)

    # -- devices ---------------------------------------------------------------------------
    def device_count(self) -> int:
        return self.count

    def current_device(self) -> int:
        return self.cp.cuda.runtime.getDevice()

    def set_device(self, index: int) -> None:
        self._check_index(index)
        self.cp.cuda.runtime.setDevice(index)

    def _check_index(self, index: int) -> None:
        if not 0 <= index < self.count:
            raise RuntimeError(
                f"CUDA error: invalid device ordinal (device {index} asked for, "
                f"{self.count} visible)"
            )

    def normalize(self, dev: device) -> device:
        if dev.index is None:
            return device(self.device_type, self.current_device())
        self._check_index(dev.index)
        return dev

    def device_of(self, array) -> device:
        return device(self.device_type, array.device.id)

    def device_properties(self, index: int) -> dict:
        """name, total_memory, major, minor, multi_processor_count of GPU `index`."""
        self._check_index(index)
        props = self.cp.cuda.runtime.getDeviceProperties(index)
        name = props["name"]
        return {
            "name": name.decode() if isinstance(name, bytes) else name,
            "total_memory": props["totalGlobalMem"],
            "major": props["major"],
            "minor": props["minor"],
            "multi_processor_count": props["multiProcessorCount"],
        }

    def supports_dtype(self, np_dtype) -> bool:
        """Whether CuPy can hold arrays of `np_dtype` (it has no bfloat16)."""
        try:
            self.cp.empty(0, dtype=np_dtype)
        except (TypeError, ValueError):
            return False
        return True

    # -- transfers -------------------------------------------------------------------------
    def asarray(self, data, dtype=None, dev: device | None = None):
        if dev is None:
            return self.cp.asarray(data, dtype=dtype)
        with self.cp.cuda.Device(dev.index):
            return self.cp.asarray(data, dtype=dtype)

    def from_host(self, array: np.ndarray, dev: device):
        if array.dtype.name == "bfloat16" and not self.supports_dtype(array.dtype):
            raise TypeError(
                "this CuPy has no bfloat16 (CuPy 14 and later have it): bfloat16 tensors "
                "cannot move to a cuda device"
            )
        with self.cp.cuda.Device(dev.index):
            return self.cp.array(array, copy=True)

    def to_host(self, array) -> np.ndarray:
        return self.cp.asnumpy(array)

    def pin_memory(self, array: np.ndarray) -> np.ndarray:
        """A copy of `array` in page-locked host memory (which DMA reads directly)."""
        mem = self.cp.cuda.alloc_pinned_memory(max(array.nbytes, 1))
        out = np.frombuffer(mem, array.dtype, array.size).reshape(array.shape)
        out[...] = array
        return out

    def is_pinned(self, array: np.ndarray) -> bool:
        owner = array.base
        while isinstance(owner, np.ndarray):
            owner = owner.base
        if isinstance(owner, memoryview):  # np.frombuffer's base
            owner = owner.obj
        return isinstance(owner, self.cp.cuda.PinnedMemoryPointer)

    def data_ptr(self, array) -> int:
        return array.data.ptr if array.size else 0

    # -- synchronization, streams, events --------------------------------------------------
    def synchronize(self, dev: device | None = None) -> None:
        index = self.current_device() if dev is None else dev.index
        with self.cp.cuda.Device(index):
            self.cp.cuda.runtime.deviceSynchronize()

    def new_stream(self, index: int, priority: int = 0):
        with self.cp.cuda.Device(index):
            return self.cp.cuda.Stream(non_blocking=False, priority=priority)

    def current_stream(self, index: int):
        with self.cp.cuda.Device(index):
            return self.cp.cuda.get_current_stream()

    def new_event(self, enable_timing: bool = False, blocking: bool = False):
        return self.cp.cuda.Event(block=blocking, disable_timing=not enable_timing)

    def elapsed_time(self, start, end) -> float:
        """Milliseconds between two recorded events."""
        return self.cp.cuda.get_elapsed_time(start, end)

    # -- memory ----------------------------------------------------------------------------
    def memory_stats(self, dev: device | None = None) -> dict:
        index = self.current_device() if dev is None else dev.index
        with self.cp.cuda.Device(index):
            return self.allocator.stats(index)

    def reset_peak_memory_stats(self, dev: device) -> None:
        with self.cp.cuda.Device(dev.index):
            self.allocator.reset_peaks(dev.index)

    def mem_get_info(self, dev: device) -> tuple[int, int]:
        """(free, total) bytes of a GPU, as the driver counts them."""
        with self.cp.cuda.Device(dev.index):
            return tuple(self.cp.cuda.runtime.memGetInfo())

    def empty_cache(self) -> None:
        self.pool.free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()

    # -- random numbers --------------------------------------------------------------------
    def new_generator(self, seed: int, dev: device):
        return CounterGenerator(self.cp.random, self.xp, seed)

    def generator_state(self, gen) -> bytes:
        return gen.state()

    def set_generator_state(self, gen, state: bytes) -> None:
        gen.set_state(state)

    # -- sharing between processes ---------------------------------------------------------
    def ipc_handle(self, array) -> tuple:
        """The CUDA IPC description of `array`'s memory (`tocha_cuda._ipc.ipc_handle`)."""
        from ._ipc import ipc_handle

        return ipc_handle(self.cp, array)

    def ipc_open(self, handle):
        """A CuPy array over the memory of an `ipc_handle` (`tocha_cuda._ipc.ipc_open`)."""
        from ._ipc import ipc_open

        return ipc_open(self.cp, handle)
