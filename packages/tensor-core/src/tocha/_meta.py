"""The meta device: tensors with a shape, a dtype and strides, and no data.

A model built on the meta device (``with tocha.device("meta"):``) costs no memory; its
parameters get real storage later from `nn.Module.to_empty` or
``load_state_dict(..., assign=True)``. That is how libraries load large checkpoints.
An op on meta tensors computes only its result's shape and dtype.

The backend array is `MetaArray`. It implements NumPy's dispatch protocols
(``__array_ufunc__``, ``__array_function__``), so every op's generic kernel runs on it
unchanged:
- Elementwise ops, matmul, joins and reductions work out their shape and dtype without
  touching elements.
- Other functions run on stand-ins: NumPy arrays of the right shape whose strides are all 0,
  so they own one element. Their results become MetaArrays again.
- Each MetaArray stands for an array whose elements all equal one `value` (0 unless an op
  says otherwise). A kernel's checks of its inputs (``if (i >= n).any()``) are
  answered for that array, so they pass for the usual inputs. No value ever leaves the
  backend: ``item()``, copying to another device and the ops whose result shape depends on
  values (``nonzero``, indexing by a boolean mask, ``unique``) raise NotImplementedError,
  as PyTorch's meta tensors do.
"""

from __future__ import annotations

import operator
from types import SimpleNamespace

import numpy as np

from ._backend import Backend
from ._device import device
from ._tensor import _contiguous_strides as _element_strides

__all__ = ["MetaArray", "MetaBackend", "register"]

META = device("meta")


class NoData(Exception):
    """A meta kernel needed values: the backend turns it into NotImplementedError."""


def _contiguous_strides(shape, itemsize: int) -> tuple:
    """C-order byte strides."""
    return tuple(s * itemsize for s in _element_strides(shape))


