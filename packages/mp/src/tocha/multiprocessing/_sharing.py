"""Moving a tensor's memory into shared memory in place: ``Tensor.share_memory_()``,
``Tensor.is_shared()`` and the sharing strategies."""

from __future__ import annotations

import gc
import sys

import numpy as np
from numpy.lib.array_utils import byte_bounds

from tocha import Tensor
from tocha.library import TENSOR_TYPES, Backend, backend_of

from . import _segments

__all__ = [
    "share_memory_",
    "is_shared",
    "set_sharing_strategy",
    "get_sharing_strategy",
    "get_all_sharing_strategies",
]

if sys.platform.startswith("linux"):
    _all_sharing_strategies = {"file_descriptor", "file_system"}
    _sharing_strategy = "file_descriptor"
else:
    _all_sharing_strategies = {"file_system"}
    _sharing_strategy = "file_system"


def set_sharing_strategy(new_strategy: str) -> None:
    """Set the strategy for sharing CPU tensors.

    Args:
        new_strategy (str): one of `get_all_sharing_strategies()`: ``"file_descriptor"``
            (anonymous memory sent as file descriptors; the default on Linux) or
            ``"file_system"`` (files under ``/dev/shm`` sent by name).
    """
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}"
        )
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    """Return the current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies() -> set:
    """Return a set of sharing strategies supported on a current system."""
    return _all_sharing_strategies


def not_cpu(t: Tensor) -> NotImplementedError:
    """The error for sharing a tensor on a device whose backend has no IPC handles."""
    return NotImplementedError(
        f"sharing a tensor on device '{t.device}' between processes is not supported: the "
        f"backend of '{t.device.type}' has no IPC handles to send its memory with "
        "(Backend.ipc_handle, as tocha-cuda's CUDA IPC); move the tensor to the CPU first "
        "(tensor.cpu())"
    )


def _shares_by_ipc(t: Tensor) -> bool:
    """Whether `t` is on a device whose backend shares memory through IPC handles (cuda):
    such memory is sent as it is, never moved."""
    return type(backend_of(t._device)).ipc_handle is not Backend.ipc_handle


def share_memory_(self: Tensor) -> Tensor:
    """Move the underlying storage to shared memory; a no-op if it is there already.

    The tensor keeps its identity, values, offset and strides; views of the same storage
    are moved with it. Tensors in shared memory are sent to other processes (through
    `tocha.multiprocessing` queues, pipes, pools) without copying the data. A no-op on a
    device whose backend shares through IPC handles (cuda), as in PyTorch: its memory is
    sent as it is.

    Returns:
        self

    Example::

        >>> t = tocha.zeros(3).share_memory_()
        >>> t.is_shared()
        True
    """
    if self._device.type != "cpu":
        if not _shares_by_ipc(self):
            raise not_cpu(self)
        return self
    root = self if self._base is None else self._base
    if _segments.storage_of(root._data) is None:
        _move(root, self)
    return self


def is_shared(self: Tensor) -> bool:
    """Whether the tensor's memory is in shared memory (see `share_memory_`); always True on
    a device whose backend shares through IPC handles (cuda), as in PyTorch."""
    if self._device.type != "cpu":
        return _shares_by_ipc(self)
    return _segments.storage_of(self._data) is not None


def _move(root: Tensor, extra: Tensor) -> None:
    """Copy `root`'s memory into shared memory and point `root`, `extra` and every view of
    `root` at the copy, each at the same byte offset from the start of the memory."""
    old = root._data
    lo, hi = byte_bounds(old) if old.size else (_address(old), _address(old))
    storage = _segments.allocate(hi - lo, _sharing_strategy)

    def rebuilt(array: np.ndarray) -> np.ndarray:
        start = _address(array) - lo if array.size else 0
        return _segments.array_over(storage, start, array.dtype, array.shape, array.strides)

    # A tensor that ever had a view taken has a version counter (make_view gives it one).
    views = _views_of(root) if root._vc is not None else []
    new = rebuilt(old)
    np.copyto(new, old)
    root._data = new
    for view in (extra, *views):
        data = view._data
        if view is root or _segments.storage_of(data) is not None:
            continue
        if data.size == 0 or lo <= _address(data) and byte_bounds(data)[1] <= hi:
            view._data = rebuilt(data)


def _views_of(root: Tensor) -> list:
    """The tensors that are views of `root` (found through the garbage collector's referrer
    lists: views know their base, a base does not know its views)."""
    return [
        ref for ref in gc.get_referrers(root) if type(ref) in TENSOR_TYPES and ref._base is root
    ]


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]
