"""The dispatcher: primitive ops, their kernels per backend, and the autograd layer's slot.

An `Op` is declared once: a name and a generic kernel factory ``generic(xp) -> kernel`` written
against an array namespace. Kernels take and return backend arrays, never Tensors. Each op
caches one resolved kernel per device (`Op.kernels[device]`).

The layers run outermost first: autograd (present once tocha-autograd is imported: it sets
`LAYERS.autograd`), then the backend kernel. Autograd runs only when an input carries
autograd's metadata and grad mode is on (or a function transform is active: a forward-AD
dual level, vmap); the forward below it is the same kernel call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from typing import cast as _as_type

from ._backend import backend_of
from ._grad_mode import STATE
from ._memory_format import elementwise_layout, keeping_layout
from ._opmath import half_through

__all__ = [
    "Op",
    "REGISTRY",
    "defop",
    "LAYERS",
    "AUTOCAST_HOOKS",
    "autocast_op",
    "check_same_device",
    "OtherLayout",
]


class _Kernels(dict):
    """Per-device kernel cache of one op; a miss asks the device's backend."""

    __slots__ = ("op",)

    def __init__(self, op):
        super().__init__()
        self.op = op

    def __missing__(self, dev):
        from .backends._providers import provide

        op, backend = self.op, backend_of(dev)
        kernel = backend.kernel(op)
        if op.opmath and dev.type != "meta" and op.name not in backend.overrides:
            # float16/bfloat16 run as float32 through the whole stack, providers included:
            # a provided float32 kernel (oneDNN's GELU) gives the values a half input rounds
            kernel = half_through(kernel, lambda *args: self[dev](*args))
        kernel = provide(op, dev.type, kernel)
        if op.layout and backend.xp is not None:
            kernel = keeping_layout(kernel, op.layout, backend.xp)
        self[dev] = kernel
        return kernel


class Op:
    """A primitive op: its name, generic kernel factory and per-device kernel cache.

    ``differentiable`` says whether tocha-autograd must hold a derivative formula for it.
    ``opmath``: its generic kernel takes several steps, and the backend runs it on float16
    and bfloat16 inputs in float32, rounding once, as PyTorch's kernels do (`tocha._opmath`).
    ``parts`` names the generic kernel's building blocks (functions taking the array
    namespace first) that a backend fusing the op reuses, so that its layout, checks and
    reductions stay the op's own.
    ``layout``: the positions of the array arguments whose memory format (channels-last) the
    results take, as PyTorch lays out convolutions, poolings and normalizations, or
    ``"elementwise"`` for an op whose results follow its operands' memory order as an
    elementwise op's; whatever kernel runs (a provider's included), `keeping_layout` lays
    its results out so.
    """

    __slots__ = (
        "name",
        "generic",
        "kernels",
        "differentiable",
        "parts",
        "opmath",
        "layout",
        "__weakref__",
    )

    def __init__(
        self,
        name: str,
        generic,
        differentiable: bool = True,
        parts=None,
        opmath: bool = False,
        layout: tuple | str = (),
    ):
        self.name = name
        self.generic = generic
        self.differentiable = differentiable
        self.parts = dict(parts or {})
        self.opmath = opmath
        self.layout = layout if layout == "elementwise" else tuple(layout)
        self.kernels = _Kernels(self)

    def __repr__(self) -> str:
        return f"<op {self.name}>"


REGISTRY: dict[str, Op] = {}


def defop(
    name: str,
    generic,
    differentiable: bool = True,
    parts=None,
    opmath: bool = False,
    layout: tuple | str = (),
) -> Op:
    """Declare a primitive op once; its name is unique across tocha. `parts`: the generic
    kernel's building blocks published to backends that fuse the op (`Op.parts`).
    `opmath`: float16/bfloat16 inputs are computed in float32 and the results rounded once
    (for a kernel of several array steps; its first argument is an array). `layout`: the
    positions of the array arguments whose channels-last memory format the results take, or
    ``"elementwise"`` (`Op.layout`)."""
    if name in REGISTRY:
        raise ValueError(f"op {name!r} is declared twice")
    op = REGISTRY[name] = Op(name, generic, differentiable, parts, opmath, layout)
    return op


