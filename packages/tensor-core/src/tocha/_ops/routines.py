"""Routines composed of other ops: no primitive of their own, so autograd, forward mode and
vmap come from the ops they are made of.

- In-place view ops (`squeeze_`, `unsqueeze_`, `t_`, `transpose_`, `swapaxes_`,
  `swapdims_`, `as_strided_`): the tensor takes the view's metadata (its array and, when
  autograd tracks it, its history); a leaf that requires grad is refused, as in PyTorch.
- `Tensor.unfold` (a strided view), `resize_` / `resize_as_`, `ravel`, `Tensor.new`,
  `get_device`, ``in`` and `reversed` on tensors.
- Products and distances: `inner`, `addr`, `dist`; the in-place `addmm_`, `addmv_`,
  `addbmm_`, `baddbmm_`, `addr_`, `cumsum_`, `cumprod_`, `fill_diagonal_`.
- `quantile` / `nanquantile` (every interpolation mode), `unravel_index`, `empty_strided`,
  `asarray`, `is_complex` and the other predicates as functions.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import _dtype
from .._api import PUBLIC, export
from .._backend import resolve_device
from .._dispatch import autocast_op, expect_tensor, not_a_tensor
from .._grad_mode import STATE
from .._memory_format import (
    CONTIGUOUS,
    PRESERVE,
    format_arg,
    format_strides,
    laid_out,
    suggested_format,
)
from .._storage import TypedStorage, UntypedStorage
from .._tensor import Tensor, wrap
from ._argcheck import check_dtype, check_tensors, flag, index_arg
from ._out import CPP_NAMES, inplace, write_out
from .creation import storage_tensor

__all__: list[str] = []

_F = PUBLIC


def _tracked(t: Tensor) -> builtins.bool:
    return t._ag is not None and (STATE.grad_enabled or builtins.bool(STATE.transforms))


def _take_view(self: Tensor, view: Tensor) -> Tensor:
    """Make `self` the view `view` of itself: its array and, when autograd tracks `self`,
    the view's history (a leaf that requires grad is refused, unless grad mode is off)."""
    if _tracked(self) and self.requires_grad and self.is_leaf:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    self._data = view._data
    if _tracked(self):
        self._ag = view._ag
    return self


def squeeze_(self: Tensor, dim=None) -> Tensor:
    """`squeeze` in place: the tensor itself loses the size-1 dims (all, or `dim`)."""
    view = _F["squeeze"](self) if dim is None else _F["squeeze"](self, dim)
    return _take_view(self, view)


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """`unsqueeze` in place: the tensor itself gains a size-1 dim at `dim`."""
    return _take_view(self, _F["unsqueeze"](self, dim))


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """`transpose` in place: the tensor itself has `dim0` and `dim1` swapped."""
    return _take_view(self, _F["transpose"](self, dim0, dim1))


def t_(self: Tensor) -> Tensor:
    """`t` in place (a tensor of at most 2 dims)."""
    return _take_view(self, _F["t"](self))


