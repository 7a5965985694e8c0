"""Views and shape ops: view, reshape, permute, expand, squeeze, narrow, split...

Every view op is a primitive whose kernel returns a backend view of its input, run through
`call_view` so that the result shares the input's memory, root base and version counter.
Strides follow PyTorch's rules (reported in elements by `Tensor.stride`); where NumPy would
pick other strides (``expand``, ``as_strided``, views of non-contiguous tensors) the kernel
builds the view from explicit strides with `restrider`. Ops that are rearrangements of
others (``transpose``, ``movedim``, ``flatten``, ``chunk``...) are composites.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import _dtype
from .._api import export
from .._dispatch import LAYERS, OtherLayout, call_view, defop, in_layout, make_view, not_a_tensor
from .._grad_mode import STATE
from .._memory_format import (
    CONTIGUOUS,
    PRESERVE,
    format_arg,
    format_strides,
    is_contiguous_as,
    positional_only_error,
)
from .._tensor import Tensor, _wrap_dim, row_major_memory, wrap
from ._argcheck import index_arg
from .creation import contiguous_copy


# -- building views from explicit strides ----------------------------------------------------
def _root(a):
    """The array that owns `a`'s memory (the end of its chain of views)."""
    cls = type(a)
    while isinstance(a.base, cls):
        a = a.base
    return a


def _ptr(a) -> int:
    iface = getattr(a, "__cuda_array_interface__", None) or a.__array_interface__
    return iface["data"][0]