class _Layers:
    """Hooks installed by other distributions. ``autograd(op, args, out)`` records a node for
    `op` called on `args` (its Tensors and other arguments, in order) and returns `out`
    (now carrying its grad_fn). ``rebase(target, result)`` makes an in-place op's target
    take the history of the out-of-place `result` whose values are about to be written into
    it (`tocha._ops._out.assign` asks it).
    ``autocast(op, inputs)`` casts an op's inputs inside an autocast region (`tocha.amp`;
    `op` may also be a name of its op lists); ``autocast_call(name, fn, args, kwargs)`` runs
    a public function hooked by `autocast_op` there. Both are asked only while a region is
    active (``STATE.autocast`` set).
    ``batching(op, args, out)`` (tocha-func's vmap) gives an op on batched tensors its
    batched result; the autograd layer asks it first while a transform is active.
    ``write(target, result)`` writes an in-place op's result into a batched target (or
    refuses), returning False when neither is batched; `assign` asks it while a transform
    is active. ``draw()`` is told of each random draw made while a transform is active (vmap
    refuses them, or counts them, by its `randomness`).
    A tensor carries autograd metadata (``_ag``) only once
    tocha-autograd is loaded, so the layer is never asked for before it is installed."""

    __slots__ = ("autograd", "rebase", "autocast", "autocast_call", "batching", "write", "draw")

    def __init__(self):
        self.autograd = None
        self.rebase = None
        self.autocast = None
        self.autocast_call = None
        self.batching = None
        self.write = None
        self.draw = None


LAYERS = _Layers()


AUTOCAST_HOOKS: set[str] = set()  # the names public functions are hooked under
_F = TypeVar("_F", bound=Callable[..., Any])


def autocast_op(name: str, *more: str, inline: bool = False) -> Callable[[_F], _F]:
    """Decorator: inside an autocast region, the public function follows autocast's op list
    (`tocha.amp`) under `name`, as PyTorch's op of that name does: its floating tensor
    arguments are cast first, then it runs with autocast off for their device type (a name
    the device's list lacks is cast nowhere). Outside a region it costs one attribute read
    and a call. A function on a hot path tests ``GRAD_MODE.autocast`` itself and returns
    ``LAYERS.autocast_call(name, fn, args, kwargs)`` (which calls it back with autocast
    off): ``inline=True`` records its `name` (and `more` names it may choose) and leaves it
    unwrapped."""
    AUTOCAST_HOOKS.update((name, *more))
    if more and not inline:
        raise ValueError("a wrapped function is hooked under one name")

    def decorate(fn: _F) -> _F:
        if inline:
            return fn

        @functools.wraps(fn)
        def entry(*args, **kwargs):
            if STATE.autocast is None:
                return fn(*args, **kwargs)
            return LAYERS.autocast_call(name, fn, args, kwargs)

        return _as_type(_F, entry)

    return decorate


def needs_grad(tensors) -> bool:
    """Whether the autograd layer must see an op on these tensors."""
    if not (STATE.grad_enabled or STATE.transforms):
        return False
    for t in tensors:
        if t._ag is not None:
            return True
    return False


def device_mismatch(a, b) -> RuntimeError:
    return RuntimeError(
        "Expected all tensors to be on the same device, but found at least two devices, "
        f"{a} and {b}!"
    )


def check_same_device(tensors):
    """The one device all tensors share; RuntimeError naming two that differ."""
    dev = tensors[0]._device
    for t in tensors:
        if t._device is not dev:
            raise device_mismatch(dev, t._device)
    return dev


class OtherLayout(NotImplementedError, AttributeError):
    """Raised by the array of a tensor of another layout than strided (a sparse COO) that a
    dense kernel reads: its elements are not an array's. The entry point that ran the kernel
    catches it and runs the op the way that layout does (`in_layout`), on the op's Tensor
    arguments. Uncaught, it is PyTorch's NotImplementedError for an op that backend lacks (and
    an AttributeError, so that ``getattr(array, name, default)`` gives the default)."""

    def __init__(self, array, name: str):
        super().__init__(array.unsupported(name))
        self.array = array


def in_layout(op, exc: OtherLayout, *args):
    """`op` on `args` (its Tensors and other arguments, as its kernel takes them) by the kernel
    that the layout of `exc.array` has for it: a function of Tensors written in tocha ops, so
    that autograd records what it does. PyTorch's NotImplementedError if it has none."""
    kernel = exc.array.kernels.get(op.name)
    if kernel is None:
        raise NotImplementedError(exc.array.unsupported(op.name)) from None
    return kernel(*args)


