"""Backends as plugins: the protocol a backend implements, and the lazy registry.

A backend is registered under the entry-point group ``tocha.backends``; the entry point's name
is its device type and its target a cheap ``register()`` function returning a `Backend`.
Entry points are read the first time a device type other than ``cpu`` is asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from ._device import device

PLUGIN_API_VERSION = 1
ENTRY_POINT_GROUP = "tocha.backends"

# Backends tocha-core ships: loaded without reading any distribution's metadata.
_BUILTIN = {
    "cpu": ("tocha-core", "tocha._cpu:register"),
    "meta": ("tocha-core", "tocha._meta:register"),
}
# Byte sizes of PCG64's state words: state, increment, has_uint32, uinteger.
_PCG64_LAYOUT = (16, 16, 1, 4)


class Backend:
    """What a backend gives the core. Subclass it and override what differs.

    ``xp`` is the backend's array namespace (NumPy-compatible); an op's generic kernel is
    built from it unless ``overrides`` holds a kernel factory under the op's name. A backend
    with ``xp = None`` runs only the ops in ``overrides``.
    """

    api_version = PLUGIN_API_VERSION
    device_type = ""
    xp: Any = None
    array_type: type = np.ndarray
    overrides: dict = {}

    def kernel(self, op):
        """The kernel that runs `op` here; NotImplementedError if this backend has none."""
        factory = self.overrides.get(op.name)
        if factory is not None:
            return factory(self.xp)
        if self.xp is not None and op.generic is not None and op.name not in self.unsupported:
            return op.generic(self.xp)
        raise NotImplementedError(
            f"Could not run '{op.name}' on device '{self.device_type}': the backend "
            f"'{self.device_type}' has no kernel for it"
        )

    unsupported: frozenset = frozenset()

    def normalize(self, dev: device) -> device:
        """The concrete device a request names (``cuda`` becomes ``cuda:0``)."""
        return dev

    def device_of(self, array) -> device:
        return device(self.device_type)

    def device_count(self) -> int:
        return 1

    def is_available(self) -> bool:
        return self.device_count() > 0

    def asarray(self, data, dtype=None, dev: device | None = None):
        """A backend array from host data (NumPy array, scalar, nested lists)."""
        return self.xp.asarray(data, dtype=dtype)

    def from_host(self, array: np.ndarray, dev: device):
        """Copy a NumPy array to this backend's device."""
        return self.xp.array(array, copy=True)

    def to_host(self, array) -> np.ndarray:
        """A NumPy array holding this backend array's data (a copy unless memory is shared)."""
        return np.asarray(array)

    def synchronize(self, dev: device | None = None) -> None:
        return None

    def memory_stats(self, dev: device | None = None) -> dict:
        return {}

    def manual_seed(self, seed: int) -> None:
        return None

    def new_generator(self, seed: int, dev: device):
        """A random bit stream for `dev` seeded with `seed` (0 <= seed < 2**64): an object with
        NumPy's ``Generator`` API (``random``, ``standard_normal``, ``integers``,
        ``standard_exponential``, ``permutation``). Here NumPy's PCG64; a backend whose arrays
        are not NumPy's overrides this and the two state methods."""
        return np.random.Generator(np.random.PCG64(seed))

    def generator_state(self, gen) -> bytes:
        """The state of a generator from `new_generator`, as bytes."""
        s = gen.bit_generator.state
        words = (s["state"]["state"], s["state"]["inc"], s["has_uint32"], s["uinteger"])
        return b"".join(w.to_bytes(n, "little") for w, n in zip(words, _PCG64_LAYOUT))

    def set_generator_state(self, gen, state: bytes) -> None:
        """Restore a state `generator_state` gave; ValueError if it is not one."""
        if len(state) != sum(_PCG64_LAYOUT):
            raise ValueError(
                f"expected a PCG64 state of {sum(_PCG64_LAYOUT)} bytes but found {len(state)}"
            )
        words, offset = [], 0
        for n in _PCG64_LAYOUT:
            words.append(int.from_bytes(state[offset : offset + n], "little"))
            offset += n
        gen.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": words[0], "inc": words[1]},
            "has_uint32": words[2],
            "uinteger": words[3],
        }

    def current_device(self) -> int:
        """The index of the device that ops use when none is named."""
        return 0

    def empty_cache(self) -> None:
        """Give cached, unused device memory back to the device."""
        return None

    def data_ptr(self, array) -> int:
        return array.__array_interface__["data"][0] if array.size else 0

    def storage_offset(self, array) -> int:
        root = array
        while isinstance(root.base, type(array)):
            root = root.base
        if not array.size or not root.size:
            return 0
        return (self.data_ptr(array) - self.data_ptr(root)) // array.itemsize

    def ipc_handle(self, array) -> tuple:
        """A picklable description of backend array `array`'s memory that another process
        opens with `ipc_open`, reaching the same memory: how ``tocha.multiprocessing`` sends
        tensors of this device. For cuda: the CUDA IPC handle of the allocation, the byte
        offset of the array's first element from the allocation's base, the allocation's
        size, the device index, the sender's pid, and the array's dtype, shape and byte
        strides. The sender keeps the memory alive while receivers use it.

        Raises NotImplementedError where this backend cannot share memory between processes.
        """
        raise NotImplementedError(
            f"the backend of device type '{self.device_type}' cannot share memory between "
            "processes: it implements no IPC handles (Backend.ipc_handle)"
        )

    def ipc_open(self, handle):
        """A backend array over the memory that `handle` (from `ipc_handle`, in this process
        or another) describes: no copy, writes on either side are seen by the other.

        Raises NotImplementedError where this backend cannot share memory between processes.
        """
        raise NotImplementedError(
            f"the backend of device type '{self.device_type}' cannot open memory of another "
            "process: it implements no IPC handles (Backend.ipc_open)"
        )


