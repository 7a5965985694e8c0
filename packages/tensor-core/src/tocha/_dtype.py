"""tocha's dtypes and PyTorch's type promotion rules.

A `dtype` wraps one NumPy dtype. Promotion follows PyTorch, not NumPy: Python scalars
and 0-dim tensors do not widen a dimensioned tensor's dtype within its category.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "dtype",
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "half",
    "float",
    "double",
    "short",
    "int",
    "long",
    "cfloat",
    "cdouble",
    "promote_types",
    "result_type",
    "can_cast",
    "set_default_dtype",
    "get_default_dtype",
    "finfo",
    "iinfo",
]

_builtin_bool, _builtin_int, _builtin_float = bool, int, float

# Category ranks: bool < integer < floating < complex.
BOOL, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3
KIND_RANK = {"b": BOOL, "u": INTEGRAL, "i": INTEGRAL, "f": FLOATING, "V": FLOATING, "c": COMPLEX}
SCALAR_RANK = {
    _builtin_bool: BOOL,
    _builtin_int: INTEGRAL,
    _builtin_float: FLOATING,
    complex: COMPLEX,
}


class dtype:
    """A tensor element type, as `torch.dtype`.

    Attributes: ``itemsize`` (bytes), ``is_floating_point``, ``is_complex``, ``is_signed``.
    """

    __slots__ = ("name", "_np", "itemsize", "is_floating_point", "is_complex", "is_signed", "rank")

    def __init__(self, name: str, np_name: str, itemsize: _builtin_int, rank: _builtin_int, signed):
        self.name = name
        self._np = np.dtype(np_name) if np_name else None
        self.itemsize = itemsize
        self.rank = rank
        self.is_floating_point = rank == FLOATING
        self.is_complex = rank == COMPLEX
        self.is_signed = signed

    @property
    def np(self) -> np.dtype:
        """The NumPy dtype that stores this dtype (bfloat16 and the float8 dtypes load
        ml_dtypes on first use)."""
        if self._np is None:
            _load_ml_dtype(self)
        return self._np

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        return {float64: complex128, complex128: complex128}.get(self, complex64)

    def __repr__(self) -> str:
        return f"{SHOWN_MODULE}.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


def _dtype_by_name(name: str) -> dtype:
    return BY_NAME[name]


bool = dtype("bool", "bool", 1, BOOL, False)  # noqa: A001
uint8 = dtype("uint8", "uint8", 1, INTEGRAL, False)
int8 = dtype("int8", "int8", 1, INTEGRAL, True)
int16 = dtype("int16", "int16", 2, INTEGRAL, True)
int32 = dtype("int32", "int32", 4, INTEGRAL, True)
int64 = dtype("int64", "int64", 8, INTEGRAL, True)
float16 = dtype("float16", "float16", 2, FLOATING, True)
bfloat16 = dtype("bfloat16", "", 2, FLOATING, True)
float32 = dtype("float32", "float32", 4, FLOATING, True)
float64 = dtype("float64", "float64", 8, FLOATING, True)
complex64 = dtype("complex64", "complex64", 8, COMPLEX, True)
complex128 = dtype("complex128", "complex128", 16, COMPLEX, True)
# PyTorch's float8 and wide unsigned dtypes hold values and convert to and from the others
# (``.to``); as in PyTorch, they take no part in type promotion (arithmetic).
float8_e4m3fn = dtype("float8_e4m3fn", "", 1, FLOATING, True)
float8_e5m2 = dtype("float8_e5m2", "", 1, FLOATING, True)
uint16 = dtype("uint16", "uint16", 2, INTEGRAL, False)
uint32 = dtype("uint32", "uint32", 4, INTEGRAL, False)
uint64 = dtype("uint64", "uint64", 8, INTEGRAL, False)
STORAGE_ONLY = (float8_e4m3fn, float8_e5m2, uint16, uint32, uint64)

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

ALL = (
    bool,
    uint8,
    int8,
    int16,
    int32,
    int64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
)
BY_NAME = {d.name: d for d in (*ALL, *STORAGE_ONLY)}

# The module that dtypes, sizes, storages and legacy type names show in their reprs: "torch"
# while ``import torch`` gives tocha (`tocha.compat.alias_torch`), so that a PyTorch program
# prints, and parses back, what it would under PyTorch.
SHOWN_MODULE = "tocha"
# PyTorch's C++ names of the dtypes, which its conversion errors print.
C_NAME = dict(
    zip(
        ALL,
        (
            "bool",
            "uint8_t",
            "int8_t",
            "int16_t",
            "int",
            "int64_t",
            "c10::Half",
            "c10::BFloat16",
            "float",
            "double",
            "c10::complex<float>",
            "c10::complex<double>",
        ),
    )
)
# PyTorch's scalar type names, used in its error messages.
TITLE = dict(
    zip(
        ALL,
        (
            "Bool",
            "Byte",
            "Char",
            "Short",
            "Int",
            "Long",
            "Half",
            "BFloat16",
            "Float",
            "Double",
            "ComplexFloat",
            "ComplexDouble",
        ),
    )
)
# PyTorch's scalar type names of every dtype: TITLE's (which also name the legacy tensor
# types), and those of the dtypes that have no legacy type.
SCALAR_NAME = {
    **TITLE,
    **dict(zip(STORAGE_ONLY, ("Float8_e4m3fn", "Float8_e5m2", "UInt16", "UInt32", "UInt64"))),
}
# NumPy dtype -> tocha dtype; those of ml_dtypes join when it is loaded.
FROM_NP = {d._np: d for d in (*ALL, *STORAGE_ONLY) if d._np is not None}
ML_DTYPES = {d.name: d for d in (bfloat16, float8_e4m3fn, float8_e5m2)}


def _load_ml_dtype(d: dtype) -> None:
    """Give `d`, one of `ML_DTYPES`, its NumPy dtype from ml_dtypes."""
    import ml_dtypes

    d._np = np.dtype(getattr(ml_dtypes, d.name))
    FROM_NP[d._np] = d


def from_np(np_dtype) -> dtype:
    """The tocha dtype of a NumPy dtype; TypeError for dtypes tocha has no counterpart of."""
    try:
        return FROM_NP[np_dtype]
    except KeyError:
        ml = ML_DTYPES.get(getattr(np_dtype, "name", ""))
        if ml is not None:
            _load_ml_dtype(ml)
            return ml
        converted = _NP_ALIASES.get(np.dtype(np_dtype).kind, {}).get(np.dtype(np_dtype).itemsize)
        if converted is not None:
            return converted
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The "
            "only supported types are: float64, float32, float16, complex64, complex128, int64, "
            "int32, int16, int8, uint64, uint32, uint16, uint8, and bool."
        ) from None


_NP_ALIASES = {
    "i": {8: int64, 4: int32, 2: int16, 1: int8},
    "f": {8: float64, 4: float32, 2: float16},
}


class _Defaults:
    __slots__ = ("float", "complex")
    float: dtype
    complex: dtype


DEFAULTS = _Defaults()
DEFAULTS.float = float32
DEFAULTS.complex = complex64


def set_default_dtype(d: dtype) -> None:
    """Set the dtype of float tensors made from Python floats (float32 or float64)."""
    if d not in (float16, bfloat16, float32, float64):
        invalid = "" if isinstance(d, dtype) else "invalid dtype object: "
        raise TypeError(f"{invalid}only floating-point types are supported as the default type")
    DEFAULTS.float = d
    DEFAULTS.complex = complex128 if d is float64 else complex64


def get_default_dtype() -> dtype:
    """The current default floating point dtype (float32 unless changed)."""
    return DEFAULTS.float


def default_for_rank(rank: _builtin_int) -> dtype:
    return (bool, int64, DEFAULTS.float, DEFAULTS.complex)[rank]


def _promote_integral(a: dtype, b: dtype) -> dtype:
    if a.is_signed == b.is_signed:
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    return {1: int16, 2: int32}.get(unsigned.itemsize, int64)


def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a.rank != b.rank:
        low, high = (a, b) if a.rank < b.rank else (b, a)
        if high.is_complex and low.is_floating_point:
            return complex128 if low is float64 else high
        return high
    if a.rank == BOOL:
        return a
    if a.rank == INTEGRAL:
        return _promote_integral(a, b)
    if a.itemsize == b.itemsize:  # float16 with bfloat16
        return float32
    return a if a.itemsize > b.itemsize else b


PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL for b in ALL}
# The storage-only dtypes promote only with themselves, and the wide unsigned ones with a
# floating or complex dtype (to it), as in PyTorch; other pairs raise `_promotion_error`.
PROMOTE.update({(d, d): d for d in STORAGE_ONLY})
for _u in (uint16, uint32, uint64):
    for _f in ALL:
        if _f.is_floating_point or _f.is_complex:
            PROMOTE[_u, _f] = PROMOTE[_f, _u] = _f


def _promotion_error(a: dtype, b: dtype) -> RuntimeError:
    """PyTorch's error for promoting a storage-only dtype with another."""
    kind = "Float8 Types" if "float8" in a.name + b.name else "uint16, uint32, uint64 types"
    return RuntimeError(
        f"Promotion for {kind} is not supported, attempted to promote "
        f"{SCALAR_NAME[a]} and {SCALAR_NAME[b]}"
    )


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype to which both dtypes may be cast, as `torch.promote_types`."""
    try:
        return PROMOTE[type1, type2]
    except KeyError:
        raise _promotion_error(type1, type2) from None


def result_type(tensor1, tensor2) -> dtype:
    """The dtype an arithmetic op on these two operands (tensors or numbers) returns."""
    return promote_operands((tensor1, tensor2))


class OperandTypeError(TypeError):
    """An operand of an elementwise op that is neither a tensor nor a number: Python's
    operators answer NotImplemented for it, so that the other operand may handle the op.
    Named as the TypeError it is to the user."""


OperandTypeError.__name__ = OperandTypeError.__qualname__ = "TypeError"
OperandTypeError.__module__ = "builtins"


def operand_dtype(x) -> tuple[_builtin_int, dtype | None, _builtin_int]:
    """(priority, dtype, rank) of an operand: dimensioned tensor 2, 0-dim tensor 1, scalar 0."""
    d = getattr(x, "dtype", None)
    if isinstance(d, dtype):
        return (2 if x.ndim else 1), d, d.rank
    rank = SCALAR_RANK.get(type(x))
    if rank is None:
        if isinstance(x, (np.generic, np.ndarray)):
            tocha_d = from_np(x.dtype)
            return 0, None, tocha_d.rank
        for base, r in SCALAR_RANK.items():
            if isinstance(x, base):
                return 0, None, r
        raise OperandTypeError(f"expected a tensor or a number, but got {type(x).__name__}")
    return 0, None, rank


def promote_operands(operands) -> dtype:
    """Promote tensors and scalars with PyTorch's three-tier rule: dimensioned tensors, then
    0-dim tensors, then Python scalars (taken as the default dtype of their category); a lower
    tier counts only when its category (bool < integer < floating < complex) is higher."""
    tiers = [None, None, None]  # scalars, 0-dim tensors, dimensioned tensors
    try:
        for x in operands:
            priority, d, rank = operand_dtype(x)
            if d is None:
                d = default_for_rank(rank)
            tiers[priority] = d if tiers[priority] is None else PROMOTE[tiers[priority], d]
        return _combine(tiers[2], _combine(tiers[1], tiers[0]))
    except KeyError as exc:  # a pair of dtypes that do not promote
        raise _promotion_error(*exc.args[0]) from None


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """PyTorch's ``combine_categories``: the higher tier's dtype unless the lower tier's
    category is higher (a float tensor with a complex scalar keeps its width)."""
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return PROMOTE[higher, lower]
    return higher


def can_cast(from_: dtype, to: dtype) -> _builtin_bool:
    """Whether a cast from `from_` to `to` is allowed under PyTorch's casting rules
    (no cast to a lower category, e.g. float to int)."""
    return from_.rank <= to.rank


def _expect_dtype(name: str, value) -> dtype:
    """`value`, a dtype; PyTorch's TypeError for anything else (a tensor included)."""
    if not isinstance(value, dtype):
        raise TypeError(
            f"{name}(): argument 'type' (position 1) must be torch.dtype, "
            f"not {type(value).__name__}"
        )
    return value


