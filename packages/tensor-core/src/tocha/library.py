"""tocha's extension API: what the other distributions (tocha-autograd, tocha-nn, tocha-cuda,
...) and third-party ops and backends build on. It is versioned with the plugin API: a name
here keeps its meaning across tocha-core's minor releases; the underscore modules behind it
may change at any time.

Ops
    `defop(name, generic, differentiable=True, parts=None)` declares a primitive op from a
    generic kernel factory ``generic(xp) -> kernel`` (`parts`: named building blocks of that
    kernel, ``op.parts``, which a backend fusing the op reuses); `call(op, inputs, *args)`
    runs it on tensors (autograd layer, then the device's kernel) and returns a tensor, or a
    tuple of them when the kernel returns a tuple; `REGISTRY` maps names to ops; `LAYERS`
    holds the layers the dispatcher runs around a kernel (tocha-autograd sets
    ``LAYERS.autograd``); `autocast_op(name)` hooks a public function into autocast's op
    lists (`tocha.amp`) under PyTorch's op name `name`. Kernels run silently on overflow,
    division by zero and invalid values, as PyTorch's do: `call` runs them in a fresh
    `kernel_context()`, a context of their own (they see none of the caller's context
    variables) in which NumPy's warnings are off, and code that computes on arrays itself
    runs that work with ``kernel_context().run(fn, *args)``. ``defop(..., opmath=True)``
    runs a kernel of several array steps on float16/bfloat16 inputs in float32, rounding
    once, as PyTorch's kernels do: the backend wraps it in `in_float32(kernel)`, which a
    kernel may also call itself where it tests its input's dtype anyway (`HALF_CHARS` are
    the NumPy type characters of float16 and bfloat16); `computed_in_float32` does the same
    for a public function composed of tocha ops.
In-place ops
    `inplace(target, operands, out_of_place, direct=None)` runs an in-place op: `direct()`
    writes into target's memory, or, when autograd tracks target or an operand (or the op has
    no direct form), `out_of_place()`'s result is written into it by `assign(target,
    result)`, and target takes the result's history. A target whose elements share memory
    (an expanded view) is refused PyTorch's RuntimeError unless the op ``fills=True`` (writes
    one value, as fill_ does). Both bump the version counter;
    `bump_version(tensor)` alone records a write made some other way (an optimizer's kernel).
Tensors
    `wrap(array, device)` makes a Tensor around a backend array (no copy);
    `TENSOR_TYPES` and `SUBCLASS_HOOKS` are the Tensor classes and the hooks run on a new
    subclass; `INFERENCE_VC` counts inference-mode tensors.
Memory formats
    `suggested_format(array)` is the memory format PyTorch gives the result of a convolution,
    pooling or normalization of a backend array (``tocha.channels_last`` when its strides
    look so), `suggest_memory_format(tensor)` the same of a tensor, and `keep_format(result,
    input)` lays a composite op's result out in that format of its input. An op declared with
    ``defop(..., layout=(0,))`` lays its results out in the format its arguments at those
    positions suggest, with ``layout="elementwise"`` in its operands' memory order as an
    elementwise op's, whichever kernel runs.
Devices and dtypes
    `Backend` is the base class of a device backend and `backend_of(device)` the backend of a
    device; `CPU` is the CPU device; `FROM_NP` maps NumPy dtypes to tocha's and `TITLE` gives
    each dtype's tensor-type name (``FloatTensor``).
Kernels' constants
    `ERF32_RATIONAL` is ``(P, Q)``, the coefficients (highest degree first) of the float32
    erf that tocha's kernels evaluate, ``t * P(t**2) / Q(t**2)`` with ``t`` the input clamped
    to [-4, 4] (within 7 float32 ulp of the true erf): a provider that evaluates it gives
    tocha's values.
Grad mode and randomness
    `GRAD_MODE` is the grad-mode state (``GRAD_MODE.grad_enabled``); `generator_stream(
    generator, device)` is the bit stream a sampling kernel draws from (`generator`'s, else
    the device's default); `bernoulli_mask(stream, shape, p)` draws a boolean Bernoulli(p)
    array of `shape` from tocha's default CPU stream (a ``numpy.random.Generator``).
PyTorch's custom operators (``torch.library``)
    `custom_op(name, fn, mutates_args=...)` registers a Python function as the operator
    ``"namespace::name"`` (``tocha.ops.namespace.name``), its schema read from its
    annotations (`infer_schema`); its `CustomOpDef` and `register_fake`,
    `register_autograd`, `register_kernel`, `register_vmap`, `register_autocast` give it a
    fake (shape) kernel (`get_ctx` inside one), a backward, per-device kernels, a vmap rule
    and an autocast dtype. The older API: `Library` (``"DEF"``, ``"IMPL"``,
    ``"FRAGMENT"``) defines operators from schema strings and registers kernels under
    dispatch keys, as `define`, `impl` and `impl_abstract` do. `opcheck` tests an
    operator's registrations on sample arguments (`OpCheckError`); `OpOverload` is the
    type of ``tocha.ops.namespace.name.default``.
Errors
    `expect_tensor(fn_name, value, arg="input", position=1)` returns `value` if it is a
    Tensor, else raises PyTorch's TypeError for it (`not_a_tensor` builds that error);
    `expect_tensors(values, argument)` checks each element of a sequence argument;
    `check_scalar_converts(value, dtype, opmath=False)` raises PyTorch's RuntimeError for a
    scalar argument that overflows the type its kernel reads it as;
    `index_arg(fn_name, value, argument)` reads an int argument as PyTorch's parser does;
    `check_bool(fn_name, value, argument, position=None)` raises its TypeError for a flag
    that is not a bool;
    `disabled_torch_function_impl` is the ``__torch_function__`` of a Tensor subclass that
    opts out of ``__torch_function__`` dispatch (tocha's own, as PyTorch's Parameter does);
    `missing_attribute(module, name)` is the AttributeError for a PyTorch name tocha lacks;
    `missing_module(module)` the ModuleNotFoundError for a subpackage whose distribution is
    not installed.
"""

