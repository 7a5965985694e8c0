"""The older surface that ordinary PyTorch programs still use: the legacy constructors
(``Tensor(2, 3)``, ``Tensor(data)``, ``FloatTensor``...), ``Tensor.new_*``, ``Tensor.type``,
``softmax`` / ``log_softmax`` as functions and methods, `typename`, `is_floating_point` and
`numel`.

The legacy types (``tocha.FloatTensor``...) are constructors with an ``isinstance`` test on
dtype and device, as in PyTorch; they are not Tensor subclasses.
"""

from __future__ import annotations

import builtins
import warnings

from .. import _dtype
from .._api import PUBLIC, export
from .._backend import resolve_device
from .._device import CPU
from .._dispatch import not_a_tensor
from .._stack import user_stacklevel
from .._tensor import Size, Tensor, wrap
from ._argcheck import index_arg
from ._out import write_out_same_dtype
from .creation import copy_of

__all__ = ["legacy_new"]

_BY_TITLE = {title: d for d, title in _dtype.TITLE.items()}


def _python_int(x) -> builtins.bool:
    return isinstance(x, builtins.int) and not isinstance(x, builtins.bool)


def legacy_new(
    cls: type, dtype: _dtype.dtype, args: tuple, device, typed: builtins.bool = False
) -> Tensor:
    """What ``cls(*args, device=device)`` builds for the legacy constructors of `dtype`:
    ``()`` an empty tensor, ints or a `Size` an uninitialised tensor of that shape, a tensor
    an alias of it (of `dtype` only, when `typed`), other data (lists, tuples, arrays) a copy
    in `dtype`."""
    dev = CPU if device is None else resolve_device(device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if typed and t.dtype is not dtype:
            raise TypeError(f"expected {_dtype.TITLE[dtype]} (got {_dtype.TITLE[t.dtype]})")
        out = wrap(t._data, t._device)
    elif all(_python_int(a) for a in args) or (len(args) == 1 and type(args[0]) is Size):
        out = PUBLIC["empty"](*args or (0,), dtype=dtype, device=dev)
    elif len(args) == 1 and not isinstance(
        args[0], (str, builtins.float, builtins.bool, type(None))
    ):
        out = PUBLIC["tensor"](args[0], dtype=dtype, device=dev)
    elif len(args) == 1:
        if isinstance(args[0], str):
            raise TypeError("new(): invalid data type 'str'")
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    else:
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(
            f"new() received an invalid combination of arguments - got ({got}), but expected "
            "one of: (*, device), (Tensor other), (tuple of ints size, *, device), "
            "(object data, *, device)"
        )
    if cls is Tensor or type(out) is cls:
        return out
    sub = object.__new__(cls)
    sub._data, sub._device, sub._ag, sub._base, sub._vc = out._data, out._device, None, None, None
    return sub


class _LegacyType(type):
    """The type of ``tocha.FloatTensor`` and its kin: calling one builds a CPU tensor of its
    dtype; ``isinstance(t, tocha.FloatTensor)`` tests a CPU float32 tensor."""

    def __call__(cls, *args, device=None):
        if device is not None and resolve_device(device).type != "cpu":
            raise RuntimeError(
                f"legacy constructor expects device type: cpu but device type: "
                f"{resolve_device(device).type} was passed"
            )
        return legacy_new(Tensor, cls.dtype, args, None, typed=True)

    def __instancecheck__(cls, obj) -> builtins.bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj._device.type == "cpu"

    def __repr__(cls) -> str:
        return f"<class '{_dtype.SHOWN_MODULE}.{cls.__name__}'>"


for _d, _title in _dtype.TITLE.items():
    export(
        _LegacyType(
            f"{_title}Tensor",
            (),
            {
                "dtype": _d,
                "__module__": "tocha",
                "__doc__": f"The legacy constructor of CPU {_d.name} tensors, as "
                f"``torch.{_title}Tensor``: ``{_title}Tensor(data)``, "
                f"``{_title}Tensor(2, 3)``; also an ``isinstance`` test.",
            },
        ),
        f"{_title}Tensor",
    )


# -- Tensor.new_* ---------------------------------------------------------------------------
def _options(self: Tensor, dtype, device) -> dict:
    return {
        "dtype": self.dtype if dtype is None else dtype,
        "device": self._device if device is None else device,
    }


def new_zeros(
    self: Tensor, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False
) -> Tensor:
    """Zeros of `size`, with this tensor's dtype and device unless given."""
    return PUBLIC["zeros"](*size, requires_grad=requires_grad, **_options(self, dtype, device))


def new_ones(
    self: Tensor, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False
) -> Tensor:
    """Ones of `size`, with this tensor's dtype and device unless given."""
    return PUBLIC["ones"](*size, requires_grad=requires_grad, **_options(self, dtype, device))


def new_empty(
    self: Tensor, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False
) -> Tensor:
    """An uninitialised tensor of `size`, with this tensor's dtype and device unless given."""
    return PUBLIC["empty"](*size, requires_grad=requires_grad, **_options(self, dtype, device))


def new_full(
    self: Tensor,
    size,
    fill_value,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    layout=None,
    pin_memory=False,
) -> Tensor:
    """`size` filled with `fill_value`, with this tensor's dtype and device unless given."""
    return PUBLIC["full"](
        size, fill_value, requires_grad=requires_grad, **_options(self, dtype, device)
    )


def new_tensor(
    self: Tensor,
    data,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    layout=None,
    pin_memory=False,
) -> Tensor:
    """A copy of `data`, with this tensor's dtype and device unless given."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
            "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return copy_of(data, requires_grad=requires_grad, **_options(self, dtype, device))


for _fn in (new_zeros, new_ones, new_empty, new_full, new_tensor):
    export(_fn, method=True, function=False)


# -- Tensor.type ----------------------------------------------------------------------------
def _parse_type(name: str):
    """(dtype, device type) of ``'torch.FloatTensor'`` or ``'torch.cuda.FloatTensor'``."""
    module, _, title = name.rpartition(".")
    if module in ("torch", "tocha", "torch.cuda", "tocha.cuda") and title.endswith("Tensor"):
        d = _BY_TITLE.get(title[: -len("Tensor")])
        if d is not None:
            return d, "cuda" if module.endswith("cuda") else "cpu"
    raise ValueError(f"invalid type: '{name}'")


def type_(self: Tensor, dtype=None, non_blocking: builtins.bool = False, **kwargs):
    """With no argument, the type's name (``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``);
    with a dtype, a type name or a legacy type, this tensor cast to it (itself if it already
    is)."""
    if dtype is None:
        prefix = "torch." if self._device.type == "cpu" else f"torch.{self._device.type}."
        return f"{prefix}{_dtype.TITLE[self.dtype]}Tensor"
    if isinstance(dtype, str):
        dtype, device_type = _parse_type(dtype)
        if device_type != self._device.type:
            return self.to(device=device_type, dtype=dtype, non_blocking=non_blocking)
    elif isinstance(dtype, _LegacyType):
        dtype = dtype.dtype
    return self.to(dtype, non_blocking=non_blocking)


export(type_, "type", method=True, function=False)


# -- softmax and log_softmax ----------------------------------------------------------------
def _functional():
    """tocha.nn.functional (its fused softmax primitives), or None without tocha-nn."""
    try:
        import tocha.nn.functional as F
    except ImportError:
        return None
    return F


def softmax(
    input: Tensor,
    dim: builtins.int,
    dtype: _dtype.dtype | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (tocha-nn's fused primitive when installed)."""
    if type(dim) is not int:
        dim = index_arg("softmax", dim, "dim", 1)  # the method's and F's position
    F = _functional()
    if F is not None:
        result = F.softmax(input, dim, dtype=dtype)
    else:
        x = input if dtype is None else input.to(dtype)
        e = (x - x.amax(dim, keepdim=True).detach()).exp()
        result = e / e.sum(dim, keepdim=True)
    return result if out is None else write_out_same_dtype(out, result)


def log_softmax(
    input: Tensor,
    dim: builtins.int,
    dtype: _dtype.dtype | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """x - log(sum(exp(x))) along `dim` (tocha-nn's fused primitive when installed)."""
    if type(dim) is not int:
        dim = index_arg("log_softmax", dim, "dim", 1)
    F = _functional()
    if F is not None:
        result = F.log_softmax(input, dim, dtype=dtype)
    else:
        x = input if dtype is None else input.to(dtype)
        result = x - x.logsumexp(dim, keepdim=True)
    return result if out is None else write_out_same_dtype(out, result)


export(softmax, method=True)
export(log_softmax, method=True)


# -- small functions ------------------------------------------------------------------------
@export
def typename(obj) -> str:
    """The type's name: ``'torch.FloatTensor'`` for a tensor, ``module.qualname`` otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None)
    if qualname is None:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


@export
def is_floating_point(input: Tensor) -> builtins.bool:
    """Whether `input`'s dtype is a floating point one."""
    return input.dtype.is_floating_point


@export
def numel(input: Tensor) -> builtins.int:
    """The number of elements of `input`."""
    try:
        value = input._data.size
    except AttributeError:
        raise not_a_tensor("numel", input, "input", 1) from None
    return value
