"""tocha.optim: optimizers with the API of ``torch.optim``.

`Optimizer` is the base class; SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad,
Adadelta, ASGD and Rprop update each element from its own gradient and state, with a
single-tensor and a multi-tensor ("foreach") path; LBFGS is the quasi-Newton method with an
optional strong-Wolfe line search; SparseAdam exists for compatibility only (tocha has no
sparse gradients). ``tocha.optim.lr_scheduler`` and ``tocha.optim.swa_utils`` are imported
on first access.
"""

import importlib
from typing import TYPE_CHECKING

from ._version import __version__
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
    "ASGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "LBFGS",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
    "SparseAdam",
    "lr_scheduler",
    "swa_utils",
    "__version__",
]

_SUBMODULES = ("lr_scheduler", "swa_utils")

if TYPE_CHECKING:
    # Type checkers see the submodules, and no __getattr__: they report the names tocha lacks.
    from . import lr_scheduler, swa_utils
else:

    def __getattr__(name):
        if name in _SUBMODULES:
            module = importlib.import_module(f"{__name__}.{name}")
            globals()[name] = module
            return module
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
