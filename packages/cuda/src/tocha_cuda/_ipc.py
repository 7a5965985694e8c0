"""CUDA IPC: handing the memory of a cuda array to another process, which maps the same GPU
memory (no copy). What ``tocha.multiprocessing`` sends for a cuda tensor.

A CUDA IPC handle names a whole ``cudaMalloc`` allocation, and CuPy's memory pool carves
arrays out of bigger allocations: a handle is sent with the allocation's base address and
size (from the driver's ``cuMemGetAddressRange``) and the array's byte offset in it. A
receiving process opens each allocation once, whatever number of arrays it receives over it,
and closes it when the last of them is freed. The process that made the allocation cannot
open its own handle: there, the base address is used as it is.

The functions take the CuPy module as an argument, so that a stand-in can exercise them.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import threading
import weakref
from typing import NamedTuple

__all__ = ["IpcHandle", "ipc_handle", "ipc_open", "allocation_range"]


class IpcHandle(NamedTuple):
    """What another process needs to reach a cuda array's memory (picklable)."""

    mem_handle: bytes | None  # cudaIpcGetMemHandle's bytes; None for an empty array
    base: int  # the allocation's address in process `pid`
    offset: int  # bytes from the allocation's base to the array's first element
    size: int  # the allocation's size in bytes
    device: int
    pid: int  # the process that made the allocation
    dtype: object
    shape: tuple
    strides: tuple  # in bytes


class _Opened:
    """An allocation of another process mapped here (`IpcHandle` minus the array's layout):
    the handle is closed when this object is freed, after the last array over it."""

    def __init__(self, cp, handle: IpcHandle):
        self.mem_handle = handle.mem_handle
        self.pid = handle.pid
        self.base = handle.base
        self.size = handle.size
        runtime = cp.cuda.runtime
        self.ptr = runtime.ipcOpenMemHandle(
            handle.mem_handle, runtime.cudaIpcMemLazyEnablePeerAccess
        )
        # At exit the process unmaps everything; CUDA may be gone by then.
        weakref.finalize(self, _close, cp, self.ptr, handle.device).atexit = False


def _close(cp, ptr: int, device: int) -> None:
    with _on_device(cp, device):
        cp.cuda.runtime.ipcCloseMemHandle(ptr)


# (pid, base) of an allocation of another process -> its mapping here, while arrays use it.
_opened: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_opened_lock = threading.Lock()


def ipc_handle(cp, array) -> IpcHandle:
    """The `IpcHandle` of CuPy array `array`'s memory.

    The device is synchronized first, so that a receiver sees the writes queued so far. An
    array over memory this process received is described by the handle it came with.
    """
    memptr = array.data
    device = memptr.device_id
    layout = (array.dtype, tuple(array.shape), tuple(array.strides))
    if array.size == 0:
        return IpcHandle(None, 0, 0, 0, device, os.getpid(), *layout)
    with _on_device(cp, device):
        cp.cuda.runtime.deviceSynchronize()
        handle, pid, base, size, here = _allocation(cp, memptr)
    return IpcHandle(handle, base, memptr.ptr - here, size, device, pid, *layout)


def _allocation(cp, memptr) -> tuple:
    """(IPC handle, pid of its maker, base address there, size, base address here) of the
    allocation that `memptr` points into."""
    owner = getattr(memptr.mem, "_owner", None)  # UnownedMemory's, as ipc_open makes them
    if isinstance(owner, _Opened):
        return owner.mem_handle, owner.pid, owner.base, owner.size, owner.ptr
    base, size = allocation_range(memptr.ptr)
    return cp.cuda.runtime.ipcGetMemHandle(base), os.getpid(), base, size, base


def ipc_open(cp, handle: IpcHandle):
    """A CuPy array over the memory `handle` describes (from `ipc_handle`, in this process or
    another), no copy."""
    with _on_device(cp, handle.device):
        if handle.mem_handle is None:
            return cp.ndarray(handle.shape, handle.dtype)
        memptr = cp.cuda.MemoryPointer(_memory(cp, handle), handle.offset)
        return cp.ndarray(handle.shape, handle.dtype, memptr, handle.strides)


def _memory(cp, handle: IpcHandle):
    """The allocation `handle` names, as CuPy memory. In the process that made it, its own
    address: CUDA refuses to open one's own handle, and the producer keeps the memory alive,
    as for every receiver. Elsewhere, this process's mapping of it, which arrays over the
    memory keep open."""
    if handle.pid == os.getpid():
        return cp.cuda.UnownedMemory(handle.base, handle.size, None, handle.device)
    opened = _open(cp, handle)
    return cp.cuda.UnownedMemory(opened.ptr, handle.size, opened, handle.device)


def _open(cp, handle: IpcHandle) -> _Opened:
    """This process's mapping of the allocation `handle` names, opened if it has none (CUDA
    maps an allocation once per process)."""
    key = (handle.pid, handle.base)
    with _opened_lock:
        opened = _opened.get(key)
        # A different handle: the allocation was freed and its address reused.
        if opened is None or opened.mem_handle != handle.mem_handle:
            opened = _opened[key] = _Opened(cp, handle)
    return opened


def allocation_range(ptr: int) -> tuple[int, int]:
    """(base address, size) of the ``cudaMalloc`` allocation that holds device pointer `ptr`
    (the driver's ``cuMemGetAddressRange``); the allocation's device must be current."""
    base, size = ctypes.c_ulonglong(), ctypes.c_size_t()
    status = _cu_mem_get_address_range()(ctypes.pointer(base), ctypes.pointer(size), ptr)
    if status != 0:
        raise RuntimeError(
            f"CUDA driver error {status} in cuMemGetAddressRange for pointer {ptr:#x}: its "
            "allocation cannot be shared between processes"
        )
    return base.value, size.value


@functools.cache
def _cu_mem_get_address_range():
    fn = ctypes.CDLL("libcuda.so.1").cuMemGetAddressRange_v2
    fn.argtypes = [
        ctypes.POINTER(ctypes.c_ulonglong),
        ctypes.POINTER(ctypes.c_size_t),
        ctypes.c_ulonglong,
    ]
    fn.restype = ctypes.c_int
    return fn


@contextlib.contextmanager
def _on_device(cp, index: int):
    """Make GPU `index` current, its context bound to this thread: a thread that never called
    CUDA (a queue's feeder thread) has none, and the driver API needs one."""
    runtime = cp.cuda.runtime
    previous = runtime.getDevice()
    runtime.setDevice(index)
    try:
        yield
    finally:
        runtime.setDevice(previous)
