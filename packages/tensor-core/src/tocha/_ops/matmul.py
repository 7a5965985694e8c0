"""Matrix products: matmul and its special cases (mm, bmm, mv, dot), vdot, outer, kron,
tensordot, einsum, and the scaled sums addmm, addmv, addbmm, baddbmm.

Primitives: ``matmul`` (one op for every rank combination, so one autograd node), ``vdot``,
``outer``, ``kron``, ``tensordot`` and ``einsum``. mm, bmm, mv and dot check their ranks and
run ``matmul``; the add* forms compose a product with the pointwise ``mul`` and ``add``.
Operands of matmul and its forms must share a dtype (no promotion), as in PyTorch; every
check that fails raises PyTorch's exception and message.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._api import export
from .._cpu import kernel_context
from .._dispatch import (
    LAYERS,
    OtherLayout,
    as_array,
    autocast_op,
    binary,
    broadcast_error,
    call,
    defop,
    device_mismatch,
    expect_tensor,
    expect_tensors,
    in_layout,
)
from .._grad_mode import STATE
from .._opmath import HALF_CHARS
from .._tensor import Tensor, _wrap_dim
from ._argcheck import check_tensors
from ._out import write_out
from .pointwise import BINARY_OPS

_ndarray = np.ndarray
_BOOL = np.dtype(bool)
_new = object.__new__
_mul, _add = BINARY_OPS["mul"], BINARY_OPS["add"]

# C++ type names PyTorch prints in some dtype messages.
_CTYPE = dict(
    zip(
        _dtype.ALL,
        (
            "bool",
            "unsigned char",
            "signed char",
            "short int",
            "int",
            "long int",
            "c10::Half",
            "c10::BFloat16",
            "float",
            "double",
            "c10::complex<float>",
            "c10::complex<double>",
        ),
        strict=True,
    )
)
# ... and in "value cannot be converted to type X without overflow".
_SCALAR_CTYPE = dict(
    zip(
        _dtype.ALL,
        (
            "bool",
            "uint8_t",
            "int8_t",
            "int16_t",
            "int",
            "int64_t",
            "float",
            "float",
            "float",
            "double",
            "c10::complex<float>",
            "c10::complex<double>",
        ),
        strict=True,
    )
)


# -- kernels ----------------------------------------------------------------------------------
def _matmul_kernel(xp):
    matmul = xp.matmul

    def kernel(a, b):
        # operands are at least 1-D; ndarray.dot skips the ufunc machinery of matmul
        if a.ndim < 3 and b.ndim < 3:
            return a.dot(b)
        r = matmul(a, b)
        return r if r.dtype == a.dtype else r.astype(a.dtype)  # NumPy's bfloat16 gives float32

    return kernel


def _vdot_kernel(xp):
    return lambda a, b: xp.vdot(a, b)


def _promoted(fn_name):
    """Factory of a kernel ``k(a, b, np_dtype)`` running ``xp.<fn_name>`` on both operands
    cast to the promoted dtype."""

    def factory(xp):
        fn = getattr(xp, fn_name)
        return lambda a, b, dt: fn(a.astype(dt, copy=False), b.astype(dt, copy=False))

    return factory


def _tensordot_kernel(xp):
    def kernel(a, b, dims_a, dims_b):
        # a size-1 dim contracts with a dim of any size, as in PyTorch
        for i, j in zip(dims_a, dims_b, strict=True):
            if a.shape[i] != b.shape[j]:
                if a.shape[i] == 1:
                    b = b.sum(axis=j, keepdims=True, dtype=b.dtype)
                else:
                    a = a.sum(axis=i, keepdims=True, dtype=a.dtype)
        return xp.tensordot(a, b, axes=(dims_a, dims_b))

    return kernel


def _einsum_kernel(xp):
    def kernel(*args):
        *arrays, equation, dt = args
        work = xp.float32 if dt.name == "bfloat16" else dt  # NumPy's einsum has no bfloat16
        arrays = [a.astype(work, copy=False) for a in arrays]
        r = xp.einsum(equation, *arrays, optimize=len(arrays) > 2)
        if work is not dt:
            return r.astype(dt)
        if len(arrays) == 1 and xp.may_share_memory(r, arrays[0]):
            r = r.copy()  # a permutation or diagonal comes back as a view of the input
        return r

    return kernel


_MATMUL = defop("matmul", _matmul_kernel)
_VDOT = defop("vdot", _vdot_kernel)
_OUTER = defop("outer", _promoted("outer"))
_KRON = defop("kron", _promoted("kron"))
_TENSORDOT = defop("tensordot", _tensordot_kernel)
_EINSUM = defop("einsum", _einsum_kernel)
_matmul_kernels = _MATMUL.kernels


# -- PyTorch's checks and messages ------------------------------------------------------------
def _no_bool(d, kernel_name: str) -> None:
    if d is _dtype.bool:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for 'Bool'")


def _mm_checks(s1, s2, d1, d2) -> None:
    """mat1 (n x k) @ mat2 (k x m)."""
    if s1[1] != s2[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and {s2[0]}x{s2[1]})"
        )
    if d1 is not d2:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_CTYPE[d1]} != {_CTYPE[d2]}"
        )
    if s1[0] * s1[1] and s2[0] * s2[1]:  # PyTorch runs no kernel on an empty operand
        _no_bool(d1, "addmm_impl_cpu_")


def _mv_checks(s, n, dm, dv, input_size=None) -> None:
    """mat (r x k) @ vec (n), added to an input of `input_size` elements (default r)."""
    rows = s[0] if input_size is None else input_size
    if s[1] != n or rows != s[0]:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({s[0]}x{s[1]}), vec ({n})")
    if dm is not dv:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_dtype.TITLE[dv]}, {_dtype.TITLE[dm]}, and {_dtype.TITLE[dv]}"
        )
    _no_bool(dm, "addmv_impl_cpu")


def _bmm_checks(s1, s2, d1, d2, kernel_name="bmm") -> None:
    """batch1 (b x n x k) @ batch2 (b x k x m)."""
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{s1[0]}, {s1[2]}] but got: [{s2[0]}, {s2[1]}]."
        )
    if d1 is not d2:
        raise RuntimeError(f"expected scalar type {_dtype.TITLE[d1]} but found {_dtype.TITLE[d2]}")
    _no_bool(d1, kernel_name)


def _dot_checks(n1, n2, d1, d2) -> None:
    if d1 is not d2:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{_dtype.TITLE[d1]} and {_dtype.TITLE[d2]}"
        )
    if n1 != n2:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n1}] and src [{n2}] to have the same "
            f"number of elements, but got {n1} and {n2} elements respectively"
        )
    _no_bool(d1, "dot")


def _foldable(a) -> bool:
    """Whether PyTorch folds an N-D (N >= 3) left operand into one matrix (no copy needed)."""
    if a.size == 0:
        return True
    shape, strides = a.shape, a.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(a.ndim - 2))


def _check_matmul(x: Tensor, y: Tensor) -> None:
    """Raise PyTorch's error for ``matmul(x, y)``, following the path PyTorch takes (dot, mv,
    mm, folded mm/mv or broadcast bmm)."""
    if x._device is not y._device:
        raise device_mismatch(x._device, y._device)
    a, b = x._data, y._data
    if getattr(a, "is_sparse", False) or getattr(b, "is_sparse", False):
        return  # the sparse kernel checks its operands
    n1, n2 = a.ndim, b.ndim
    d1, d2 = x.dtype, y.dtype
    if n1 == 0 or n2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {n1}D and {n2}D"
        )
    if n1 == 1 and n2 == 1:
        _dot_checks(a.shape[0], b.shape[0], d1, d2)
    elif n1 == 2 and n2 == 1:
        _mv_checks(a.shape, b.shape[0], d1, d2)
    elif n1 == 1 and n2 == 2:
        _mm_checks((1, a.shape[0]), b.shape, d1, d2)
    elif n1 == 2 and n2 == 2:
        _mm_checks(a.shape, b.shape, d1, d2)
    elif n1 >= 3 and n2 <= 2 and _foldable(a):
        folded = (math.prod(a.shape[:-1]), a.shape[-1])
        if n2 == 2:
            _mm_checks(folded, b.shape, d1, d2)
        else:
            _mv_checks(folded, b.shape[0], d1, d2)
    else:
        rows, k1 = a.shape[-2:] if n1 > 1 else (1, a.shape[0])
        k2, cols = b.shape[-2:] if n2 > 1 else (b.shape[0], 1)
        batch1, batch2 = a.shape[:-2], b.shape[:-2]
        try:
            batch = math.prod(np.broadcast_shapes(batch1, batch2))
        except ValueError:
            raise broadcast_error(batch1, batch2) from None
        _bmm_checks((batch, rows, k1), (batch, k2, cols), d1, d2)


# -- matmul: the hot path ---------------------------------------------------------------------
def _matmul(x, y):
    """``x @ y`` for two Tensors; NotImplemented when `y` is not a Tensor."""
    if type(y) is not Tensor and not isinstance(y, Tensor):
        return NotImplemented
    if STATE.autocast is not None:
        x, y = LAYERS.autocast(_MATMUL, (x, y))
    a = x._data
    b = y._data
    dev = x._device
    dt = a.dtype
    if y._device is not dev or dt is not b.dtype or dt is _BOOL or not (a.ndim and b.ndim):
        _check_matmul(x, y)
    try:
        r = kernel_context().run(_matmul_kernels[dev], a, b)
    except ValueError:
        _check_matmul(x, y)
        raise
    except OtherLayout as exc:
        return in_layout(_MATMUL, exc, x, y)
    if type(r) is not _ndarray:
        r = as_array(r, dev)
    out = _new(Tensor)
    out._data = r
    out._device = dev
    out._ag = None
    out._base = None
    out._vc = None
    if (x._ag is not None or y._ag is not None) and (STATE.grad_enabled or STATE.transforms):
        return LAYERS.autograd(_MATMUL, (x, y), out)
    return out


def _rmatmul(self, other):
    if isinstance(other, Tensor):
        return _matmul(other, self)
    return NotImplemented


Tensor.__matmul__ = _matmul
Tensor.__rmatmul__ = _rmatmul


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Matrix product of two tensors, as `torch.matmul`.

    1-D @ 1-D is the dot product (a 0-dim tensor); 2-D @ 2-D the matrix product; a 1-D
    operand is taken as a row (left) or column (right) vector and its dimension removed from
    the result; N-D operands are batches of matrices whose batch dimensions broadcast:
    ``(j, 1, n, k) @ (l, k, m) -> (j, l, n, m)``. Both operands must have the same dtype.
    """
    expect_tensor("matmul", input, "input", 1)
    expect_tensor("matmul", other, "other", 2)
    result = _matmul(input, other)
    return result if out is None else write_out(out, result)


