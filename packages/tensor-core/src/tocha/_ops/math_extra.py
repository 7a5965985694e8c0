"""Math extras: log-sum of pairs, angle conversions, step and number-theory functions,
closeness tests, fused multiply-adds, and complex numbers (conjugates, real and imaginary
views, angle, polar form).

Elementwise primitives reuse the kernel helpers of `pointwise` (``uf``, ``refusing``);
the rest are composites. tocha has no lazy conjugate or negative bit: `conj` of a complex
tensor is a copy, `resolve_conj` and `resolve_neg` return their input.
"""

from __future__ import annotations

import builtins
import math

from .. import _dtype, return_types
from .._api import PUBLIC, export
from .._dispatch import (
    autocast_op,
    binary,
    broadcast_error,
    call,
    call_view,
    defop,
    not_a_tensor,
    unary,
)
from .._opmath import HALF_CHARS
from .._tensor import Tensor
from ._argcheck import check_scalar_fits, flag
from ._out import assign, inplace, write_out, write_out_same_dtype
from .pointwise import (
    BOOL,
    COMPLEX,
    FLOATS,
    INTS,
    _no,
    binary_inplace,
    refusing,
    uf,
)


def _title(t: Tensor) -> str:
    return _dtype.TITLE[t.dtype]


def _finish(result: Tensor, out: Tensor | None) -> Tensor:
    return result if out is None else write_out(out, result)


def _tensors(name: str, input, other) -> None:
    if not isinstance(input, Tensor):
        raise not_a_tensor(name, input)
    if not isinstance(other, Tensor):
        raise not_a_tensor(name, other, "other", 2)


# -- kernels ---------------------------------------------------------------------------------
def _heaviside_kernel(xp):
    def kernel(x, values, out=None):
        result = xp.where(x == 0, values, x > 0).astype(x.dtype)
        if out is None:
            return result
        out[...] = result
        return out

    return kernel


def _angle_kernel(xp):
    def kernel(x):
        if x.dtype.kind == "c":
            return xp.angle(x)
        return xp.where(xp.isnan(x), x, xp.where(x < 0, math.pi, 0).astype(x.dtype))

    return kernel


def _complex_kernel(xp):
    def kernel(real, imag):
        d = xp.complex128 if real.dtype == xp.float64 else xp.complex64
        out = xp.empty(xp.broadcast_shapes(real.shape, imag.shape), d)
        out.real = real
        out.imag = imag
        return out

    return kernel


def _logaddexp_kernel(xp):
    """NumPy's logaddexp, and for complex operands ``log(exp(a) + exp(b))`` taken from the
    operand of larger real part, as PyTorch's (NumPy has no complex logaddexp)."""
    real = xp.logaddexp

    def kernel(a, b, out=None):
        if not any(getattr(x, "dtype", None) is not None and x.dtype.kind == "c" for x in (a, b)):
            return real(a, b, out=out)
        a, b = xp.broadcast_arrays(xp.asarray(a), xp.asarray(b))
        larger = a.real >= b.real
        top, low = xp.where(larger, a, b), xp.where(larger, b, a)
        result = xp.where(xp.isinf(top.real), top, top + xp.log1p(xp.exp(low - top)))
        if out is None:
            return result
        out[...] = result
        return out

    return kernel


logaddexp_op = defop("logaddexp", refusing(_logaddexp_kernel, (BOOL + INTS, _no("logaddexp_cpu"))))
logaddexp2_op = defop(
    "logaddexp2", refusing(uf("logaddexp2"), (BOOL + INTS + COMPLEX, _no("logaddexp2_cpu")))
)
heaviside_op = defop("heaviside", _heaviside_kernel)
gcd_op = defop(
    "gcd", refusing(uf("gcd"), (BOOL + FLOATS + COMPLEX, _no("gcd_cpu"))), differentiable=False
)
lcm_op = defop(
    "lcm", refusing(uf("lcm"), (BOOL + FLOATS + COMPLEX, _no("lcm_cpu"))), differentiable=False
)
nextafter_op = defop(
    "nextafter", refusing(uf("nextafter"), (BOOL + INTS + COMPLEX, _no("nextafter_cpu")))
)
isin_op = defop(
    "isin", lambda xp: lambda e, t, invert: xp.isin(e, t, invert=invert), differentiable=False
)
frexp_op = defop("frexp", lambda xp: lambda x: tuple(r for r in xp.frexp(x)))
conj_op = defop("conj", lambda xp: lambda x: xp.conj(x))
angle_op = defop("angle", _angle_kernel)
complex_op = defop("complex", _complex_kernel)
real_op = defop("real", lambda xp: lambda x: x.real)
imag_op = defop("imag", lambda xp: lambda x: x.imag)
view_as_real_op = defop("view_as_real", lambda xp: lambda x: x[..., None].view(x.real.dtype))
view_as_complex_op = defop(
    "view_as_complex",
    lambda xp: lambda x: x.view(xp.complex128 if x.dtype == xp.float64 else xp.complex64)[..., 0],
)