# -- calling ops: one entry per family, each the whole hot path for its ops -----------------
# (imported here, below the definitions that _tensor's import chain needs)
import numpy as _np  # noqa: E402

from . import _dtype  # noqa: E402
from ._cpu import kernel_context as _kernel_context  # noqa: E402
from ._opmath import HALF_CHARS  # noqa: E402
from ._tensor import INFERENCE_VC as _INFERENCE_VC  # noqa: E402
from ._tensor import TENSOR_TYPES as _TENSOR_TYPES  # noqa: E402
from ._tensor import Tensor, wrap  # noqa: E402

_ndarray = _np.ndarray
_KIND_RANK = _dtype.KIND_RANK
_SCALAR_RANK = _dtype.SCALAR_RANK
_FROM_NP = _dtype.FROM_NP


def as_array(result, dev):
    """A kernel's result as a backend array (NumPy gives scalars for 0-dim results)."""
    if type(result) is _ndarray:
        return result
    return backend_of(dev).asarray(result)


def call(op: Op, inputs: Sequence[Tensor], *args: Any) -> Any:
    """Run `op` on Tensors `inputs` (all on one device) plus non-tensor `args`.

    Returns a Tensor, or a tuple of Tensors when the kernel returns a tuple.
    """
    try:
        dev = inputs[0]._device
        for t in inputs:
            if t._device is not dev:
                raise device_mismatch(dev, t._device)
    except AttributeError:
        raise _not_tensors(op, inputs) from None
    if STATE.autocast is not None:
        inputs = LAYERS.autocast(op, inputs)
    try:
        result = _kernel_context().run(op.kernels[dev], *[t._data for t in inputs], *args)
    except OtherLayout as exc:
        return in_layout(op, exc, *inputs, *args)
    if type(result) is tuple:
        out = tuple([wrap(as_array(r, dev), dev) for r in result])
    else:
        out = wrap(as_array(result, dev), dev)
    if LAYERS.autograd is not None and needs_grad(inputs):
        return LAYERS.autograd(op, (*inputs, *args), out)
    return out


def _not_tensors(op, inputs) -> TypeError:
    """The TypeError for the first of `inputs` that is not a Tensor."""
    for position, value in enumerate(inputs, 1):
        if not hasattr(value, "_device"):
            return not_a_tensor(op.name, value, position=position)
    return TypeError(f"{op.name}(): expected Tensors")


def call_one(op, x, *args):
    """`call` for one input Tensor whose kernel returns one backend array: the lean path
    (reductions' hot path)."""
    try:
        dev = x._device
    except AttributeError:
        raise not_a_tensor(op.name, x) from None
    if STATE.autocast is not None:
        (x,) = LAYERS.autocast(op, (x,))
    try:
        out = wrap(_kernel_context().run(op.kernels[dev], x._data, *args), dev)
    except OtherLayout as exc:
        return in_layout(op, exc, x, *args)
    if x._ag is not None and (STATE.grad_enabled or STATE.transforms):
        return LAYERS.autograd(op, (x, *args), out)
    return out


def call_view(op, x, *args):
    """Run a view op: the result shares `x`'s memory, base and version counter."""
    try:
        out = wrap(op.kernels[x._device](x._data, *args), x._device)
    except OtherLayout as exc:
        return in_layout(op, exc, x, *args)
    make_view(out, x)
    if x._ag is not None and (STATE.grad_enabled or STATE.transforms):
        return LAYERS.autograd(op, (x, *args), out)
    return out


def make_view(view, base) -> None:
    """Mark `view` as sharing `base`'s memory: same root base and version counter."""
    vc = base._vc
    if vc is None:
        vc = base._vc = [0]
    view._vc = vc
    view._base = base if base._base is None else base._base


def bump_version(t) -> None:
    """Record an in-place write to `t` (and so to every view of its memory)."""
    vc = t._vc
    if vc is None:
        t._vc = [1]
    elif vc is _INFERENCE_VC:
        if not STATE.inference:
            raise RuntimeError(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You "
                "can make a clone to get a normal tensor before doing inplace update.See "
                "https://github.com/pytorch/rfcs/pull/17 for more details."
            )
    else:
        vc[0] += 1


