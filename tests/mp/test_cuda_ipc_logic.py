"""CUDA IPC without a GPU: tocha-cuda's IPC handles (tocha_cuda._ipc) and tocha.multiprocessing's
reducer for tensors that are not on the CPU, over the NumPy stand-in for CuPy
(tests/cuda/fakecupy.py) given device memory and CUDA's IPC calls.

Device memory is memfd files mapped into this process; an IPC handle names a file, and
opening it maps the file again at another address, which is what another process sees. A
handle whose pid is changed is one that came from another process."""

from __future__ import annotations

import ctypes
import gc
import mmap
import os
import pickle

import numpy as np
import pytest

import tocha
import tocha.multiprocessing as mp
from tocha import _backend
from tocha.multiprocessing._reductions import reduce_tensor

pytest.importorskip("tocha_cuda", reason="tocha-cuda is not installed")

from tests.cuda import fakecupy  # noqa: E402
from tocha_cuda import _ipc  # noqa: E402

# Where an array's memory starts in its allocation, as CuPy's pool carves arrays out of
# bigger cudaMalloc allocations.
CHUNK = 256
OTHER_PID = os.getpid() + 1
LAZY_PEER_ACCESS = 1


class Memory:
    """Device memory: CuPy's ``Memory``, ``PooledMemory`` and ``UnownedMemory``."""

    def __init__(self, ptr, size, device_id, owner=None):
        self.ptr, self.size, self.device_id, self._owner = ptr, size, device_id, owner


class MemoryPointer:
    """``cupy.cuda.MemoryPointer``: `offset` bytes into `mem`."""

    def __init__(self, mem, offset):
        self.mem, self.ptr, self.device_id = mem, mem.ptr + offset, mem.device_id


class DeviceArray(np.ndarray):
    """``cupy.ndarray``: a NumPy array over device memory whose ``data`` is a
    `MemoryPointer`; without `memptr`, over a new allocation of `gpu`."""

    gpu = None

    def __new__(cls, shape, dtype=float, memptr=None, strides=None):
        if memptr is None:
            size = np.dtype(dtype).itemsize * int(np.prod(shape))
            memptr = MemoryPointer(cls.gpu.malloc(size), 0)
        span = memptr.mem.ptr + memptr.mem.size - memptr.ptr
        buffer = (ctypes.c_char * span).from_address(memptr.ptr)
        array = super().__new__(cls, shape, dtype, buffer, 0, strides)
        array._mem = memptr.mem
        return array

    def __array_finalize__(self, obj):
        self._mem = getattr(obj, "_mem", None)

    @property
    def data(self):
        return MemoryPointer(self._mem, self.__array_interface__["data"][0] - self._mem.ptr)


class FakeGpu:
    """Device memory and CUDA's IPC calls: ``cudaMalloc`` makes a memfd file, a handle names
    it, ``ipcOpenMemHandle`` maps it again; what was opened and closed is recorded."""

    def __init__(self, runtime):
        self.runtime = runtime
        self.allocations = {}  # base -> (fd, size)
        self.maps = []
        self.opened = []
        self.closed = []
        self.ndarray = type("ndarray", (DeviceArray,), {"gpu": self})

    def malloc(self, size):
        """The memory of a new array: `size` bytes at `CHUNK` in a new allocation."""
        fd = os.memfd_create("fakegpu")
        total = CHUNK + max(size, 1) + CHUNK
        os.ftruncate(fd, total)
        base = self._map(fd, total)
        self.allocations[base] = (fd, total)
        return Memory(base + CHUNK, size, self.runtime.device)

    def _map(self, fd, size):
        m = mmap.mmap(fd, size)
        self.maps.append(m)
        return ctypes.addressof(ctypes.c_char.from_buffer(m))

    def cu_mem_get_address_range(self, pbase, psize, ptr):
        for base, (_, size) in self.allocations.items():
            if base <= ptr < base + size:
                pbase.contents.value, psize.contents.value = base, size
                return 0
        return 1  # CUDA_ERROR_INVALID_VALUE

    def ipcGetMemHandle(self, ptr):  # noqa: N802 - CuPy's names
        fd, _ = self.allocations[ptr]
        return b"fake-ipc-%d" % fd

    def ipcOpenMemHandle(self, handle, flags):  # noqa: N802
        assert flags == LAZY_PEER_ACCESS
        fd = int(handle.rsplit(b"-", 1)[1])
        ptr = self._map(fd, os.fstat(fd).st_size)
        self.opened.append(ptr)
        return ptr

    def ipcCloseMemHandle(self, ptr):  # noqa: N802
        self.closed.append(ptr)

    def close(self):
        for fd, _ in self.allocations.values():
            os.close(fd)


