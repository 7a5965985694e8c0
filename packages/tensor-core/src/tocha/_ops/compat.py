"""The rest of torch's routine surface, composed of other ops (no primitive of its own):

- the ``*_copy`` forms of the view ops (a view, copied), ``unsafe_`` splits, `narrow_copy`;
- linear algebra under torch's older names: `adjoint`, `cholesky_solve`, `cholesky_inverse`,
  `lu`, `lu_solve`, `triangular_solve`, `orgqr`, `ormqr`, `chain_matmul`, `frobenius_norm`,
  `nuclear_norm`, `norm_except_dim`; the removed `solve`, `lstsq`, `eig`, `symeig`,
  `matrix_rank` raising PyTorch's RuntimeError;
- `as_strided_scatter`, `index_reduce`, `nonzero_static`, `sum_to_size`, `fill`,
  `scalar_tensor`, `range`, `empty_permuted`, `frombuffer`, `to_dlpack`;
- `memory_format` and its values, the process settings (interop threads, warn-always,
  deterministic debug mode, flush denormal, default tensor type), the legacy Tensor
  attributes (`volatile`, `name`, `output_nr`...), `apply_` / `map_` / `map2_`.
"""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from .. import _dtype, _runtime, return_types
from .._api import PUBLIC, export
from .._dispatch import autocast_op, call, defop, expect_tensors, not_a_tensor
from .._memory_format import FORMATS as _FORMATS
from .._memory_format import memory_format
from .._stack import user_stacklevel
from .._tensor import Tensor, _wrap_dim
from ._argcheck import check_dtype, index_arg, int_arg, slice_args
from ._out import inplace, write_out
from .creation import check_range
from .routines import as_strided_

__all__: list[str] = []

_F = PUBLIC


# -- copies of views -----------------------------------------------------------------------
def _copy_of(view_name: str, method: bool = False):
    def fn(input: Tensor, *args, out: Tensor | None = None, **kwargs):
        if not isinstance(input, Tensor):
            raise not_a_tensor(f"{view_name}_copy", input)
        view = getattr(input, view_name) if method else _VIEWS.get(view_name) or _F[view_name]
        result = view(*args, **kwargs) if method else view(input, *args, **kwargs)
        if isinstance(result, (tuple, list)):
            return [r.clone() for r in result]
        result = result.clone()
        return result if out is None else _write_out(out, result)

    fn.__name__ = fn.__qualname__ = f"{view_name}_copy"
    fn.__doc__ = f"`{view_name}`, copied: the same values in new memory."
    return fn


# View ops that are Tensor methods only, or none at all (alias: the tensor itself).
_VIEWS = {"expand": Tensor.expand, "alias": lambda input: input.view(input.shape)}


def _write_out(out: Tensor, result: Tensor) -> Tensor:
    return write_out(out, result)


def _copies():
    for name in (
        "alias",
        "as_strided",
        "diagonal",
        "expand",
        "permute",
        "select",
        "split",
        "split_with_sizes",
        "squeeze",
        "t",
        "transpose",
        "unbind",
        "unsqueeze",
        "view_as_complex",
        "view_as_real",
        "narrow",
    ):
        yield name, False
    yield "unfold", True
    yield "view", True


# PyTorch records detach_copy in autograd, with a derivative it has not implemented
detach_copy_op = defop("detach_copy", lambda xp: lambda x: x.copy())


def detach_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """`detach`, copied: the same values in new memory."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("detach_copy", input)
    result = call(detach_copy_op, (input,))
    return result if out is None else _write_out(out, result)


def slice_copy(
    input: Tensor, dim: int = 0, start=None, end=None, step: int = 1, *, out=None
) -> Tensor:
    """``input[..., start:end:step, ...]`` along `dim`, copied."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("slice_copy", input, "input", 1)
    index = [slice(None)] * input.dim()
    index[index_arg("slice_copy", dim, "dim")] = slice_args("slice_copy", start, end, step)
    result = input[tuple(index)].clone()
    return result if out is None else _write_out(out, result)


