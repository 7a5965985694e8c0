"""tocha.nn: neural-network modules, layers, losses, the functional API and initialisers,
interchangeable with ``torch.nn``."""

from . import functional, init, utils  # noqa: F401
from ._version import __version__  # noqa: F401
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedParameter

__all__ = [
    "Buffer", "Parameter", "UninitializedParameter", "functional", "init", "utils", *_modules_all
]
