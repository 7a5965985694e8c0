"""Every installed tocha distribution, imported, for the tests that walk the op registry: each
distribution declares its ops when it is imported, so a registry walked before that would
miss them (tocha-nn's, tocha-optim's)."""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, distribution, entry_points

from tocha._missing import BACKENDS, SUBPACKAGES


def installed(name: str) -> bool:
    """Whether the distribution `name` is installed."""
    try:
        distribution(name)
    except PackageNotFoundError:
        return False
    return True


def load_installed() -> list[str]:
    """Import the subpackages (``tocha.nn``...) and the backend plugins of every installed
    tocha distribution; returns the distributions that are not installed."""
    missing = sorted(
        {name for name in (*SUBPACKAGES.values(), *BACKENDS.values()) if not installed(name)}
    )
    for subpackage, name in SUBPACKAGES.items():
        if name not in missing:
            import_module(f"tocha.{subpackage}")
    for entry in entry_points(group="tocha.backends"):
        if entry.dist.name in BACKENDS.values():
            import_module(entry.module)
    return missing