def index_put_(input: Tensor, indices, values: Tensor, accumulate: builtins.bool = False):
    """``input[indices] = values`` (or ``+=`` when `accumulate`), in place."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("index_put_", input, "input", 1)
    return input.index_put_(indices, values, accumulate)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0):
    """`chunk` (the pieces are not checked against later in-place use)."""
    return _F["chunk"](input, chunks, dim)


def unsafe_split(input: Tensor, split_size, dim: int = 0):
    """`split` (the pieces are not checked against later in-place use)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("unsafe_split", input, "input", 1)
    return input.split(split_size, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes, dim: int = 0):
    """`split_with_sizes` (the pieces are not checked against later in-place use)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("unsafe_split_with_sizes", input, "input", 1)
    return input.split(list(split_sizes), dim)


# -- linear algebra under older names ------------------------------------------------------
def _linalg():
    from .. import linalg

    return linalg


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (a view)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("adjoint", input, "input", 1)
    if input.ndim == 0:
        warnings.warn(
            "adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        return input
    return input.mH


@autocast_op("cholesky_solve")
def cholesky_solve(
    input: Tensor, input2: Tensor, upper: builtins.bool = False, *, out=None
) -> Tensor:
    """Solve ``A X = input`` for A = L L^H given its Cholesky factor `input2` (upper: U^H U)."""
    linalg = _linalg()
    lower = input2.mH if upper else input2
    y = linalg.solve_triangular(lower, input, upper=False)
    result = linalg.solve_triangular(lower.mH, y, upper=True)
    return result if out is None else _write_out(out, result)


@autocast_op("cholesky_inverse")
def cholesky_inverse(input: Tensor, upper: builtins.bool = False, *, out=None) -> Tensor:
    """The inverse of A = L L^H (upper: U^H U) from its Cholesky factor."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("cholesky_inverse", input, "input", 1)
    if input.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    eye = _F["eye"](input.shape[-1], dtype=input.dtype, device=input._device)
    result = cholesky_solve(eye.expand(input.shape), input, upper)
    return result if out is None else _write_out(out, result)


_LU_DTYPES = (_dtype.float32, _dtype.float64, _dtype.complex64, _dtype.complex128)


@autocast_op("lu")
def lu(A: Tensor, pivot: builtins.bool = True, get_infos: builtins.bool = False, out=None):
    """The LU factorisation (LU, pivots) of `A`, with `infos` when `get_infos`."""
    if isinstance(A, Tensor) and A.dim() >= 2 and A.dtype not in _LU_DTYPES:
        if A.numel():  # PyTorch's kernel has no low-precision or integer form
            raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_dtype.TITLE[A.dtype]}'")
        batch = tuple(A.shape[:-2])
        pivots = _F["zeros"](batch + (min(A.shape[-2:]),), dtype=_dtype.int32)
        factors, infos = A.clone(), _F["zeros"](batch, dtype=_dtype.int32)
    else:
        factors, pivots, infos = _linalg().lu_factor_ex(A, pivot=pivot)
    return (factors, pivots, infos) if get_infos else (factors, pivots)


@autocast_op("lu_solve")
def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:  # noqa: N803
    """Solve ``A X = b`` from the LU factorisation of A (`lu`)."""
    result = _linalg().lu_solve(LU_data, LU_pivots, b)
    return result if out is None else _write_out(out, result)


@autocast_op("triangular_solve")
def triangular_solve(
    b: Tensor,
    A: Tensor,  # noqa: N803
    upper: builtins.bool = True,
    transpose: builtins.bool = False,
    unitriangular: builtins.bool = False,
    *,
    out=None,
):
    """(solution of ``A X = b``, a copy of A) for triangular `A` (`transpose`: of A^T)."""
    matrix = A.mT if transpose else A
    solution = _linalg().solve_triangular(
        matrix, b, upper=upper != transpose, unitriangular=unitriangular
    )
    return return_types.triangular_solve((solution, A.clone()))


