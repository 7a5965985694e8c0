"""Kernels that keep their input's floating dtype: NumPy computes a bfloat16 or float16 array
with a Python float (or a float32 operand) in float32, where PyTorch returns the input's
dtype."""

from __future__ import annotations

from tocha.library import FROM_NP, TITLE

# The C++ type names PyTorch's kernels print in dtype errors, by TITLE name.
C_TYPE = {
    "Bool": "bool",
    "Byte": "unsigned char",
    "Char": "signed char",
    "Short": "short int",
    "Int": "int",
    "Long": "long int",
    "Half": "c10::Half",
    "BFloat16": "c10::BFloat16",
    "Float": "float",
    "Double": "double",
    "ComplexFloat": "c10::complex<float>",
    "ComplexDouble": "c10::complex<double>",
}


def c_type(dtype) -> str:
    """`dtype` as PyTorch's C++ kernels name it in messages (``double``, ``long int``...)."""
    return C_TYPE.get(TITLE[dtype], TITLE[dtype].lower())


# NumPy dtype kinds of the floating dtypes (bfloat16 is ml_dtypes' "V").
FLOATING_KINDS = "fV"


def keeping_dtype(factory, integers: bool = False):
    """A kernel factory whose kernel's floating results take its first operand's dtype when
    that is floating (and, with `integers`, for clamps, an integer one): for heavy kernels
    (convolutions, attention), where one more call costs nothing measurable."""

    def make(xp):
        kernel = factory(xp)

        def run(x, *args):
            out = kernel(x, *args)
            if type(out) is tuple:
                return tuple(fit_dtype(r, x.dtype, integers) for r in out)
            return fit_dtype(out, x.dtype, integers)

        return run

    return make


def fit_dtype(out, dtype, integers: bool = False):
    """`out` cast to `dtype` where NumPy widened a floating `dtype` (or, with `integers`, an
    integer one); kernels call it only when the dtypes differ, so float32 pays nothing."""
    if out.dtype == dtype or out.dtype.kind != "f":
        return out
    if dtype.kind == "f" or dtype.name == "bfloat16" or (integers and dtype.kind in "iu"):
        return out.astype(dtype)
    return out


def no_kernel(kernel: str, dtype) -> NotImplementedError:
    """PyTorch's error for a CPU kernel (`kernel`, its C++ name) that has no version for the
    NumPy `dtype`."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{TITLE[FROM_NP[dtype]]}'")
