"""tocha.nn: neural-network modules, layers, losses, the functional API and initialisers,
interchangeable with ``torch.nn``."""

from . import functional, init, parallel, utils  # noqa: F401
from ._version import __version__  # noqa: F401
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = [
    "Buffer",
    "DataParallel",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "functional",
    "init",
    "parallel",
    "utils",
    *_modules_all,
]


def __getattr__(name):
    from tocha.library import missing_attribute

    raise missing_attribute(__name__, name)
