"""tocha.fft: discrete Fourier transforms, as `torch.fft`.

Three primitives, as PyTorch's own: ``fft_c2c`` (complex to complex), ``fft_r2c`` (real to
complex, the half spectrum when `onesided`) and ``fft_c2r`` (a half spectrum to a real signal),
each over a tuple of dims, with a `scale` ("none", "by_n", "by_root_n") and a direction
(`forward`: the kernel exp(-2 pi i k t / n)). Every public transform maps onto one of them;
``n`` and ``s`` trim or zero-pad the input first (tocha ops, so autograd follows). A fifth op,
``fft_real`` (the real part), serves the derivative of the full real-to-complex transform.

dtypes as PyTorch: float32 -> complex64, float64 -> complex128; integers go to the default
float dtype first. ``norm``: "backward" (default: the inverse transforms scale by 1/n),
"ortho" (both by 1/sqrt(n)) or "forward" (the forward transforms scale by 1/n).
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtype
from ._api import PUBLIC, export
from ._dispatch import autocast_op, call, defop, expect_tensor
from ._ops import aliases as _aliases
from ._ops._argcheck import index_arg
from ._ops._out import write_out
from ._stack import user_stacklevel
from ._tensor import Tensor, _wrap_dim

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

# NumPy's `norm` giving each scale, for its forward and its inverse functions.
_NP_NORM_FORWARD = {"none": "backward", "by_n": "forward", "by_root_n": "ortho"}
_NP_NORM_INVERSE = {"none": "forward", "by_n": "backward", "by_root_n": "ortho"}
_COMPLEX = {np.dtype("float32"): np.complex64, np.dtype("complex64"): np.complex64}


def _complex_of(dt):
    return _COMPLEX.get(dt, np.complex128)


def _c2c_kernel(xp):
    def kernel(x, dims, scale, forward):
        transform = xp.fft.fftn if forward else xp.fft.ifftn
        norm = (_NP_NORM_FORWARD if forward else _NP_NORM_INVERSE)[scale]
        return transform(x, axes=dims, norm=norm).astype(_complex_of(x.dtype), copy=False)

    return kernel


def _r2c_kernel(xp):
    def kernel(x, dims, scale, onesided, forward):
        transform = xp.fft.rfftn if onesided else xp.fft.fftn
        y = transform(x, axes=dims, norm=_NP_NORM_FORWARD[scale])
        y = y.astype(_complex_of(x.dtype), copy=False)
        return y if forward else xp.conj(y)

    return kernel


def _c2r_kernel(xp):
    def kernel(x, dims, scale, last_size, forward):
        sizes = [x.shape[d] for d in dims[:-1]] + [last_size]
        y = xp.fft.irfftn(
            xp.conj(x) if forward else x, s=sizes, axes=dims, norm=_NP_NORM_INVERSE[scale]
        )
        return y.astype(x.real.dtype, copy=False)

    return kernel


def _real_kernel(xp):
    return lambda x: xp.real(x).copy()


C2C = defop("fft_c2c", _c2c_kernel)
R2C = defop("fft_r2c", _r2c_kernel)
C2R = defop("fft_c2r", _c2r_kernel)
REAL = defop("fft_real", _real_kernel)


# -- arguments --------------------------------------------------------------------------------
def _scale(norm: str | None, forward: bool) -> str:
    """The scale PyTorch applies for `norm` in the given direction."""
    if norm is None or norm == "backward":
        return "none" if forward else "by_n"
    if norm == "forward":
        return "by_n" if forward else "none"
    if norm == "ortho":
        return "by_root_n"
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


# PyTorch's messages for a complex input to the n-dimensional real-input transforms.
_REAL_ONLY = {
    "rfftn": "rfftn expects a real-valued input tensor, but got {}",
    "ihfftn": "Only supports floating-point dtypes, but found: {}",
}


def _input(x, name: str, s=None, dim=None, *, real: bool = False, complex_: bool = False) -> Tensor:
    """The input as a float (`real`), complex (`complex_`) or either tensor; integers go to
    the default float dtype. float16/bfloat16 are refused after the dims (`s`, `dim`) are
    checked, as PyTorch's."""
    expect_tensor(f"fft_{name}", x)
    dt = x.dtype
    if dt.rank < _dtype.FLOATING:
        x, dt = x.to(_dtype.DEFAULTS.float), _dtype.DEFAULTS.float
    if dt in (_dtype.float16, _dtype.bfloat16):
        _dims_and_sizes(x, s, dim)
        raise RuntimeError(f"Unsupported dtype {_dtype.TITLE[dt]}")
    if real and dt.is_complex:
        message = _REAL_ONLY.get(name, f"{name} expects a real input tensor, but got {{}}")
        raise RuntimeError(message.format(_dtype.TITLE[dt]))
    if complex_ and not dt.is_complex:
        x = x.to(dt.to_complex())
    return x