def restrider(xp):
    """``restride(x, shape, strides, offset=None)``: a view of the memory under `x` with the
    given shape and strides (in bytes), starting at `x`'s first element, or `offset` bytes
    after the start of the memory's owner. Unlike NumPy's broadcast views it is writeable
    where `x` is."""
    as_strided = xp.lib.stride_tricks.as_strided

    def generic(x, shape, strides, offset=None):
        if offset is not None:
            root = row_major_memory(_root(x))
            if root is None:
                raise NotImplementedError(
                    "as_strided with a storage offset needs contiguous storage on this backend"
                )
            x = root.reshape(-1)[offset // x.itemsize :]
        return as_strided(x, shape, strides)

    if xp is not np:
        return generic

    def restride(x, shape, strides, offset=None):
        root = _root(x)
        if offset is None:
            offset = 0 if root is x else _ptr(x) - _ptr(root)
        memory = row_major_memory(root)
        if memory is None:
            return generic(x, shape, strides, offset)
        return np.ndarray(shape, x.dtype, memory, offset, strides)

    return restride


def view_strides(shape, strides, new_shape, item: int = 1):
    """Strides of a view of (`shape`, `strides`) as `new_shape`, or None when no view can
    express it (PyTorch's ``computeStride``); strides count elements of `item` units (bytes
    for NumPy's strides)."""
    if not shape:
        return (item,) * len(new_shape)
    if math.prod(shape) == 0:
        if tuple(shape) == tuple(new_shape):
            return tuple(strides)
        return tuple([s * item for s in _contiguous(new_shape)])
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (
            shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _contiguous(shape) -> tuple:
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


VIEW_ERROR = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)


# -- kernels ---------------------------------------------------------------------------------
def _view_kernel(xp):
    restride = restrider(xp)

    def kernel(x, shape):
        if x.flags.c_contiguous:
            return x.reshape(shape)
        strides = view_strides(x.shape, x.strides, shape, x.itemsize)
        if strides is None:
            raise RuntimeError(VIEW_ERROR)
        return restride(x, shape, strides)

    return kernel


def _expand_kernel(xp):
    restride = restrider(xp)

    def kernel(x, shape):
        if x.shape == shape:
            return x[...]
        return restride(x, shape, expand_strides(x.shape, x.strides, shape))

    return kernel


def expand_strides(shape, strides, new_shape) -> tuple:
    """PyTorch's strides of an expanded view: 0 where a dimension is broadcast (and all of
    them when a 0-dim tensor is expanded)."""
    if not shape:
        return (0,) * len(new_shape)
    lead = len(new_shape) - len(shape)
    out = [0] * len(new_shape)
    i = lead
    for n, st in zip(shape, strides, strict=False):
        if n == new_shape[i]:
            out[i] = st
        i += 1
    if lead and 1 in new_shape[:lead]:
        for i in range(lead - 1, -1, -1):
            if new_shape[i] == 1:
                out[i] = out[i + 1] * new_shape[i + 1]
    return tuple(out)


def _as_strided_kernel(xp):
    restride = restrider(xp)

    def kernel(x, size, stride, offset):
        item = x.itemsize
        return restride(x, size, tuple([s * item for s in stride]), offset * item)

    return kernel


def _unsqueeze(x, dim):
    shape = x.shape
    return x.reshape(shape[:dim] + (1,) + shape[dim:])


def _narrow(x, dim, start, length):
    return x[(slice(None),) * dim + (slice(start, start + length),)]


def _split(x, sizes, dim):
    lead = (slice(None),) * dim
    out = []
    start = 0
    for s in sizes:
        out.append(x[lead + (slice(start, start + s),)])
        start += s
    return tuple(out)


def _unbind(x, dim):
    lead = (slice(None),) * dim
    return tuple(x[lead + (i,)] for i in range(x.shape[dim]))


view_op = defop("view", _view_kernel)
view_dtype_op = defop("view_dtype", lambda xp: lambda x, d: x.view(d), differentiable=False)
permute_op = defop("permute", lambda xp: lambda x, dims: x.transpose(dims))
expand_op = defop("expand", _expand_kernel)
squeeze_op = defop("squeeze", lambda xp: lambda x, dims: x.squeeze(dims))
unsqueeze_op = defop("unsqueeze", lambda xp: _unsqueeze)
narrow_op = defop("narrow", lambda xp: _narrow)
split_op = defop("split_with_sizes", lambda xp: _split)
unbind_op = defop("unbind", lambda xp: _unbind)
as_strided_op = defop("as_strided", _as_strided_kernel)


def call_views(op, x, *args):
    """Run a view op whose kernel returns a tuple of views of `x`."""
    dev = x._device
    try:
        outs = tuple(wrap(a, dev) for a in op.kernels[dev](x._data, *args))
    except OtherLayout as exc:
        return in_layout(op, exc, x, *args)
    for out in outs:
        make_view(out, x)
    if x._ag is not None and (STATE.grad_enabled or STATE.transforms):
        return LAYERS.autograd(op, (x, *args), outs)
    return outs


# -- argument parsing ------------------------------------------------------------------------
def _index(value, fn_name: str, arg: str = "size"):
    if type(value) is int:
        return value
    if isinstance(value, bool) or isinstance(value, float):
        raise TypeError(
            f"{fn_name}(): argument '{arg}' must be tuple of ints, but found element of type "
            f"{type(value).__name__}"
        )
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"{fn_name}(): argument '{arg}' must be tuple of ints, but found element of type "
            f"{type(value).__name__}"
        ) from None