def _refuse_out_dtype(name: str, out_dtype, out, *named: tuple[str, object]) -> None:
    """PyTorch's CPU answer to an `out_dtype`: the ``<name>.dtype`` overload exists only on
    CUDA (float16/bfloat16 products into float32), so a CPU call raises its
    NotImplementedError, after the argument parser's TypeErrors."""
    check_tensors(name, *named)
    if not isinstance(out_dtype, _dtype.dtype):
        raise TypeError(
            f"{name}(): argument 'out_dtype' must be torch.dtype, not {type(out_dtype).__name__}"
        )
    overload = f"aten::{name}.dtype" + ("_out" if out is not None else "")
    raise NotImplementedError(
        f"Could not run '{overload}' with arguments from the 'CPU' backend. This could be "
        "because the operator doesn't exist for this backend. "
        f"'{overload}' is only available for CUDA in PyTorch; tocha computes on the CPU."
    )


@autocast_op("mm", inline=True)
def mm(
    input: Tensor, mat2: Tensor, out_dtype: _dtype.dtype | None = None, *, out: Tensor | None = None
) -> Tensor:
    """Matrix product of `input` (n, k) and `mat2` (k, m): shape (n, m). `out_dtype` is
    PyTorch's CUDA-only overload: refused on the CPU, as PyTorch's CPU build does."""
    if out_dtype is not None:
        _refuse_out_dtype("mm", out_dtype, out, ("input", input), ("mat2", mat2))
    if out is not None and STATE.autocast is not None:  # (else `_matmul` casts)
        return LAYERS.autocast_call("mm", mm, (input, mat2), {"out": out})
    expect_tensor("mm", input, "input", 1)
    expect_tensor("mm", mat2, "mat2", 2)
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    result = _matmul(input, mat2)
    return result if out is None else write_out(out, result)