@autocast_op("orgqr")
def orgqr(input: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first columns of the product of Householder reflectors (`geqrf`'s format)."""
    return _linalg().householder_product(input, tau)


@autocast_op("ormqr")
def ormqr(
    input: Tensor,
    tau: Tensor,
    other: Tensor,
    left: builtins.bool = True,
    transpose: builtins.bool = False,
    *,
    out=None,
) -> Tensor:
    """`other` times Q (the full product of `input`'s Householder reflectors; `left`: Q on
    the left, `transpose`: Q^H)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("ormqr", input, "input", 1)
    if not isinstance(tau, Tensor):
        raise not_a_tensor("ormqr", tau, "tau", 2)
    if not isinstance(other, Tensor):
        raise not_a_tensor("ormqr", other, "other", 3)
    if input.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    m = input.shape[-2]
    reflectors = input
    if input.shape[-1] < m:
        pad = _F["zeros"](
            (*input.shape[:-1], m - input.shape[-1]), dtype=input.dtype, device=input._device
        )
        reflectors = _F["cat"]([input, pad], -1)
        tau = _F["cat"](
            [tau, _F["zeros"]((*tau.shape[:-1], m - tau.shape[-1]), dtype=tau.dtype)], -1
        )
    q = _linalg().householder_product(reflectors, tau)
    if transpose:
        q = q.mH
    return q @ other if left else other @ q


def chain_matmul(*matrices, out=None) -> Tensor:
    """The product of the matrices, in the cheapest order (`linalg.multi_dot`)."""
    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
        "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors "
        "rather than multiple parameters.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    expect_tensors(matrices, 0)
    if len(matrices) == 1:
        return matrices[0].clone()
    return _linalg().multi_dot(list(matrices))


def frobenius_norm(input: Tensor, dim=(-2, -1), keepdim: builtins.bool = False, *, out=None):
    """The Frobenius norm over `dim`."""
    result = _F["norm"](input, "fro", dim, keepdim)
    return result if out is None else _write_out(out, result)


def nuclear_norm(input: Tensor, dim=None, keepdim: builtins.bool = False, *, out=None):
    """The nuclear norm (sum of singular values) of the matrices over `dim` (the last two)."""
    if isinstance(dim, builtins.bool):
        dim, keepdim = None, dim
    result = _linalg().matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    return result if out is None else _write_out(out, result)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The `pow`-norm of each slice of `v` along `dim`, shaped to broadcast against `v`
    (dim -1: the norm of all of `v`)."""
    pow, dim = int_arg("norm_except_dim", pow, "pow"), int_arg("norm_except_dim", dim, "dim")
    if dim == -1:
        return _F["norm"](v, pow)
    if v.size(dim) == 0:  # PyTorch flattens the other dims, ambiguous when `dim` is empty
        last = v.dim() > 1 and _wrap_dim(dim, v.dim()) == v.dim() - 1
        v.reshape(-1, 0) if last else v.reshape(0, -1)
    dims = [d for d in builtins.range(v.dim()) if d != dim]
    if not dims:  # no other dim: each element's norm (an empty dim list would mean all)
        return _F["norm"](v.unsqueeze(-1), pow, -1)
    return _F["norm"](v, pow, dims, True)


_REMOVED = {
    "solve": "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
    "`torch.linalg.solve` has its arguments reversed and does not return the LU "
    "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with "
    "`torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
    "replaced with:\nX = torch.linalg.solve(A, B)",
    "lstsq": "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
    "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
    "in the returned tuple (although it returns other information about the problem).",
    "eig": "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
    "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
    "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
    "eigenvectors=True) should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)",
    "symeig": "The default behavior has changed from using the upper triangular portion of "
    "the matrix by default to using the lower triangular portion.\n\nL, _ = "
    "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, "
    "UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should "
    "be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    "matrix_rank": "\nPlease use the `torch.linalg.matrix_rank` function instead. The "
    "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.",
}


def _removed(name: str):
    def fn(*args, **kwargs):
        raise RuntimeError(
            "This function was deprecated since version 1.9 and is now removed."
            + ("" if _REMOVED[name].startswith("\n") else " ")
            + _REMOVED[name]
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Removed from PyTorch in 1.9: raises its RuntimeError. {_REMOVED[name]}"
    return fn


# -- scatter-like, indices -------------------------------------------------------------------
def as_strided_scatter(input: Tensor, src: Tensor, size, stride, storage_offset=None) -> Tensor:
    """A copy of `input` (contiguous) with `src` written into the elements its
    ``as_strided(size, stride, storage_offset)`` view would show."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("as_strided_scatter", input, "input", 1)
    if not isinstance(src, Tensor):
        raise not_a_tensor("as_strided_scatter", src, "src", 2)
    flat = input.contiguous().reshape(-1)
    positions = _F["as_strided"](
        _F["arange"](flat.numel(), device=input._device), size, stride, storage_offset
    )
    values = src.expand(positions.shape).reshape(-1).to(flat.dtype)
    return flat.scatter(0, positions.reshape(-1), values).reshape(input.shape)


def index_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: builtins.bool = True,
    out=None,
) -> Tensor:
    """Reduce (``prod``, ``mean``, ``amax``, ``amin``) the slices of `source` along `dim`
    into the slices of `input` that `index` names."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    d = dim % builtins.max(source.dim(), 1)
    shape = [1] * source.dim()
    shape[d] = index.numel()
    expanded = index.reshape(shape).expand(source.shape)
    return _F["scatter_reduce"](input, d, expanded, source, reduce, include_self=include_self)


def _index_reduce_(self: Tensor, dim, index, source, reduce, *, include_self=True) -> Tensor:
    return inplace(
        self,
        (source,),
        lambda: index_reduce(self, dim, index, source, reduce, include_self=include_self),
        None,
    )


def nonzero_static(
    input: Tensor, *, size: int, fill_value: int = -1, out: Tensor | None = None
) -> Tensor:
    """`nonzero`'s (n, ndim) indices truncated or padded with `fill_value` to `size` rows."""
    if isinstance(out, Tensor) and out.dtype is not _dtype.int64:
        raise RuntimeError(
            "nonzero_static: Expected out tensor to have scalar type Long but got scalar type"
            f"{_dtype.TITLE[out.dtype]}"
        )
    result = _nonzero_static(input, size, fill_value)
    return result if out is None else write_out(out, result)


def _nonzero_static_method(self: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """`tocha.nonzero_static` of this tensor (no ``out=``, as PyTorch's method)."""
    return _nonzero_static(self, size, fill_value)


_nonzero_static_method.__name__ = _nonzero_static_method.__qualname__ = "nonzero_static"


def _nonzero_static(input: Tensor, size, fill_value) -> Tensor:
    size = int_arg("nonzero_static", size, "size")
    fill_value = int_arg("nonzero_static", fill_value, "fill_value")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = _F["nonzero"](input)
    if found.shape[0] >= size:
        return found[:size]
    pad = _F["full"](
        (size - found.shape[0], input.dim()), fill_value, dtype=found.dtype, device=found._device
    )
    return _F["cat"]([found, pad])


def sum_to_size(self: Tensor, *size) -> Tensor:
    """This tensor summed down to `size` (a shape that broadcasts to this tensor's)."""
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], builtins.int) else size
    lead = self.dim() - len(shape)
    if lead < 0 or any(s not in (1, t) for s, t in zip(shape, self.shape[lead:])):
        raise RuntimeError(
            f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
            f"{{{', '.join(map(str, self.shape))}}}."
        )
    result = self.sum(tuple(builtins.range(lead))) if lead else self
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and result.shape[i] != 1)
    return result.sum(dims, keepdim=True) if dims else result


# -- creation --------------------------------------------------------------------------------
def fill(input: Tensor, value) -> Tensor:
    """A new tensor of `input`'s shape, dtype and device, every element `value`. Its
    gradient is zero for `input` and the sum of the output's for a `value` tensor."""
    if isinstance(value, Tensor) and value.dim():
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value.dim()} dimensions."
        )
    filled = _F["full_like"](input, value.item() if isinstance(value, Tensor) else value)
    if not (input.requires_grad or isinstance(value, Tensor) and value.requires_grad):
        return filled
    everywhere = _F["ones_like"](input, dtype=_dtype.bool)
    return _F["where"](everywhere, value, input).to(input.dtype)


