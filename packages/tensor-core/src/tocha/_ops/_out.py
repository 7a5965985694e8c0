"""Writing results into existing tensors: the one path of every in-place op, and ``out=``.

An in-place op on `target` runs `inplace`: when autograd must see it, the op's out-of-place
result (recorded by autograd) is written into target's memory by `assign`, and target takes
its history; otherwise the op's direct form writes into the memory itself. Either way the
version counter is bumped once.
"""

from __future__ import annotations

from .. import _dtype
from .._cpu import kernel_context
from .._dispatch import LAYERS, OtherLayout, bump_version, device_mismatch
from .._grad_mode import STATE
from .._tensor import Tensor


def check_castable(target: Tensor, result_dtype: _dtype.dtype) -> None:
    """Refuse an in-place write whose result dtype cannot be cast to the target's (PyTorch
    allows no cast to a lower category, e.g. float into an integer tensor)."""
    if not _dtype.can_cast(result_dtype, target.dtype):
        raise RuntimeError(
            f"result type {_dtype.TITLE[result_dtype]} can't be cast to the desired output type "
            f"{_dtype.TITLE[target.dtype]}"
        )


def check_shape(target_shape, result_shape) -> None:
    """Refuse an in-place write of a result whose shape differs from the target's."""
    if tuple(target_shape) != tuple(result_shape):
        raise RuntimeError(
            f"output with shape {list(target_shape)} doesn't match the broadcast shape "
            f"{list(result_shape)}"
        )


INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def check_no_internal_overlap(target: Tensor) -> None:
    """Refuse to write an op's result into a view whose elements share memory (an expanded
    dim: stride 0, size above 1), as PyTorch does; only views can be such."""
    if target._base is not None:
        data = target._data
        for size, stride in zip(data.shape, data.strides):
            if not stride and size > 1:
                raise RuntimeError(INTERNAL_OVERLAP)


def assign(target: Tensor, result: Tensor) -> Tensor:
    """Write `result`, an op's out-of-place result of target's shape, into target's memory
    (cast to target's dtype); target takes result's history when autograd tracks either.
    Returns target."""
    check_castable(target, result.dtype)
    check_shape(target._data.shape, result._data.shape)
    if (STATE.grad_enabled or STATE.transforms) and (
        target._ag is not None or result._ag is not None
    ):
        LAYERS.rebase(target, result)
    if not (STATE.transforms and LAYERS.write is not None and LAYERS.write(target, result)):
        try:
            target._data[...] = result._data
        except ValueError:
            check_writable(target._data)
            raise
    bump_version(target)
    return target


def check_writable(array) -> None:
    """Refuse, clearly, a write into memory that is read-only (a tensor made from a read-only
    NumPy array or a DLPack capsule shares it as it is)."""
    if not getattr(getattr(array, "flags", None), "writeable", True):  # CuPy's flags lack it
        raise RuntimeError(
            "the tensor's memory is read-only (it shares a read-only NumPy array or DLPack "
            "capsule), so it cannot be written in place: write into a copy (.clone()) instead"
        )


def inplace(
    target: Tensor, operands: tuple, out_of_place, direct, *args, fills: bool = False
) -> Tensor:
    """Run an in-place op on `target` whose other inputs are `operands`.

    ``out_of_place(*args)`` computes the op's result as a new tensor; ``direct(*args)``
    writes the result into target's memory itself (checking that it fits), sparing the copy.
    The direct form runs unless autograd tracks target or an operand (or `direct` is None).
    An op that `fills` (writes one value wherever it writes: fill_, a scalar assignment) may
    write into an expanded view; any other refuses to, as PyTorch's do. Returns target."""
    if not fills and getattr(target, "_base", None) is not None:
        check_no_internal_overlap(target)
    if direct is not None:
        if (
            STATE.grad_enabled or STATE.transforms
        ):  # autograd must see the op when it tracks target or an operand
            try:
                if target._ag is not None:
                    return assign(target, out_of_place(*args))
            except AttributeError:
                if isinstance(target, Tensor):
                    raise
                raise TypeError(
                    f"an in-place op writes into a Tensor, not {type(target).__name__}"
                ) from None
            for t in operands:
                if isinstance(t, Tensor) and t._ag is not None:
                    return assign(target, out_of_place(*args))
        try:
            kernel_context().run(direct, *args)
        except ValueError:
            check_writable(target._data)
            raise
        except OtherLayout as exc:  # a sparse target or operand: the result, written in
            result = out_of_place(*args)
            if type(result._data) is not type(target._data):  # a dense result for a sparse one
                raise NotImplementedError(str(exc)) from None
            return assign(target, result)
        bump_version(target)
        return target
    return assign(target, out_of_place(*args))


# PyTorch's C++ names of the dtypes, in its messages about out= dtypes.
CPP_NAMES = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def write_out_same_dtype(out: Tensor, result: Tensor) -> Tensor:
    """`write_out` for the ops whose ``out=`` must have the result's dtype exactly (argmax,
    isin, softmax...), with PyTorch's message for them."""
    if isinstance(out, Tensor) and out.dtype != result.dtype:
        want, got = (CPP_NAMES.get(str(t.dtype).split(".")[-1], "?") for t in (result, out))
        raise RuntimeError(f"Expected out tensor to have dtype {want}, but got {got} instead")
    return write_out(out, result)


def write_out(out: Tensor, result: Tensor, exact: bool = False) -> Tensor:
    """Copy `result` into the ``out=`` tensor, resizing `out` when its shape differs. With
    `exact`, `out` must have the result's dtype (PyTorch's rule for ops that keep the input's
    dtype, such as ``abs`` and ``floor``); else the result must cast to it safely."""
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if exact and out._data.dtype != result._data.dtype:
        raise RuntimeError(
            f"Found dtype {_dtype.TITLE[out.dtype]} but expected {_dtype.TITLE[result.dtype]}"
        )
    if out._device is not result._device:
        raise device_mismatch(result._device, out._device)
    if (STATE.grad_enabled or STATE.transforms) and (result._ag is not None or out._ag is not None):
        raise RuntimeError(
            "out=... arguments don't support automatic differentiation, but one of the "
            "arguments requires grad."
        )
    check_castable(out, result.dtype)
    if out._data.shape != result._data.shape:
        out._data = result._data.astype(out._data.dtype)
    else:
        check_no_internal_overlap(out)
        try:
            out._data[...] = result._data
        except ValueError:
            check_writable(out._data)
            raise
    bump_version(out)
    return out