def _check_bmm(b1: Tensor, b2: Tensor, kernel_name: str = "bmm") -> bool:
    """PyTorch's errors for bmm's operands; True where only their dtypes differ, inside an
    autocast region (which casts them)."""
    if b1._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    s1, s2 = b1._data.shape, b2._data.shape
    if s1[0] != s2[0] or s1[2] != s2[1] or b1.dtype is not b2.dtype or b1.dtype is _dtype.bool:
        if STATE.autocast is not None and s1[0] == s2[0] and s1[2] == s2[1]:
            return True
        _bmm_checks(s1, s2, b1.dtype, b2.dtype, kernel_name)
    return False


@autocast_op("bmm", inline=True)
def bmm(
    input: Tensor, mat2: Tensor, out_dtype: _dtype.dtype | None = None, *, out: Tensor | None = None
) -> Tensor:
    """Batched matrix product of `input` (b, n, k) and `mat2` (b, k, m): shape (b, n, m);
    batch sizes must be equal (no broadcasting). `out_dtype` is refused as by `mm`."""
    if out_dtype is not None:
        _refuse_out_dtype("bmm", out_dtype, out, ("input", input), ("mat2", mat2))
    expect_tensor("bmm", input, "input", 1)
    expect_tensor("bmm", mat2, "mat2", 2)
    # dtypes that autocast makes one (`_matmul` casts them; out= is never cast)
    if _check_bmm(input, mat2) or (out is not None and STATE.autocast is not None):
        return LAYERS.autocast_call("bmm", bmm, (input, mat2), {"out": out})
    result = _matmul(input, mat2)
    return result if out is None else write_out(out, result)