def as_strided_(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    """`as_strided` in place: the tensor itself takes the new size, strides and offset."""
    return _take_view(self, _F["as_strided"](self, size, stride, storage_offset))


for _fn in (squeeze_, unsqueeze_, transpose_, t_, as_strided_):
    export(_fn, method=True, function=False)
export(transpose_, "swapaxes_", method="swapaxes_", function=False)
export(transpose_, "swapdims_", method="swapdims_", function=False)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every slice of `size` elements along `dimension`, `step` apart, as a view: that dim
    becomes the number of slices and a last dim of `size` is added."""
    if type(size) is not int or not -(2**63) <= size < 2**63:
        size = index_arg("unfold", size, "size")
    if type(step) is not int or not -(2**63) <= step < 2**63:
        step = index_arg("unfold", step, "step")
    ndim = self.dim()
    d = dimension + builtins.max(ndim, 1) if dimension < 0 else dimension
    if not 0 <= d < builtins.max(ndim, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of "
            f"[{-builtins.max(ndim, 1)}, {builtins.max(ndim, 1) - 1}], but got {dimension})"
        )
    length = self.shape[d] if ndim else 1
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {length} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, strides = list(self.shape), list(self.stride())
    count = (length - size) // step + 1
    if ndim:
        shape[d], strides[d] = count, strides[d] * step
        inner = self.stride(d)
    else:
        inner = 1
    return _F["as_strided"](self, (*shape, size), (*strides, inner), self.storage_offset())


export(unfold, method=True, function=False)


def _resized(self: Tensor, shape: tuple) -> Tensor:
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(shape)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    numel = math.prod(shape)
    flat = self._data.reshape(-1) if self._data.flags.c_contiguous else None
    if flat is not None and numel <= flat.size:
        self._data = flat[:numel].reshape(shape)
    else:
        data = np.zeros(numel, dtype=self._data.dtype)
        old = np.ascontiguousarray(self._data).reshape(-1)
        data[: builtins.min(old.size, numel)] = old[:numel]
        self._data = data.reshape(shape)
    return self


def _restrided(self: Tensor, memory_format, fn: str) -> Tensor:
    """`self`, just resized (row-major), with its memory read in `memory_format`'s order."""
    fmt = format_arg(fn, memory_format, CONTIGUOUS)
    if fmt is PRESERVE:
        raise RuntimeError("Unsupported memory formatPreserve")
    strides = format_strides(self.shape, fmt)
    if strides is not None:
        flat = self._data.reshape(-1)
        self._data = laid_out(flat.reshape, self._data.shape, strides)
    return self


def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """Give the tensor `sizes` in place: it keeps its first elements in memory order; new
    elements are uninitialised (zeros here). The memory is laid out as `memory_format` says
    (row-major by default)."""
    shape = sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], builtins.int) else sizes
    return _restrided(_resized(self, tuple(shape)), memory_format, "resize_")


def resize_as_(self: Tensor, the_template: Tensor, memory_format=None) -> Tensor:
    """`resize_` to the shape of `the_template`; ``memory_format=tocha.preserve_format``
    takes the layout `the_template` looks like."""
    if memory_format is PRESERVE:
        memory_format = suggested_format(the_template._data)
    return _restrided(_resized(self, tuple(the_template.shape)), memory_format, "resize_as_")


export(resize_, method=True, function=False)
export(resize_as_, method=True)


def ravel(input: Tensor) -> Tensor:
    """The elements as one dim: a view when the layout allows, else a contiguous copy."""
    return _F["reshape"](input, (-1,))


export(ravel, method=True)


def new(self: Tensor, *args, device=None) -> Tensor:
    """The legacy constructor of this tensor's dtype (``x.new(2, 3)``, ``x.new(data)``,
    ``x.new()``), on its device unless `device` is given."""
    from .legacy import legacy_new

    return legacy_new(Tensor, self.dtype, args, self._device if device is None else device)


export(new, method=True, function=False)


def get_device(input: Tensor) -> builtins.int:
    """The device index of the tensor; -1 on the CPU."""
    dev = input._device
    return -1 if dev.type == "cpu" else (dev.index or 0)


export(get_device, method=True)


def _contains(self: Tensor, element) -> builtins.bool:
    if isinstance(element, (Tensor, builtins.int, builtins.float, builtins.complex)):
        return builtins.bool((self == element).any().item())
    raise RuntimeError(
        f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
    )


def _reversed(self: Tensor) -> Tensor:
    return self if self.dim() == 0 else _F["flip"](self, 0)


export(_contains, "__contains__", method="__contains__", function=False)
export(_reversed, "__reversed__", method="__reversed__", function=False)


# -- predicates as functions ---------------------------------------------------------------
def is_complex(input: Tensor) -> builtins.bool:
    """Whether the tensor's dtype is complex."""
    return expect_tensor("is_complex", input, "input", 1).dtype.is_complex