from ._backend import Backend, backend_of
from ._cpu import kernel_context
from ._custom_ops import (
    CustomOpDef,
    custom_op,
    get_ctx,
    register_autocast,
    register_autograd,
    register_fake,
    register_kernel,
    register_vmap,
)
from ._device import CPU
from ._dispatch import (
    LAYERS,
    REGISTRY,
    autocast_op,
    bump_version,
    call,
    defop,
    expect_tensor,
    expect_tensors,
    not_a_tensor,
)
from ._dtype import FROM_NP, TITLE
from ._grad_mode import STATE as GRAD_MODE
from ._infer_schema import infer_schema
from ._memory_format import keep_format, suggest_memory_format, suggested_format
from ._missing import missing_attribute, missing_module
from ._op_library import (
    Library,
    _scoped_library,  # noqa: F401 (PyTorch's tests use it)
    define,
    fallthrough_kernel,
    impl,
    impl_abstract,
)
from ._op_registry import OpOverload
from ._opcheck import OpCheckError, opcheck
from ._opmath import HALF_CHARS, computed_in_float32, in_float32
from ._ops._argcheck import check_bool, check_scalar_converts, index_arg
from ._ops._out import assign, inplace
from ._ops._special_math import ERF32_RATIONAL
from ._ops.random import _generator as generator_stream
from ._ops.random import bernoulli_mask
from ._subclass_dispatch import disabled_torch_function_impl
from ._tensor import INFERENCE_VC, SUBCLASS_HOOKS, TENSOR_TYPES, wrap

__all__ = [
    "CPU",
    "ERF32_RATIONAL",
    "FROM_NP",
    "GRAD_MODE",
    "HALF_CHARS",
    "INFERENCE_VC",
    "LAYERS",
    "REGISTRY",
    "SUBCLASS_HOOKS",
    "TENSOR_TYPES",
    "TITLE",
    "Backend",
    "CustomOpDef",
    "Library",
    "OpCheckError",
    "OpOverload",
    "assign",
    "autocast_op",
    "backend_of",
    "bernoulli_mask",
    "bump_version",
    "call",
    "check_bool",
    "check_scalar_converts",
    "computed_in_float32",
    "custom_op",
    "define",
    "defop",
    "disabled_torch_function_impl",
    "expect_tensor",
    "expect_tensors",
    "fallthrough_kernel",
    "generator_stream",
    "get_ctx",
    "impl",
    "impl_abstract",
    "in_float32",
    "index_arg",
    "infer_schema",
    "inplace",
    "keep_format",
    "kernel_context",
    "missing_attribute",
    "missing_module",
    "not_a_tensor",
    "opcheck",
    "register_autocast",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "register_vmap",
    "suggest_memory_format",
    "suggested_format",
    "wrap",
]