def unary(op, x, int_to_float):
    """Elementwise op of one tensor; integer inputs are first cast to the default float dtype
    when `int_to_float` (``exp`` of an int tensor is float32, as in PyTorch)."""
    if STATE.autocast is not None:
        (x,) = LAYERS.autocast(op, (x,))
    try:
        data = x._data
    except AttributeError:
        raise not_a_tensor(op.name, x) from None
    dev = x._device
    try:
        if int_to_float and data.dtype.kind in "biu":
            data = cast(data, _dtype.DEFAULTS.float.np, dev)
        out = wrap(as_array(_kernel_context().run(op.kernels[dev], data), dev), dev)
    except OtherLayout as exc:
        return in_layout(op, exc, x)
    if x._ag is not None and (STATE.grad_enabled or STATE.transforms):
        return LAYERS.autograd(op, (x,), out)
    return out


def binary(op, a, b, int_to_float=False):
    """Elementwise op of two operands (Tensors or Python scalars, at least one Tensor),
    broadcast, promoted with PyTorch's rules."""
    if STATE.autocast is not None:
        a, b = LAYERS.autocast(op, (a, b))
    try:  # the whole body: a sparse operand raises as soon as promotion reads it
        ta, tb = type(a), type(b)
        if ta in _TENSOR_TYPES and tb in _TENSOR_TYPES:
            dev = a._device
            ad, bd = a._data, b._data
            if (
                b._device is not dev
                or bd.dtype is not ad.dtype
                or (int_to_float and ad.dtype.kind in "biu")
            ):
                ad, bd, dev = _promote_binary(a, b, int_to_float)
            tracked = a._ag is not None or b._ag is not None
        elif ta in _TENSOR_TYPES and tb in _SCALAR_RANK:
            dev = a._device
            ad = a._data
            if _SCALAR_RANK[tb] <= _CHAR_RANK[ad.dtype.char] and not (
                int_to_float and ad.dtype.kind in "biu"
            ):
                bd = _scalar_like(b, ad.dtype)
            elif tb is float and ad.dtype.char in HALF_CHARS:
                if op.name in _OPMATH_SCALAR:
                    return _half_with_scalar(op, a, b, False)
                bd = _scalar_like(b, ad.dtype)
            else:
                ad, bd, dev = _promote_binary(a, b, int_to_float)
            tracked = a._ag is not None
        elif tb in _TENSOR_TYPES and ta in _SCALAR_RANK:
            dev = b._device
            bd = b._data
            if _SCALAR_RANK[ta] <= _CHAR_RANK[bd.dtype.char] and not (
                int_to_float and bd.dtype.kind in "biu"
            ):
                ad = _scalar_like(a, bd.dtype)
            elif ta is float and bd.dtype.char in HALF_CHARS:
                if op.name in _OPMATH_SCALAR:
                    return _half_with_scalar(op, b, a, True)
                ad = _scalar_like(a, bd.dtype)
            else:
                ad, bd, dev = _promote_binary(a, b, int_to_float)
            tracked = b._ag is not None
        else:
            ad, bd, dev = _promote_binary(a, b, int_to_float)
            tracked = _any_grad(a, b)
        try:
            result = _kernel_context().run(op.kernels[dev], ad, bd)
        except (ValueError, TypeError, OverflowError) as exc:
            raise _explain_binary(op, a, b, exc) from None
    except OtherLayout as exc:
        return in_layout(op, exc, a, b)
    if not 0 < result.ndim < 4:  # one test for NumPy's scalars and channels-last ranks
        if type(result) is not _ndarray:
            result = backend_of(dev).asarray(result)
        elif type(ad) is _ndarray and not ad.flags.c_contiguous:
            # NumPy orders a result of mixed layouts unlike PyTorch
            result = elementwise_layout(result, (ad, bd), _np)
    out = wrap(result, dev)
    if tracked and (STATE.grad_enabled or STATE.transforms):
        return LAYERS.autograd(op, (a, b), out)
    return out


def _char_ranks() -> dict:
    """NumPy type character -> category rank of a tensor's dtype, for the scalar fast path of
    `binary` (a plain dict: its lookup costs what the kind's did). float16 and bfloat16
    rank below a Python float, so that a float scalar takes the slow path, where PyTorch's
    opmath rounding is reproduced (`_half_with_scalar`). The characters NumPy does not
    define are ml_dtypes' floats (float8...): floating."""
    ranks = {chr(code): _dtype.FLOATING for code in range(32, 127)}
    for code in _np.typecodes["All"]:
        kind = _np.dtype(code).kind
        if kind in _KIND_RANK:
            ranks[code] = _KIND_RANK[kind]
    for code in HALF_CHARS:  # "E": ml_dtypes' bfloat16, whose import stays lazy
        ranks[code] = _dtype.INTEGRAL
    return ranks


