"""tocha.sparse, as ``torch.sparse``: sparse tensors and the products and sums on them.

A sparse tensor is an ordinary `tocha.Tensor` whose backend array is a `SparseArray`
instead of an ndarray: a `COO` (below: indices ``(sparse_dim, nnz)`` and values ``(nnz,
*dense_shape)``) or a `Compressed` (tocha/sparse/_compressed.py: the CSR, CSC, BSR and BSC
layouts). Their index and value parts are Tensors, so that the ops written here from dense
tocha ops on the values (products, sums, `to_dense`, `coalesce`, conversions) carry autograd
through the values. A dense op that reaches a sparse array raises PyTorch's
NotImplementedError for its sparse backend, unless the layout has a kernel for the op; the
dense ops never look for sparse operands.
"""

from __future__ import annotations

import math
import operator
import re
import types
from typing import TYPE_CHECKING, Any

import numpy as np

import tocha

from .. import _dtype
from .._api import export
from .._backend import backend_of
from .._dispatch import OtherLayout, not_a_tensor
from .._printing import PRINT_OPTS
from .._storage import sparse_coo
from .._subclass_dispatch import disabled_torch_function_impl
from .._tensor import Tensor, wrap

__all__ = [
    "SparseTensor",
    "addmm",
    "check_sparse_tensor_invariants",
    "log_softmax",
    "mm",
    "sampled_addmm",
    "softmax",
    "spdiags",
    "sum",
]


# PyTorch's names (overloads) of the ops it lacks for sparse tensors where tocha's op differs
_ATEN_NAMES = {
    "softmax": "_softmax",
    "log_softmax": "_log_softmax",
    "mean": "mean.dim",
    "fill": "fill_.Scalar",
    "where": "where.self",
    **{op: f"{op}.Tensor" for op in ("eq", "ne", "lt", "le", "gt", "ge", "remainder")},
}


def _unsupported(name: str, dev, backend: str = "Sparse") -> str:
    name = _ATEN_NAMES.get(name, name)
    return (
        f"Could not run 'aten::{name}' with arguments from the '{backend}{dev.type.upper()}' "
        "backend. This could be because the operator doesn't exist for this backend, or was "
        "omitted during the selective/custom build process (if using custom build)."
    )


def _refuse(name: str):
    def method(self, *args, **kwargs):
        raise OtherLayout(self, name)

    method.__name__ = name
    return method