class _Entry:
    """What the registry knows of one device type: where it comes from, and how loading went."""

    __slots__ = ("device_type", "distribution", "target", "backend", "error")

    def __init__(self, device_type, distribution, target):
        self.device_type = device_type
        self.distribution = distribution
        self.target = target
        self.backend = None
        self.error = None


_entries: dict[str, _Entry] = {
    name: _Entry(name, dist, target) for name, (dist, target) in _BUILTIN.items()
}
_discovered = False


def _discover() -> None:
    """Read the ``tocha.backends`` entry points once (never during ``import tocha``)."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _entries:
            continue
        dist = ep.dist.name if ep.dist is not None else "unknown distribution"
        _entries[ep.name] = _Entry(ep.name, dist, ep.value)


def _load(entry: _Entry) -> None:
    module_name, _, attr = entry.target.partition(":")
    try:
        register = getattr(importlib.import_module(module_name), attr)
        backend = register()
        version = getattr(backend, "api_version", None)
        if version != PLUGIN_API_VERSION:
            raise RuntimeError(
                f"it was built for tocha plugin API version {version}, but this tocha-core "
                f"speaks version {PLUGIN_API_VERSION}"
            )
        if backend.device_type != entry.device_type:
            raise RuntimeError(
                f"its entry point is named '{entry.device_type}' but the backend says its "
                f"device type is '{backend.device_type}'"
            )
        entry.backend = backend
    except Exception as exc:  # a broken plugin must never break tocha: keep its error
        entry.error = (exc, _format_traceback())


def _format_traceback() -> str:
    import traceback

    return traceback.format_exc()


def get_backend(device_type: str) -> Backend:
    """The loaded backend of a device type; RuntimeError saying why if there is none."""
    entry = _entries.get(device_type)
    if entry is None and not _discovered:
        _discover()
        entry = _entries.get(device_type)
    if entry is None:
        raise RuntimeError(no_backend_message(device_type))
    if entry.backend is None and entry.error is None:
        _load(entry)
    if entry.error is not None:
        exc = entry.error[0]
        raise RuntimeError(
            f"the backend for device type '{device_type}' (distribution {entry.distribution}) "
            f"failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    return entry.backend


def no_backend_message(device_type: str) -> str:
    """Why there is no backend for `device_type`: the distribution to install when tocha knows
    it (``cuda``: tocha-cuda), else how a backend registers."""
    from ._missing import BACKENDS, not_installed

    message = (
        f"no backend is installed for device type '{device_type}' "
        f"(installed: {', '.join(sorted(_entries))})"
    )
    distribution = BACKENDS.get(device_type)
    if distribution is not None:
        return f"{message}: it comes from {not_installed(distribution)}"
    return f"{message}; a backend registers under the '{ENTRY_POINT_GROUP}' entry-point group"


def has_entry(device_type: str) -> bool:
    """Whether a backend is declared for `device_type` (loaded or not)."""
    _discover()
    return device_type in _entries


def backend_of(dev: device) -> Backend:
    backend = dev._backend
    if backend is None:
        backend = get_backend(dev.type)
        object.__setattr__(dev, "_backend", backend)
    return backend


def resolve_device(spec) -> device:
    """The concrete, interned device a user's device argument names."""
    dev = device(spec)
    return backend_of(dev).normalize(dev)


def status() -> dict:
    """Which backends are installed, which are loaded, and why a backend is not.

    Returns a dict keyed by device type: ``{"distribution", "loaded", "error"}``.
    """
    _discover()
    report = {}
    for name, entry in sorted(_entries.items()):
        if entry.backend is None and entry.error is None:
            _load(entry)
        error = None
        if entry.error is not None:
            error = f"{type(entry.error[0]).__name__}: {entry.error[0]}"
        report[name] = {
            "distribution": entry.distribution,
            "loaded": entry.backend is not None,
            "error": error,
        }
    return report
