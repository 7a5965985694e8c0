"""Half precision computed in float32 ("opmath"), as PyTorch's CPU kernels compute it.

PyTorch's kernels read float16 and bfloat16 elements into float32, do all their arithmetic
there and round each result once. A NumPy kernel written as several array expressions
rounds after every one of them when its input is float16 or bfloat16: GELU's
``0.5 * x * (1 + erf(x / sqrt(2)))`` in float16 is off by over a hundred ulp for small x.
A single ufunc is already right (NumPy's float16 and ml_dtypes' bfloat16 loops compute in
float32 and round once), so only ops whose kernel takes several steps declare ``opmath``
(`tocha.library.defop(..., opmath=True)`); the per-device kernel cache then sends their
half-precision inputs through the op's float32 kernels (`half_through`), those of kernel
providers included, below which float32 and float64 inputs pay one dtype test (none where a
provider serves them). A kernel may also call `in_float32` itself. A public
function that tocha composes of several ops where PyTorch runs one kernel (``F.rms_norm``,
``F.interpolate``) is wrapped in `computed_in_float32` instead.
"""

from __future__ import annotations

import functools

import numpy as np

_FLOAT32 = np.dtype(np.float32)
# NumPy's type characters of float16 and of ml_dtypes' bfloat16: a test as cheap as any
HALF_CHARS = "eE"


def in_float32(kernel):
    """`kernel`, whose first argument is an array, computing a float16/bfloat16 first
    argument (and every float16/bfloat16 array argument) in float32, its float32 results
    rounded once to the first argument's dtype: `half_through` with itself as the float32
    kernel."""
    return half_through(kernel, kernel)


def half_through(kernel, float32_kernel):
    """`kernel` for every input but a float16/bfloat16 first argument, which is computed by
    `float32_kernel` (the op's whole kernel stack, providers included) in float32 and
    rounded once: the per-device kernel cache builds an ``opmath`` op's kernel so. A kernel
    whose PyTorch counterpart computes half precision its own way carries that as
    ``kernel.half(x, *args)``, which answers NotImplemented for the inputs it leaves to
    float32."""

    special = getattr(kernel, "half", None)

    def run(x, *args):
        if x.dtype.char not in HALF_CHARS:
            return kernel(x, *args)
        if special is not None:
            out = special(x, *args)
            if out is not NotImplemented:
                return out
        return _rounded(float32_kernel(x.astype(_FLOAT32), *map(_widened, args)), x.dtype)

    run.__wrapped__ = kernel
    return run


def _widened(a):
    dtype = getattr(a, "dtype", None)
    if dtype is not None and dtype.char in HALF_CHARS and hasattr(a, "astype"):
        return a.astype(_FLOAT32)
    return a


def _rounded(out, dtype):
    if type(out) is tuple:
        return tuple(_rounded(o, dtype) for o in out)
    if getattr(out, "dtype", None) == _FLOAT32:
        return out.astype(dtype)
    return out


def computed_in_float32(fn):
    """Decorator for a public function composed of tocha ops, which PyTorch computes as one
    kernel in float32: when its tensor arguments' floating dtypes are all float16 or all
    bfloat16 (its first argument among them), they become float32, and the float32 results
    are rounded back once (casts autograd differentiates). With a float32 or float64
    argument beside them, promotion already computes in that dtype. Other dtypes pay a
    call and one dtype test."""

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        data = getattr(args[0], "_data", None) if args else None
        if data is None or data.dtype.char not in HALF_CHARS:
            return fn(*args, **kwargs)
        low = data.dtype
        for a in (*args, *kwargs.values()):
            other = getattr(getattr(a, "_data", None), "dtype", None)
            if other is not None and other.kind in "fV" and other != low:
                return fn(*args, **kwargs)
        low = args[0].dtype
        args = tuple(_widened_tensor(a) for a in args)
        kwargs = {k: _widened_tensor(v) for k, v in kwargs.items()}
        return _rounded_tensors(fn(*args, **kwargs), low)

    return entry


def _widened_tensor(a):
    data = getattr(a, "_data", None)
    if data is not None and getattr(data, "dtype", None) is not None:
        if data.dtype.char in HALF_CHARS:
            return a.float()
    return a


def _rounded_tensors(out, low):
    if type(out) is tuple:
        return tuple(_rounded_tensors(o, low) for o in out)
    data = getattr(out, "_data", None)
    if data is not None and getattr(data, "dtype", None) == _FLOAT32:
        return out.to(low)
    return out
