"""Pickling tensors for other processes: the reducer registered with multiprocessing's
``ForkingPickler``, so that every queue, pipe, pool and process argument shares tensors.

A CPU tensor is moved to shared memory (`share_memory_`) and sent as a handle to its segment
(a file descriptor, or a name under ``/dev/shm``), the storage's place in it, and the
tensor's dtype, shape, byte strides and byte offset: the receiver maps the same memory, and
a segment it has mapped already is reused. A tensor on another device is sent as its
backend's IPC handle (`Backend.ipc_handle`: for cuda, a CUDA IPC memory handle), which the
receiver's backend opens over the same memory (`Backend.ipc_open`); the sender must keep
the tensor alive while receivers use it. A backend with another way of sharing adds a
reducer to `DEVICE_REDUCERS` under its device type.
"""

from __future__ import annotations

import weakref
from multiprocessing.context import get_spawning_popen
from multiprocessing.reduction import DupFd, ForkingPickler

from tocha import Tensor
from tocha.library import CPU, SUBCLASS_HOOKS, TENSOR_TYPES, backend_of

from . import _segments
from ._sharing import not_cpu, share_memory_

__all__ = [
    "reduce_tensor",
    "rebuild_tensor",
    "rebuild_device_tensor",
    "init_reductions",
    "DEVICE_REDUCERS",
]

_NON_LEAF = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
    "not support crossing process boundaries.  If you just want to transfer the data, call "
    "detach() on the tensor before serializing (e.g., putting it on the queue)."
)


def reduce_tensor(tensor: Tensor):
    """The pickle reduction of a tensor sent to another process (it shares the memory)."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(_NON_LEAF)
    reducer = DEVICE_REDUCERS.get(tensor._device.type, _reduce_by_ipc)
    return reducer(tensor)


def _reduce_cpu(tensor: Tensor):
    share_memory_(tensor)
    data = tensor._data
    storage = _segments.storage_of(data)
    segment = storage.segment
    if segment.name is None:
        handle = ("fd", _dup_fd(segment.fd), segment.size)
    else:
        _segments.in_flight(segment, +1)
        handle = ("fs", segment.name, segment.size)
    region = (storage.offset, storage.nbytes)
    offset = data.__array_interface__["data"][0] - segment.addr - storage.offset
    state = (tensor.dtype, data.shape, data.strides, tensor.requires_grad)
    return rebuild_tensor, (type(tensor), handle, region, offset, state, _extra_state(tensor))


def _reduce_by_ipc(tensor: Tensor):
    """A tensor on a device without a reducer of its own: its backend's IPC handle."""
    dev = tensor._device
    try:
        handle = backend_of(dev).ipc_handle(tensor._data)
    except NotImplementedError as exc:
        raise not_cpu(tensor) from exc
    state = (tensor.requires_grad, _extra_state(tensor))
    return rebuild_device_tensor, (type(tensor), dev, handle, state)


DEVICE_REDUCERS = {"cpu": _reduce_cpu}
# Process being started (spawn, forkserver) -> {fd: its DupFd}: a file descriptor is handed
# to a child once however many tensors use it (spawn refuses a descriptor listed twice).
_popen_fds = weakref.WeakKeyDictionary()


def _dup_fd(fd: int):
    popen = get_spawning_popen()
    if popen is None:
        return DupFd(fd)
    fds = _popen_fds.setdefault(popen, {})
    if fd not in fds:
        fds[fd] = DupFd(fd)
    return fds[fd]


def rebuild_tensor(cls, handle, region, offset, state, extra):
    """A tensor of type `cls` over the shared memory that `handle` names (the receiving end
    of `reduce_tensor`)."""
    kind, ref, size = handle
    if kind == "fd":
        segment = _segments.open_fd(ref.detach(), size)
    else:
        segment = _segments.open_name(ref, size)
    dtype, shape, strides, requires_grad = state
    storage = _segments.Storage(segment, *region)
    data = _segments.array_over(storage, offset, dtype.np, shape, strides)
    return _new_tensor(cls, data, CPU, requires_grad, extra)


def rebuild_device_tensor(cls, dev, handle, state):
    """A tensor of type `cls` on device `dev` over the memory that `handle` describes, opened
    by the device's backend (the receiving end of `reduce_tensor` for a tensor not on the
    CPU)."""
    requires_grad, extra = state
    return _new_tensor(cls, backend_of(dev).ipc_open(handle), dev, requires_grad, extra)


def _new_tensor(cls, data, dev, requires_grad: bool, extra: dict) -> Tensor:
    """A leaf tensor of type `cls` around backend array `data`, with a subclass's
    attributes `extra`."""
    t = object.__new__(cls)
    t._data = data
    t._device = dev
    t._ag = None
    t._base = None
    t._vc = None
    for name, value in extra.items():
        setattr(t, name, value)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _extra_state(tensor: Tensor) -> dict:
    """Attributes a Tensor subclass adds (``Buffer.persistent``...)."""
    state = dict(getattr(tensor, "__dict__", {}))
    for cls in type(tensor).__mro__:
        if cls is Tensor:
            break
        for name in cls.__dict__.get("__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(tensor, name):
                state[name] = getattr(tensor, name)
    return state


def init_reductions() -> None:
    """Register `reduce_tensor` for Tensor and its subclasses, present and future."""
    for cls in list(TENSOR_TYPES):
        ForkingPickler.register(cls, reduce_tensor)
    if _register not in SUBCLASS_HOOKS:
        SUBCLASS_HOOKS.append(_register)


def _register(cls) -> None:
    ForkingPickler.register(cls, reduce_tensor)