@autocast_op("mv", inline=True)
def mv(input: Tensor, vec: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Product of the matrix `input` (n, k) and the vector `vec` (k): shape (n)."""
    if STATE.autocast is not None:
        return LAYERS.autocast_call("mv", mv, (input, vec), {"out": out})
    expect_tensor("mv", input, "input", 1)
    expect_tensor("mv", vec, "vec", 2)
    if input._data.ndim != 2 or vec._data.ndim != 1:
        if input._data.ndim == 0:  # PyTorch reads input.size(0) first
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input._data.ndim}, {vec._data.ndim}"
        )
    result = _matmul(input, vec)
    return result if out is None else write_out(out, result)


def _check_vectors(x: Tensor, y: Tensor) -> None:
    if x._data.ndim != 1 or y._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {x._data.ndim}D and {y._data.ndim}D tensors"
        )


@autocast_op("dot", inline=True)
def dot(input: Tensor, tensor: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Dot product of two 1-D tensors of the same size and dtype: a 0-dim tensor."""
    if STATE.autocast is not None:
        return LAYERS.autocast_call("dot", dot, (input, tensor), {"out": out})
    expect_tensor("dot", input, "input", 1)
    expect_tensor("dot", tensor, "tensor", 2)
    _check_vectors(input, tensor)
    result = _matmul(input, tensor)
    return result if out is None else write_out(out, result)


def vdot(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Dot product of two 1-D tensors, the first conjugated: ``sum(conj(input) * other)``."""
    expect_tensor("vdot", input, "input", 1)
    expect_tensor("vdot", other, "other", 2)
    _check_vectors(input, other)
    _dot_checks(input._data.shape[0], other._data.shape[0], input.dtype, other.dtype)
    result = call(_VDOT, (input, other))
    return result if out is None else write_out(out, result)


def outer(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Outer product of 1-D tensors `input` (n) and `vec2` (m): shape (n, m), dtypes
    promoted."""
    expect_tensor("outer", input, "input", 1)
    expect_tensor("outer", vec2, "vec2", 2)
    for name, v in (("self", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    dt = _dtype.promote_types(input.dtype, vec2.dtype)
    result = call(_OUTER, (input, vec2), dt.np)
    return result if out is None else write_out(out, result)


def kron(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Kronecker product; the operand of fewer dims is first padded with leading 1s, so
    shapes (a0, a1) and (b0, b1) give (a0*b0, a1*b1). Dtypes are promoted."""
    expect_tensor("kron", input, "input", 1)
    expect_tensor("kron", other, "other", 2)
    dt = _dtype.promote_types(input.dtype, other.dtype)
    result = call(_KRON, (input, other), dt.np)
    return result if out is None else write_out(out, result)


# -- tensordot ----------------------------------------------------------------------------------
_DIMS_ERROR = (
    "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
    "containing two lists, but got dims={}"
)


def _dim_list(dims, arg: str, pos: int) -> list:
    if not isinstance(dims, (list, tuple)):
        raise TypeError(
            f"tensordot(): argument '{arg}' (position {pos}) must be tuple of ints, not "
            f"{type(dims).__name__}"
        )
    for i, d in enumerate(dims):
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(
                f"tensordot(): argument '{arg}' (position {pos}) must be tuple of ints, but "
                f"found element of type {type(d).__name__} at pos {i}"
            )
    return [int(d) for d in dims]


def _tensordot_dims(a: Tensor, b: Tensor, dims) -> tuple[list, list]:
    """The contracted dims of `a` and `b` as given (for messages) from tensordot's `dims`."""
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.ndim == 0 else dims.tolist()
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        dims = int(dims)
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    if not isinstance(dims, (list, tuple)):
        raise RuntimeError(_DIMS_ERROR.format(dims))
    if len(dims) < 2:  # PyTorch unpacks a list or tuple into two
        raise ValueError(f"not enough values to unpack (expected 2, got {len(dims)})")
    if len(dims) > 2:
        raise ValueError("too many values to unpack (expected 2)")
    return _dim_list(dims[0], "dims_self", 3), _dim_list(dims[1], "dims_other", 4)


def tensordot(a: Tensor, b: Tensor, dims=2, out: Tensor | None = None) -> Tensor:
    """Sum of products over the dims `dims` names: an int n (the last n dims of `a` with the
    first n of `b`) or two lists of dims. The result has `a`'s free dims then `b`'s."""
    expect_tensor("tensordot", a, "a", 1)
    expect_tensor("tensordot", b, "b", 2)
    given_a, given_b = _tensordot_dims(a, b, dims)
    if len(given_a) != len(given_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    dims_a, dims_b = [], []
    for x, given, wrapped in ((a, given_a, dims_a), (b, given_b, dims_b)):
        for d in given:
            w = _wrap_dim(d, x._data.ndim)
            if w in wrapped:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            wrapped.append(w)
    for da, db, ga, gb in zip(dims_a, dims_b, given_a, given_b, strict=True):
        sa, sb = a._data.shape[da], b._data.shape[db]
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {sa} in dim {ga} and "
                f"second has size {sb} in dim {gb}"
            )
    if a._data.size and b._data.size:  # PyTorch runs no kernel on an empty operand
        _no_bool(a.dtype, "addmm_impl_cpu_")
    result = call(_TENSORDOT, (a, b), tuple(dims_a), tuple(dims_b))
    return result if out is None else write_out(out, result)


# -- einsum ---------------------------------------------------------------------------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_error(message: str) -> RuntimeError:
    return RuntimeError("einsum(): " + message)


def _parse_term(term: str, start: int, operand: int | None):
    """The subscripts of one side of the equation (`start`: its index in the equation),
    with "..." kept as one item."""
    subs = []
    i = 0
    while i < len(term):
        ch = term[i]
        if ch == ".":
            where = f"for operand {operand}" if operand is not None else "in the output"
            if term[i : i + 3] != "...":
                raise _einsum_error(f"found '.' {where} that is not part of any ellipsis")
            if "..." in subs:
                raise _einsum_error(f"found '.' {where} for which an ellipsis was already found")
            subs.append("...")
            i += 3
            continue
        if ch not in _LETTERS:
            raise _einsum_error(
                f"invalid subscript given at index {start + i} in the equation string, "
                "subscripts must be in [a-zA-Z]"
            )
        subs.append(ch)
        i += 1
    return subs


def _sublist_equation(args) -> tuple[str, list]:
    """einsum's sublist form ``einsum(op0, [0, 1], op1, [1, 2], [0, 2])`` as an equation."""

    def letters(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)

    pairs = args[: len(args) - len(args) % 2]
    equation = ",".join(letters(s) for s in pairs[1::2])
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return equation, list(pairs[0::2])


def _subscript_counts(inputs) -> dict:
    """How many operands each subscript appears in."""
    counts = {}
    for subs in inputs:
        for s in set(subs):
            counts[s] = counts.get(s, 0) + 1
    return counts


def _contracts(counts, output) -> bool:
    """Whether an einsum sums a subscript shared by operands (PyTorch runs that as a bmm)."""
    return any(n > 1 and s not in output for s, n in counts.items())


def _einsum_dtype(operands, inputs, output) -> _dtype.dtype:
    """PyTorch's einsum dtype: a subscript summed within one operand sums it first (ints and
    bools become int64); then contraction (a bmm) needs equal dtypes, mere products promote."""
    counts = _subscript_counts(inputs)
    contracted = _contracts(counts, output)
    dtypes = []
    for x, subs in zip(operands, inputs, strict=True):
        d = x.dtype
        if d.rank <= _dtype.INTEGRAL and any(counts[s] == 1 and s not in output for s in subs):
            d = _dtype.int64
        dtypes.append(d)
    result = dtypes[0]
    for d in dtypes[1:]:
        if d is not result:
            if contracted:
                raise RuntimeError(
                    f"expected scalar type {_dtype.TITLE[dtypes[0]]} but found {_dtype.TITLE[d]}"
                )
            result = _dtype.promote_types(result, d)
    if contracted and result is _dtype.bool:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    return result


@autocast_op("einsum", "einsum_product", inline=True)
def einsum(*args) -> Tensor:
    """Sums of products written in Einstein notation, as `torch.einsum`:
    ``einsum("ij,jk->ik", a, b)`` is ``a @ b``. Operands may also come as one list; "..."
    stands for broadcast dims; without "->" the output has the broadcast dims, then the
    subscripts seen once, sorted.
    The sublist form ``einsum(a, [0, 1], b, [1, 2])`` is accepted too."""
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least "
            "one operand and its subscripts list"
        )
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _sublist_equation(args)
    expect_tensors(operands, 1)
    if not operands:
        raise _einsum_error("must provide at least one operand")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(operands) < len(terms):
        raise _einsum_error("fewer operands were provided than specified in the equation")
    if len(operands) > len(terms):
        raise _einsum_error("more operands were provided than specified in the equation")
    inputs, start = [], 0
    for k, term in enumerate(terms):
        inputs.append(_parse_term(term.replace(" ", ""), start, k))
        start += len(term) + 1
    sizes = {}
    for k, (x, subs) in enumerate(zip(operands, inputs, strict=True)):
        shape = x._data.shape
        named = [s for s in subs if s != "..."]
        if "..." not in subs and len(named) != len(shape):
            raise _einsum_error(
                f"the number of subscripts in the equation ({len(named)}) does not match the "
                f"number of dimensions ({len(shape)}) for operand {k} and no ellipsis was given"
            )
        if len(named) > len(shape):
            raise _einsum_error(
                f"the number of subscripts in the equation ({len(named)}) is more than the "
                f"number of dimensions ({len(shape)}) for operand {k}"
            )
        cut = subs.index("...") if "..." in subs else len(subs)
        dims = list(range(cut)) + list(range(len(shape) - (len(subs) - cut - 1), len(shape)))
        for s, dim in zip(named, dims, strict=True):
            size = shape[dim]
            seen = sizes.get(s, 1)
            if size != seen and size != 1 and seen != 1:
                raise _einsum_error(
                    f"subscript {s} has size {size} for operand {k} which does not broadcast "
                    f"with previously seen size {seen}"
                )
            sizes[s] = max(size, seen) if seen != 1 else size
    if arrow:
        output = _parse_term(rhs.replace(" ", ""), len(lhs) + 2, None)
        for s in output:
            if s != "..." and s not in sizes:
                raise _einsum_error(
                    f"output subscript {s} does not appear in the equation for any input operand"
                )
            if output.count(s) > 1:
                raise _einsum_error(f"output subscript {s} appears more than once in the output")
    else:
        counts = [s for subs in inputs for s in subs if s != "..."]
        output = sorted(s for s in set(counts) if counts.count(s) == 1)
        if any("..." in subs for subs in inputs):  # the broadcast dims lead the output
            output.insert(0, "...")
    if STATE.autocast is not None:
        # PyTorch's einsum contracts with bmm, which autocasts; its mere products do not
        name = "einsum" if _contracts(_subscript_counts(inputs), output) else "einsum_product"
        return LAYERS.autocast_call(name, einsum, args, {})
    dt = _einsum_dtype(operands, inputs, output)
    normalized = ",".join("".join(subs) for subs in inputs) + "->" + "".join(output)
    try:
        return call(_EINSUM, tuple(operands), normalized, dt.np)
    except ValueError as exc:
        raise _einsum_error(f"operands do not broadcast: {exc}") from None


# -- scaled sums: beta * input + alpha * product -----------------------------------------------
def _coefficient(value, d: _dtype.dtype, name: str):
    """`alpha` or `beta` as a number of the result's kind (ints truncate, as in PyTorch)."""
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if not isinstance(value, (int, float, complex, np.number)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if d.rank < _dtype.COMPLEX and isinstance(value, (complex, np.complexfloating)):
        raise RuntimeError(f"value cannot be converted to type {_SCALAR_CTYPE[d]} without overflow")
    if d.rank <= _dtype.INTEGRAL:
        return int(value)
    return value


def _check_expand(shape, target, d: _dtype.dtype) -> None:
    """PyTorch's errors for `input` of `shape` that does not expand to `target`."""
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand(torch.{_dtype.TITLE[d]}Tensor{{{list(shape)}}}, size={list(target)}): the "
            f"number of sizes provided ({len(target)}) must be greater or equal to the number "
            f"of dimensions in the tensor ({len(shape)})"
        )
    offset = len(target) - len(shape)
    for i, s in enumerate(shape):
        if s != 1 and s != target[offset + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[offset + i]}) must match the existing "
                f"size ({s}) at non-singleton dimension {offset + i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(shape)}"
            )


def _scaled_sum(input: Tensor, product: Tensor, beta, alpha, out) -> Tensor:
    """``beta * input + alpha * product``; with beta == 0 `input` is ignored (NaN included)."""
    d = product.dtype
    beta = _coefficient(beta, d, "beta")
    alpha = _coefficient(alpha, d, "alpha")
    if alpha != 1:
        product = binary(_mul, product, alpha)
    if beta == 0:
        result = product
    else:
        result = binary(_add, input if beta == 1 else binary(_mul, input, beta), product)
    return result if out is None else write_out(out, result)


def _half(first, *tensors) -> bool:
    """Whether the tensors share one half-precision dtype (float16 or bfloat16): the scaled
    sums then compute in float32 and round once, as PyTorch's kernels."""
    dtype = first._data.dtype
    return dtype.char in HALF_CHARS and all(t._data.dtype == dtype for t in tensors)


def _rounded(result: Tensor, like: Tensor, out) -> Tensor:
    result = result.to(like.dtype)
    return result if out is None else write_out(out, result)


def _check_add_dtypes(input: Tensor, m1: Tensor, m2: Tensor) -> None:
    for first, second, a, b in (("self", "mat2", input, m2), ("mat1", "mat2", m1, m2)):
        if a.dtype is not b.dtype:
            raise RuntimeError(
                f"{first} and {second} must have the same dtype, but got "
                f"{_dtype.TITLE[a.dtype]} and {_dtype.TITLE[b.dtype]}"
            )


@autocast_op("addmm", inline=True)
def addmm(
    input: Tensor,
    mat1: Tensor,
    mat2: Tensor,
    out_dtype: _dtype.dtype | None = None,
    *,
    beta=1,
    alpha=1,
    out: Tensor | None = None,
) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``: mat1 (n, k), mat2 (k, m), `input`
    broadcastable to (n, m). With beta == 0 `input` is ignored, NaN included. `out_dtype` is
    refused as by `mm`."""
    if out_dtype is not None:
        _refuse_out_dtype("addmm", out_dtype, out, ("input", input), ("mat1", mat1), ("mat2", mat2))
    if STATE.autocast is not None:
        return LAYERS.autocast_call(
            "addmm", addmm, (input, mat1, mat2), {"beta": beta, "alpha": alpha, "out": out}
        )
    try:
        for name, m in (("mat1", mat1), ("mat2", mat2)):
            if m._data.ndim != 2:
                raise RuntimeError(f"{name} must be a matrix, got {m._data.ndim}-D tensor")
        _check_add_dtypes(input, mat1, mat2)
    except AttributeError:
        check_tensors("addmm", ("input", input), ("mat1", mat1), ("mat2", mat2))
        raise
    _mm_checks(mat1._data.shape, mat2._data.shape, mat1.dtype, mat2.dtype)
    _check_expand(input._data.shape, (mat1._data.shape[0], mat2._data.shape[1]), input.dtype)
    if mat1._data.dtype.char in HALF_CHARS and _half(
        input, mat1, mat2
    ):  # PyTorch's gemm: in float32, rounded once
        product = _matmul(mat1.float(), mat2.float())
        return _rounded(_scaled_sum(input.float(), product, beta, alpha, None), input, out)
    return _scaled_sum(input, _matmul(mat1, mat2), beta, alpha, out)


@autocast_op("addmv", inline=True)
def addmv(
    input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1, out: Tensor | None = None
) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``: mat (n, k), vec (k), `input` of n or 1
    elements (or 0-dim)."""
    if STATE.autocast is not None:
        args = (input, mat, vec)
        return LAYERS.autocast_call(
            "addmv", addmv, args, {"beta": beta, "alpha": alpha, "out": out}
        )
    try:
        if mat._data.ndim != 2 or vec._data.ndim != 1 or input._data.ndim > 1:
            raise RuntimeError(
                "vector + matrix @ vector expected, got "
                f"{input._data.ndim}, {mat._data.ndim}, {vec._data.ndim}"
            )
    except AttributeError:
        check_tensors("addmv", ("input", input), ("mat", mat), ("vec", vec))
        raise
    rows = mat._data.shape[0]
    size = input._data.shape[0] if input._data.ndim == 1 and input._data.shape[0] != 1 else rows
    _mv_checks(mat._data.shape, vec._data.shape[0], mat.dtype, vec.dtype, size)
    if input.dtype is not mat.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_dtype.TITLE[input.dtype]}, {_dtype.TITLE[mat.dtype]}, and "
            f"{_dtype.TITLE[vec.dtype]}"
        )
    if mat._data.dtype.char in HALF_CHARS and _half(input, mat, vec):
        product = _matmul(mat.float(), vec.float())
        return _rounded(_scaled_sum(input.float(), product, beta, alpha, None), input, out)
    return _scaled_sum(input, _matmul(mat, vec), beta, alpha, out)