def _resized(x: Tensor, dim: int, n: int) -> Tensor:
    """`x` trimmed or zero-padded at the end of `dim` to `n` elements."""
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    size = x.shape[dim]
    if n < size:
        return x.narrow(dim, 0, n)
    if n > size:
        shape = list(x.shape)
        shape[dim] = n - size
        return PUBLIC["cat"]([x, PUBLIC["zeros"](shape, dtype=x.dtype, device=x.device)], dim)
    return x


def _dims_and_sizes(x: Tensor, s, dim):
    """PyTorch's rules for the (s, dim) of the n-dimensional transforms: the dims (wrapped,
    in order) and the signal size along each (None: unchanged)."""
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if not x.ndim and dims:  # a 0-dim input has no dim to transform
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        dims = [_wrap_dim(d, x.ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions."
            )
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = list(range(x.ndim))
    if s is not None and any(isinstance(n, int) and not -(2**63) <= n < 2**63 for n in s):
        raise ValueError("Overflow when unpacking long long")
    sizes = [None] * len(dims) if s is None else [None if n == -1 else n for n in s]
    return tuple(dims), sizes


def _one_axis_at_least(name: str, dims, sizes):
    """`(dims, sizes)` of a half-spectrum transform, which needs a last axis."""
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    return dims, sizes


def _resize_all(x: Tensor, dims, sizes) -> Tensor:
    """`x` trimmed or zero-padded to `sizes` along `dims`; each of them must hold a point."""
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _resized(x, d, n)
        elif x.shape[d] == 0:
            raise RuntimeError("Invalid number of data points (0) specified")
    return x


# -- the transforms ---------------------------------------------------------------------------
def _written(name: str, result: Tensor, out: Tensor | None) -> Tensor:
    """`result`, or the ``out=`` tensor holding it (of the result's kind: complex, or real;
    a wider precision is allowed, as in PyTorch)."""
    if out is None:
        return result
    if isinstance(out, Tensor) and out.is_complex() != result.is_complex():
        kind = "a complex" if result.is_complex() else "a floating point"
        raise RuntimeError(
            f"{name} expects {kind} output tensor, but got {_dtype.TITLE[out.dtype]}"
        )
    return write_out(out, result)


def _c2c_or_r2c(x: Tensor, dims, norm, forward: bool) -> Tensor:
    scale = _scale(norm, forward)
    if x.is_complex():
        return call(C2C, (x,), dims, scale, forward)
    return call(R2C, (x,), dims, scale, False, forward)


def _one_dimensional(name: str, nd, doc: str, **kind):
    """The 1-D transform `name`: `nd` (its n-dimensional form) over ``(dim,)``, the signal
    trimmed or zero-padded to `n` points; `kind` says which inputs it takes (`_input`)."""

    def transform(
        input: Tensor,
        n: int | None = None,
        dim: int = -1,
        norm: str | None = None,
        *,
        out: Tensor | None = None,
    ) -> Tensor:
        x = _input(input, name, **kind)
        if n is not None and type(n) is not int:
            n = index_arg(f"fft_{name}", n, "n")
        return _written(name, nd(x, None if n is None else (n,), (dim,), norm), out)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


def _two_dimensional(name: str, nd):
    """The 2-D transform `name`: `nd` with the last two dims as its default."""

    def transform(
        input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out: Tensor | None = None
    ) -> Tensor:
        return _written(name, nd(input, s, dim, norm), out)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"`{nd.__name__}` over the last two dims."
    return transform


def fftn(
    input: Tensor, s=None, dim=None, norm: str | None = None, *, out: Tensor | None = None
) -> Tensor:
    """The n-dimensional discrete Fourier transform over `dim` (every dim by default; the last
    ``len(s)`` with `s`), each trimmed or zero-padded to the size in `s`."""
    x = _input(input, "fftn", s, dim)
    dims, sizes = _dims_and_sizes(x, s, dim)
    return _written("fftn", _c2c_or_r2c(_resize_all(x, dims, sizes), dims, norm, True), out)


def ifftn(
    input: Tensor, s=None, dim=None, norm: str | None = None, *, out: Tensor | None = None
) -> Tensor:
    """The inverse of `fftn`."""
    x = _input(input, "ifftn", s, dim)
    dims, sizes = _dims_and_sizes(x, s, dim)
    return _written("ifftn", _c2c_or_r2c(_resize_all(x, dims, sizes), dims, norm, False), out)


def rfftn(
    input: Tensor, s=None, dim=None, norm: str | None = None, *, out: Tensor | None = None
) -> Tensor:
    """`fftn` of a real input, keeping the non-negative frequencies of the last dim
    (``n // 2 + 1`` of them)."""
    x = _input(input, "rfftn", s, dim, real=True)
    dims, sizes = _one_axis_at_least("rfftn", *_dims_and_sizes(x, s, dim))
    x = _resize_all(x, dims, sizes)
    return _written("rfftn", call(R2C, (x,), dims, _scale(norm, True), True, True), out)


def _c2r(x: Tensor, dims, sizes, norm, forward: bool) -> Tensor:
    """The real signal whose half spectrum (last dim) is `x`; the last size defaults to
    ``2 (m - 1)``."""
    last = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    x = _resize_all(x, dims[:-1], sizes[:-1])
    x = _resized(x, dims[-1], last // 2 + 1)
    return call(C2R, (x,), dims, _scale(norm, forward), last, forward)


def irfftn(
    input: Tensor, s=None, dim=None, norm: str | None = None, *, out: Tensor | None = None
) -> Tensor:
    """The inverse of `rfftn`: a real signal (last dim of size ``s[-1]``, by default
    ``2 (m - 1)``)."""
    x = _input(input, "irfftn", s, dim, complex_=True)
    dims, sizes = _one_axis_at_least("irfftn", *_dims_and_sizes(x, s, dim))
    return _written("irfftn", _c2r(x, dims, sizes, norm, False), out)


def hfftn(
    input: Tensor, s=None, dim=None, norm: str | None = None, *, out: Tensor | None = None
) -> Tensor:
    """The n-dimensional `hfft`: the real forward transform of a Hermitian-symmetric signal
    given by the first half of its last dim (``s[-1]`` real points, default ``2 (m - 1)``)."""
    x = _input(input, "hfftn", s, dim, complex_=True)
    dims, sizes = _one_axis_at_least("hfftn", *_dims_and_sizes(x, s, dim))
    return _written("hfftn", _c2r(x, dims, sizes, norm, True), out)


def ihfftn(
    input: Tensor, s=None, dim=None, norm: str | None = None, *, out: Tensor | None = None
) -> Tensor:
    """The inverse of `hfftn`: the half spectrum (last dim) of a real signal."""
    x = _input(input, "ihfftn", s, dim, real=True)
    dims, sizes = _one_axis_at_least("ihfftn", *_dims_and_sizes(x, s, dim))
    x = _resize_all(x, dims, sizes)
    return _written("ihfftn", call(R2C, (x,), dims, _scale(norm, False), True, False), out)


fft = _one_dimensional(
    "fft",
    fftn,
    """The one-dimensional discrete Fourier transform along `dim` (trimmed or zero-padded
    to `n` points first).

    Example: ``tocha.fft.fft(tocha.ones(4))`` is ``[4, 0, 0, 0]`` (complex64).
    """,
)
ifft = _one_dimensional("ifft", ifftn, "The inverse of `fft`.")
rfft = _one_dimensional(
    "rfft", rfftn, "`fft` of a real input: the ``n // 2 + 1`` non-negative frequencies.", real=True
)
irfft = _one_dimensional(
    "irfft",
    irfftn,
    "The inverse of `rfft`: `n` real points (default ``2 (m - 1)``).",
    complex_=True,
)
hfft = _one_dimensional(
    "hfft",
    hfftn,
    """The (real) forward transform of a Hermitian-symmetric signal given by its first half:
    `n` real points (default ``2 (m - 1)``).""",
    complex_=True,
)
ihfft = _one_dimensional(
    "ihfft",
    ihfftn,
    "The inverse of `hfft`: the half spectrum of a real signal (``n // 2 + 1`` points).",
    real=True,
)
fft2 = _two_dimensional("fft2", fftn)
ifft2 = _two_dimensional("ifft2", ifftn)
rfft2 = _two_dimensional("rfft2", rfftn)
irfft2 = _two_dimensional("irfft2", irfftn)
hfft2 = _two_dimensional("hfft2", hfftn)
ihfft2 = _two_dimensional("ihfft2", ihfftn)

# Each transform is one PyTorch op: in an autocast region the listed ones run in float32
for _name in (
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
    "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn",
):  # fmt: skip
    globals()[_name] = autocast_op(f"fft_{_name}")(globals()[_name])


# -- frequencies and shifts -------------------------------------------------------------------
def _check_points(name: str, n, d) -> None:
    """PyTorch's errors for the `n` and `d` of `fftfreq`/`rfftfreq`."""
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"{name}(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    n = n.__index__()
    if not -(2**63) <= n < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if not isinstance(d, (int, float)):
        raise TypeError(
            f"{name}(): argument 'd' (position 2) must be float, not {type(d).__name__}"
        )


def _spaced(k: np.ndarray, n: int, d: float) -> np.ndarray:
    """The frequencies ``k / (d n)``: NaN or infinite where ``d n`` is 0, as in PyTorch."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return k / (np.float64(n) * np.float64(d))


def _signed_bins(n: int) -> np.ndarray:
    """``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1]``."""
    return np.concatenate([np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])


def _frequencies(name: str, values: np.ndarray, dtype, device, requires_grad: bool) -> Tensor:
    dtype = _dtype.DEFAULTS.float if dtype is None else dtype
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if dtype.is_complex:  # PyTorch builds the bins with arange, which has no complex kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dtype.TITLE[dtype]}'")
    result = PUBLIC["from_numpy"](values.astype(dtype.np))
    if device is not None:
        result = result.to(device)
    return result.requires_grad_(requires_grad) if requires_grad else result


def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The sample frequencies of an `n`-point transform with sample spacing `d`:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)``."""
    _check_points("fft_fftfreq", n, d)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _written(
        "fftfreq",
        _frequencies("fftfreq", _spaced(_signed_bins(n), n, d), dtype, device, requires_grad),
        out,
    )


def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The ``n // 2 + 1`` non-negative sample frequencies of `rfft`: ``[0, ..., n // 2] /
    (d n)``."""
    _check_points("fft_rfftfreq", n, d)
    bins = _spaced(np.arange(int(n / 2) + 1), n, d)
    result = _frequencies("rfftfreq", bins, dtype, device, requires_grad)
    return _written("rfftfreq", result, out)


def _rolled(x: Tensor, dims, inverse: bool) -> Tensor:
    expect_tensor("fft_ifftshift" if inverse else "fft_fftshift", x)
    dims = range(x.ndim) if dims is None else [dims] if isinstance(dims, int) else dims
    if not dims:  # PyTorch rolls by one shift per dim, and a roll needs one
        raise RuntimeError("`shifts` required")
    for d in dims:
        n = x.shape[d]
        shift = (n + 1) // 2 if inverse else n // 2  # roll right by n // 2 (fftshift)
        if n > 1 and shift % n:
            x = PUBLIC["cat"]([x.narrow(d, n - shift, shift), x.narrow(d, 0, n - shift)], d)
    return x


def fftshift(input: Tensor, dim=None) -> Tensor:
    """The zero frequency moved to the centre: a roll by ``n // 2`` along each dim of `dim`
    (every dim by default)."""
    return _rolled(input, dim, False)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of `fftshift`."""
    return _rolled(input, dim, True)


# -- short-time Fourier transforms (top-level torch.stft / torch.istft) ---------------------
def _padded_window(window, win_length: int, n_fft: int, like: Tensor) -> Tensor:
    """`window` (ones when None) of `win_length`, zero-padded on both sides to `n_fft`."""
    if window is None:
        window = PUBLIC["ones"](win_length, dtype=like.dtype.to_real(), device=like._device)
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(
            f"stft: expected a 1D window tensor of size equal to win_length={win_length}, "
            f"but got window with size {list(window.shape)}"
        )
    left = (n_fft - win_length) // 2
    if left or n_fft - win_length - left:
        zeros = PUBLIC["zeros"]
        window = PUBLIC["cat"](
            [
                zeros(left, dtype=window.dtype, device=window._device),
                window,
                zeros(n_fft - win_length - left, dtype=window.dtype, device=window._device),
            ]
        )
    return window


def _pad_signal(x: Tensor, pad: int, mode: str) -> Tensor:
    """`x` (..., n) padded by `pad` on both sides of its last dim: reflect, constant,
    replicate or circular."""
    n = x.shape[-1]
    if mode == "reflect":
        if pad >= n:
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({pad}, {pad}) at dimension {x.dim() - 1} of "
                f"input {list(x.shape)}"
            )
        left = PUBLIC["flip"](x[..., 1 : pad + 1], (-1,))
        right = PUBLIC["flip"](x[..., n - pad - 1 : n - 1], (-1,))
    elif mode == "constant":
        left = right = PUBLIC["zeros"]((*x.shape[:-1], pad), dtype=x.dtype, device=x._device)
    elif mode == "replicate":
        left = x[..., :1].expand(*x.shape[:-1], pad)
        right = x[..., n - 1 :].expand(*x.shape[:-1], pad)
    elif mode == "circular":
        left, right = x[..., n - pad :], x[..., :pad]
    else:
        raise NotImplementedError(f"stft: unsupported pad_mode {mode!r}")
    return PUBLIC["cat"]([left, x, right], -1)


