"""A stand-in for the CuPy module over NumPy, so that the cuda backend's logic runs where
there is no GPU: its arrays are NumPy's, its runtime, memory pool, streams and events are
small fakes that record what they are asked."""

from __future__ import annotations

import types

import numpy as np

from tocha_cuda._backend import CudaBackend


class OutOfMemoryError(Exception):
    """What the fake pool raises when full (``cupy.cuda.memory.OutOfMemoryError``)."""


class Pinned(bytearray):
    """Page-locked host memory (``cupy.cuda.PinnedMemoryPointer``)."""


class Pointer:
    def __init__(self, device_id, size):
        self.device_id = device_id
        self.size = size


class Pool:
    """CuPy's memory pool: `limit` bytes per device, `cached` bytes of freed blocks kept."""

    def __init__(self, runtime, limit):
        self.runtime = runtime
        self.limit = limit
        self.used = {}
        self.cached = {}
        self.frees = 0

    def malloc(self, size):
        dev = self.runtime.device
        if self.used.get(dev, 0) + self.cached.get(dev, 0) + size > self.limit:
            raise OutOfMemoryError(f"out of memory allocating {size} bytes")
        self.used[dev] = self.used.get(dev, 0) + size
        return Pointer(dev, size)

    def release(self, ptr):
        self.used[ptr.device_id] -= ptr.size
        self.cached[ptr.device_id] = self.cached.get(ptr.device_id, 0) + ptr.size

    def used_bytes(self):
        return self.used.get(self.runtime.device, 0)

    def total_bytes(self):
        dev = self.runtime.device
        return self.used.get(dev, 0) + self.cached.get(dev, 0)

    def free_all_blocks(self):
        self.frees += 1
        self.cached = {}


class Runtime:
    def __init__(self, count, error=None):
        self.count = count
        self.error = error
        self.device = 0
        self.synced = []

    def getDeviceCount(self):  # noqa: N802 - CuPy's names
        if self.error is not None:
            raise self.error
        return self.count

    def getDevice(self):  # noqa: N802
        return self.device

    def setDevice(self, index):  # noqa: N802
        self.device = index

    def getDeviceProperties(self, index):  # noqa: N802
        return {
            "name": f"Fake GPU {index}".encode(),
            "totalGlobalMem": 1 << 30,
            "major": 8,
            "minor": 0,
            "multiProcessorCount": 4,
        }

    def memGetInfo(self):  # noqa: N802
        return (1 << 20, 1 << 30)

    def deviceSynchronize(self):  # noqa: N802
        self.synced.append(self.device)


class Device:
    def __init__(self, runtime, index):
        self.runtime, self.index = runtime, index

    def __enter__(self):
        self.prev = self.runtime.device
        self.runtime.device = self.index

    def __exit__(self, *exc):
        self.runtime.device = self.prev


class Stream:
    count = 0

    def __init__(self, non_blocking=False, priority=0):
        Stream.count += 1
        self.ptr = Stream.count
        self.done = True
        self.waited = []

    def synchronize(self):
        pass

    def wait_event(self, event):
        self.waited.append(event)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Event:
    def __init__(self, block=False, disable_timing=False):
        self.recorded_on = None
        self.done = True

    def record(self, stream):
        self.recorded_on = stream

    def synchronize(self):
        pass


def make(count=2, error=None, limit=1 << 20):
    """A fake CuPy module with `count` GPUs (or whose runtime raises `error`)."""
    cp = types.ModuleType("fakecupy")
    cp.__dict__.update({k: v for k, v in vars(np).items() if not k.startswith("__")})
    runtime = Runtime(count, error)
    pool = Pool(runtime, limit)
    default_stream = Stream()
    cp.asnumpy = lambda a: np.array(a, copy=True)
    cp.get_default_memory_pool = lambda: pool
    cp.get_default_pinned_memory_pool = lambda: types.SimpleNamespace(free_all_blocks=lambda: 0)
    cp.random = types.SimpleNamespace(
        Generator=np.random.Generator,
        Philox4x3210=lambda seed, size: np.random.Philox(seed),
    )
    cp.cuda = types.SimpleNamespace(
        runtime=runtime,
        Device=lambda index: Device(runtime, index),
        memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError),
        set_allocator=lambda allocator: None,
        alloc_pinned_memory=Pinned,
        PinnedMemoryPointer=Pinned,
        Stream=Stream,
        Event=Event,
        get_current_stream=lambda: default_stream,
        get_elapsed_time=lambda start, end: 1.5,
    )
    return cp


class FakeCudaBackend(CudaBackend):
    """The cuda backend over a fake CuPy, as its own device type ``fakecuda``."""

    device_type = "fakecuda"

    def data_ptr(self, array):
        return array.__array_interface__["data"][0] if array.size else 0

    def device_of(self, array):
        from tocha import device

        return device(self.device_type, self.current_device())