def int_tuple(args, fn_name: str, arg: str = "size") -> tuple:
    """Sizes or dims given as ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(Size)``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    for a in args:
        if type(a) is not int:
            return tuple(_index(a, fn_name, arg) for a in args)
    return tuple(args)


def infer_size(shape: tuple, numel: int) -> tuple:
    """`shape` with its one ``-1`` resolved so that it holds `numel` elements."""
    n = math.prod(shape)
    if n == numel and (not shape or min(shape) >= 0):
        return shape
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        else:
            known *= s
    if infer is not None:
        if known == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if numel % known == 0:
            return shape[:infer] + (numel // known,) + shape[infer + 1 :]
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def _dims(dims, ndim: int) -> tuple:
    """Wrapped dims; RuntimeError when one appears twice."""
    out = tuple(_wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        seen = set()
        for d in out:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
    return out


# -- view and reshape ------------------------------------------------------------------------
def view(self: Tensor, *shape, size=None, dtype=None) -> Tensor:
    """A view of `self` with another shape (one size may be -1), or, given a dtype, of
    its memory read as that dtype. The shape or dtype may be given as ``size=`` or ``dtype=``.

    Shape: ``view(*shape)`` holds the same number of elements; ``view(dtype)`` scales the last
    dimension by the ratio of the item sizes.
    """
    if size is not None or dtype is not None:
        if shape or (size is not None and dtype is not None):
            raise TypeError("view() received an invalid combination of arguments")
        shape = (dtype,) if dtype is not None else (size,)
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return _view_dtype(self, shape[0])
    shape = infer_size(int_tuple(shape, "view"), self._data.size)
    return call_view(view_op, self, shape)


def _view_dtype(self: Tensor, d: _dtype.dtype) -> Tensor:
    old = self.dtype
    if d.itemsize != old.itemsize:
        what = (
            f"to view {_dtype.SCALAR_NAME[old]} as {_dtype.SCALAR_NAME[d]} "
            "(different element sizes)"
        )
        if self.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self.stride(-1)}")
        if d.itemsize > old.itemsize:
            ratio = d.itemsize // old.itemsize
            if self.shape[-1] % ratio:
                raise RuntimeError(
                    f"self.size(-1) must be divisible by {ratio} {what}, but got {self.shape[-1]}"
                )
            for i, s in enumerate(self.stride()[:-1]):
                if s % ratio:
                    raise RuntimeError(
                        f"self.stride({i}) must be divisible by {ratio} {what}, but got {s}"
                    )
            if self.storage_offset() % ratio:
                raise RuntimeError(
                    f"self.storage_offset() must be divisible by {ratio} {what}, but got "
                    f"{self.storage_offset()}"
                )
    return alias(view_dtype_op.kernels[self._device](self._data, d.np), self)


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.view(other.shape)``."""
    try:
        shape = other._data.shape
    except AttributeError:
        raise not_a_tensor("view_as", other, "other", 2) from None
    return view(self, shape)


def reshape(input: Tensor, *shape) -> Tensor:
    """`input` with another shape (one size may be -1): a view when its strides allow one,
    else a contiguous copy."""
    try:
        data = input._data
    except AttributeError:
        raise not_a_tensor("reshape", input, "input", 1) from None
    shape = infer_size(int_tuple(shape, "reshape"), data.size)
    if data.flags.c_contiguous or view_strides(data.shape, data.strides, shape):
        return call_view(view_op, input, shape)
    return _unaliased(call_view(view_op, contiguous_copy(input), shape))