class MetaArray:
    """An array with a shape, a dtype and byte strides but no elements: the meta backend's
    array type. NumPy functions and ufuncs called on it return MetaArrays."""

    __slots__ = ("shape", "dtype", "strides", "value", "offset")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, shape, dtype, strides=None, value=0, offset=0):
        self.shape = tuple(operator.index(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.strides = (
            _contiguous_strides(self.shape, self.dtype.itemsize)
            if strides is None
            else tuple(strides)
        )
        self.value = value
        self.offset = offset  # in elements, from the start of the storage (views keep it)

    # -- what NumPy arrays tell about themselves ---------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def base(self):
        return None

    @property
    def flags(self) -> SimpleNamespace:
        c_order = _contiguous_strides(self.shape, self.itemsize)
        f_order = tuple(reversed(_contiguous_strides(self.shape[::-1], self.itemsize)))
        small = self.size <= 1
        return SimpleNamespace(
            c_contiguous=small or self.strides == c_order,
            f_contiguous=small or self.strides == f_order,
            writeable=True,
            owndata=True,
        )

    @property
    def T(self) -> MetaArray:
        return self.transpose()

    @property
    def real(self) -> MetaArray:
        return _to_meta(self.standin().real)

    @property
    def imag(self) -> MetaArray:
        return _to_meta(self.standin().imag)

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # -- the stand-in value, for kernels' own checks -----------------------------------
    def standin(self) -> np.ndarray:
        """A NumPy array of this shape and dtype, every element `value`, owning one element."""
        one = np.full(1, self.value).astype(self.dtype, casting="unsafe")
        return np.lib.stride_tricks.as_strided(one, self.shape, (0,) * self.ndim, writeable=True)

    def _scalar(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous")
        return self.standin().reshape(()).item()

    def __bool__(self) -> bool:
        return bool(self._scalar())

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __index__(self) -> int:
        return operator.index(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def _no_data(self, *args, **kwargs):
        raise NoData

    __array__ = tolist = tobytes = __dlpack__ = _no_data

    def item(self, *args):
        return self.standin().item(*args)

    # -- views and copies: shapes and strides worked out here --------------------------
    def _like(self, shape, dtype=None, strides=None, offset=0) -> MetaArray:
        dtype = self.dtype if dtype is None else dtype
        return MetaArray(shape, dtype, strides, self.value, offset)

    def reshape(self, *shape, order="C", copy=None) -> MetaArray:
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        offset = self.offset if self.flags.c_contiguous else 0  # a view, else a copy
        return self._like(_reshaped(self.shape, shape), offset=offset)

    def transpose(self, *axes) -> MetaArray:
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = () if axes[0] is None else tuple(axes[0])
        axes = _normalize_axes(axes, self.ndim) if axes else tuple(range(self.ndim))[::-1]
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError("axes don't match array")
        shape = tuple(self.shape[a] for a in axes)
        return self._like(shape, strides=tuple(self.strides[a] for a in axes), offset=self.offset)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True) -> MetaArray:
        value = np.full((), self.value).astype(self.dtype).astype(dtype).item()
        return MetaArray(self.shape, dtype, value=value)

    def copy(self, order="C") -> MetaArray:
        return self._like(self.shape)

    def view(self, dtype=None, type=None) -> MetaArray:
        if dtype is None:
            return self._like(self.shape, strides=self.strides, offset=self.offset)
        dtype = np.dtype(dtype)
        if dtype.itemsize == self.itemsize:
            return MetaArray(self.shape, dtype, self.strides, offset=self.offset)
        if not self.ndim or (self.shape[-1] * self.itemsize) % dtype.itemsize:
            raise ValueError(
                "To change to a dtype of a different size, the last axis must be contiguous"
            )
        last = self.shape[-1] * self.itemsize // dtype.itemsize
        return MetaArray((*self.shape[:-1], last), dtype)

    def fill(self, value) -> None:
        self.value = value

    def __getitem__(self, key) -> MetaArray:
        if _is_basic(key):
            return self._basic_view(key)
        return _to_meta(self.standin()[_standin_key(key)])

    def _basic_view(self, key) -> MetaArray:
        """The view basic indexing (ints, slices, None, ...) makes: NumPy works out its
        shape, strides and offset on an array with these strides over one element, which
        basic indexing never reads."""
        one = np.zeros(1, self.dtype)
        strided = np.lib.stride_tricks.as_strided(one, self.shape, self.strides)
        view = strided[key]
        moved = view.__array_interface__["data"][0] - one.__array_interface__["data"][0]
        return self._like(
            view.shape, strides=view.strides, offset=self.offset + moved // self.itemsize
        )

    def __setitem__(self, key, value) -> None:
        target = self.standin()[_standin_key(key)]
        np.broadcast_shapes(np.shape(_standin(value)), np.shape(target))

    # -- everything else through NumPy's protocols -------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        handler = _FUNCTIONS.get(func)
        if handler is not None:
            return handler(*args, **kwargs)
        return _on_standins(func, args, kwargs)

    def __getattr__(self, name):
        method = None if name.startswith("__") else getattr(np.ndarray, name, None)
        if method is None:
            raise AttributeError(f"'MetaArray' object has no attribute '{name}'")
        if name in _REDUCING_METHODS:
            return lambda *args, **kwargs: _reduce(
                lambda standin: getattr(standin, name)(*args, **kwargs), self, args, kwargs
            )
        return lambda *args, **kwargs: _on_standins(method, (self, *args), kwargs)


def _binary(ufunc, reflected=False, inplace=False):
    if inplace:
        return lambda self, other: ufunc(self, other, out=(self,))
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


_ARITHMETIC = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "matmul": np.matmul,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
}
_COMPARISONS = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}
_UNARY = {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}
for _name, _op in _ARITHMETIC.items():
    setattr(MetaArray, f"__{_name}__", _binary(_op))
    setattr(MetaArray, f"__r{_name}__", _binary(_op, reflected=True))
    setattr(MetaArray, f"__i{_name}__", _binary(_op, inplace=True))
for _name, _op in _COMPARISONS.items():
    setattr(MetaArray, f"__{_name}__", _binary(_op))
for _name, _op in _UNARY.items():
    setattr(MetaArray, f"__{_name}__", lambda self, _op=_op: _op(self))


def _normalize_axes(axes, ndim: int) -> tuple:
    out = []
    for a in axes:
        a = operator.index(a)
        if not -max(ndim, 1) <= a < max(ndim, 1):
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim if ndim else 0)
    return tuple(out)


def _reshaped(shape: tuple, new) -> tuple:
    """The shape ``reshape(new)`` gives an array of `shape` (one -1 allowed)."""
    size = 1
    for s in shape:
        size *= s
    new = tuple(operator.index(s) for s in new)
    if new.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    known = 1
    for s in new:
        if s != -1:
            known *= s
    if -1 in new:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {new}")
        new = tuple(size // known if s == -1 else s for s in new)
    elif known != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {new}")
    return new


# -- meta arrays to NumPy stand-ins and back ---------------------------------------------
def _standin(value):
    """`value` with every MetaArray (also inside lists and tuples) replaced by a stand-in."""
    if isinstance(value, MetaArray):
        return value.standin()
    if isinstance(value, (list, tuple)):
        return type(value)(_standin(v) for v in value)
    return value


def _is_basic(key) -> bool:
    """Whether `key` indexes without index arrays (a view in NumPy and PyTorch)."""
    keys = key if isinstance(key, tuple) else (key,)
    return all(
        k is None
        or k is Ellipsis
        or isinstance(k, slice)
        or (isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)))
        for k in keys
    )


