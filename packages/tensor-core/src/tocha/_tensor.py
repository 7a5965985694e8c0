"""The Tensor: one backend array, its device, and the slots autograd and views need.

Operators and methods are attached by the op modules in `tocha._ops` (each family declares
its public functions and their Tensor methods in one place); this module holds only what
every tensor is: metadata, conversions and the Python protocols.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Iterator
from typing import Any, SupportsIndex, overload

import numpy as np

from . import _device, _dtype
from ._backend import backend_of
from ._device import CPU
from ._grad_mode import STATE as _GRAD_STATE
from ._memory_format import CONTIGUOUS as _CONTIGUOUS
from ._memory_format import format_arg, is_contiguous_as, positional_only_error, preserved_strides
from ._stack import user_stacklevel

__all__ = ["Tensor", "Size", "wrap", "is_tensor"]


class Size(tuple[int, ...]):
    """A tensor's shape: a tuple of ints with `numel()`, as `torch.Size`. Its items are
    ints: integers of other types (NumPy's, bools, integer tensors) are converted, anything
    else is a TypeError. Concatenating or repeating it gives a Size."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        size = _tuple_new(cls, sizes)
        for item in size:
            if type(item) is not int:
                return _tuple_new(cls, [_size_item(i, v) for i, v in enumerate(size)])
        return size

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"{_dtype.SHOWN_MODULE}.Size([{', '.join(map(str, self))}])"

    @overload
    def __getitem__(self, item: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, item: slice) -> Size: ...
    def __getitem__(self, item: SupportsIndex | slice) -> int | Size:
        result = tuple.__getitem__(self, item)
        return _tuple_new(Size, result) if isinstance(item, slice) else result

    def __add__(self, other: tuple[int, ...]) -> Size:
        if not isinstance(other, tuple):
            raise TypeError(
                f"can only concatenate tuple (not {type(other).__name__}) to "
                f"{_dtype.SHOWN_MODULE}.Size"
            )
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: tuple[int, ...]) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, times: SupportsIndex) -> Size:
        return _tuple_new(Size, tuple.__mul__(self, times))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


_tuple_new = tuple.__new__


def _size_item(position: int, item) -> int:
    """An item of a Size as an int: integers of any type convert (bools included), except
    a symbolic size (an int subclass, as export's), which stays itself."""
    if isinstance(item, int) and not isinstance(item, bool):
        return item
    try:
        return operator.index(item)
    except TypeError:
        raise TypeError(
            f"{_dtype.SHOWN_MODULE}.Size() takes an iterable of 'int' (item {position} is "
            f"'{type(item).__name__}')"
        ) from None


_new = object.__new__


def _autograd():
    """tocha.autograd, imported on first need; ImportError naming the distribution if absent."""
    try:
        import tocha.autograd as autograd
    except ModuleNotFoundError as exc:
        if exc.name not in ("tocha.autograd", "tocha"):
            raise
        from ._missing import install_hint

        raise ImportError(
            "requires_grad=True needs tocha-autograd, which is not installed: "
            + install_hint("tocha-autograd")
        ) from None
    return autograd


def _multiprocessing():
    """tocha.multiprocessing, imported on first need (it attaches `Tensor.share_memory_` and
    `Tensor.is_shared`); ImportError naming the distribution if absent."""
    try:
        import tocha.multiprocessing as multiprocessing
    except ModuleNotFoundError as exc:
        if exc.name not in ("tocha.multiprocessing", "tocha"):
            raise
        from ._missing import install_hint

        raise ImportError(
            "shared memory tensors need tocha-mp, which is not installed: "
            + install_hint("tocha-mp")
        ) from None
    return multiprocessing