def scalar_tensor(
    s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False
):
    """A 0-dim tensor of the number `s` (the default float dtype unless `dtype`)."""
    return _F["tensor"](
        s,
        dtype=_dtype.get_default_dtype() if dtype is None else dtype,
        device=device,
        requires_grad=requires_grad,
    )


def range(
    start=0,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,  # noqa: A001
    requires_grad=False,
):
    """Deprecated: ``arange`` including `end` (the default float dtype unless `dtype`)."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    if end is None:
        start, end = 0, start
    check_range(start, end, step)
    check_dtype("range", dtype)
    if dtype is not None and (dtype.is_complex or dtype is _dtype.bool):
        raise NotImplementedError(f"\"range_cpu\" not implemented for '{_dtype.TITLE[dtype]}'")
    count = builtins.int(math.floor((end - start) / step)) + 1
    values = np.arange(count, dtype=np.float64) * step + start
    result = _F["tensor"](
        values,
        dtype=_dtype.get_default_dtype() if dtype is None else dtype,
        device=device,
        requires_grad=requires_grad,
    )
    return result if out is None else _write_out(out, result)


def empty_permuted(
    size,
    physical_layout,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """An uninitialised tensor of `size` whose memory holds its dims in the order
    `physical_layout`."""
    order = list(physical_layout)
    if len(order) != len(size):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}"
        )
    for i, d in enumerate(order):
        if not 0 <= d < len(size):
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {len(size) - 1}, but got "
                f"{d} at index {i}).  NB: negative dims not currently supported; file an issue "
                "if you want it."
            )
        if d in order[:i]:
            raise RuntimeError("Duplicate dim not allowed")
    physical = _F["empty"]([size[i] for i in order], dtype=dtype, device=device)
    result = physical.permute(*np.argsort(order).tolist())
    return result.requires_grad_() if requires_grad else result


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad=False):
    """A 1-dim tensor sharing the memory of a Python buffer, read as `dtype` from byte
    `offset`, `count` elements (all: -1)."""
    view = memoryview(buffer).cast("B")
    available = view.nbytes - offset
    if count == -1 and available % dtype.itemsize:
        raise ValueError(
            f"buffer length ({available} bytes) after offset ({offset} bytes) must be a "
            f"multiple of element size ({dtype.itemsize})"
        )
    if count == 0 or view.nbytes == 0:
        raise ValueError("both buffer length (0) and count (0) must not be 0")
    array = np.frombuffer(view, dtype=dtype.np, count=count, offset=offset)
    result = _F["from_numpy"](array)
    return result.requires_grad_() if requires_grad else result


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of the tensor's memory."""
    return tensor.__dlpack__()