@autocast_op("stft")
def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform of a signal (n) or a batch (b, n): frames of `n_fft`
    samples `hop_length` apart (default ``n_fft // 4``), each times `window` (ones of
    `win_length`, default `n_fft`, centred in `n_fft`), transformed. `center` pads the signal
    by ``n_fft // 2`` on both sides (`pad_mode`). Result (b?, freqs, frames), freqs
    ``n_fft // 2 + 1`` when `onesided` (the default for a real signal and window).
    `return_complex` must be given for a real signal; False returns the real view
    (..., 2)."""
    x = expect_tensor("stft", input, "input", 1)
    if window is not None:
        expect_tensor("stft", window, "window", None)
    if center and pad_mode == "reflect" and x.dtype is _dtype.bool and x.dim() in (1, 2):
        # PyTorch pads the signal first, and its reflection padding has no bool kernel
        raise NotImplementedError("\"reflection_pad1d\" not implemented for 'Bool'")
    complex_input = x.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_input:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and "
                "will further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if x.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {x.dim()}D tensor")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(
            f"stft: expected a tensor of floating point or complex values, got {x.dtype}"
        )
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    batched = x.dim() == 2
    if not batched:
        x = x.unsqueeze(0)
    if center:
        x = _pad_signal(x, n_fft // 2, pad_mode)
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    frames = x.unfold(-1, n_fft, hop) * _padded_window(window, win, n_fft, x)
    one = (not complex_input) if onesided is None else onesided
    if one and complex_input:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    spectrum = (rfft if one else fft)(frames, norm="ortho" if normalized else None)
    result = spectrum.transpose(-1, -2)
    if not batched:
        result = result.squeeze(0)
    if return_complex:
        return result
    warnings.warn(
        "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
        "return complex tensors for all inputs, and return_complex=False will raise an error.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    return PUBLIC["view_as_real"](result)


def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse of `stft`: each frame of the complex spectrum (b?, freqs, frames)
    transformed back, times the window, overlap-added and divided by the summed squared
    window; `center` trims ``n_fft // 2`` from both ends; `length` trims or zero-pads the
    signal to that many samples."""
    z = expect_tensor("istft", input, "input", 1)
    if not z.dtype.is_complex:
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft "
            "with return_complex=True."
        )
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    batched = z.dim() == 3
    if not batched:
        z = z.unsqueeze(0)
    freqs, count = z.shape[-2], z.shape[-1]
    one = (freqs != n_fft) if onesided is None else onesided
    if one and freqs != n_fft // 2 + 1:
        raise RuntimeError(
            f"istft: expected the frequency dimension (3rd to the last) of the input tensor "
            f"to match n_fft / 2 + 1 when onesided=True, but got {freqs}"
        )
    norm = "ortho" if normalized else None
    spectra = z.transpose(-1, -2)
    if return_complex:
        if one:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        frames = ifft(spectra, n=n_fft, norm=norm)
    elif one:
        frames = irfft(spectra, n=n_fft, norm=norm)
    else:
        frames = PUBLIC["real"](ifft(spectra, n=n_fft, norm=norm))
    w = _padded_window(window, win, n_fft, frames)
    frames = frames * w
    total = n_fft + hop * (count - 1)
    index = (
        PUBLIC["arange"](count, device=z._device)[:, None] * hop
        + PUBLIC["arange"](n_fft, device=z._device)
    ).reshape(-1)
    signal = PUBLIC["zeros"]((z.shape[0], total), dtype=frames.dtype, device=z._device).index_add(
        -1, index, frames.reshape(z.shape[0], -1)
    )
    envelope = PUBLIC["zeros"](total, dtype=w.dtype, device=z._device).index_add(
        0, index, (w * w).expand(count, n_fft).reshape(-1)
    )
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = start + length
    envelope = envelope[start : min(end, total)]
    if bool((envelope.abs() < 1e-11).any().item()):
        raise RuntimeError(
            "istft: window overlap add min: 0 is less than 1e-11 (the window and hop "
            "do not satisfy the NOLA condition)"
        )
    signal = signal[:, start : min(end, total)] / envelope
    if end > total:
        signal = PUBLIC["cat"](
            [
                signal,
                PUBLIC["zeros"](
                    (signal.shape[0], end - total), dtype=signal.dtype, device=z._device
                ),
            ],
            -1,
        )
    return signal if batched else signal.squeeze(0)


export(stft, method=True)
export(istft, method=True)

_aliases.alias_module(globals())