def _unaliased(t: Tensor) -> Tensor:
    """A view of a copy nobody else sees is no view (PyTorch's ``_unsafe_view``)."""
    t._base = None
    t._vc = None
    return t


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.reshape(other.shape)``."""
    try:
        shape = other._data.shape
    except AttributeError:
        raise not_a_tensor("reshape_as", other, "other", 2) from None
    return reshape(self, shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """`input` with dimensions `start_dim` to `end_dim` merged into one (a view when possible).

    Shape: ``(*before, n_start, ..., n_end, *after)`` -> ``(*before, n_start * ... * n_end,
    *after)``; a 0-dim input becomes ``(1,)``.
    """
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_a_tensor("flatten", input, "input", 1) from None
    ndim = len(shape)
    start = _wrap_dim(start_dim, ndim)
    end = _wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if ndim == 0:
        return reshape(input, (1,))
    if start == end:
        return input
    return reshape(input, shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :])


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """A view of `input` with dimension `dim` split into `sizes` (one may be -1)."""
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_a_tensor("unflatten", input, "input", 1) from None
    if not shape:
        raise RuntimeError(
            "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no "
            "dimensions"
        )
    dim = _wrap_dim(dim, len(shape))
    sizes = int_tuple((sizes,), "unflatten", "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_size(sizes, shape[dim])
    except RuntimeError as exc:
        if "is invalid for input of size" not in str(exc):
            raise RuntimeError(f"unflatten got an unexpected error:\n{exc}") from None
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
            f"({shape[dim]}) in the input tensor"
        ) from None
    return view(input, shape[:dim] + sizes + shape[dim + 1 :])


# -- dimensions ------------------------------------------------------------------------------
def squeeze(input: Tensor, dim=None) -> Tensor:
    """A view of `input` without its dimensions of size 1 (all, or those among `dim`, an int
    or a tuple of ints; dims of another size are left alone)."""
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_a_tensor("squeeze", input, "input", 1) from None
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = _dims(dim if isinstance(dim, (tuple, list)) else (dim,), len(shape))
        dims = tuple(d for d in dims if len(shape) and shape[d] == 1)
    return call_view(squeeze_op, input, dims)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """A view of `input` with a dimension of size 1 inserted at `dim`."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("unsqueeze", input, "input", 1) from None
    return call_view(unsqueeze_op, input, _wrap_dim(dim, ndim + 1))


def permute(input: Tensor, *dims) -> Tensor:
    """A view of `input` with its dimensions reordered: dimension i of the result is
    dimension ``dims[i]`` of `input`."""
    dims = int_tuple(dims, "permute", "dims")
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("permute", input, "input", 1) from None
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{ndim} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = tuple(_wrap_dim(d, ndim) for d in dims)
    if len(set(wrapped)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return call_view(permute_op, input, wrapped)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view of `input` with dimensions `dim0` and `dim1` swapped."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("transpose", input, "input", 1) from None
    dims = list(range(ndim))
    a = _wrap_dim(dim0, ndim)
    b = _wrap_dim(dim1, ndim)
    if ndim:
        dims[a], dims[b] = dims[b], dims[a]
    return call_view(permute_op, input, tuple(dims))


def t(input: Tensor) -> Tensor:
    """The transpose of a matrix; a tensor of fewer than 2 dimensions is returned as a view."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("t", input, "input", 1) from None
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return call_view(permute_op, input, tuple(range(ndim - 1, -1, -1)))


def movedim(input: Tensor, source, destination) -> Tensor:
    """A view of `input` with dimensions `source` (an int or a tuple) moved to positions
    `destination`; the other dimensions keep their order."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("movedim", input, "input", 1) from None
    src = source if isinstance(source, (tuple, list)) else (source,)
    dst = destination if isinstance(destination, (tuple, list)) else (destination,)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    src = tuple(_wrap_dim(d, ndim) for d in src)
    dst = tuple(_wrap_dim(d, ndim) for d in dst)
    for name, ds in (("source", src), ("destination", dst)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(ds)})")
    if ndim == 0:
        return call_view(permute_op, input, ())
    order = [None] * ndim
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    dims = tuple(next(rest) if o is None else o for o in order)
    return call_view(permute_op, input, dims)