_CHAR_RANK = _char_ranks()
# Ops whose PyTorch kernel keeps a Python float operand in float32 for a float16/bfloat16
# tensor (add and sub round it to the tensor's dtype first, as NumPy does)
_OPMATH_SCALAR = frozenset(("mul", "div"))
_FLOAT32 = _np.dtype(_np.float32)


def _half_with_scalar(op, t, scalar: float, scalar_first: bool):
    """``t * scalar`` or ``t / scalar`` (``scalar / t`` when `scalar_first`) for a float16 or
    bfloat16 tensor `t`, as PyTorch's kernels compute it: the tensor's elements and the scalar
    in float32, rounded once; ``scalar / t`` is ``reciprocal(t) * scalar`` there, the
    reciprocal rounded to the tensor's dtype."""
    dev = t._device
    data = t._data
    if scalar_first and op.name == "div":
        wide = _kernel_context().run(_np.reciprocal, data).astype(_FLOAT32)
        kernel, pair = REGISTRY["mul"].kernels[dev], (wide, _np.float32(scalar))
    else:
        kernel = op.kernels[dev]
        wide, factor = data.astype(_FLOAT32), _np.float32(scalar)
        pair = (factor, wide) if scalar_first else (wide, factor)
    result = _kernel_context().run(_rounded_to, kernel, pair, data.dtype)
    out = wrap(result, dev)
    if t._ag is not None and (STATE.grad_enabled or STATE.transforms):
        return LAYERS.autograd(op, (scalar, t) if scalar_first else (t, scalar), out)
    return out


def _rounded_to(kernel, pair, dtype):
    return kernel(*pair).astype(dtype)


_SCALAR_CACHE: dict = {}


def _scalar_like(value, np_dtype):
    """A Python number as a NumPy scalar of an operand's dtype: NumPy's ufuncs take these far
    faster than Python ints. Cached, except values whose == is unreliable (nan, -0.0)."""
    key = (value, np_dtype)
    scalar = _SCALAR_CACHE.get(key)
    if scalar is None:
        if type(value) is int and not -(2**63) <= value < 2**64:
            raise OverflowError(
                "int too big to convert" if value > 0 else "can't convert negative int to unsigned"
            )
        try:
            scalar = _kernel_context().run(np_dtype.type, value)
        except OverflowError:
            scalar = _wrapped_int(value, np_dtype)
        if value == value and (value or type(value) is not float) and len(_SCALAR_CACHE) < 4096:
            _SCALAR_CACHE[key] = scalar
    return scalar


def _wrapped_int(value: int, np_dtype):
    """A Python int out of an integer dtype's range wraps around, as in PyTorch."""
    if np_dtype.kind not in "iu":
        raise OverflowError("int too big to convert")
    if not -(2**63) <= value < 2**64:
        raise RuntimeError("Overflow when unpacking long")
    return _np.array(value, _np.int64 if value < 2**63 else _np.uint64).astype(np_dtype)[()]


def _any_grad(a, b) -> bool:
    return (isinstance(a, Tensor) and a._ag is not None) or (
        isinstance(b, Tensor) and b._ag is not None
    )


def cast(data, np_dtype, dev):
    """`data` converted to `np_dtype` by the ``to_dtype`` kernel, so that kernel-level recorders
    (the profiler, ``make_fx``) see the conversions the dispatcher makes."""
    return _kernel_context().run(REGISTRY["to_dtype"].kernels[dev], data, np_dtype)