class SparseArray:
    """The backend array of a sparse tensor, of any sparse layout: its `values` Tensor and
    full `shape` (and its layout's index Tensors, in the subclass).

    It answers what Tensor's metadata reads (`shape`, `dtype`, `ndim`); anything else a
    dense kernel asks of it (a NumPy function, an operator, an array method) raises
    `OtherLayout`, and the dispatcher runs the op's kernel for the layout, ``kernels[op
    name]`` of the subclass, on the Tensors instead (or raises PyTorch's error for an op
    that backend lacks)."""

    __slots__ = ()
    is_sparse = True
    backend = "Sparse"  # PyTorch's dispatch key, less the device ("SparseCPU")
    title = "Sparse"  # PyTorch's name of the layout in its messages
    impl = "SparseTensorImpl"  # PyTorch's class of such tensors, in its messages
    kernels: dict = {}

    # what the dense Tensor methods read from an array
    @property
    def dtype(self):
        return self.values._data.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self.values._data.itemsize

    def unsupported(self, name: str) -> str:
        """PyTorch's message for op `name`, which this sparse backend lacks."""
        return _unsupported(name, self.values._device, self.backend)

    def with_values(self, values: Tensor) -> SparseArray:
        """This array's indices (on the values' device) with other values of the same shape."""
        raise NotImplementedError

    def gradient(self, g: Tensor) -> Tensor:
        """The gradient of a leaf tensor whose values have gradient `g`, as PyTorch gives it."""
        return _wrap(self.with_values(g))

    def record(self) -> tuple:
        """``(layout, parts)``: what PyTorch's pickles hold (``_rebuild_sparse_tensor``)."""
        raise NotImplementedError

    def check_strided(self, what: str) -> None:
        """PyTorch's RuntimeError where the layout has no `what` (strides, contiguity)."""

    def __getattr__(self, name: str):
        raise OtherLayout(self, name)

    def __array__(self, dtype=None, copy=None):
        raise OtherLayout(self, "numpy")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise OtherLayout(self, ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        raise OtherLayout(self, func.__name__)

    for _name in (
        "__getitem__ __len__ __iter__ __bool__ __neg__ __pos__ __abs__ __invert__ __add__ __iadd__ "
        "__radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ "
        "__rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ __rmatmul__ __and__ "
        "__rand__ __or__ __ror__ __xor__ __rxor__ __lt__ __le__ __gt__ __ge__ __float__ "
        "__int__ __index__"
    ).split():
        locals()[_name] = _refuse(_name.strip("_"))
    del _name


class COO(SparseArray):
    """The backend array of a sparse COO tensor: `indices` and `values` Tensors, the full
    `shape`, and whether the indices are known to be sorted and unique (`coalesced`). Its
    kernels are ``COO.kernels`` (tocha/sparse/_kernels.py)."""

    __slots__ = ("indices", "values", "shape", "coalesced")
    layout = sparse_coo
    kernels: dict = {}  # op name -> the op on sparse tensors, filled by _kernels

    def __init__(self, indices: Tensor, values: Tensor, shape: tuple, coalesced: bool):
        self.indices, self.values = indices, values
        self.shape, self.coalesced = tuple(shape), coalesced

    @property
    def strides(self) -> tuple:
        return (0,) * len(self.shape)  # PyTorch's stride() of a sparse tensor

    flags = types.SimpleNamespace(c_contiguous=False, f_contiguous=False, writeable=True)

    @property
    def sparse_dim(self) -> int:
        return self.indices._data.shape[0]

    @property
    def nnz(self) -> int:
        return self.indices._data.shape[1]

    def with_values(self, values: Tensor) -> COO:
        indices = self.indices
        if indices.device is not values.device:
            indices = indices.to(values.device)
        return COO(indices, values, self.shape, self.coalesced)

    def gradient(self, g: Tensor) -> Tensor:
        """Sparse, coalesced, one value per position (the gradient of each of its values)."""
        _, first = np.unique(_linear_index(self), return_index=True)
        at = tocha.tensor(first, device=g.device)
        indices = self.indices.index_select(1, at)
        return _wrap(_coalesce(COO(indices, g.index_select(0, at), self.shape, False)))

    def record(self) -> tuple:
        return sparse_coo, (self.indices, self.values, self.shape, self.coalesced)

    def clear(self) -> None:
        """Remove every entry (`zero_`)."""
        _clear_coo(self, self.shape, self.sparse_dim)

    def __setitem__(self, key, value) -> None:
        """``self[...] = value``: an in-place op's result written in (`tocha._ops._out.assign`):
        the entries of a sparse `value`, cast to this tensor's dtype."""
        if key is not Ellipsis or not isinstance(value, COO):
            raise RuntimeError(
                "copy_() between dense and sparse Tensors is not implemented! Found self type = "
                "torch.sparse tensor and src type = a dense tensor"
            )
        values = self.values
        if values.requires_grad and values.is_leaf and tocha.is_grad_enabled():
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        self.indices, self.shape, self.coalesced = value.indices, value.shape, value.coalesced
        self.values = value.values.to(values.dtype)

    def repr_tensor(self, t: Tensor) -> str:
        """PyTorch's repr of a sparse tensor: indices and values (printed without their
        dtypes), size, nnz, the dtype unless it is a default one, and layout."""
        indices = _inner_repr(self.indices, len("tensor(indices="))
        values = _inner_repr(self.values.detach(), len("       values="))
        shape = "(" + ", ".join(map(str, self.shape)) + ("," if len(self.shape) == 1 else "") + ")"
        extra = ""
        d = self.values.dtype
        if d is not tocha.get_default_dtype() and d is not tocha.int64 and d is not tocha.bool:
            extra = f", dtype={d}"
        if t.device.type != "cpu":
            extra += f", device='{t.device}'"
        grad = ""
        if self.values.grad_fn is not None:
            grad = f", grad_fn=<{self.values.grad_fn.name()}>"
        return (
            f"tensor(indices={indices},\n       values={values},\n       size={shape}, "
            f"nnz={self.nnz}{extra}, layout={self.layout}{grad})"
        )


def _inner_repr(t: Tensor, indent: int) -> str:
    """The repr of a sparse tensor's indices or values: no dtype; an empty one's size."""
    if t.numel() == 0:
        return f"tensor([], size={tuple(t.shape)})"
    width = PRINT_OPTS.linewidth
    PRINT_OPTS.linewidth = width - indent  # its rows wrap where they would at this indent
    try:
        text = re.sub(r",\s*dtype=\w+\.\w+\)$", ")", repr(t))
    finally:
        PRINT_OPTS.linewidth = width
    return re.sub(r"\n(?=[^\n])", "\n" + " " * indent, text)


def _sparse(t: Tensor, name: str, kind: str = "sparse coordinate tensor") -> COO:
    """The COO of a sparse tensor; PyTorch's error for one of another layout."""
    data = t._data
    if type(data) is not COO:
        raise RuntimeError(f"{name} expected {kind} layout but got {layout_title(data)}")
    return data


def layout_title(data) -> str:
    """PyTorch's name, in its messages, of the layout of a tensor's array ("Strided"...)."""
    return data.title if isinstance(data, SparseArray) else "Strided"


class SparseTensor(Tensor):
    """The Python type of sparse tensors: a Tensor whose array is a `SparseArray`. Its ops are
    the dense ones, which reach the layout's kernels through the dispatcher; this class
    gives the autograd attributes of a tensor whose history is its values', the copies and
    conversions that read the values directly, and PyTorch's answers for what the layout has
    no memory for (``numpy``, ``data_ptr``, storages). Dense tensors never see this class."""

    __slots__ = ()
    __torch_function__ = disabled_torch_function_impl  # its calls are plain tensor calls

    # autograd: a sparse tensor made with requires_grad=True is a leaf through its values
    @property
    def requires_grad(self) -> bool:
        return self._data.values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._data.values.requires_grad = value

    @property
    def is_leaf(self) -> bool:
        return self._data.values.is_leaf

    @property
    def grad_fn(self) -> Any:
        return self._data.values.grad_fn

    @property
    def grad(self) -> Tensor | None:
        """The gradient of a leaf, as PyTorch gives it: sparse, of this tensor's layout (for
        a COO one, coalesced: one value per position)."""
        g = self._data.values.grad
        return None if g is None else self._data.gradient(g)

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            raise RuntimeError("tocha sets the gradient of a sparse tensor only to None")
        self._data.values.grad = None

    def detach(self) -> Tensor:
        array = self._data
        return _wrap(array.with_values(array.values.detach()))

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """The tensor with its values (and indices) on another dtype or device: the arguments
        of `Tensor.to`."""
        array = self._data
        target = tocha.empty(0, dtype=self.dtype, device=self.device).to(*args, **kwargs)
        if target.dtype is self.dtype and target.device is self.device:
            return self
        return _wrap(array.with_values(array.values.to(device=target.device, dtype=target.dtype)))

    def zero_(self) -> Tensor:
        """Remove every entry, in place (the size stays)."""
        self._data.clear()
        return self

    # what the sparse layout has no memory for
    def stride(self, dim: int | None = None):
        self._data.check_strided("strides")
        return Tensor.stride(self) if dim is None else Tensor.stride(self, dim)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        self._data.check_strided("is_contiguous")
        return False

    def numpy(self, *, force: bool = False):
        raise TypeError(
            f"can't convert {self._data.title} layout tensor to numpy. Use Tensor.to_dense() first."
        )

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    tolist = data_ptr

    def storage_offset(self) -> int:
        return 0

    def untyped_storage(self):
        raise NotImplementedError(f"Cannot access storage of {self._data.impl}")

    storage = untyped_storage

    def __reduce_ex__(self, protocol):
        kind, parts = self._data.record()
        return _rebuild, (kind, tuple(p.detach() if isinstance(p, Tensor) else p for p in parts))


def _rebuild(kind, parts) -> Tensor:
    """A sparse tensor from its `record` (unpickling, ``copy.deepcopy``)."""
    if kind is sparse_coo:
        return _make(*parts)
    from ._compressed import make_compressed

    compressed, plain, values, shape = parts
    return make_compressed(compressed, plain, values, shape, kind)


def _wrap(array: SparseArray) -> Tensor:
    t = wrap(array, array.values._device)
    t.__class__ = SparseTensor
    return t


def _make(indices: Tensor, values: Tensor, shape, coalesced: bool) -> Tensor:
    return _wrap(COO(indices, values, shape, coalesced))


# -- construction ----------------------------------------------------------------------------
def sparse_coo_tensor(
    indices: Any,
    values: Any = None,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> Tensor:
    """A sparse COO tensor with `values` at `indices` (``(sparse_dim, nnz)``), as
    ``torch.sparse_coo_tensor``. Without `size`, each sparse dimension is one past its
    largest index and the dense dimensions are the values' trailing ones. Repeated indices
    are allowed (the tensor is then uncoalesced: their values add up). With `indices`
    alone, it is the size of an empty sparse tensor (``sparse_coo_tensor((2, 3))``)."""
    if dtype is not None and not isinstance(dtype, tocha.dtype):
        raise TypeError(
            f"sparse_coo_tensor(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}"
        )
    if check_invariants is None:
        check_invariants = _invariants.STATE.enabled
    if values is None:
        if isinstance(indices, Tensor) or not all(isinstance(n, int) for n in indices):
            raise TypeError(
                "sparse_coo_tensor(): argument 'size' (position 1) must be tuple of ints, not "
                f"{type(indices).__name__}"
            )
        size, dtype = tuple(indices), dtype or tocha.get_default_dtype()
        if any(n < 0 for n in size):
            raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
        indices = tocha.zeros((len(size), 0), dtype=tocha.int64, device=device)
        values = tocha.zeros(0, dtype=dtype, device=device)
    if isinstance(indices, Tensor):
        if indices.dtype is not tocha.int64:
            raise RuntimeError("indices must be an int64 tensor")
        idx = indices if device is None else indices.to(device)
    else:
        idx = tocha.tensor(indices, dtype=tocha.int64, device=device)
    if isinstance(values, Tensor):
        vals = values.to(device=device or values.device, dtype=dtype or values.dtype)
    else:
        vals = tocha.tensor(values, dtype=dtype, device=device)
    if idx.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if vals.dim() == 0:
        vals = vals.reshape(1)
    nnz = idx.shape[1]
    if vals.shape[0] != nnz:
        raise RuntimeError(
            "indices and values must have same nnz, but got nnz from indices: "
            f"{nnz}, nnz from values: {vals.shape[0]}"
        )
    sparse_dim = idx.shape[0]
    host = idx._host()
    if size is None:
        top = host.max(axis=1) + 1 if nnz else np.zeros(sparse_dim, np.int64)
        shape = tuple(int(n) for n in top) + tuple(vals.shape[1:])
    else:
        shape = tuple(operator.index(n) for n in size)
        if len(shape) != sparse_dim + vals.dim() - 1:
            raise RuntimeError(
                f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                f"({vals.dim() - 1}), but got {len(shape)}"
            )
        if tuple(shape[sparse_dim:]) != tuple(vals.shape[1:]):
            raise RuntimeError(
                f"values has incorrect size, expected {list((nnz,) + shape[sparse_dim:])}, "
                f"got {list(vals.shape)}"
            )
        if check_invariants and nnz:
            top = host.max(axis=1)
            for d in range(sparse_dim):
                if top[d] >= shape[d]:
                    raise RuntimeError(
                        f"size is inconsistent with indices: for dim {d}, size is {shape[d]} "
                        f"but found index {top[d]}"
                    )
    if check_invariants and nnz and host.min() < 0:
        raise RuntimeError(f"found negative index {host.min()} for dim {host.min(axis=1).argmin()}")
    coalesced = bool(is_coalesced) or nnz < 2 and is_coalesced is None
    if check_invariants and is_coalesced and nnz > 1:
        key = _linear_index(COO(idx, vals, shape, False))
        if (key[1:] <= key[:-1]).any():
            raise RuntimeError(
                "cannot set is_coalesced to true if indices correspond to uncoalesced COO tensor"
            )
    if math.prod(shape) >= 2**63:
        raise RuntimeError("numel: integer multiplication overflow")
    if requires_grad:
        vals = vals.detach().requires_grad_(True)
    return _make(idx, vals, shape, coalesced)


def _clear_coo(coo: COO, shape: tuple, sd: int) -> None:
    """Empty `coo` in place and give it `shape`, with `sd` sparse dimensions."""
    values = coo.values
    coo.indices = tocha.zeros(sd, 0, dtype=tocha.int64, device=values.device)
    coo.values = tocha.zeros((0,) + shape[sd:], dtype=values.dtype, device=values.device)
    coo.shape, coo.coalesced = shape, True


def _linear_index(coo: COO) -> np.ndarray:
    dims = coo.shape[: coo.sparse_dim]
    host = coo.indices._host()
    if not host.size:
        return np.zeros(host.shape[1], np.int64)
    return np.ravel_multi_index(tuple(host), dims) if dims else np.zeros(host.shape[1], np.int64)


def _coalesce(coo: COO) -> COO:
    if coo.coalesced:
        return coo
    key = _linear_index(coo)
    unique, inverse = np.unique(key, return_inverse=True)
    dev = coo.values._device
    dims = coo.shape[: coo.sparse_dim]
    idx_host = np.stack(np.unravel_index(unique, dims)) if dims else np.zeros((0, unique.size))
    indices = tocha.tensor(idx_host.astype(np.int64).reshape(len(dims), -1), device=dev)
    values = coo.values
    zeros = tocha.zeros(
        (unique.size,) + tuple(values.shape[1:]), dtype=values.dtype, device=values.device
    )
    summed = zeros.index_add(0, tocha.tensor(inverse.reshape(-1), device=dev), values)
    return COO(indices, summed, coo.shape, True)


def _to_dense(coo: COO) -> Tensor:
    values = coo.values
    dense = tocha.zeros(coo.shape, dtype=values.dtype, device=values.device)
    if not coo.nnz:
        return dense
    return dense.index_put(tuple(coo.indices.unbind(0)), values, accumulate=True)


def _add_sparse(a: COO, b: COO) -> COO:
    """The sum of two sparse tensors of one size: the values added when both hold the same
    indices tensor, the merged entries (coalesced) when both are coalesced, else the entries
    of both (uncoalesced), as PyTorch."""
    if a.sparse_dim != b.sparse_dim:
        raise RuntimeError(
            "add: expected 'self' and 'other' to have same density, but 'self' has "
            f"{a.sparse_dim} sparse dimensions while 'other' has {b.sparse_dim} sparse dimensions"
        )
    if a.shape != b.shape:
        raise RuntimeError(
            f"add: expected sizes of 'self' and 'other' to match, but {list(a.shape)} != "
            f"{list(b.shape)}"
        )
    if a.indices is b.indices:
        return COO(a.indices, a.values + b.values, a.shape, a.coalesced)
    joined = COO(
        tocha.cat([a.indices, b.indices], 1), tocha.cat([a.values, b.values], 0), a.shape, False
    )
    return _coalesce(joined) if a.coalesced and b.coalesced else joined


def _mm(coo: COO, dense: Tensor) -> Tensor:
    """A 2-D sparse matrix times a dense one, from dense ops on the values (so that autograd
    reaches both the values and `dense`)."""
    if coo.sparse_dim != 2 or coo.values.dim() != 1:
        raise RuntimeError(f"addmm: matrices expected, got {coo.sparse_dim}D tensor")
    if dense.dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {dense.dim()}D tensor")
    n, k = coo.shape
    if dense.shape[0] != k:
        raise RuntimeError(
            f"addmm: Argument #3 (dense): Expected dim 0 size {k}, got {dense.shape[0]}"
        )
    if dense.dtype is not coo.values.dtype:
        raise RuntimeError(
            f"expected scalar type {_name(coo.values.dtype)} but found {_name(dense.dtype)}"
        )
    rows, cols = coo.indices.unbind(0)
    products = coo.values.unsqueeze(1) * dense.index_select(0, cols)
    out = tocha.zeros((n, dense.shape[1]), dtype=dense.dtype, device=dense.device)
    return out.index_add(0, rows, products)


def _name(d) -> str:
    return _dtype.TITLE[d]


# -- public functions ------------------------------------------------------------------------
def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` for a sparse COO `mat1`, as ``torch.sparse.mm``: dense for a dense
    `mat2` (gradients reach `mat2` and `mat1`'s values), sparse for a sparse one."""
    for position, (name, value) in enumerate((("mat1", mat1), ("mat2", mat2)), 1):
        if not isinstance(value, Tensor):
            raise not_a_tensor("_sparse_mm", value, name, position)
    coo = mat1._data
    if type(coo) is not COO:
        return tocha.mm(mat1, mat2)
    if type(mat2._data) is COO:  # sparse @ sparse: a coalesced sparse product
        return to_sparse(_mm(coo, _to_dense(mat2._data)))
    return _mm(coo, mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0, alpha: float = 1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse COO `mat1`, as
    ``torch.sparse.addmm``."""
    product = mm(mat1, mat2)
    scaled = product if alpha == 1 else product * alpha
    return scaled + (mat if beta == 1 else mat * beta)


def sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """The sum of a sparse tensor's entries: all of them (a dense 0-dim tensor), or over
    `dim`, as ``torch.sparse.sum``: sparse while sparse dimensions remain, else dense."""
    coo = _sparse(input, "coalesce" if isinstance(input._data, SparseArray) else "sparse.sum")
    values = coo.values if dtype is None else coo.values.to(dtype)
    if dim is None:
        return values.sum()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = len(coo.shape)
    dims = sorted({d % n if -n <= d < n else _bad_dim(d, n) for d in dims})
    sd = coo.sparse_dim
    dense_dims = tuple(d - sd + 1 for d in dims if d >= sd)
    if dense_dims:
        values = values.sum(dense_dims)
    kept = [d for d in range(sd) if d not in dims]
    if not kept:
        return values.sum(0)
    shape = tuple(s for d, s in enumerate(coo.shape) if d not in dims)
    indices = coo.indices[kept]
    return _make_coalesced(COO(indices, values, shape, False))


def _bad_dim(d: int, n: int):
    raise IndexError(
        f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
    )


def _make_coalesced(coo: COO) -> Tensor:
    return _wrap(_coalesce(coo))


# -- Tensor methods --------------------------------------------------------------------------
def to_sparse(
    self: Tensor,
    sparse_dim: int | None = None,
    *,
    layout: Any = None,
    blocksize: Any = None,
    dense_dim: int | None = None,
) -> Tensor:
    """This tensor in a sparse `layout` (default: COO). As COO: coalesced, over its first
    `sparse_dim` dimensions (default: all), the entries kept those whose dense part is not
    all zero. As CSR, CSC, BSR (`blocksize`) or BSC: see ``to_sparse_csr``..."""
    data = self._data
    if layout is not None and layout is not sparse_coo:
        if layout not in _compressed.LAYOUTS:
            raise RuntimeError(
                f"to_sparse: layout {layout} is not a sparse layout (sparse_coo, sparse_csr, "
                "sparse_csc, sparse_bsr or sparse_bsc)"
            )
        if sparse_dim is not None:
            raise RuntimeError("to_sparse: sparse_dim is supported only for layout sparse_coo")
        if (
            layout in _compressed.BLOCK_LAYOUTS
            and blocksize is None
            and (not isinstance(data, _compressed.Compressed) or data.layout is not layout)
        ):
            raise RuntimeError(
                f"{'dense_to_sparse' if type(data) is not COO else 'to_sparse'}: conversion from "
                f"{layout_title(data)} to {_compressed.TITLES[layout]} without blocksize "
                "argument given is not supported"
            )
        return _compressed.to_layout(self, layout, blocksize, dense_dim)
    if type(data) is COO:
        return self
    if type(data) is _compressed.Compressed:
        return _compressed.compressed_to_coo(self, sparse_dim)
    sd = self.dim() if sparse_dim is None else operator.index(sparse_dim)
    if not 0 <= sd <= self.dim():
        raise RuntimeError(f"sparse_dim argument must be in [0,{self.dim()}] but got {sd}")
    host = self._host()
    mask = host != 0 if sd == host.ndim else (host != 0).reshape(host.shape[:sd] + (-1,)).any(-1)
    where = np.nonzero(mask)
    indices = tocha.tensor(np.stack(where).reshape(sd, -1).astype(np.int64), device=self.device)
    values = self[tuple(indices.unbind(0))] if sd else self.unsqueeze(0)
    return _make(indices, values, tuple(self.shape), True)


def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
    """This tensor as a dense (strided) tensor; itself if it is dense."""
    if masked_grad is not None and masked_grad is not True and masked_grad is not False:
        raise TypeError(
            f"to_dense(): argument 'masked_grad' must be bool, not {type(masked_grad).__name__}"
        )
    data = self._data
    if type(data) is COO:
        dense = _to_dense(data)
        return dense if dtype is None else dense.to(dtype)
    if isinstance(data, SparseArray):
        return data.dense(dtype)
    return self if dtype is None else self.to(dtype)


def coalesce(self: Tensor) -> Tensor:
    """The sparse tensor with sorted, unique indices (values at repeated indices summed)."""
    coo = _sparse(self, "coalesce")
    return self if coo.coalesced else _make_coalesced(coo)


def is_coalesced(self: Tensor) -> bool:
    return _sparse(self, "is_coalesced").coalesced


def indices(self: Tensor) -> Tensor:
    """The indices of a coalesced sparse tensor, ``(sparse_dim, nnz)``."""
    coo = _sparse(self, "indices")
    if not coo.coalesced:
        raise RuntimeError(
            "Cannot get indices on an uncoalesced tensor, please call .coalesce() first"
        )
    return coo.indices


def values(self: Tensor) -> Tensor:
    """The values of a coalesced sparse COO tensor, ``(nnz, *dense_shape)``, or of a
    compressed one, ``(*batch, nnz, *block, *dense_shape)``."""
    if type(self._data) is _compressed.Compressed:
        return self._data.values
    coo = _sparse(self, "values", "sparse tensor")
    if not coo.coalesced:
        raise RuntimeError(
            "Cannot get values on an uncoalesced tensor, please call .coalesce() first"
        )
    return coo.values


def _indices(self: Tensor) -> Tensor:
    """The indices as stored (coalesced or not)."""
    return _coo_only(self, "_indices").indices


def _values(self: Tensor) -> Tensor:
    """The values as stored (coalesced or not)."""
    return _coo_only(self, "_values").values


def _coo_only(self: Tensor, name: str) -> COO:
    """The COO of a sparse COO tensor; PyTorch's errors for the other layouts (the op
    exists for COO only)."""
    data = self._data
    if type(data) is _compressed.Compressed:
        raise NotImplementedError(data.unsupported(name))
    return _sparse(self, name)


def _nnz(self: Tensor) -> int:
    """The number of specified entries (per batch, for a compressed tensor)."""
    coo = self._data
    if not isinstance(coo, SparseArray):
        raise NotImplementedError(
            f"Could not run 'aten::_nnz' with arguments from the '{self.device.type.upper()}' "
            "backend."
        )
    return coo.nnz


def sparse_dim(self: Tensor) -> int:
    data = self._data
    return data.sparse_dim if isinstance(data, SparseArray) else 0


def dense_dim(self: Tensor) -> int:
    data = self._data
    if type(data) is COO:
        return data.values.dim() - 1
    return data.dense_dim if isinstance(data, SparseArray) else self.dim()


def _is_sparse(self: Tensor) -> bool:
    return type(self._data) is COO


for _fn in (
    to_sparse,
    to_dense,
    coalesce,
    is_coalesced,
    indices,
    values,
    _indices,
    _values,
    _nnz,
    sparse_dim,
    dense_dim,
):
    export(_fn, method=True, function=False)
Tensor.is_sparse = property(_is_sparse, doc="Whether the tensor is a sparse COO tensor.")
export(sparse_coo_tensor)

# using the above; the kernels and routines are published on import
from . import _compressed, _compressed_kernels, _invariants, _kernels, _routines  # noqa: E402, F401
from ._compressed import sampled_addmm  # noqa: E402
from ._invariants import check_sparse_tensor_invariants  # noqa: E402
from ._routines import LEGACY_TYPES, log_softmax, softmax, spdiags  # noqa: E402

globals().update(LEGACY_TYPES)  # tocha.sparse.FloatTensor...

# Hidden from type checkers, so that they report the names tocha lacks.
if not TYPE_CHECKING:

    def __getattr__(name):
        from tocha.library import missing_attribute

        raise missing_attribute(__name__, name)