def is_distributed(input: Tensor) -> builtins.bool:
    """Whether the tensor is spread over several processes: never, for a tocha tensor."""
    expect_tensor("is_distributed", input, "input", 1)
    return False


def is_nonzero(input: Tensor) -> builtins.bool:
    """Whether a one-element tensor is not zero (more elements or none: RuntimeError)."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> builtins.bool:
    """Whether the two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> builtins.bool:
    """Whether the tensor's dtype is signed."""
    return input.dtype.is_signed


def isreal(input: Tensor) -> Tensor:
    """Elementwise: whether each element is real (its imaginary part zero)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("isreal", input, "input", 1)
    if not input.dtype.is_complex:
        return _F["ones_like"](input, dtype=_dtype.bool)
    return _F["imag"](input) == 0


export(is_complex)
export(is_distributed)
export(is_nonzero, method=True)
export(is_same_size, method=True)
export(is_signed)
export(isreal, method=True)


# -- products, distances -------------------------------------------------------------------
def inner(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The dot product over the last dims; a scalar operand multiplies. Shape:
    ``input.shape[:-1] + other.shape[:-1]``."""
    try:
        scalar = input.dim() == 0 or other.dim() == 0
    except AttributeError:
        check_tensors("inner", ("input", input), ("other", other))
        raise
    if scalar:
        result = _F["mul"](input, other)
    else:
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError(
                "inner() the last dimension must match on both input tensors but got shapes "
                f"{list(input.shape)} and {list(other.shape)}"
            )
        if input.dim() == other.dim() == 1 and input.dtype is _dtype.bool:
            raise NotImplementedError("\"dot\" not implemented for 'Bool'")  # PyTorch's dot
        result = _F["tensordot"](input, other, dims=([-1], [-1]))
    return result if out is None else write_out(out, result)


