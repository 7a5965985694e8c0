"""tocha's extension API: what the other distributions (tocha-autograd, tocha-nn, tocha-cuda,
...) and third-party ops and backends build on. It is versioned with the plugin API: a name
here keeps its meaning across tocha-core's minor releases; the underscore modules behind it
may change at any time.

Ops
    `defop(name, generic, differentiable=True)` declares a primitive op from a generic kernel
    factory ``generic(xp) -> kernel``; `call(op, inputs, *args)` runs it on tensors (autograd
    layer, then the device's kernel) and returns a tuple of tensors; `REGISTRY` maps names to
    ops; `LAYERS` holds the layers the dispatcher runs around a kernel (tocha-autograd sets
    ``LAYERS.autograd``).
Tensors
    `wrap(array, device)` makes a Tensor around a backend array (no copy);
    `bump_version(tensor)` records an in-place write (autograd's version counter);
    `TENSOR_TYPES` and `SUBCLASS_HOOKS` are the Tensor classes and the hooks run on a new
    subclass; `INFERENCE_VC` counts inference-mode tensors.
Devices and dtypes
    `Backend` is the base class of a device backend and `backend_of(device)` the backend of a
    device; `CPU` is the CPU device; `FROM_NP` maps NumPy dtypes to tocha's and `TITLE` gives
    each dtype's tensor-type name (``FloatTensor``).
Grad mode and randomness
    `GRAD_MODE` is the grad-mode state (``GRAD_MODE.grad_enabled``); `generator_stream(
    generator, device)` is the bit stream a sampling kernel draws from (`generator`'s, else
    the device's default).
Errors
    `missing_attribute(module, name)` is the AttributeError for a PyTorch name tocha lacks;
    `missing_module(module)` the ModuleNotFoundError for a subpackage whose distribution is
    not installed.
"""

from ._backend import Backend, backend_of
from ._device import CPU
from ._dispatch import LAYERS, REGISTRY, bump_version, call, defop
from ._dtype import FROM_NP, TITLE
from ._grad_mode import STATE as GRAD_MODE
from ._missing import missing_attribute, missing_module
from ._ops.random import _generator as generator_stream
from ._tensor import INFERENCE_VC, SUBCLASS_HOOKS, TENSOR_TYPES, wrap

__all__ = [
    "CPU",
    "FROM_NP",
    "GRAD_MODE",
    "INFERENCE_VC",
    "LAYERS",
    "REGISTRY",
    "SUBCLASS_HOOKS",
    "TENSOR_TYPES",
    "TITLE",
    "Backend",
    "backend_of",
    "bump_version",
    "call",
    "defop",
    "generator_stream",
    "missing_attribute",
    "missing_module",
    "wrap",
]