def expand(self: Tensor, *sizes) -> Tensor:
    """A view of `self` broadcast to `sizes` (-1 keeps a size); broadcast dimensions have
    stride 0, so writing one element writes all its copies."""
    sizes = int_tuple(sizes, "expand")
    try:
        shape = self._data.shape
    except AttributeError:
        raise not_a_tensor("expand", self, "self", 1) from None
    if len(sizes) < len(shape):
        device = "" if self._device.type == "cpu" else f".{self._device.type}"
        name = f"{_dtype.SHOWN_MODULE}{device}.{_dtype.TITLE[self.dtype]}Tensor"
        raise RuntimeError(
            f"expand({name}{{{list(shape)}}}, size={list(sizes)}): "
            f"the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({len(shape)})"
        )
    lead = len(sizes) - len(shape)
    target = list(sizes)
    for i, size in enumerate(sizes):
        d = i - lead
        if size == -1:
            if d < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            target[i] = shape[d]
        elif d >= 0 and shape[d] != size and shape[d] != 1 or size < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({size}) must match the existing size "
                f"({shape[d] if d >= 0 else 1}) at non-singleton dimension {i}.  Target sizes: "
                f"{list(sizes)}.  Tensor sizes: {list(shape)}"
            )
    return call_view(expand_op, self, tuple(target))


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.expand(other.shape)``."""
    try:
        shape = other._data.shape
    except AttributeError:
        raise not_a_tensor("expand_as", other, "other", 2) from None
    return expand(self, shape)


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of `input`'s memory with the given sizes and strides (in elements), starting
    `storage_offset` elements into the memory (default: where `input` starts)."""
    size = int_tuple((size,), "as_strided")
    stride = int_tuple((stride,), "as_strided", "stride")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(stride)}"
        )
    if any(s < 0 for s in size):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(size)} and "
            f"strides={list(stride)}"
        )
    offset = input.storage_offset() if storage_offset is None else operator.index(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    item = input._data.itemsize
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    available = _root(input._data).nbytes
    if extent and (extent + offset) * item > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {item} requiring a storage size of {(extent + offset) * item} are "
            f"out of bounds for storage of size {available}"
        )
    return call_view(as_strided_op, input, size, stride, offset)


# -- pieces ----------------------------------------------------------------------------------
def _narrow_start(start) -> int:
    """`narrow`'s start given as other than an int: an integer (a 0-dim integral Tensor)."""
    if isinstance(start, bool):
        raise TypeError("narrow(): argument 'start' must be int, not bool")
    if isinstance(start, Tensor) and (start._data.ndim or start._data.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return operator.index(start)


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    """A view of `length` elements of `input` along `dim`, from `start` (may be negative)."""
    if type(length) is not int or not -(2**63) <= length < 2**63:
        length = index_arg("narrow", length, "length")
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_a_tensor("narrow", input, "input", 1) from None
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = _wrap_dim(dim, len(shape))
    size = shape[dim]
    if type(start) is not int:
        start = _narrow_start(start)
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return call_view(narrow_op, input, dim, start, length)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """A view of `input` at `index` along `dim`, which it removes (``input[..., index, ...]``
    with `index` at position `dim`)."""
    if type(index) is not int or not -(2**63) <= index < 2**63:
        index = index_arg("select", index, "index")
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_a_tensor("select", input, "input", 1) from None
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, len(shape))
    size = shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(shape)} at "
            f"dimension {dim}"
        )
    return squeeze(narrow(input, dim, index % size, 1), dim)