def addr(
    input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1, out: Tensor | None = None
) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``; with beta == 0 `input` is ignored."""
    check_tensors("addr", ("input", input), ("vec1", vec1), ("vec2", vec2))
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(
            f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D"
            if vec1.dim() != 1
            else f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D"
        )
    dtype = _dtype.promote_operands((input, vec1, vec2))
    for name, factor in (("beta", beta), ("alpha", alpha)):
        if isinstance(factor, float) and dtype.rank < _dtype.FLOATING:
            raise RuntimeError(
                f"For integral input tensors, argument {name} must not be a floating point number."
            )
    product = _F["outer"](vec1, vec2)
    if dtype is _dtype.bool:  # beta and alpha act as bools
        result = _F["logical_or"](
            input if beta else _F["zeros_like"](input),
            product if alpha else _F["zeros_like"](product),
        )
    else:
        if alpha != 1:
            product = _F["mul"](product, alpha)
        if beta == 0:
            result = _F["add"](_F["zeros_like"](input), product)
        else:
            result = _F["add"](_F["mul"](input, beta) if beta != 1 else input, product)
    return result if out is None else write_out(out, result)


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    """The p-norm of ``input - other`` (broadcast), as a 0-dim tensor."""
    return _F["norm"](_F["sub"](input, other), p=float(p))


export(inner, method=True)
export(addr, method=True)
export(dist, method=True)


def _inplace_of(name: str, operands: int):
    def method(self: Tensor, *args, **kwargs) -> Tensor:
        return inplace(self, args[:operands], lambda: _F[name](self, *args, **kwargs), None)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"`{name}` in place: the result is written into this tensor."
    return method


for _name, _operands in (
    ("addmm", 2),
    ("addmv", 2),
    ("addbmm", 2),
    ("baddbmm", 2),
    ("addr", 2),
    ("xlogy", 1),
    ("logit", 0),
    ("sinc", 0),
    ("i0", 0),
    ("digamma", 0),
    ("lgamma", 0),
):
    export(_inplace_of(_name, _operands), f"{_name}_", method=True, function=False)


def _cumulative_inplace(name: str):
    def method(self: Tensor, dim: int, *, dtype=None) -> Tensor:
        expect_tensor(f"{name}_", self, "self")
        if dtype is not None and dtype is not self.dtype:
            check_dtype(f"{name}_", dtype)
            raise RuntimeError(
                f"Bad in-place call: input tensor dtype {CPP_NAMES[self.dtype.name]} and output "
                f"tensor dtype {CPP_NAMES[dtype.name]} should match"
            )
        if self.dtype is _dtype.bool and self._data.size:
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
        return inplace(self, (), lambda: _F[name](self, dim, dtype=self.dtype), None)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = (
        f"`{name}` in place, in this tensor's dtype (a `dtype` must be it; a bool tensor only "
        "when empty, as PyTorch's kernel)."
    )
    return method


for _name in ("cumsum", "cumprod"):
    export(_cumulative_inplace(_name), f"{_name}_", method=True, function=False)


def _mvlgamma_(self: Tensor, p: int) -> Tensor:
    return inplace(self, (), lambda: _F["mvlgamma"](self, p), None)


def _polygamma_(self: Tensor, n: int) -> Tensor:
    return inplace(self, (), lambda: _F["polygamma"](n, self), None)


_mvlgamma_.__doc__ = "`mvlgamma` in place."
_polygamma_.__doc__ = "`polygamma` of order `n` in place."
export(_mvlgamma_, "mvlgamma_", method="mvlgamma_", function=False)
export(_polygamma_, "polygamma_", method="polygamma_", function=False)
for _name in ("xlogy_", "logit_", "sinc_", "i0_", "addmv_"):
    export(getattr(Tensor, _name), _name)


def fill_diagonal_(self: Tensor, fill_value, wrap: builtins.bool = False) -> Tensor:
    """Write `fill_value` on the main diagonal (all dims of equal length, or a 2-D tensor);
    `wrap` continues below a tall matrix's diagonal every ``cols + 1`` rows."""
    wrap = flag("fill_diagonal_", wrap, "wrap")
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(shape, dtype=np.bool_)
    if len(shape) == 2:
        rows, cols = shape
        flat = mask.reshape(-1)
        end = rows * cols if wrap else builtins.min(rows, cols) * cols
        flat[0 : end : cols + 1] = True
    else:
        index = np.arange(shape[0])
        mask[(index,) * len(shape)] = True
    where = wrap_tensor(mask, self)
    return inplace(self, (), lambda: _F["masked_fill"](self, where, fill_value), None)


def wrap_tensor(array: np.ndarray, like: Tensor) -> Tensor:
    """A constant NumPy array as a tensor on `like`'s device."""
    return _F["as_tensor"](array, device=like._device)


export(fill_diagonal_, method=True, function=False)