class Tensor:
    """A multi-dimensional array on a device, as `torch.Tensor`.

    Slots: ``_data`` the backend array; ``_device`` its interned device; ``_ag`` autograd's
    metadata (None for a tensor that takes no part in autograd); ``_base`` the tensor this
    one is a view of; ``_vc`` the version counter (a one-element list shared with views,
    made on first need).
    """

    __slots__ = ("_data", "_device", "_ag", "_base", "_vc", "__weakref__")
    __array_priority__ = 1000

    def __new__(cls, *args, device=None):
        """The legacy constructor, as ``torch.Tensor(...)``: ``Tensor()`` is empty,
        ``Tensor(2, 3)`` or ``Tensor(size)`` uninitialised, ``Tensor(data)`` a copy of `data`
        in the default dtype, ``Tensor(tensor)`` an alias. (Ops make tensors with `wrap`.)"""
        from ._ops.legacy import legacy_new

        return legacy_new(cls, _dtype.get_default_dtype(), args, device)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        TENSOR_TYPES.add(cls)
        for hook in SUBCLASS_HOOKS:
            hook(cls)

    # -- metadata -------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return _tuple_new(Size, self._data.shape)

    @overload
    def size(self, dim: None = None) -> Size: ...
    @overload
    def size(self, dim: int) -> int: ...
    def size(self, dim: int | None = None) -> Size | int:
        """The shape, or the size of one dimension."""
        if dim is None:
            return _tuple_new(Size, self._data.shape)
        return self._data.shape[_sized_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.FROM_NP[self._data.dtype]

    @property
    def device(self) -> _device.device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        """Whether this is a meta tensor: a shape and dtype without data."""
        return self._device.type == "meta"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @overload
    def stride(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...
    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Strides in elements, as PyTorch reports them."""
        item = self._data.itemsize
        strides = tuple(s // item for s in self._data.strides)
        if self._data.size == 0 and not any(strides):  # NumPy's strides of a new empty array
            strides = _contiguous_strides(self._data.shape)
        if dim is None:
            return strides
        return strides[_sized_dim(dim, self._data.ndim)]

    def storage_offset(self) -> int:
        return backend_of(self._device).storage_offset(self._data)

    def data_ptr(self) -> int:
        return backend_of(self._device).data_ptr(self._data)

    def is_contiguous(self, *args, memory_format=_CONTIGUOUS) -> bool:
        """Whether the elements lie densely in memory in the order `memory_format` names
        (row-major by default; size-1 dims' strides do not count)."""
        if memory_format is _CONTIGUOUS and not args:
            return self._data.flags.c_contiguous
        if args:
            raise positional_only_error("is_contiguous", args)
        return is_contiguous_as(self._data, format_arg("is_contiguous", memory_format, None))

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    @property
    def is_leaf(self) -> bool:
        ag = self._ag
        return ag is None or ag.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        ag = self._ag
        return ag is not None and ag.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value or self._ag is not None:
            _autograd().set_requires_grad(self, bool(value))

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        ag = self._ag
        if (
            requires_grad is True
            and ag is not None
            and ag.requires_grad
            and ag.grad_fn is None
            and self._vc is not INFERENCE_VC
        ):  # a leaf that requires grad already (a training loop's every step)
            return self
        if requires_grad is not True and requires_grad is not False:
            raise TypeError(
                "requires_grad_(): argument 'requires_grad' must be bool, not "
                f"{type(requires_grad).__name__}"
            )
        if requires_grad and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        """The gradient backward accumulated into this leaf (None before; a tensor computed
        by autograd gets one only with `retain_grad`, and reading it without warns)."""
        ag = self._ag
        if ag is None:
            return None
        grad = ag.grad
        if grad is None and ag.grad_fn is not None and not ag.retains_grad:
            _warn_non_leaf_grad()
        return grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is None:
            ag = self._ag
            if ag is not None:
                ag.grad = None
            return
        _autograd().set_grad(self, value)

    @property
    def grad_fn(self) -> Any:
        ag = self._ag
        return None if ag is None else ag.grad_fn

    @property
    def data(self) -> Tensor:
        """The same values, detached from autograd (shares memory; in-place changes made
        through it are not seen by autograd's version checks)."""
        return wrap(self._data, self._device)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data
        self._device = value._device

    @property
    def _version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc[0]

    def is_inference(self) -> bool:
        """Whether the tensor was made inside `inference_mode` (it can then never join an
        autograd graph, nor be modified in place outside inference mode)."""
        return self._vc is INFERENCE_VC

    def share_memory_(self) -> Tensor:
        """Move the storage to shared memory (tocha-mp, imported here, replaces this method)."""
        _multiprocessing()
        return self.share_memory_()

    def is_shared(self) -> bool:
        """Whether the storage is in shared memory (tocha-mp replaces this method)."""
        _multiprocessing()
        return self.is_shared()

    # -- conversions ----------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array; shares memory for CPU tensors."""
        if self._device is not CPU:
            if not force:
                raise TypeError(
                    f"can't convert {self._device.type} device type tensor to numpy. Use "
                    "Tensor.cpu() to copy the tensor to host memory first."
                )
            return backend_of(self._device).to_host(self._data)
        if self.requires_grad and not force and _GRAD_STATE.grad_enabled:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if self._data.dtype.name == "bfloat16" and not force:
            raise TypeError("Got unsupported ScalarType BFloat16")
        if not isinstance(self._data, np.ndarray):
            # A kernel left a NumPy scalar: hold a 0-d array instead, which the caller may write.
            self._data = np.asarray(self._data)
        return self._data

    def _host(self) -> np.ndarray:
        if self._device is CPU:
            return self._data
        return backend_of(self._device).to_host(self._data)

    def item(self) -> int | float | bool:
        """The value of a one-element tensor as a Python number (complex for a complex tensor:
        the annotation is PyTorch's)."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        if self._device is not CPU and self._device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return _to_python(self._host().reshape(()).item(), self._data.dtype)

    def tolist(self) -> Any:
        """The data as (nested) Python lists of numbers."""
        host = self._host()
        if host.dtype.name == "bfloat16":
            host = host.astype(np.float32)
        return host.tolist()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if self._device is CPU:
            host = self.numpy()
        else:
            host = self._host()
        if dtype is not None and host.dtype != dtype:
            if copy is False:
                raise ValueError("a copy is needed to convert to the requested dtype")
            return host.astype(dtype)
        return host.copy() if copy else host

    def __array_wrap__(self, array, context=None, return_scalar=False) -> Tensor:
        """The result of a NumPy function of this tensor, as a CPU tensor (``np.sin(t)``,
        ``t + ndarray``); a boolean result becomes uint8, as in PyTorch."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return wrap(np.asarray(array), CPU)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        kwargs = {} if max_version is None else {"max_version": max_version}
        if copy is not None:
            kwargs["copy"] = copy
        if stream is not None:
            kwargs["stream"] = stream
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __deepcopy__(self, memo) -> Tensor:
        """A copy with its own memory, as `copy.deepcopy` makes of a leaf: its
        ``requires_grad`` and its ``.grad`` (copied) kept. A tensor computed by autograd
        cannot be deep-copied."""
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment.  If you were attempting to deepcopy a module, "
                "this may be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        from copy import deepcopy

        func, args, *state = self.__reduce_ex__(4)
        new = func(*deepcopy(args, memo))
        memo[id(self)] = new
        if state and state[0] is not None:
            new.__setstate__(deepcopy(state[0], memo))
        if self.grad is not None:
            new.grad = deepcopy(self.grad, memo)
        return new

    def __reduce_ex__(self, protocol):
        host = self._host()
        strides = preserved_strides(host)
        if strides is None:
            state = (host, self._device.type, self._device.index, self.requires_grad)
            return (_rebuild, state)
        # a dense layout in another order of dims (channels-last): its memory, row-major, and
        # the permutation back, so that the copy keeps the layout (NumPy would pickle it
        # row-major)
        order = sorted(range(host.ndim), key=lambda d: -strides[d])
        memory = host.transpose(order)
        back = tuple(order.index(d) for d in range(host.ndim))
        state = (memory, self._device.type, self._device.index, self.requires_grad, back)
        return (_rebuild, state)

    # -- Python protocols -----------------------------------------------------------------
    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            amount = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {amount} is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self._scalar_for("double"))

    def __int__(self) -> int:
        return int(self._scalar_for("int64_t"))

    def __complex__(self) -> complex:
        return complex(self._scalar_for("complex"))

    def __index__(self) -> int:
        if self._data.dtype.kind not in "biu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def _scalar_for(self, kind: str) -> int | float | bool:
        """The one element, for ``float``/``int``/``complex`` (`kind`: the C type PyTorch
        names): a complex number with an imaginary part does not convert to a real one."""
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self.requires_grad:
            _warn_scalar_of_grad()
        value = self.item()
        if kind != "complex" and type(value) is complex:
            if value.imag:
                raise RuntimeError(f"value cannot be converted to type {kind} without overflow")
            return value.real
        return value

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        sparse_repr = getattr(self._data, "repr_tensor", None)
        if sparse_repr is not None:
            return sparse_repr(self)
        from ._printing import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        """A 0-dim tensor formats as its number (``f"{loss}"`` is ``0.5``, as PyTorch); any
        other tensor as its repr, with no format spec."""
        if self.dim() == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    @property
    def T(self) -> Tensor:
        ndim = self._data.ndim
        if ndim != 2:
            _warn_reversed_t(ndim == 0)
        return self.permute(*range(ndim - 1, -1, -1))

    @property
    def mT(self) -> Tensor:
        if self._data.ndim < 2:
            raise RuntimeError(
                "tensor.mT is only supported on matrices or batches of matrices. "
                f"Got {self._data.ndim}-D tensor."
            )
        return self.transpose(-2, -1)

    @property
    def H(self) -> Tensor:
        ndim = self._data.ndim
        if ndim not in (0, 2):
            raise RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor."
            )
        transposed = self.permute(*range(ndim - 1, -1, -1))
        return transposed.conj() if self.is_complex() else transposed

    @property
    def is_quantized(self) -> bool:
        """Whether the tensor is quantized: never, in tocha."""
        return False

    @property
    def mH(self) -> Tensor:
        return self.mT.conj() if self.is_complex() else self.mT


@functools.cache
def _warn_reversed_t(zero_dim: bool) -> None:
    """PyTorch's deprecation of ``x.T`` on tensors that are not matrices, once a program."""
    if zero_dim:
        message = (
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
        )
    else:
        message = (
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
            "to reverse the dimensions of a tensor."
        )
    warnings.warn(message, UserWarning, stacklevel=user_stacklevel())


def _warn_non_leaf_grad() -> None:
    """PyTorch's warning, each time, when the .grad of a non-leaf is read."""
    warnings.warn(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
        "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
        "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf "
        "Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf "
        "Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


@functools.cache
def _warn_scalar_of_grad() -> None:
    """PyTorch's warning, once a program, when ``float``/``int`` reads a tensor that
    requires grad (``item()`` does not warn)."""
    warnings.warn(
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
        "behavior.\nConsider using tensor.detach() first.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


# Tensor and its subclasses (nn.Parameter...): the dispatcher's fast paths test membership.
TENSOR_TYPES = {Tensor}
# Called with each Tensor subclass as it is defined (tocha-mp registers its pickle reducers).
SUBCLASS_HOOKS: list = []


# The version counter of tensors made in inference mode: never bumped, never saved.
INFERENCE_VC = [0]


def wrap(data, dev) -> Tensor:
    """A new Tensor around a backend array (the one way kernels' results become Tensors)."""
    t = _new(Tensor)
    t._data = data
    t._device = dev
    t._ag = None
    t._base = None
    t._vc = INFERENCE_VC if _GRAD_STATE.inference else None
    return t


def is_tensor(obj) -> bool:
    """Whether obj is a tocha Tensor."""
    return isinstance(obj, Tensor)


def _rebuild(array, device_type, device_index, requires_grad, dims=None):
    from ._device import device

    if dims is not None:
        array = array.transpose(dims)
    dev = device(device_type, device_index)
    backend = backend_of(dev)
    data = array if dev is CPU else backend.from_host(array, dev)
    t = wrap(data, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _to_python(value, np_dtype):
    if np_dtype.name == "bfloat16":
        return float(value)
    return value


def _contiguous_strides(shape) -> tuple:
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def dims_by_stride(array) -> tuple:
    """`array`'s dims from the largest stride to the smallest (ties in dim order): its
    memory order."""
    strides = array.strides
    return tuple(sorted(range(array.ndim), key=lambda d: -abs(strides[d])))


def row_major_memory(array):
    """`array` with its dims ordered by stride, when that makes it C-contiguous: the same
    memory, first element first, as a row-major array (an array that owns its memory is
    laid out so by `clone` and the ``*_like`` factories in any order of dims). Else None."""
    if array.flags.c_contiguous:
        return array
    dense = array.transpose(dims_by_stride(array))
    return dense if dense.flags.c_contiguous else None


def _dim_integer(dim) -> int:
    """`dim` as an int when it is an integer of another type (a NumPy integer, a 0-dim
    integer tensor); TypeError otherwise."""
    if isinstance(dim, bool) or not hasattr(type(dim), "__index__"):
        raise TypeError(f"dim must be int, not {type(dim).__name__}")
    if isinstance(dim, Tensor) and dim.is_floating_point():
        raise TypeError(f"dim must be int, not {dim.dtype}")
    return dim.__index__()


def _sized_dim(dim: int, ndim: int) -> int:
    """`_wrap_dim` for reading one dim's size or stride, which a 0-dim tensor has none of."""
    if ndim == 0 and type(dim) is int:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim in range(ndim) from a possibly negative one; IndexError as PyTorch's, and a
    TypeError for what is not an integer (bool and None included)."""
    n = ndim if ndim > 0 else 1
    if type(dim) is not int:
        dim = _dim_integer(dim)
    if not -n <= dim < n:
        if not -(2**63) <= dim < 2**63:
            raise ValueError("Overflow when unpacking long long")
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n if ndim else 0