class FakeIpcBackend(fakecupy.FakeCudaBackend):
    """The cuda backend over the fake CuPy with device memory: device type ``fakeipc``."""

    device_type = "fakeipc"

    def __init__(self, cp, gpu):
        super().__init__(cp)
        self.gpu = gpu

    def from_host(self, array, dev):
        out = self.gpu.ndarray(array.shape, array.dtype)
        out[...] = array
        return out


class NoIpcBackend(_backend.Backend):
    """A backend over NumPy with no IPC handles: device type ``noipc``."""

    device_type = "noipc"
    xp = np


def _register(patch, backend):
    entry = _backend._Entry(backend.device_type, "tests", "tests:none")
    entry.backend = backend
    patch.setitem(_backend._entries, backend.device_type, entry)


@pytest.fixture(scope="module")
def gpu():
    """The fake GPU behind the ``fakeipc`` and ``noipc`` devices, registered for this module
    (devices keep their backend: one backend object for every test)."""
    _backend._discover()
    cp = fakecupy.make(count=2)
    fake = FakeGpu(cp.cuda.runtime)
    backend = FakeIpcBackend(cp, fake)
    cp.ndarray = fake.ndarray
    cp.asarray = np.asanyarray  # as cupy.asarray, keep device arrays as they are
    runtime = cp.cuda.runtime
    runtime.cudaIpcMemLazyEnablePeerAccess = LAZY_PEER_ACCESS
    for name in ("ipcGetMemHandle", "ipcOpenMemHandle", "ipcCloseMemHandle"):
        setattr(runtime, name, getattr(fake, name))
    cp.cuda.UnownedMemory = lambda ptr, size, owner, device_id: Memory(ptr, size, device_id, owner)
    cp.cuda.MemoryPointer = MemoryPointer
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_ipc, "_cu_mem_get_address_range", lambda: fake.cu_mem_get_address_range)
        _register(patch, backend)
        _register(patch, NoIpcBackend())
        yield fake
        gc.collect()
    fake.close()


def _backend_of(t):
    return _backend.backend_of(t.device)


def _from_elsewhere(handle):
    """`handle` as it arrives from another process."""
    return handle._replace(pid=OTHER_PID)


def test_handle_of_a_view_in_the_middle_of_an_allocation(gpu):
    t = tocha.arange(48.0).reshape(6, 8).to("fakeipc")
    view = t[2:5, 1:7]
    backend = _backend_of(t)
    handle = backend.ipc_handle(view._data)
    base = t.data_ptr() - CHUNK
    fd, size = gpu.allocations[base]
    assert handle == (b"fake-ipc-%d" % fd, base, CHUNK + (2 * 8 + 1) * 4, size, 0) + (
        os.getpid(),
        np.dtype("float32"),
        (3, 6),
        (32, 4),
    )
    opened = backend.ipc_open(_from_elsewhere(handle))
    mapped = gpu.opened[-1]
    assert mapped != base and opened.data.ptr == mapped + handle.offset
    assert opened.tolist() == view.tolist()
    opened[0, 0] = -1.0
    assert t[2, 1].item() == -1.0


def test_the_sending_process_gets_its_own_memory_without_opening(gpu):
    t = tocha.arange(10.0).to("fakeipc")
    backend = _backend_of(t)
    opens = len(gpu.opened)
    again = backend.ipc_open(backend.ipc_handle(t[3:]._data))
    assert again.data.ptr == t.data_ptr() + 3 * 4 and len(gpu.opened) == opens
    again[0] = 30.0
    assert t[3].item() == 30.0