SPLIT_0D = "split expects at least a 1-dimensional tensor"


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Views of `tensor` cut along `dim` into pieces of `split_size_or_sections` elements
    (an int: the last piece may be smaller) or of the sizes a list gives (summing to the
    size of `dim`)."""
    dim, size = _split_dim(tensor, dim, "split", "tensor")
    if isinstance(split_size_or_sections, (tuple, list)):
        return split_with_sizes(tensor, split_size_or_sections, dim)
    step = split_size_or_sections
    if type(step) is not int or not -(2**63) <= step < 2**63:
        step = index_arg("split", step, "split_size")
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        )
    n = max(-(-size // step), 1) if step else 1
    sizes = (step,) * (n - 1) + (size - step * (n - 1),)
    return call_views(split_op, tensor, sizes, dim)


def _split_dim(t, dim, name: str, arg: str) -> tuple[int, int]:
    """The wrapped `dim` of a tensor to split and its size; PyTorch's errors for a non-tensor
    and for a 0-d tensor."""
    try:
        shape = t._data.shape
    except AttributeError:
        raise not_a_tensor(name, t, arg, 1) from None
    try:
        dim = _wrap_dim(dim, len(shape))
        return dim, shape[dim]
    except IndexError:
        if not shape:
            raise RuntimeError(SPLIT_0D) from None
        raise


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Views of `input` cut along `dim` into pieces of the given sizes."""
    dim, size = _split_dim(input, dim, "split_with_sizes", "input")
    sizes = int_tuple((split_sizes,), "split_with_sizes", "split_sizes")
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            "split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={list(sizes)}"
        )
    if sum(sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input "
            f"tensor's size at dimension {dim}), but got split_sizes={list(sizes)}"
        )
    return call_views(split_op, input, sizes, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Views of `input` cut along `dim` into `chunks` pieces of ``ceil(size / chunks)``
    elements (the last smaller; fewer pieces when the size does not need them all)."""
    if type(chunks) is not int or not -(2**63) <= chunks < 2**63:
        chunks = index_arg("chunk", chunks, "chunks")
    try:
        shape = input._data.shape
    except AttributeError:
        raise not_a_tensor("chunk", input, "input", 1) from None
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = _wrap_dim(dim, len(shape))
    size = shape[dim]
    if size == 0:
        return call_views(split_op, input, (0,) * chunks, dim)
    return split(input, -(-size // chunks), dim)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Views of each slice of `input` along `dim`, without that dimension."""
    try:
        ndim = input._data.ndim
    except AttributeError:
        raise not_a_tensor("unbind", input, "input", 1) from None
    if ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return call_views(unbind_op, input, _wrap_dim(dim, ndim))


# -- memory ----------------------------------------------------------------------------------
def contiguous(self: Tensor, *args, memory_format=CONTIGUOUS) -> Tensor:
    """`self` if its elements are laid out densely in the order `memory_format` names
    (row-major by default), else a copy laid out so."""
    if memory_format is CONTIGUOUS and not args:
        if self._data.flags.c_contiguous:
            return self
        return contiguous_copy(self)
    if args:
        raise positional_only_error("contiguous", args)
    fmt = format_arg("contiguous", memory_format, None)
    if is_contiguous_as(self._data, fmt):
        return self
    if fmt is PRESERVE:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    format_strides(self.shape, fmt)  # a rank the format has no order for raises
    return contiguous_copy(self, fmt)


def alias(data, source: Tensor) -> Tensor:
    """A tensor around `data`, memory of `source`, sharing its version counter but outside
    autograd and not a view of it (PyTorch's ``detach`` and ``view(dtype)``)."""
    out = wrap(data, source._device)
    vc = source._vc
    if vc is None:
        vc = source._vc = [0]
    out._vc = vc
    return out


def detach(input: Tensor) -> Tensor:
    """A tensor sharing `input`'s memory and version counter, outside autograd."""
    try:
        data = input._data
    except AttributeError:
        raise not_a_tensor("detach", input, "input", 1) from None
    return alias(data, input)


def detach_(input: Tensor) -> Tensor:
    """Takes `input` out of autograd, in place."""
    try:
        base = input._base
    except AttributeError:
        raise not_a_tensor("detach_", input, "input", 1) from None
    if base is not None:  # any view, whether autograd tracks it or not
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
            "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
            "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
            "function in torch/optim/optimizer.py as the solution."
        )
    input._ag = None
    return input


for _fn in (
    reshape,
    flatten,
    unflatten,
    squeeze,
    unsqueeze,
    permute,
    transpose,
    t,
    movedim,
    as_strided,
    narrow,
    select,
    split,
    split_with_sizes,
    chunk,
    unbind,
    detach,
    detach_,
):
    export(_fn, method=True)
for _fn in (view, view_as, reshape_as, expand, expand_as, contiguous):
    export(_fn, method=True, function=False)
export(transpose, "swapaxes", method=True)
export(transpose, "swapdims", method=True)
export(movedim, "moveaxis", method=True)