class finfo:
    """Machine limits of a floating point dtype, as `torch.finfo`."""

    def __init__(self, type: dtype | None = None):  # noqa: A002
        type = DEFAULTS.float if type is None else _expect_dtype("finfo", type)
        if not (type.is_floating_point or type.is_complex):
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                "'torch.finfo'"
            )
        info = _finfo_np(type.to_real().np)
        self.dtype = type.to_real().name
        self.bits = info.bits
        self.eps = _builtin_float(info.eps)
        self.max = _builtin_float(info.max)
        self.min = _builtin_float(info.min)
        self.tiny = self.smallest_normal = _builtin_float(info.smallest_normal)
        self.resolution = 10.0 ** -_builtin_int(info.precision)

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


def _finfo_np(np_dtype):
    if np_dtype.name in ML_DTYPES:
        import ml_dtypes

        return ml_dtypes.finfo(np_dtype)
    return np.finfo(np_dtype)


class iinfo:
    """Machine limits of an integer dtype, as `torch.iinfo`."""

    def __init__(self, type: dtype):  # noqa: A002
        type = _expect_dtype("iinfo", type)
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.rank != INTEGRAL:
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                "'torch.iinfo'"
            )
        info = np.iinfo(type.np) if type is not bool else np.iinfo(np.uint8)
        self.dtype = type.name
        self.bits = info.bits
        self.max = _builtin_int(info.max)
        self.min = _builtin_int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