def test_one_open_per_allocation_closed_with_the_last_array(gpu):
    t = tocha.arange(12.0).to("fakeipc")
    other = tocha.zeros(3).to("fakeipc")
    backend = _backend_of(t)
    opens = len(gpu.opened)
    first = backend.ipc_open(_from_elsewhere(backend.ipc_handle(t[:4]._data)))
    second = backend.ipc_open(_from_elsewhere(backend.ipc_handle(t[6:]._data)))
    third = backend.ipc_open(_from_elsewhere(backend.ipc_handle(other._data)))
    assert len(gpu.opened) == opens + 2
    assert first.data.mem._owner is second.data.mem._owner
    assert second.data.ptr - first.data.ptr == 6 * 4
    mapped = gpu.opened[opens]
    tail = second[1:]
    del first, second
    gc.collect()
    assert mapped not in gpu.closed
    del tail
    gc.collect()
    assert mapped in gpu.closed and gpu.opened[opens + 1] not in gpu.closed
    del third
    gc.collect()
    assert gpu.opened[opens + 1] in gpu.closed


def test_memory_received_is_sent_on_with_its_original_handle(gpu):
    t = tocha.arange(8.0).to("fakeipc")
    backend = _backend_of(t)
    handle = _from_elsewhere(backend.ipc_handle(t._data))
    received = backend.ipc_open(handle)
    passed_on = backend.ipc_handle(received[2:])
    assert passed_on == handle._replace(offset=handle.offset + 2 * 4, shape=(6,))


def test_empty_arrays_need_no_memory(gpu):
    t = tocha.zeros(0, 3).to("fakeipc")
    backend = _backend_of(t)
    handle = backend.ipc_handle(t._data)
    assert handle.mem_handle is None
    assert backend.ipc_open(_from_elsewhere(handle)).shape == (0, 3)


def test_memory_cudamalloc_did_not_give_is_refused(gpu):
    with pytest.raises(RuntimeError, match="CUDA driver error 1 in cuMemGetAddressRange"):
        _ipc.allocation_range(8)


def test_pickle_round_trip_through_the_reducer(gpu):
    t = tocha.arange(6.0).to("fakeipc")
    param = tocha.nn.Parameter(tocha.ones(2, 2).to("fakeipc"))
    got, got_param = pickle.loads(mp.reducer.ForkingPickler.dumps([t[1:], param]))
    assert got.device == t.device and got.data_ptr() == t.data_ptr() + 4
    assert not got.requires_grad and got.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert type(got_param) is tocha.nn.Parameter and got_param.requires_grad and got_param.is_leaf
    got.fill_(7.0)
    assert t.tolist() == [0.0] + [7.0] * 5
    rebuild, (cls, dev, handle, state) = reduce_tensor(t)
    elsewhere = rebuild(cls, dev, _from_elsewhere(handle), state)
    assert elsewhere.data_ptr() == gpu.opened[-1] + CHUNK and elsewhere.tolist() == t.tolist()


def test_share_memory_is_a_no_op_and_is_shared_is_true(gpu):
    t = tocha.ones(3).to("fakeipc")
    ptr = t.data_ptr()
    assert t.share_memory_() is t and t.data_ptr() == ptr and t.is_shared()


def test_a_backend_without_ipc_says_so(gpu):
    t = tocha.ones(3).to("noipc")
    backend = _backend_of(t)
    with pytest.raises(NotImplementedError, match="'noipc' cannot share memory"):
        backend.ipc_handle(t._data)
    with pytest.raises(NotImplementedError, match="'noipc' cannot open memory"):
        backend.ipc_open(None)
    wanted = r"device 'noipc' between processes is not supported: .* \(tensor.cpu\(\)\)"
    with pytest.raises(NotImplementedError, match=wanted) as info:
        mp.reducer.ForkingPickler.dumps(t)
    assert isinstance(info.value.__cause__, NotImplementedError)
    with pytest.raises(NotImplementedError, match=wanted):
        t.share_memory_()
    assert not t.is_shared()
