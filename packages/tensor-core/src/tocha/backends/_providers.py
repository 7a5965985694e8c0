"""Kernel providers: plugins that bring faster kernels for ops of a device that already exists.

A provider is registered under the entry-point group ``tocha.kernels``; the entry point's name
is the provider's name, its target a cheap ``register()`` returning a `KernelProvider`. Entry
points are read on the first kernel an op builds (its first call on a device), never by
``import tocha``. When an op's kernel is built for a device, each enabled provider of that
device type that lists the op, lowest priority first, may wrap the kernel built so far: the
highest priority runs first and hands the calls it declines to the next one, down to the
backend's own kernel.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

ENTRY_POINT_GROUP = "tocha.kernels"
DISABLE_ENV = "TOCHA_KERNEL_PROVIDERS_DISABLE"


class KernelProvider:
    """What a kernel provider gives the core. Subclass it and set the class attributes.

    ``name`` is the provider's name (the entry point's), ``device_type`` the device whose ops
    it serves, ``ops`` the names of the ops it may serve, and ``priority`` orders providers
    of one op (the highest runs first). `kernel` builds the provided kernel of one op.
    """

    api_version = 1
    name = ""
    device_type = "cpu"
    priority = 0
    ops: frozenset[str] = frozenset()

    def kernel(self, op: Any, fallback: Callable) -> Callable | None:
        """The kernel that runs `op` on this device, or None to leave the op to `fallback`.

        `fallback` is the kernel that runs `op` without this provider, with the same
        signature. The provided kernel calls it for any call it declines (a dtype, layout or
        argument it does not support), so that declining costs one function call.
        """
        return None


class _Entry:
    """One provider: where it comes from, whether it is on, and how loading went."""

    __slots__ = ("name", "distribution", "target", "provider", "error", "enabled", "declined")

    def __init__(self, name, distribution, target, provider=None):
        self.name = name
        self.distribution = distribution
        self.target = target
        self.provider = provider
        self.error = None
        self.enabled = True
        self.declined: set[str] = set()


_entries: dict[str, _Entry] | None = None
# (device type, op name) -> the enabled, loaded providers listing the op, lowest priority first.
_serving: dict[tuple[str, str], list[_Entry]] = {}


def _discover() -> dict[str, _Entry]:
    """Read the ``tocha.kernels`` entry points and load their providers, once."""
    global _entries
    if _entries is not None:
        return _entries
    from importlib.metadata import entry_points

    _entries = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _entries:
            dist = ep.dist.name if ep.dist is not None else "unknown distribution"
            _entries[ep.name] = _Entry(ep.name, dist, ep.value)
    for entry in _entries.values():
        entry.enabled = not _disabled_by_env(entry.name)
        _load(entry)
    _index()
    return _entries


def _load(entry: _Entry) -> None:
    import importlib

    from .._backend import PLUGIN_API_VERSION

    module_name, _, attr = entry.target.partition(":")
    try:
        provider = getattr(importlib.import_module(module_name), attr)()
        if getattr(provider, "api_version", None) != PLUGIN_API_VERSION:
            raise RuntimeError(
                f"it was built for tocha plugin API version "
                f"{getattr(provider, 'api_version', None)}, but this tocha-core speaks "
                f"version {PLUGIN_API_VERSION}"
            )
        if provider.name != entry.name:
            raise RuntimeError(
                f"its entry point is named '{entry.name}' but the provider says its name is "
                f"'{provider.name}'"
            )
        entry.provider = provider
    except Exception as exc:  # a broken provider must never break tocha: keep its error
        entry.error = exc


def _index() -> None:
    _serving.clear()
    assert _entries is not None
    ready = [e for e in _entries.values() if e.provider is not None and e.enabled]
    for entry in sorted(ready, key=lambda e: e.provider.priority):
        for name in entry.provider.ops:
            _serving.setdefault((entry.provider.device_type, name), []).append(entry)


def provide(op, device_type: str, kernel: Callable) -> Callable:
    """`kernel` (the backend's kernel of `op`) wrapped by the providers serving `op` there."""
    if _entries is None:
        _discover()
    for entry in _serving.get((device_type, op.name), ()):
        try:
            provided = entry.provider.kernel(op, kernel)
        except Exception as exc:  # the built-in kernel stays right: warn and keep it
            warnings.warn(
                f"kernel provider '{entry.name}' failed to build a kernel for '{op.name}' "
                f"({type(exc).__name__}: {exc}); the op runs without it",
                RuntimeWarning,
                stacklevel=2,
            )
            provided = None
        if provided is None:
            entry.declined.add(op.name)
        else:
            kernel = provided
    return kernel


def register_kernel_provider(provider: KernelProvider, distribution: str = "") -> None:
    """Register `provider` in this process, as if an installed distribution declared it.

    A provider of the same name is replaced. Kernels already built for the ops it lists are
    rebuilt on their next call.
    """
    entries = _discover()
    old = entries.get(provider.name)
    entry = _Entry(provider.name, distribution or "registered at run time", "", provider)
    entry.enabled = not _disabled_by_env(provider.name)
    entries[provider.name] = entry
    _index()
    _forget(set(provider.ops) | (set(old.provider.ops) if old and old.provider else set()))


def unregister_kernel_provider(name: str) -> None:
    """Remove the provider `name` from this process (KeyError if there is none)."""
    entry = _discover().pop(_known(name))
    _index()
    if entry.provider is not None:
        _forget(set(entry.provider.ops))


def set_kernel_provider_enabled(name: str, enabled: bool) -> None:
    """Switch the kernel provider `name` on or off in this process (KeyError naming the
    installed providers if there is none); the ops it serves rebuild their kernels."""
    entry = _discover()[_known(name)]
    entry.enabled = bool(enabled)
    entry.declined.clear()
    _index()
    if entry.provider is not None:
        _forget(set(entry.provider.ops))


def kernel_providers() -> dict[str, dict[str, Any]]:
    """The kernel providers installed or registered, by name.

    Each is ``{"distribution", "device_type", "priority", "enabled", "loaded", "error",
    "ops"}``: ``ops`` the op names it lists, ``error`` why it did not load (or None).
    """
    report = {}
    for name, entry in sorted(_discover().items()):
        p, error = entry.provider, entry.error
        report[name] = {
            "distribution": entry.distribution,
            "device_type": getattr(p, "device_type", None),
            "priority": getattr(p, "priority", None),
            "enabled": entry.enabled,
            "loaded": p is not None,
            "error": None if error is None else f"{type(error).__name__}: {error}",
            "ops": sorted(p.ops) if p is not None else [],
        }
    return report


def provided_kernels(device_type: str = "cpu") -> dict[str, str]:
    """Which provider serves each op on `device_type`: op name -> provider name.

    Ops served by no enabled provider are left out, and so are ops whose every provider
    declined them when their kernel was built; an op not built yet is reported for the
    provider that will be asked first.
    """
    _discover()
    report = {}
    for (dev_type, op_name), entries in sorted(_serving.items()):
        if dev_type != device_type:
            continue
        for entry in reversed(entries):
            if op_name not in entry.declined:
                report[op_name] = entry.name
                break
    return report


def _disabled_by_env(name: str) -> bool:
    """Whether ``TOCHA_KERNEL_PROVIDERS_DISABLE`` (names, comma-separated, or ``all``) names
    the provider `name`."""
    disabled = {n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",")}
    return bool({"all", "*", name} & disabled)


def _known(name: str) -> str:
    entries = _discover()
    if name not in entries:
        raise KeyError(
            f"no kernel provider is named {name!r} (installed: {', '.join(sorted(entries))}); "
            f"a provider registers under the '{ENTRY_POINT_GROUP}' entry-point group"
        )
    return name


def _forget(op_names: set[str]) -> None:
    """Drop the built kernels of these ops, so that their next call asks the providers again."""
    from .._dispatch import REGISTRY

    for name in op_names:
        op = REGISTRY.get(name)
        if op is not None:
            op.kernels.clear()