# -- process settings -----------------------------------------------------------------------------
class _Settings:
    interop_threads = 1
    warn_always = False
    deterministic_debug_mode = 0


_SETTINGS = _Settings()


def get_num_interop_threads() -> int:
    """The number of threads used for inter-op parallelism (tocha runs ops in order: 1)."""
    return _SETTINGS.interop_threads


def set_num_interop_threads(num: int) -> None:
    """Set the number of inter-op threads (recorded; tocha runs ops in order)."""
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _SETTINGS.interop_threads = num


def init_num_threads() -> None:
    """Initialise the thread pools (nothing to do in tocha)."""


def set_warn_always(b: builtins.bool) -> None:
    """Whether warnings PyTorch gives once should be given every time (recorded)."""
    _SETTINGS.warn_always = builtins.bool(b)


def is_warn_always_enabled() -> builtins.bool:
    """Whether `set_warn_always` is on."""
    return _SETTINGS.warn_always


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """0 / "default": nondeterministic algorithms allowed; 1 / "warn": they warn; 2 /
    "error": they raise (`use_deterministic_algorithms`)."""
    mode = _DEBUG_MODES.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(
            "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
            f"got {debug_mode}"
        )
    _runtime.use_deterministic_algorithms(mode > 0, warn_only=mode == 1)