# -- quantiles -----------------------------------------------------------------------------
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, input: Tensor, q, dim, keepdim, interpolation, out, skip_nan):
    expect_tensor(name, input, "input", 1)
    keepdim = flag(name, keepdim, "keepdim")
    if dim is not None and type(dim) is not int:
        dim = index_arg(name, dim, "dim")
    if interpolation not in _MODES:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        qs = _F["tensor"]([float(q)], dtype=input.dtype, device=input._device)
    else:
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        scalar_q = q.dim() == 0
        qs = q.reshape(-1)
    if qs.numel() and not builtins.bool(((qs >= 0) & (qs <= 1)).all().item()):
        if not isinstance(q, Tensor):
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if input.numel() == 0:  # with a dim too; nanquantile's message names quantile
        raise RuntimeError("quantile() input tensor must be non-empty")
    ndim = input.dim()
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        d = operator.index(dim)
        d = d + builtins.max(ndim, 1) if d < 0 else d
        if not 0 <= d < builtins.max(ndim, 1):
            raise IndexError(
                f"Dimension out of range (expected to be in range of "
                f"[{-builtins.max(ndim, 1)}, {builtins.max(ndim, 1) - 1}], but got {dim})"
            )
        x = input.reshape(1) if ndim == 0 else input
    xs = _F["movedim"](_F["sort"](x, dim=d).values, d, -1)
    n = xs.shape[-1]
    nan = _F["isnan"](xs)
    if skip_nan:
        count = _F["sum"](_F["logical_not"](nan), -1, keepdim=True).to(input.dtype)
        undefined = count == 0
    else:
        count = _F["full"]((*xs.shape[:-1], 1), float(n), dtype=input.dtype, device=input._device)
        undefined = _F["any"](nan, -1, keepdim=True)
    pos = _F["mul"](qs, _F["sub"](count, 1))  # (..., Q)
    if interpolation == "nearest":
        pos = _F["round"](pos)
    low = _F["clamp"](_F["floor"](pos), 0, builtins.max(n - 1, 0)).to(_dtype.int64)
    high = _F["clamp"](_F["ceil"](pos), 0, builtins.max(n - 1, 0)).to(_dtype.int64)
    if n == 0:
        result = _F["full"](pos.shape, math.nan, dtype=input.dtype, device=input._device)
    else:
        below = _F["gather"](xs, -1, low)
        above = _F["gather"](xs, -1, high)
        if interpolation in ("lower", "nearest"):
            result = below
        elif interpolation == "higher":
            result = above
        elif interpolation == "midpoint":
            result = _F["mul"](_F["add"](below, above), 0.5)
        else:
            result = _F["lerp"](below, above, _F["sub"](pos, _F["floor"](pos)))
        result = _F["where"](undefined, math.nan, result)
    result = _F["movedim"](result, -1, 0)  # (Q, ...)
    if keepdim:
        if dim is None:
            result = result.reshape((result.shape[0],) + (1,) * ndim)
        elif ndim:
            result = _F["unsqueeze"](result, d + 1)
    if scalar_q:
        result = result.squeeze(0)
    return result if out is None else write_out(out, result)


@autocast_op("quantile")
def quantile(
    input: Tensor,
    q,
    dim=None,
    keepdim: builtins.bool = False,
    *,
    interpolation: str = "linear",
    out: Tensor | None = None,
) -> Tensor:
    """The `q`-th quantiles (a number or a 1-D tensor in [0, 1]) of `input` along `dim`
    (all elements when None); a row with NaN gives NaN. A tensor `q` puts its dim first.
    `interpolation` between the two nearest ranks: linear, lower, higher, midpoint, nearest."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, out, False)


@autocast_op("nanquantile")
def nanquantile(
    input: Tensor,
    q,
    dim=None,
    keepdim: builtins.bool = False,
    *,
    interpolation: str = "linear",
    out: Tensor | None = None,
) -> Tensor:
    """`quantile` ignoring NaN (a row of NaN only gives NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, out, True)


export(quantile, method=True)
export(nanquantile, method=True)


# -- indices, creation ---------------------------------------------------------------------
def unravel_index(indices, shape) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of `shape` of flat `indices` (an integer tensor): one
    tensor per dim, each of `indices`' shape."""
    if not isinstance(indices, Tensor):
        indices = _F["tensor"](indices)
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, builtins.int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    if any(s >= 2**63 for s in shape):
        raise ValueError("Overflow when unpacking long long")
    total = math.prod(shape)
    flat = indices.to(_dtype.int64)
    if not flat.numel():
        return tuple(flat.clone() for _ in shape)
    # Out-of-range indices wrap around, as PyTorch's (it does not check them)
    flat = _F["remainder"](flat, builtins.max(total, 1))
    coords = []
    for size in reversed(shape):
        coords.append(_F["remainder"](flat, size))
        flat = _F["div"](flat, size, rounding_mode="floor")
    return tuple(reversed(coords))


