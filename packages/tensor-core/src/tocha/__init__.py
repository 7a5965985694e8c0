"""tocha: a deep learning framework with the public API of PyTorch.

``import tocha as torch`` gives tensors on the CPU (NumPy) or on other devices through backend
plugins. Subpackages from other distributions (``tocha.nn``, ``tocha.optim``...) share this
namespace and are imported on first access.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from types import FunctionType as _FunctionType  # noqa: E402

from . import (  # noqa: E402, F401  # noqa: E402, F401
    _C,
    _control_flow,
    _missing,
    _ops,
    _printing,
    _storage,
    _subclass_dispatch,
    _sym,
    amp,
    fft,
    linalg,
    overrides,
    random,
    sparse,
    special,
    torch_version,
    version,
)
from ._api import PUBLIC as _PUBLIC  # noqa: E402
from ._custom_ops import ops  # noqa: E402
from ._device import device  # noqa: E402
from ._dtype import (  # noqa: E402
    bfloat16,
    bool,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    finfo,
    float,
    float8_e4m3fn,
    float8_e5m2,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._errors import AcceleratorError, OutOfMemoryError  # noqa: E402
from ._grad_mode import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ._runtime import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    compile,
    get_default_device,
    get_device_module,
    get_float32_matmul_precision,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    set_default_device,
    set_float32_matmul_precision,
    set_num_threads,
    use_deterministic_algorithms,
)
from ._tensor import Size, Tensor, is_tensor  # noqa: E402
from ._version import __version__  # noqa: E402
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402
from .amp._autocast import (  # noqa: E402
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .serialization import load, save  # noqa: E402

# tocha's functions hand a call on a tensor-like argument to its __torch_function__ (those
# that do it themselves, the elementwise ones, are not wrapped); the public modules that
# re-export one (tocha.random) publish the same object
_raw = {
    name: fn
    for name, fn in _PUBLIC.items()
    if isinstance(fn, _FunctionType) and not getattr(fn, "hands_over", False)
}
_PUBLIC.update((name, overrides.overridable(fn, "tocha", name)) for name, fn in _raw.items())
for _module in (random,):
    for _name in _module.__all__:
        if _name in _raw and getattr(_module, _name) is _raw[_name]:
            setattr(_module, _name, _PUBLIC[_name])
del _raw, _module, _name
globals().update(_PUBLIC)
_ops.methods.drop_out_from_methods()  # every method is in place now

# The array API's constants, as torch's.
from math import e, inf, nan, pi  # noqa: E402, F401

newaxis = None

# Subpackages: the distribution each comes from (the table is tocha._missing's), imported on
# first attribute access. Importing one whose distribution is missing, however it is written
# (`import tocha.nn`, `from tocha.nn import functional`, `tocha.nn`), raises a
# ModuleNotFoundError naming the distribution: the finder installed here answers last.
# Top-level names that a subpackage provides (`tocha.vmap` is `tocha.func.vmap`) are taken
# from it on first access, the same way.
_SUBPACKAGES = _missing.SUBPACKAGES
_PROVIDED = _missing.PROVIDED
_missing.install_finder()


def _subpackage(name: str, shown: str):
    """The subpackage ``tocha.<name>`` (`name` may be dotted: ``nn.functional``), imported;
    its distribution's error (naming `shown`) when that is missing."""
    import importlib

    top = f"tocha.{name.partition('.')[0]}"
    try:
        return importlib.import_module(f"tocha.{name}")
    except ModuleNotFoundError as exc:
        error = _missing.missing_module(top, shown=shown)
        if exc.name not in (top, f"tocha.{name}") or error is None:
            raise
        raise error from None


def __getattr__(name):
    if name in _SUBPACKAGES:
        value = _subpackage(name, f"tocha.{name}")
    elif name in _PROVIDED:
        value = getattr(_subpackage(_PROVIDED[name], f"tocha.{name}"), name)
    else:
        raise AttributeError(
            f"module 'tocha' has no attribute '{name}': torch.{name} is not in tocha yet"
        )
    globals()[name] = value
    return value


def __dir__():
    """The names `tocha` has: its own, and those of the subpackages whose distribution is
    installed (a program that calls ``hasattr`` on each, as array-api-compat does, must not
    meet a missing distribution's error)."""
    import importlib.util

    def installed(subpackage: str) -> bool:
        return importlib.util.find_spec(f"tocha.{subpackage.partition('.')[0]}") is not None

    names = {n for n in _SUBPACKAGES if installed(n)}
    names |= {n for n, subpackage in _PROVIDED.items() if installed(subpackage)}
    return sorted(set(globals()) | names)