def get_deterministic_debug_mode() -> int:
    """The current deterministic debug mode (0, 1 or 2)."""
    if not _runtime.are_deterministic_algorithms_enabled():
        return 0
    return 1 if _runtime.is_deterministic_algorithms_warn_only_enabled() else 2


def set_flush_denormal(mode: builtins.bool) -> builtins.bool:
    """Flushing denormal numbers to zero is not supported by tocha's NumPy kernels: False."""
    return False


_LEGACY_TYPES = {f"torch.{title}Tensor": d for d, title in _dtype.TITLE.items()}


def set_default_tensor_type(t) -> None:
    """Deprecated: set the default float dtype from a legacy type (``torch.DoubleTensor``
    or its name)."""
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    dtype = _LEGACY_TYPES.get(t) if isinstance(t, str) else getattr(t, "dtype", None)
    if dtype is None:
        raise TypeError(f"invalid type: '{t}'")
    _dtype.set_default_dtype(dtype)


def is_inference(input: Tensor) -> builtins.bool:
    """Whether the tensor was made in inference mode."""
    return input.is_inference()


# -- legacy Tensor attributes and Python-function maps ----------------------------------------
def _false(self) -> builtins.bool:
    return False


def _volatile(self) -> builtins.bool:
    warnings.warn(
        "volatile was removed (Variable.volatile is always False)",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    return False


def _output_nr(self) -> int:
    ag = self._ag
    return 0 if ag is None else ag.output_nr


def _reinforce(self, reward):
    raise RuntimeError(
        "reinforce() was removed.\nUse torch.distributions instead.\nSee "
        "https://pytorch.org/docs/main/distributions.html"
    )


def apply_(self: Tensor, callable) -> Tensor:  # noqa: A002
    """Replace each element by ``callable(element)`` (CPU tensors only; slow)."""
    values = [callable(v) for v in self._data.reshape(-1).tolist()]
    result = _F["tensor"](values, dtype=self.dtype).reshape(self.shape)
    return inplace(self, (), lambda: result, None)


def map_(self: Tensor, tensor: Tensor, callable) -> Tensor:  # noqa: A002
    """Replace each element by ``callable(element, other)``, `tensor` broadcast."""
    other = tensor.expand(self.shape)._data.reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self._data.reshape(-1).tolist(), other)]
    result = _F["tensor"](values, dtype=self.dtype).reshape(self.shape)
    return inplace(self, (tensor,), lambda: result, None)


def map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:  # noqa: A002
    """Replace each element by ``callable(element, x_element, y_element)``."""
    xs = x.expand(self.shape)._data.reshape(-1).tolist()
    ys = y.expand(self.shape)._data.reshape(-1).tolist()
    values = [callable(a, b, c) for a, b, c in zip(self._data.reshape(-1).tolist(), xs, ys)]
    result = _F["tensor"](values, dtype=self.dtype).reshape(self.shape)
    return inplace(self, (x, y), lambda: result, None)


def as_subclass(self: Tensor, cls) -> Tensor:
    """This tensor's memory and history as an instance of `cls`, a Tensor subclass."""
    out = object.__new__(cls)
    for slot in ("_data", "_device", "_ag", "_base", "_vc"):
        setattr(out, slot, getattr(self, slot))
    return out


def module_load(self: Tensor, other: Tensor, assign: builtins.bool = False) -> Tensor:
    """What `load_state_dict` loads into this tensor: `other`."""
    return other


def dim_order(self: Tensor, *, ambiguity_check=False) -> tuple[int, ...]:
    """The dims from the outermost to the innermost in memory (by decreasing stride)."""
    strides = self.stride()
    return tuple(sorted(builtins.range(self.dim()), key=lambda d: -strides[d]))