def _check_sizes_read(reads) -> None:
    """PyTorch reads the sizes of the result (``batch1.size(1)``...) before it checks the
    batches' dims: its IndexError for the first ``(tensor, dim)`` read that fails."""
    for t, d in reads:
        n = t._data.ndim
        if n == 0:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        if d >= n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
            )


@autocast_op("addbmm")
def addbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1, out: Tensor | None = None
) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``: batch1 (b, n, k),
    batch2 (b, k, m), `input` broadcastable to (n, m)."""
    try:
        for name, m in (("batch1", batch1), ("batch2", batch2)):
            if m._data.ndim != 3:
                _check_sizes_read(((batch1, 1), (batch2, 2)))
                raise RuntimeError(f"{name} must be a 3D tensor")
        _check_add_dtypes(input, batch1, batch2)
    except AttributeError:
        check_tensors("addbmm", ("input", input), ("batch1", batch1), ("batch2", batch2))
        raise
    s1, s2 = batch1._data.shape, batch2._data.shape
    if s1[0] != s2[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {s1[0]} and {s2[0]}"
        )
    if s1[2] != s2[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and {s2[1]}x{s2[2]})"
        )
    _no_bool(input.dtype, "addmm_impl_cpu_")
    _check_expand(input._data.shape, (s1[1], s2[2]), input.dtype)
    if batch1._data.dtype.char in HALF_CHARS and _half(input, batch1, batch2):
        product = call(_TENSORDOT, (batch1.float(), batch2.float()), (0, 2), (0, 1))
        return _rounded(_scaled_sum(input.float(), product, beta, alpha, None), input, out)
    product = call(_TENSORDOT, (batch1, batch2), (0, 2), (0, 1))
    return _scaled_sum(input, product, beta, alpha, out)


@autocast_op("baddbmm", inline=True)
def baddbmm(
    input: Tensor,
    batch1: Tensor,
    batch2: Tensor,
    out_dtype: _dtype.dtype | None = None,
    *,
    beta=1,
    alpha=1,
    out: Tensor | None = None,
) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` per batch: batch1 (b, n, k),
    batch2 (b, k, m), `input` broadcastable to (b, n, m). `out_dtype` is refused as by
    `mm`."""
    if out_dtype is not None:
        _refuse_out_dtype(
            "baddbmm", out_dtype, out, ("input", input), ("batch1", batch1), ("batch2", batch2)
        )
    if STATE.autocast is not None:
        return LAYERS.autocast_call(
            "baddbmm", baddbmm, (input, batch1, batch2), {"beta": beta, "alpha": alpha, "out": out}
        )
    try:
        for name, m in (("batch1", batch1), ("batch2", batch2)):
            if m._data.ndim != 3:
                _check_sizes_read(((batch1, 0), (batch1, 1), (batch2, 2)))
                raise RuntimeError(f"{name} must be a 3D tensor")
        input_dtype = input.dtype
    except AttributeError:
        check_tensors("baddbmm", ("input", input), ("batch1", batch1), ("batch2", batch2))
        raise
    if input_dtype is not batch1.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_CTYPE[input.dtype]}, batch1: "
            f"{_CTYPE[batch1.dtype]}, batch2: {_CTYPE[batch2.dtype]}"
        )
    _check_bmm(batch1, batch2, "baddbmm")
    s1, s2 = batch1._data.shape, batch2._data.shape
    _check_expand(input._data.shape, (s1[0], s1[1], s2[2]), input.dtype)
    if batch1._data.dtype.char in HALF_CHARS and _half(input, batch1, batch2):
        product = _matmul(batch1.float(), batch2.float())
        return _rounded(_scaled_sum(input.float(), product, beta, alpha, None), input, out)
    return _scaled_sum(input, _matmul(batch1, batch2), beta, alpha, out)


for _fn in (matmul, mm, bmm, mv, dot, vdot, outer, kron, addmm, addmv, addbmm, baddbmm):
    export(_fn, method=True)
export(outer, "ger", method=True)
export(tensordot)
export(einsum)
