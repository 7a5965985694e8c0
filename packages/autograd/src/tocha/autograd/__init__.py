"""tocha.autograd: tape-based reverse-mode automatic differentiation.

Importing it installs the autograd layer into tocha-core's dispatcher; `import tocha` does
so on the first ``requires_grad=True``.
"""

from typing import TYPE_CHECKING

from tocha import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from tocha.overrides import is_tensor_like

from . import (  # noqa: F401
    _formulas_extra,
    _formulas_linalg,
    _formulas_scatter,
    _record,
    forward_ad,
    functional,
    grad_mode,
    graph,
    profiler,
    profiler_util,
    transforms,
    variable,
)
from ._api import backward, grad, install_methods, set_grad, set_requires_grad
from ._version import __version__
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import set_multithreading_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .profiler import kineto_available
from .variable import Variable

__all__ = [
    "backward",
    "grad",
    "Function",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "FunctionCtx",
    "once_differentiable",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "set_grad",
    "set_requires_grad",
    "set_multithreading_enabled",
    "Variable",
    "kineto_available",
    "is_tensor_like",
    "__version__",
]

_record.install()
install_methods()


# Hidden from type checkers, so that they report the names tocha lacks.
if not TYPE_CHECKING:

    def __getattr__(name):
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)
