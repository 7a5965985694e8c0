"""tocha.utils: ``tocha.utils.data`` (datasets, samplers, `DataLoader`, as
``torch.utils.data``) and ``tocha.utils.trainer`` (fit / evaluate / predict with
checkpoints, early stopping and a metrics history). Each is imported on first access."""

import importlib

from ._version import __version__

__all__ = ["data", "trainer"]


def __getattr__(name):
    if name in __all__:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