return_types.frexp = return_types._return_type("frexp", ("mantissa", "exponent"))


# -- pairs in log space, angles, steps -------------------------------------------------------
def logaddexp(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``log(exp(input) + exp(other))``, without overflow."""
    _tensors("logaddexp", input, other)
    return _finish(binary(logaddexp_op, input, other), out)


def logaddexp2(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``log2(2**input + 2**other)``, without overflow."""
    _tensors("logaddexp2", input, other)
    return _finish(binary(logaddexp2_op, input, other), out)


DEG_PER_RAD = 180.0 / math.pi


def _angle_scale(name: str, input: Tensor, factor: float) -> Tensor:
    if not isinstance(input, Tensor):
        raise not_a_tensor(name, input)
    if input.is_complex():
        raise RuntimeError(f"{name} is not supported for complex tensors.")
    if input.dtype.rank < _dtype.FLOATING:
        input = input.to(_dtype.DEFAULTS.float)
    return input * factor


def deg2rad(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Angles in degrees converted to radians (integers give floats)."""
    return _finish(_angle_scale("deg2rad", input, 1 / DEG_PER_RAD), out)


def rad2deg(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Angles in radians converted to degrees (integers give floats)."""
    return _finish(_angle_scale("rad2deg", input, DEG_PER_RAD), out)


def deg2rad_(self: Tensor) -> Tensor:
    """In-place form of `deg2rad`."""
    _angle_scale("deg2rad", self, 1.0)
    return self.mul_(1 / DEG_PER_RAD)


def rad2deg_(self: Tensor) -> Tensor:
    """In-place form of `rad2deg`."""
    _angle_scale("rad2deg", self, 1.0)
    return self.mul_(DEG_PER_RAD)


def _check_heaviside(input, values) -> None:
    if not isinstance(input, Tensor):
        raise not_a_tensor("heaviside", input, "input", 1)
    if not isinstance(values, Tensor):
        raise not_a_tensor("heaviside", values, "values", 2)
    if input.is_complex() or values.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The Heaviside step: 0 where ``input < 0``, `values` where ``input == 0``, 1 where
    ``input > 0``."""
    _check_heaviside(input, values)
    return _finish(binary(heaviside_op, input, values), out)


def heaviside_(self: Tensor, values: Tensor) -> Tensor:
    """In-place form of `heaviside`."""
    _check_heaviside(self, values)
    return binary_inplace(heaviside_op, self, values)


def _integer_function(op):
    def fn(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
        _tensors(op.name, input, other)
        return _finish(binary(op, input, other), out)

    def inplace(self: Tensor, other: Tensor) -> Tensor:
        return binary_inplace(op, self, other)

    word = {"gcd": "greatest common divisor", "lcm": "least common multiple"}[op.name]
    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"The elementwise {word} of two integer tensors."
    inplace.__name__ = inplace.__qualname__ = op.name + "_"
    inplace.__doc__ = f"In-place form of `{op.name}`."
    return fn, inplace


gcd, gcd_ = _integer_function(gcd_op)
lcm, lcm_ = _integer_function(lcm_op)


def nextafter(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The next representable float after `input` in the direction of `other`."""
    _tensors("nextafter", input, other)
    return _finish(binary(nextafter_op, input, other), out)


def nextafter_(self: Tensor, other: Tensor) -> Tensor:
    """In-place form of `nextafter`."""
    return binary_inplace(nextafter_op, self, other)


# -- powers --------------------------------------------------------------------------------
def _float_power_dtype(input, exponent) -> _dtype.dtype:
    complex_ = any(
        isinstance(x, builtins.complex) or isinstance(x, Tensor) and x.is_complex()
        for x in (input, exponent)
    )
    return _dtype.complex128 if complex_ else _dtype.float64


def _as(x, d: _dtype.dtype):
    if isinstance(x, Tensor):
        return x.to(d)
    return builtins.complex(x) if d.is_complex else float(x)


def float_power(input, exponent, *, out: Tensor | None = None) -> Tensor:
    """``input ** exponent`` computed in double precision: the result is float64 (complex128
    when either operand is complex)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise not_a_tensor("float_power", input)
    d = _float_power_dtype(input, exponent)
    return _finish(
        _as(input, d) ** _as(exponent, d)
        if isinstance(input, Tensor)
        else PUBLIC["pow"](_as(input, d), _as(exponent, d)),
        out,
    )


def float_power_(self: Tensor, exponent) -> Tensor:
    """In-place form of `float_power`; `self` must already be float64 (or complex128)."""
    d = _float_power_dtype(self, exponent)
    if self.dtype is not d:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_title(self)} but the "
            f"operation's result requires dtype {_dtype.TITLE[d]}"
        )
    return self.pow_(_as(exponent, d))


def ldexp(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input * 2 ** other`` (integers give floats)."""
    return _finish(input * PUBLIC["pow"](2.0, other), out)


def ldexp_(self: Tensor, other: Tensor) -> Tensor:
    """In-place form of `ldexp`."""
    if not isinstance(self, Tensor):
        raise not_a_tensor("ldexp_", self)
    return self.mul_(PUBLIC["pow"](2.0, other))


def frexp(input: Tensor, *, out=None):
    """The mantissa in [0.5, 1) (in magnitude) and the int32 exponent of each element:
    ``input == mantissa * 2 ** exponent``. Returns ``(mantissa, exponent)``."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("frexp", input, "input", 1)
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = call(frexp_op, (input,))
    exponent = exponent.to(_dtype.int32)
    if out is not None:
        write_out(out[0], mantissa, exact=True)
        write_out(out[1], exponent, exact=True)
        mantissa, exponent = out
    return return_types.frexp((mantissa, exponent))


# -- closeness -------------------------------------------------------------------------------
def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Whether each element of `input` is close to `other`'s:
    ``|input - other| <= atol + rtol * |other|`` (or equal; NaNs equal with `equal_nan`)."""
    _tensors("isclose", input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_title(input)} did not match {_title(other)}")
    if not rtol >= 0:  # NaN too
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if not atol >= 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    if not isinstance(equal_nan, bool):
        raise TypeError(
            f"isclose(): argument 'equal_nan' must be bool, not {type(equal_nan).__name__}"
        )
    close = input == other
    floating = input.dtype.rank >= _dtype.FLOATING
    if equal_nan and floating:
        close = close | (input.isnan() & other.isnan())
    if rtol == 0 and atol == 0:
        return close
    if not floating:
        input, other = input.to(_dtype.DEFAULTS.float), other.to(_dtype.DEFAULTS.float)
    error = (input - other).abs()
    return close | (error.isfinite() & (error <= atol + rtol * other.abs()))


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether every element of `input` is close to `other`'s (see `isclose`)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape and equal elements."""
    _tensors("equal", input, other)
    if input._data.shape != other._data.shape:
        return False
    return bool((input == other).all())


def isin(
    elements,
    test_elements,
    *,
    assume_unique: bool = False,
    invert: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """Whether each element of `elements` is among `test_elements` (either may be a number);
    the result has the shape of `elements`. `invert` negates it."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise not_a_tensor("isin", elements, "elements", 1)
    assume_unique = flag("isin", assume_unique, "assume_unique")
    invert = flag("isin", invert, "invert")
    for x in (elements, test_elements):
        kind = x.dtype if isinstance(x, Tensor) else _dtype.promote_operands((x,))
        if kind is _dtype.bool or kind.is_complex:
            raise RuntimeError(
                f"Unsupported input type encountered for isin(): {_dtype.TITLE[kind]}"
            )
    d = _dtype.promote_operands((elements, test_elements))
    tensors = [
        x.to(d) if isinstance(x, Tensor) else PUBLIC["tensor"](x, dtype=d, device=dev)
        for x, dev in (
            (elements, _device_of(elements, test_elements)),
            (test_elements, _device_of(test_elements, elements)),
        )
    ]
    result = call(isin_op, tuple(tensors), bool(invert))
    return result if out is None else write_out_same_dtype(out, result)


def _device_of(x, other):
    return x.device if isinstance(x, Tensor) else other.device


# -- fused multiply-adds ---------------------------------------------------------------------
def _no_bool_addcmul(input, tensor1, tensor2):
    """PyTorch's addcmul kernel has no bool form (all three operands bool); `input`'s dtype."""
    dtype = getattr(input, "dtype", None)
    if (
        dtype is _dtype.bool
        and getattr(tensor1, "dtype", None) is _dtype.bool
        and getattr(tensor2, "dtype", None) is _dtype.bool
    ):
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    return dtype


def _value(value, *tensors):
    """`value` as PyTorch casts it: to an integer when the result is integral."""
    if isinstance(value, float):
        result_dtype = _dtype.promote_operands(tensors)
        if result_dtype.rank < _dtype.FLOATING:
            return int(value)
        check_scalar_fits(value, result_dtype, opmath=True)
    return value


ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes."
)


def _quotient(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    if not isinstance(tensor1, Tensor):
        raise not_a_tensor("addcdiv", tensor1, "tensor1", 2)
    if not isinstance(tensor2, Tensor):
        raise not_a_tensor("addcdiv", tensor2, "tensor2", 3)
    if tensor1.dtype.rank < _dtype.FLOATING and tensor2.dtype.rank < _dtype.FLOATING:
        raise RuntimeError(ADDCDIV_INTEGER)
    return tensor1 / tensor2


def addcmul(
    input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out: Tensor | None = None
) -> Tensor:
    """``input + value * tensor1 * tensor2``, broadcast."""
    half = _no_bool_addcmul(input, tensor1, tensor2) in _HALF_DTYPES
    value = _value(value, input, tensor1, tensor2)
    low = _half(input, tensor1, tensor2) if half else None
    if low is not None:  # PyTorch's kernel: in float32, rounded once
        product = tensor1.float() * tensor2.float()
        return _finish((input.float() + value * product).to(low), out)
    return _finish(input + value * (tensor1 * tensor2), out)


def addcdiv(
    input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out: Tensor | None = None
) -> Tensor:
    """``input + value * tensor1 / tensor2``, broadcast (not for two integer tensors)."""
    value = _value(value, input, tensor1, tensor2)
    low = _half(input, tensor1, tensor2) if getattr(input, "dtype", None) in _HALF_DTYPES else None
    if low is not None:  # PyTorch's kernel: in float32, rounded once
        quotient = _quotient(tensor1.float(), tensor2.float())
        return _finish((input.float() + value * quotient).to(low), out)
    return _finish(input + value * _quotient(tensor1, tensor2), out)


_HALF_DTYPES = (_dtype.float16, _dtype.bfloat16)


def _half(*tensors):
    """The dtype of `tensors` when all of them are Tensors of one half-precision dtype
    (float16 or bfloat16), else None."""
    first = getattr(tensors[0], "_data", None)
    if first is None or first.dtype.char not in HALF_CHARS:
        return None
    for t in tensors[1:]:
        if getattr(t, "_data", None) is None or t._data.dtype != first.dtype:
            return None
    return tensors[0].dtype


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """In-place form of `addcmul`."""
    if _no_bool_addcmul(self, tensor1, tensor2) in _HALF_DTYPES and _half(self, tensor1, tensor2):
        return inplace(
            self, (tensor1, tensor2), lambda: addcmul(self, tensor1, tensor2, value=value), None
        )
    return self.add_(_value(value, self, tensor1, tensor2) * (tensor1 * tensor2))


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """In-place form of `addcdiv`."""
    if getattr(self, "dtype", None) in _HALF_DTYPES and _half(self, tensor1, tensor2):
        return inplace(
            self, (tensor1, tensor2), lambda: addcdiv(self, tensor1, tensor2, value=value), None
        )
    return self.add_(_value(value, self, tensor1, tensor2) * _quotient(tensor1, tensor2))


# -- complex numbers -------------------------------------------------------------------------
def conj(input: Tensor) -> Tensor:
    """The complex conjugate (a copy, as tocha has no lazy conjugation); a real tensor is
    returned itself."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("conj", input, "input", 1)
    if not input.is_complex():
        return input
    return unary(conj_op, input, False)


def conj_physical(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex conjugate, computed (a real tensor is returned itself)."""
    return _finish(conj(input), out)


def conj_physical_(self: Tensor) -> Tensor:
    """Conjugates `self` in place (nothing to do for a real tensor)."""
    try:
        real = not self.is_complex()
    except AttributeError:
        raise not_a_tensor("conj_physical_", self) from None
    if real:
        return self
    return assign(self, conj(self))


def resolve_conj(input: Tensor) -> Tensor:
    """`input` itself: tocha never defers a conjugation."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("resolve_conj", input, "input", 1)
    return input


def resolve_neg(input: Tensor) -> Tensor:
    """`input` itself: tocha never defers a negation."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("resolve_neg", input, "input", 1)
    return input


def is_conj(input: Tensor) -> bool:
    """False: tocha never defers a conjugation."""
    return False


def is_neg(input: Tensor) -> bool:
    """False: tocha never defers a negation."""
    return False


def real(input: Tensor) -> Tensor:
    """A view of the real parts of a complex tensor; a real tensor is returned itself."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("real", input, "input", 1)
    if not input.is_complex():
        return input
    return call_view(real_op, input)


def imag(input: Tensor) -> Tensor:
    """A view of the imaginary parts of a complex tensor."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("imag", input, "input", 1)
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return call_view(imag_op, input)


def angle(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The argument of each element in radians: ``atan2(imag, real)`` for complex numbers,
    0 or pi for real ones (integers give floats)."""
    return _finish(unary(angle_op, input, True), out)


def view_as_real(input: Tensor) -> Tensor:
    """A view of a complex tensor as real pairs: shape ``(*, 2)`` holding (real, imag)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("view_as_real", input, "input", 1)
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return call_view(view_as_real_op, input)


@autocast_op("view_as_complex")
def view_as_complex(input: Tensor) -> Tensor:
    """A view of a float tensor of shape ``(*, 2)`` (real, imag pairs) as complex numbers of
    shape ``(*)``."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("view_as_complex", input, "input", 1)
    if input.dtype not in (_dtype.float16, _dtype.float32, _dtype.float64):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double "
            f"tensors, but got a tensor of scalar type: {_title(input)}"
        )
    if input.dtype is _dtype.float16:
        raise NotImplementedError("tocha has no complex32 dtype to view float16 pairs as")
    if not input._data.ndim:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return call_view(view_as_complex_op, input)


def _check_parts(real, imag, names: str) -> None:
    if not isinstance(real, Tensor):
        raise not_a_tensor(names[0], real, names[1], 1)
    if not isinstance(imag, Tensor):
        raise not_a_tensor(names[0], imag, names[2], 2)
    allowed = (_dtype.float16, _dtype.float32, _dtype.float64)
    if real.dtype not in allowed or imag.dtype not in allowed:
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got "
            f"{_title(real)} and {_title(imag)}"
        )
    if real.dtype is not imag.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {_title(real)} but got scalar type "
            f"{_title(imag)} for second argument"
        )
    if real.dtype is _dtype.float16:
        raise NotImplementedError("tocha has no complex32 dtype for float16 parts")


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A001
    """The complex tensor ``real + imag * 1j`` (float32 parts give complex64, float64
    complex128), broadcast."""
    _check_parts(real, imag, ("complex", "real", "imag"))
    try:
        result = call(complex_op, (real, imag))
    except ValueError:
        raise broadcast_error(real._data.shape, imag._data.shape) from None
    return _finish(result, out)


@autocast_op("polar")
def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The complex tensor of absolute values `abs` and arguments `angle`:
    ``abs * (cos(angle) + sin(angle) * 1j)``."""
    _check_parts(abs, angle, ("polar", "abs", "angle"))
    return complex(abs * angle.cos(), abs * angle.sin(), out=out)


def _set_real(self: Tensor, value) -> None:
    real(self).copy_(value)


def _set_imag(self: Tensor, value) -> None:
    imag(self).copy_(value)


for _fn in (
    logaddexp,
    logaddexp2,
    deg2rad,
    rad2deg,
    heaviside,
    gcd,
    lcm,
    nextafter,
    float_power,
    ldexp,
    frexp,
    isclose,
    allclose,
    equal,
    isin,
    addcmul,
    addcdiv,
    conj,
    conj_physical,
    resolve_conj,
    resolve_neg,
    is_conj,
    is_neg,
    angle,
):
    export(_fn, method=_fn is not isin)
for _fn in (
    deg2rad_,
    rad2deg_,
    heaviside_,
    gcd_,
    lcm_,
    nextafter_,
    float_power_,
    ldexp_,
    addcmul_,
    addcdiv_,
    conj_physical_,
):
    export(
        _fn, method=True, function=_fn in (deg2rad_, rad2deg_, conj_physical_, gcd_, lcm_, ldexp_)
    )
for _fn in (view_as_real, view_as_complex, complex, polar):
    export(_fn)
export(real)
export(imag)
Tensor.real = property(real, _set_real, doc="The real parts (a view); see `tocha.real`.")
Tensor.imag = property(imag, _set_imag, doc="The imaginary parts (a view); see `tocha.imag`.")