def _promote_binary(a, b, int_to_float):
    """Slow path of `binary`: mixed dtypes, scalars of a higher category, 0-dim CPU tensors
    beside tensors on another device, NumPy scalars."""
    a_t, b_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if not (a_t or b_t):
        raise TypeError("expected at least one Tensor operand")
    if a_t and b_t and a._device is not b._device:
        a, b = _scalar_from_cpu(a, b)
        a_t, b_t = isinstance(a, Tensor), isinstance(b, Tensor)
    for x, is_t in ((a, a_t), (b, b_t)):
        if not is_t and not isinstance(x, (bool, int, float, complex, _np.generic)):
            raise _dtype.OperandTypeError(
                f"unsupported operand type: expected a Tensor or a number, but got "
                f"{type(x).__name__}"
            )
    result = _dtype.promote_operands((a, b))
    if int_to_float and result.rank < _dtype.FLOATING:
        result = _dtype.DEFAULTS.float
    target = result.np
    dev = a._device if a_t else b._device

    def operand(x, is_t):
        if is_t:
            d = x._data
            return d if d.dtype == target else cast(d, target, dev)
        if isinstance(x, _np.generic):
            x = x.item()
        if _dtype.SCALAR_RANK.get(type(x), 0) > result.rank:
            raise RuntimeError(f"value cannot be converted to type {result.name} without overflow")
        if target.kind == "V":  # bfloat16 and the float8s: NumPy would widen a Python float
            return _scalar_like(x, target)
        return x if result.rank > _dtype.BOOL or type(x) is bool else bool(x)

    return operand(a, a_t), operand(b, b_t), dev


def _scalar_from_cpu(a, b):
    """PyTorch lets a 0-dim CPU tensor join an op on another device as a scalar."""
    if a._device.type == "cpu" and a._data.ndim == 0:
        return a.item(), b
    if b._device.type == "cpu" and b._data.ndim == 0:
        return a, b.item()
    raise device_mismatch(a._device, b._device)


def _explain_binary(op, a, b, exc) -> Exception:
    """PyTorch's message for a failed elementwise op, instead of NumPy's."""
    shapes = [tuple(x.shape) for x in (a, b) if isinstance(x, Tensor)]
    if isinstance(exc, ValueError) and "broadcast" in str(exc) and len(shapes) == 2:
        return broadcast_error(*shapes)
    if isinstance(exc, ValueError) and "negative integer powers" in str(exc):
        return RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(exc, OverflowError):
        return RuntimeError(
            f"value cannot be converted to the tensor's type without overflow: {exc}"
        )
    if isinstance(exc, TypeError):
        dtypes = {x.dtype for x in (a, b) if isinstance(x, Tensor)}
        if "boolean subtract" in str(exc):
            return RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                "`^` or `logical_xor()` operator instead."
            )
        names = ", ".join(f"'{_dtype.TITLE[d]}'" for d in sorted(dtypes, key=lambda d: d.name))
        return NotImplementedError(f'"{op.name}" not implemented for {names}')
    return exc


def type_name(value) -> str:
    """The name PyTorch's errors give `value`'s type: a class defined in Python by its name,
    a compiled one outside the builtins with its module (``numpy.ndarray``)."""
    cls = type(value)
    if cls.__module__ == "builtins" or cls.__flags__ & _HEAP_TYPE:
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: the class was made by a class statement


def not_a_tensor(fn_name: str, value, arg: str = "input", position: int | None = 1) -> TypeError:
    """PyTorch's error for a non-tensor `value` given as argument `arg` (at `position`, left
    out when None) of `fn_name`, which takes a Tensor."""
    where = "" if position is None else f" (position {position})"
    return TypeError(f"{fn_name}(): argument '{arg}'{where} must be Tensor, not {type_name(value)}")


def expect_tensor(fn_name: str, value, arg: str = "input", position: int | None = 1):
    """`value`, which must be a Tensor (else `not_a_tensor`'s error)."""
    if not isinstance(value, Tensor):
        raise not_a_tensor(fn_name, value, arg, position)
    return value


def expect_tensors(values, argument: int) -> None:
    """PyTorch's error for a sequence argument (the `argument`-th, from 0) holding a
    non-tensor."""
    for i, value in enumerate(values):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument {argument}, but got {type_name(value)}"
            )


def broadcast_error(shape_a, shape_b) -> RuntimeError:
    """PyTorch's message for two shapes that do not broadcast."""
    for i in range(1, max(len(shape_a), len(shape_b)) + 1):
        sa = shape_a[-i] if i <= len(shape_a) else 1
        sb = shape_b[-i] if i <= len(shape_b) else 1
        if sa != sb and sa != 1 and sb != 1:
            dim = max(len(shape_a), len(shape_b)) - i
            return RuntimeError(
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                f"non-singleton dimension {dim}"
            )
    return RuntimeError(f"shapes {list(shape_a)} and {list(shape_b)} cannot be broadcast")