def _resize_legacy(self: Tensor, *sizes) -> Tensor:
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=user_stacklevel())
    count = math.prod(sizes)  # as PyTorch: one tuple of sizes is repeated, never matches
    if count == self.numel() and builtins.all(
        isinstance(s, builtins.int) and s >= 0 for s in sizes
    ):
        return self.reshape(sizes)
    raise RuntimeError(
        f"requested resize to {'x'.join(map(str, sizes))} ({count} elements in total), but the "
        f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
        "elements). autograd's resize can only change the shape of a given tensor, while "
        "preserving the number of elements. "
    )


def _resize_as_legacy(self: Tensor, tensor: Tensor) -> Tensor:
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=user_stacklevel())
    return self.reshape(tensor.shape)


def _nn_method(name: str):
    def method(self: Tensor, *args, **kwargs) -> Tensor:
        import tocha

        return getattr(tocha.nn.functional, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"`nn.functional.{name}` of this tensor (needs tocha-nn)."
    return method


def _publish() -> None:
    for name, method in _copies():
        export(_copy_of(name, method), f"{name}_copy")
    export(detach_copy)
    for fn in (
        slice_copy,
        adjoint,
        cholesky_solve,
        cholesky_inverse,
        lu,
        lu_solve,
        triangular_solve,
        orgqr,
        ormqr,
        as_strided_scatter,
        index_reduce,
        unsafe_chunk,
        unsafe_split,
        unsafe_split_with_sizes,
    ):
        export(fn, method=True)
    export(_F["narrow_copy"], "narrow_copy", method=True)
    export(nonzero_static)
    export(_nonzero_static_method, "nonzero_static", method=True, function=False)
    export(index_put_)
    export(as_strided_)
    for fn in (
        chain_matmul,
        frobenius_norm,
        nuclear_norm,
        norm_except_dim,
        fill,
        scalar_tensor,
        range,
        empty_permuted,
        frombuffer,
        to_dlpack,
        get_num_interop_threads,
        set_num_interop_threads,
        init_num_threads,
        set_warn_always,
        is_warn_always_enabled,
        set_deterministic_debug_mode,
        get_deterministic_debug_mode,
        set_flush_denormal,
        set_default_tensor_type,
        is_inference,
        memory_format,
    ):
        export(fn)
    for name in ("solve", "lstsq", "eig", "symeig"):
        export(_removed(name), method=True)
    export(_removed("matrix_rank"))
    for name in _REMOVED:
        PUBLIC[name].__module__ = "tocha"
    for fn in (sum_to_size, apply_, map_, map2_, as_subclass, module_load, dim_order):
        export(fn, method=True, function=False)
    export(_index_reduce_, "index_reduce_", method="index_reduce_", function=False)
    export(_resize_legacy, "resize", method="resize", function=False)
    export(_resize_as_legacy, "resize_as", method="resize_as", function=False)
    export(_reinforce, "reinforce", method="reinforce", function=False)
    export(_nn_method("hardshrink"), "hardshrink", method=True, function=False)
    export(_nn_method("prelu"), "prelu", method=True, function=False)
    for name in (
        "is_ipu",
        "is_maia",
        "is_mkldnn",
        "is_mps",
        "is_mtia",
        "is_nested",
        "is_vulkan",
        "is_xla",
        "is_xpu",
    ):
        setattr(Tensor, name, property(_false, doc=f"False: tocha has no {name[3:]} tensors."))
    Tensor.is_distributed = _false
    Tensor.volatile = property(_volatile, doc="Removed: always False (warns).")
    Tensor.name = property(lambda self: None, doc="Named tensors: None.")
    Tensor.grad_dtype = property(lambda self: self.dtype, doc="The dtype of the gradient.")
    Tensor.output_nr = property(_output_nr, doc="Which output of its grad_fn it is.")
    Tensor.const_data_ptr = Tensor.data_ptr
    for name, value in _FORMATS.items():
        PUBLIC[name] = value
    for name in ("igamma", "igammac"):
        export(_inplace(name), f"{name}_", method=True, function=False)


def _inplace(name: str):
    def method(self: Tensor, other) -> Tensor:
        return inplace(self, (other,), lambda: _F[name](self, other), None)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"`{name}` in place."
    return method


_publish()