def _standin_key(key):
    """An index for a stand-in."""
    if isinstance(key, MetaArray):
        return key.standin()
    if isinstance(key, tuple):
        return tuple(_standin_key(k) for k in key)
    return key


def _to_meta(value):
    """A function's result with each NumPy array or scalar made a MetaArray."""
    if isinstance(value, np.ndarray):
        first = value.reshape(-1)[0].item() if value.size else 0
        return MetaArray(value.shape, value.dtype, value=first)
    if isinstance(value, np.generic):
        return MetaArray((), value.dtype, value=value.item())
    if isinstance(value, tuple):
        items = [_to_meta(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_to_meta(v) for v in value]
    return value


def _on_standins(func, args, kwargs):
    """Run `func` on stand-ins of its meta arguments; its results as MetaArrays."""
    try:
        result = func(*_standin(args), **{k: _standin(v) for k, v in kwargs.items()})
    except np.linalg.LinAlgError:  # a stand-in's matrix is singular: says nothing of a tensor
        raise NoData from None
    return _to_meta(result)


def _tiny(value, ndim: int = 0):
    """`value` as a tiny NumPy array (``ndim`` dims of one element) holding its stand-in
    value. Python scalars stay themselves: they are weak in NumPy's promotion."""
    if isinstance(value, MetaArray):
        return (
            value.standin().reshape(-1)[:1].reshape((1,) * ndim)
            if value.size
            else (np.zeros((1,) * ndim, value.dtype))
        )
    if isinstance(value, np.ndarray):
        return np.zeros((1,) * ndim, value.dtype)
    return value


def _shape(value) -> tuple:
    return value.shape if isinstance(value, MetaArray) else np.shape(value)


def _dtype_of(value) -> np.dtype:
    return value.dtype if isinstance(value, (MetaArray, np.ndarray)) else np.asarray(value).dtype


def _outputs(out, results: tuple, shape: tuple):
    """MetaArrays of `shape` for a ufunc's tiny `results`, or the `out` arrays, checked."""
    if out is None:
        found = tuple(
            MetaArray(shape, r.dtype, value=np.asarray(r).reshape(-1)[0].item()) for r in results
        )
    else:
        for o, r in zip(out, results):
            if o is None:
                continue
            if np.broadcast_shapes(shape, _shape(o)) != _shape(o):
                raise ValueError(
                    f"non-broadcastable output operand with shape {_shape(o)} doesn't match "
                    f"the broadcast shape {shape}"
                )
            if isinstance(o, MetaArray):
                o.value = np.asarray(r).reshape(-1)[0].item()
        found = tuple(out)
    return found if len(found) > 1 else found[0]


def _matmul_shape(a: tuple, b: tuple) -> tuple:
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size {b2[-2]} is "
            f"different from {a2[-1]})"
        )
    shape = (*np.broadcast_shapes(a2[:-2], b2[:-2]), a2[-2], b2[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


def _ufunc(ufunc, method, inputs, kwargs):
    out = kwargs.pop("out", None)
    if out is not None and not isinstance(out, tuple):
        out = (out,)
    if method == "at":
        return None
    if method == "__call__":
        kwargs.pop("where", None)
        shapes = [_shape(x) for x in inputs]
        if ufunc is np.matmul:
            shape = _matmul_shape(*shapes)
            results = ufunc(*(_tiny(x, max(len(s), 1)) for x, s in zip(inputs, shapes)))
        else:
            shape = np.broadcast_shapes(*shapes)
            results = ufunc(*map(_tiny, inputs), **kwargs)
        return _outputs(out, results if isinstance(results, tuple) else (results,), shape)
    if method == "reduce":
        kwargs.setdefault("axis", 0)
        result = _reduce(lambda s: ufunc.reduce(s, **kwargs), inputs[0], (), kwargs)
        return _outputs(out, (result.standin(),), result.shape) if out else result
    if method == "accumulate":
        (array,) = inputs
        result = ufunc.accumulate(_tiny(array, max(array.ndim, 1)), **kwargs)
        return _outputs(out, (result,), array.shape)
    if method == "outer":
        a, b = inputs
        return _outputs(out, (ufunc(_tiny(a), _tiny(b), **kwargs),), (*_shape(a), *_shape(b)))
    return _on_standins(getattr(ufunc, method), inputs, dict(kwargs, out=out))


_REDUCING_METHODS = frozenset("sum mean prod max min argmax argmin any all std var ptp".split())


def _reduce(reduce, array: MetaArray, args, kwargs):
    """A reduction's result from a stand-in whose reduced dims keep one element: the same
    shape and dtype at the cost of the result alone."""
    axis = kwargs.get("axis", args[0] if args else None)
    if isinstance(axis, (MetaArray, np.ndarray)) or not array.ndim:
        return _to_meta(reduce(array.standin()))
    axes = range(array.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    reduced = set(_normalize_axes(tuple(axes), array.ndim))
    shape = tuple(1 if i in reduced and s else s for i, s in enumerate(array.shape))
    return _to_meta(reduce(MetaArray(shape, array.dtype, value=array.value).standin()))


# -- functions worked out without stand-ins, and functions that need values ---------------
def _like(a, dtype=None, order="K", subok=True, shape=None):
    return MetaArray(
        _shape(a) if shape is None else shape, _dtype_of(a) if dtype is None else dtype
    )


def _where(condition, *choices):
    if not choices:
        raise NoData
    x, y = choices
    result = np.where(_tiny(condition), _tiny(x), _tiny(y))
    shape = np.broadcast_shapes(*map(_shape, (condition, x, y)))
    return MetaArray(shape, result.dtype, value=result.item())


def _copyto(dst, src, casting="same_kind", where=True):
    np.broadcast_shapes(_shape(src), _shape(dst))


def _along(value, axis: int):
    """`value` (a stand-in for a MetaArray) cut to at most one element along `axis`."""
    array = _standin(value) if isinstance(value, MetaArray) else np.asarray(value)
    if array.ndim == 0:
        return array
    axis = _normalize_axes((axis,), array.ndim)[0]
    return array[(slice(None),) * axis + (slice(0, 1),)]


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Concatenate's checks and result dtype from stand-ins of one element along `axis`."""
    if axis is None:
        arrays = [a.reshape(-1) if isinstance(a, MetaArray) else np.ravel(a) for a in arrays]
        axis = 0
    result = np.concatenate(
        [_along(a, axis) for a in arrays], axis=axis, dtype=dtype, casting=casting
    )
    axis = _normalize_axes((axis,), result.ndim)[0]
    shape = list(result.shape)
    shape[axis] = sum(_shape(a)[axis] for a in arrays)
    return out if out is not None else MetaArray(shape, result.dtype)


def _as_array(a, dtype=None, *args, **kwargs):
    if isinstance(a, MetaArray):
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    host = np.asarray(a, dtype=dtype)
    return MetaArray(host.shape, host.dtype, value=host.reshape(-1)[0].item() if host.size else 0)


_FUNCTIONS = {
    np.empty_like: _like,
    np.zeros_like: _like,
    np.ones_like: lambda a, dtype=None, order="K", subok=True, shape=None: _as_value(
        _like(a, dtype, shape=shape), 1
    ),
    np.full_like: lambda a, fill_value, dtype=None, order="K", subok=True, shape=None: _as_value(
        _like(a, dtype, shape=shape), fill_value
    ),
    np.where: _where,
    np.copyto: _copyto,
    np.concatenate: _concatenate,
    np.shape: _shape,
    np.ndim: lambda a: len(_shape(a)),
    np.result_type: lambda *args: np.result_type(*map(_tiny, args)),
    np.may_share_memory: lambda a, b, max_work=None: False,
    np.shares_memory: lambda a, b, max_work=None: False,
    np.reshape: lambda a, shape=None, order="C", **kw: a.reshape(kw.get("newshape", shape)),
    np.transpose: lambda a, axes=None: a.transpose(axes),
}


def _as_value(array: MetaArray, value) -> MetaArray:
    array.value = value
    return array


# -- the array namespace kernels are written against -------------------------------------
def _shape_arg(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    return tuple(shape)


class _MetaNamespace:
    """NumPy's namespace as meta kernels see it: creation and conversion functions make
    MetaArrays; every other name is NumPy's own, which reaches MetaArray through NumPy's
    dispatch protocols."""

    __name__ = "tocha._meta.XP"

    @staticmethod
    def empty(shape, dtype=float, order="C", **kwargs) -> MetaArray:
        return MetaArray(_shape_arg(shape), dtype)

    zeros = empty

    @staticmethod
    def ones(shape, dtype=float, order="C", **kwargs) -> MetaArray:
        return MetaArray(_shape_arg(shape), dtype, value=1)

    @staticmethod
    def full(shape, fill_value, dtype=None, order="C", **kwargs) -> MetaArray:
        value = _tiny(fill_value)
        dtype = np.asarray(value).dtype if dtype is None else dtype
        return MetaArray(_shape_arg(shape), dtype, value=np.asarray(value).reshape(-1)[0].item())

    asarray = array = asanyarray = ascontiguousarray = asfortranarray = staticmethod(_as_array)

    @staticmethod
    def arange(*args, dtype=None, **kwargs) -> MetaArray:
        return _to_meta(np.arange(*map(_tiny, args), dtype=dtype, **kwargs))

    @staticmethod
    def eye(n, m=None, k=0, dtype=float, **kwargs) -> MetaArray:
        return MetaArray((n, n if m is None else m), dtype)

    lib = SimpleNamespace(
        stride_tricks=SimpleNamespace(
            as_strided=lambda x, shape=None, strides=None, **kwargs: MetaArray(
                x.shape if shape is None else shape, x.dtype, strides, x.value, x.offset
            ),
            sliding_window_view=np.lib.stride_tricks.sliding_window_view,
        )
    )

    def __getattr__(self, name):
        return getattr(np, name)


XP = _MetaNamespace()


class MetaGenerator:
    """The meta device's random stream: draws have the asked shape and dtype, no values."""

    _SIZE_FIRST = frozenset({"random", "standard_normal", "standard_exponential"})
    _INTEGER = frozenset({"integers", "geometric", "poisson", "binomial", "negative_binomial"})

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def draw(*params, size=None, dtype=None, out=None, **kwargs):
            if out is not None:
                return out
            if name == "permutation":
                n = params[0]
                return MetaArray((n,) if isinstance(n, int) else _shape(n), np.int64)
            value = 0
            if name == "integers":
                value = int(params[0]) if len(params) > 1 else 0
                size = params[2] if len(params) > 2 else size
                params = ()
            if name in self._SIZE_FIRST and params:
                size, params = params[0], ()
            shape = (
                _shape_arg(size)
                if size is not None
                else np.broadcast_shapes(*(_shape(p) for p in params))
            )
            default = np.int64 if name in self._INTEGER else np.float64
            return MetaArray(shape, default if dtype is None else dtype, value=value)

        return draw


# Ops whose result's shape depends on values: always, or when indexed by a boolean mask.
_VALUE_SHAPED_OPS = frozenset(
    {"nonzero", "masked_select", "unique", "unique_consecutive", "bincount"}
)
_MASKED_OPS = frozenset({"index"})


def _is_mask(arg) -> bool:
    return isinstance(arg, MetaArray) and arg.dtype == bool and arg.ndim > 0


class MetaBackend(Backend):
    """Tensors without storage: kernels compute result shapes and dtypes only."""

    device_type = "meta"
    xp = XP
    array_type = MetaArray

    def kernel(self, op):
        kernel = super().kernel(op)
        refused = NotImplementedError(
            f"Could not run '{op.name}' with arguments from the 'Meta' backend: its result "
            "depends on the values of its inputs, which meta tensors do not have"
        )
        masked = op.name in _MASKED_OPS

        def meta_kernel(*args, **kwargs):
            if op.name in _VALUE_SHAPED_OPS or (masked and any(map(_is_mask, args))):
                raise refused
            try:
                return kernel(*args, **kwargs)
            except NoData:
                raise refused from None

        return meta_kernel

    def normalize(self, dev: device) -> device:
        return META

    def asarray(self, data, dtype=None, dev=None):
        return _as_array(data, dtype)

    def from_host(self, array, dev):
        return MetaArray(np.shape(array), _dtype_of(array))

    def to_host(self, array):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def new_generator(self, seed: int, dev: device):
        return MetaGenerator()

    def generator_state(self, gen) -> bytes:
        return b""

    def set_generator_state(self, gen, state: bytes) -> None:
        return None

    def data_ptr(self, array) -> int:
        return 0

    def storage_offset(self, array) -> int:
        return array.offset


def register() -> MetaBackend:
    return MetaBackend()
