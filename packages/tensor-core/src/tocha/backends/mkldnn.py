"""``tocha.backends.mkldnn``: PyTorch's switch of its oneDNN (formerly MKL-DNN) CPU kernels,
as ``torch.backends.mkldnn``.

tocha's oneDNN kernels come from the kernel provider ``onednn`` (the distribution
tocha-onednn). ``enabled`` reads and switches that provider (`set_kernel_provider_enabled`);
``is_available()`` says whether it is installed and loads.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

from . import _providers

__all__ = ["flags", "is_available"]

PROVIDER = "onednn"


def is_available() -> bool:
    """Whether oneDNN's kernels can be used: the ``onednn`` kernel provider is installed and
    loaded."""
    report = _providers.kernel_providers().get(PROVIDER)
    return bool(report and report["loaded"])


def _enabled() -> bool:
    report = _providers.kernel_providers().get(PROVIDER)
    return bool(report and report["enabled"])


def _set_enabled(value: bool) -> None:
    if PROVIDER in _providers.kernel_providers():
        _providers.set_kernel_provider_enabled(PROVIDER, bool(value))


@contextmanager
def flags(enabled: bool = False) -> Iterator[None]:
    """Within the block, oneDNN's kernels are switched on or off as `enabled` says."""
    before = _enabled()
    _set_enabled(enabled)
    try:
        yield
    finally:
        _set_enabled(before)


class _Module(types.ModuleType):
    """The module, with ``enabled`` read and written through the provider's switch."""

    @property
    def enabled(self) -> bool:
        return _enabled()

    @enabled.setter
    def enabled(self, value: bool) -> None:
        _set_enabled(value)


sys.modules[__name__].__class__ = _Module