def empty_strided(
    size,
    stride,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """An uninitialised tensor of `size` with the given element `stride`."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    span = 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    base = _F["empty"](span, dtype=dtype, device=device)
    view = _F["as_strided"](base, size, stride)
    result = wrap(view._data, view._device)  # the memory's only tensor, not a view
    return result.requires_grad_() if requires_grad else result


def new_empty_strided(
    self: Tensor,
    size,
    stride,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """`empty_strided` with this tensor's dtype and device unless given."""
    return empty_strided(
        size,
        stride,
        dtype=self.dtype if dtype is None else dtype,
        device=self._device if device is None else device,
        requires_grad=requires_grad,
    )


export(unravel_index)
export(empty_strided)
export(new_empty_strided, method=True, function=False)


def _alias_error(what: str, dtype) -> ValueError:
    return ValueError(f"can't alias {what} into dtype '{_dtype.TITLE[dtype]}'.")


def asarray(
    obj,
    *,
    dtype=None,
    device=None,
    copy: builtins.bool | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """`obj` (a tensor, a NumPy array, a buffer, a DLPack capsule holder, a sequence or a
    scalar) as a tensor, as `torch.asarray`: memory is shared when no conversion is needed
    and `copy` is not True; ``copy=False`` refuses a conversion (ValueError); a buffer is read
    as `dtype` (default: the default float dtype)."""
    dev = None if device is None else resolve_device(device)
    if isinstance(obj, Tensor):
        target_dtype = obj.dtype if dtype is None else dtype
        converts = target_dtype is not obj.dtype or (dev is not None and dev != obj._device)
        if converts and copy is False:
            raise ValueError(
                f"can't alias tensor with dtype '{_dtype.TITLE[obj.dtype]}' into dtype "
                f"'{_dtype.TITLE[target_dtype]}'."
            )
        result = obj.to(device=dev, dtype=target_dtype) if converts else obj
        if copy and result is obj:
            result = obj.clone()
    elif isinstance(obj, (UntypedStorage, TypedStorage)):  # its memory, read as `dtype`
        result = storage_tensor(obj, dtype)
        if dev is not None and dev != result._device:
            result = result.to(dev)
        elif copy:
            result = result.clone()
    else:
        array = None
        if isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__"):
            array = np.asarray(obj)
        elif hasattr(obj, "__dlpack__"):
            array = np.from_dlpack(obj)
        elif isinstance(obj, (bytes, bytearray, memoryview)) or _is_buffer(obj):
            if isinstance(obj, (bytes, bytearray, memoryview)) or dtype is not None:
                read = dtype or _dtype.get_default_dtype()
                view = memoryview(obj).cast("B")
                if view.nbytes % read.itemsize:
                    raise ValueError(
                        f"buffer length ({view.nbytes} bytes) after offset (0 bytes) must be a "
                        f"multiple of element size ({read.itemsize})"
                    )
                array = np.frombuffer(view, dtype=read.np)
            else:
                array = np.asarray(memoryview(obj))
        if array is not None:
            if array.dtype.byteorder == ">":
                array = array.astype(array.dtype.newbyteorder("="))
            current = _dtype.from_np(array.dtype)
            target_dtype = current if dtype is None else dtype
            if target_dtype is not current and copy is False:
                raise _alias_error(f"tensor with dtype '{_dtype.TITLE[current]}'", target_dtype)
            if not array.flags.writeable:
                array = array.copy() if copy is not False else array
            if copy or target_dtype is not current:
                array = array.astype(target_dtype.np, copy=True)
            result = _F["from_numpy"](array)
            if dev is not None and dev.type != "cpu":
                result = result.to(dev)
        else:
            if copy is False:
                raise ValueError("can't alias arbitrary sequence into a tensor.")
            result = _F["tensor"](obj, dtype=dtype, device=dev)
    if requires_grad:
        result = result.detach().requires_grad_() if result is obj else result.requires_grad_()
    return result


def _is_buffer(obj) -> builtins.bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


export(asarray)
