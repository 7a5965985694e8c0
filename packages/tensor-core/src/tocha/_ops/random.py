"""Random sampling: generators and seeding, sampling factories (rand, randn, randint, randperm,
normal, bernoulli, multinomial) and the Tensor's in-place samplers.

A `Generator` holds its backend's bit stream (`Backend.new_generator`). Kernels receive that
stream as their first argument and use only NumPy's ``Generator`` API, so one kernel serves
every backend that supplies such an object. The CPU's stream is NumPy's PCG64, or PyTorch's
values for the same seed (`tocha.compat.use_pytorch_random`, on under ``tocha.run``: see
`tocha._cpu_random`); other backends' streams give their own.
"""

from __future__ import annotations

import builtins
import functools
import math
import numbers
import os

import numpy as np

from .. import _device, _dtype
from .._api import export
from .._backend import _entries, backend_of, resolve_device
from .._cpu import kernel_context
from .._device import CPU
from .._dispatch import LAYERS, broadcast_error, bump_version, check_same_device, defop
from .._grad_mode import STATE
from .._tensor import Tensor, wrap
from ._argcheck import check_dtype, check_tensors
from ._fma import FUSED_DTYPES, fused_multiply_add
from ._out import check_no_internal_overlap, check_writable
from .creation import _device_of, _finish, laid_out_like, parse_size

DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed
_SEED_MIN, _SEED_END = -(2**63), 2**64


def _check_seed(seed) -> int:
    if isinstance(seed, Tensor):
        seed = seed.item()
    if not isinstance(seed, numbers.Integral):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not _SEED_MIN <= seed < _SEED_END:
        raise ValueError("Overflow when unpacking long long")
    return seed % _SEED_END


class Generator:
    """A source of random numbers for one device, as `torch.Generator`.

    ``Generator(device='cpu')``; seeded with `manual_seed` (which returns the generator) or
    `seed`; `get_state` / `set_state` save and restore its state as a uint8 tensor.
    """

    __slots__ = ("device", "_backend", "_stream", "_seed")

    def __init__(self, device: str | _device.device = "cpu") -> None:
        dev = resolve_device(device)
        self.device = dev
        self._backend = backend_of(dev)
        self._seed = DEFAULT_SEED
        self._stream = None

    @property
    def _impl(self):
        """The backend's bit stream, made on first use (``import tocha`` then does not load
        NumPy's random machinery)."""
        if self._stream is None:
            self._stream = self._backend.new_generator(self._seed, self.device)
        return self._stream

    def manual_seed(self, seed: int) -> Generator:
        """Seed the generator (any integer in [-2**63, 2**64)); returns the generator."""
        self._seed = _check_seed(seed)
        self._stream = None
        return self

    def seed(self) -> int:
        """Seed the generator from the operating system's entropy; returns that seed."""
        self.manual_seed(int.from_bytes(os.urandom(8), "little"))
        return self._seed

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with."""
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a 1-D uint8 CPU tensor (its seed, then the stream's)."""
        state = self._seed.to_bytes(8, "little") + self._backend.generator_state(self._impl)
        return wrap(np.frombuffer(state, dtype=np.uint8).copy(), CPU)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from `get_state`; returns the generator."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not _dtype.uint8:
            raise TypeError("RNG state must be a tocha.ByteTensor")
        data = new_state._host().tobytes()
        try:
            self._backend.set_generator_state(self._impl, data[8:])
        except (ValueError, TypeError) as exc:
            raise RuntimeError(
                f"Invalid RNG state of {len(data)} bytes for a {self.device.type} generator: {exc}"
            ) from None
        self._seed = int.from_bytes(data[:8], "little")
        return self

    def __repr__(self) -> str:
        return f"<tocha.Generator object on {self.device}>"


_defaults: dict = {}  # device -> its default Generator
_global_seed = [DEFAULT_SEED]


def _default_generator(dev) -> Generator:
    gen = _defaults.get(dev)
    if gen is None:
        gen = _defaults[dev] = Generator(dev).manual_seed(_global_seed[0])
    return gen


default_generator = _default_generator(CPU)


def _generator(generator, dev):
    """The bit stream to sample `dev`'s values from: `generator`'s, else the default's."""
    if STATE.transforms and LAYERS.draw is not None:
        LAYERS.draw()
    if generator is None:
        if dev is CPU:
            return default_generator._impl
        return _default_generator(dev)._impl
    if generator.device.type != dev.type:
        raise RuntimeError(
            f"Expected a '{dev.type}' device type for generator but found '{generator.device.type}'"
        )
    return generator._impl


def manual_seed(seed: int) -> Generator:
    """Seed the default generators of every device (and every loaded backend's own random
    state); returns the default CPU generator."""
    seed = _check_seed(int(seed))  # as PyTorch's: "12" and 1.5 seed, int() refuses "a"
    _global_seed[0] = seed
    for gen in _defaults.values():
        gen.manual_seed(seed)
    for entry in list(_entries.values()):
        if entry.backend is not None:
            entry.backend.manual_seed(seed)
    return default_generator


def restart_default_stream(dev) -> None:
    """Make `dev`'s default generator start its stream again from its seed, with the stream
    its backend now gives (`tocha.compat.use_pytorch_random` switched it)."""
    gen = _defaults.get(dev)
    if gen is not None:
        gen._stream = None


def manual_seed_device_type(device_type: str, seed: int) -> None:
    """Seed the default generators of the devices of one type (``tocha.cuda.manual_seed``)."""
    for dev, gen in list(_defaults.items()):
        if dev.type == device_type:
            gen.manual_seed(seed)


def seed() -> int:
    """Seed every default generator from the operating system's entropy; returns the seed."""
    s = int.from_bytes(os.urandom(8), "little")
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the default CPU generator."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default CPU generator's state, a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default CPU generator's state from `get_rng_state`."""
    default_generator.set_state(new_state)


for _fn in (manual_seed, seed, initial_seed, get_rng_state, set_rng_state):
    export(_fn)
export(Generator, "Generator")
export(default_generator, "default_generator")


# -- kernels: `gen` is the backend's bit stream, `dtype` a NumPy dtype ------------------------
def _standard(xp, gen, method, shape, dtype):
    """Standard samples (``random``: uniform on [0, 1), ``standard_normal``,
    ``standard_exponential``) for a float or complex `dtype`: float32 or float64 draws (a
    complex value takes two), scaled in place by the caller, then `_as_dtype`."""
    wide = dtype.itemsize == 8 and dtype.kind == "f" or dtype.itemsize == 16
    draw_dtype = xp.float64 if wide else xp.float32
    if dtype.kind == "c":
        shape = (*shape, 2)
    return getattr(gen, method)(shape, dtype=draw_dtype)


def _as_dtype(sample, dtype):
    if dtype.kind == "c":
        return sample.view(dtype)[..., 0]
    return sample.astype(dtype, copy=False)


def _uniform_kernel(xp):
    def kernel(gen, shape, dtype, low, high):
        u = _standard(xp, gen, "random", shape, dtype)
        if low != 0 or high != 1:
            if u.dtype == xp.float32:  # PyTorch's range: the bounds' difference in float32
                scale = float(xp.float32(high) - xp.float32(low))
            else:
                scale = high - low
            u = fused_multiply_add(xp, u, scale, low)
        result = _as_dtype(u, dtype)
        if dtype.itemsize == 2 and dtype.kind != "i":  # rounded up to `high`: PyTorch's `low`
            result[result == xp.asarray(high, dtype=dtype)] = low
        return result

    return kernel


def _normal_kernel(xp):
    def kernel(gen, shape, dtype, mean, std):
        """`mean` and `std` are numbers or arrays that broadcast to `shape`."""
        z = _standard(xp, gen, "standard_normal", shape, dtype)
        if dtype.kind == "c":
            z *= math.sqrt(0.5)  # a complex normal has variance 1: each part 1/2
            z = z.view(dtype)[..., 0]
        if type(std) is float and type(mean) is float and z.dtype in FUSED_DTYPES:
            if std != 1.0 or mean != 0.0:
                z = fused_multiply_add(xp, z, std, mean)
            return z.astype(dtype, copy=False)
        if type(std) is not float or std != 1.0:
            z *= std
        if type(mean) is not float or mean != 0.0:
            z += mean
        return z.astype(dtype, copy=False)

    return kernel


def _exponential_kernel(xp):
    def kernel(gen, shape, dtype, rate):
        e = _standard(xp, gen, "standard_exponential", shape, dtype)
        e /= rate
        return _as_dtype(e, dtype)

    return kernel


def _integers_kernel(xp):
    def kernel(gen, shape, dtype, low, high):
        """Integers in [low, high) as `dtype`."""
        return gen.integers(low, high - 1, size=shape, dtype=xp.int64, endpoint=True).astype(
            dtype, copy=False
        )

    return kernel


def _permutation_kernel(xp):
    def kernel(gen, n, dtype):
        return gen.permutation(n).astype(dtype, copy=False)

    return kernel


_BAD_P = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
    "message be improved?  If so, please report an enhancement request to PyTorch.)"
)


def bernoulli_mask(gen: np.random.Generator, shape: tuple, p: float) -> np.ndarray:
    """A boolean array of `shape`, each element True with probability `p` (to within 2**-33),
    drawn from tocha's default CPU stream `gen`: its raw 64-bit words read as two 32-bit
    words each, compared to ``p * 2**32`` (half the time of float64 uniforms, a quarter of
    their memory). PyTorch's stream keeps ``u < p`` on float64 uniforms (its values)."""
    n = math.prod(shape)
    threshold = round(p * 2.0**32)
    if threshold >= 2**32:
        return np.ones(shape, bool)
    words = gen.bit_generator.random_raw((n + 1) // 2).view(np.uint32)
    return np.less(words[:n], np.uint32(threshold)).reshape(shape)


def _bernoulli_kernel(xp):
    def kernel(gen, shape, dtype, p):
        """1 with probability `p` (a number or an array broadcasting to `shape`), else 0."""
        if not isinstance(p, float) and not bool(((p >= 0) & (p <= 1)).all()):
            raise RuntimeError(_BAD_P)
        if isinstance(p, float) and type(gen) is np.random.Generator:
            return bernoulli_mask(gen, shape, p).astype(dtype)
        wide = isinstance(p, float) or p.dtype == xp.float64
        u = gen.random(shape, dtype=xp.float64 if wide else xp.float32)
        return (u < p).astype(dtype)

    return kernel


def _multinomial_kernel(xp):
    def kernel(gen, p, num_samples, replacement):
        """`num_samples` category indices per row of the 2-D weights `p`."""
        if not bool(xp.isfinite(p).all()) or bool((p < 0).any()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        p = p.astype(xp.float64)
        total = p.sum(axis=-1, keepdims=True)
        if p.shape[0] and not bool((total > 0).all()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement:
            # Exponential race: the k smallest E_i / p_i are a draw without replacement;
            # zero weights come last, in index order.
            keys = gen.standard_exponential(p.shape) / p
            return xp.argsort(keys, axis=-1, kind="stable")[:, :num_samples]
        cdf = xp.cumsum(p, axis=-1)
        cdf /= cdf[:, -1:]
        u = gen.random((p.shape[0], num_samples))
        out = xp.empty(u.shape, dtype=xp.int64)
        for row in range(p.shape[0]):
            out[row] = xp.searchsorted(cdf[row], u[row], side="right")
        return out

    return kernel


uniform_op = defop("uniform", _uniform_kernel, differentiable=False)
normal_op = defop("normal", _normal_kernel, differentiable=False)
exponential_op = defop("exponential", _exponential_kernel, differentiable=False)
integers_op = defop("randint", _integers_kernel, differentiable=False)
permutation_op = defop("randperm", _permutation_kernel, differentiable=False)
bernoulli_op = defop("bernoulli", _bernoulli_kernel, differentiable=False)
multinomial_op = defop("multinomial", _multinomial_kernel, differentiable=False)


# -- argument checks ------------------------------------------------------------------------
def _not_implemented(kernel_name: str, d: _dtype.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel_name}\" not implemented for '{_dtype.TITLE[d]}'")


def _float_dtype(d: _dtype.dtype, kernel_name: str, fn_name: str = "") -> _dtype.dtype:
    try:
        floating = d.is_floating_point or d.is_complex
    except AttributeError:
        check_dtype(fn_name or kernel_name, d)
        raise
    if not floating:
        raise _not_implemented(kernel_name, d)
    return d


def _num(x) -> str:
    """A number as PyTorch's messages print it (``2``, ``1.5``)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


_C_NAMES = {
    _dtype.bool: "bool",
    _dtype.uint8: "unsigned char",
    _dtype.int8: "signed char",
    _dtype.int16: "short int",
    _dtype.int32: "int",
    _dtype.int64: "long int",
    _dtype.float16: "c10::Half",
    _dtype.bfloat16: "c10::BFloat16",
    _dtype.float32: "float",
    _dtype.float64: "double",
    _dtype.complex64: "c10::complex<float>",
    _dtype.complex128: "c10::complex<double>",
}


@functools.cache
def _bounds(d: _dtype.dtype) -> tuple:
    if d is _dtype.bool:
        return 0, 1
    if d.rank == _dtype.INTEGRAL:
        info = _dtype.iinfo(d)
        return info.min, info.max
    if d is _dtype.float16:
        return -65504, 65504
    return -math.inf, math.inf


def _check_range(low: int, high: int, d: _dtype.dtype) -> None:
    """[low, high) must be non-empty and within `d`'s range (PyTorch's random_ checks)."""
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if d.is_complex:
        raise _not_implemented("random_from_to", d)
    lo, hi = _bounds(d)
    if low < lo:
        raise RuntimeError(f"from is out of bounds for {_C_NAMES[d]}")
    if high - 1 > hi:
        raise RuntimeError(f"to - 1 is out of bounds for {_C_NAMES[d]}")


def _int_arg(value, fn_name: str, arg: str) -> int:
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, builtins.bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn_name}(): argument '{arg}' must be int, not {type(value).__name__}")
    if not -(2**63) <= value < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return int(value)


# -- factories ------------------------------------------------------------------------------
def rand(
    *sizes,
    size=None,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """Values drawn uniformly from [0, 1), of shape `size` (default dtype float32).

    A complex dtype draws the real and imaginary parts independently.
    """
    shape = parse_size(sizes, "rand", size)
    dev = _device_of(device)
    d = _float_dtype(dtype or _dtype.DEFAULTS.float, "check_uniform_bounds", "rand")
    data = uniform_op.kernels[dev](_generator(generator, dev), shape, d.np, 0, 1)
    return _finish(wrap(data, dev), requires_grad, out)


def randn(
    *sizes,
    size=None,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """Values drawn from the standard normal distribution, of shape `size`.

    A complex dtype draws a complex normal of variance 1 (each part of variance 1/2).
    """
    shape = parse_size(sizes, "randn", size)
    dev = _device_of(device)
    d = _float_dtype(dtype or _dtype.DEFAULTS.float, "normal_kernel_cpu", "randn")
    data = normal_op.kernels[dev](_generator(generator, dev), shape, d.np, 0.0, 1.0)
    return _finish(wrap(data, dev), requires_grad, out)


def _like(name: str, input: Tensor, dtype, device):
    try:
        dev = input._device if device is None else resolve_device(device)
    except AttributeError:
        check_tensors(name, ("input", input))
        raise
    check_dtype(name, dtype)
    return input._data.shape, dtype or input.dtype, dev


def rand_like(
    input: Tensor,
    *,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    memory_format=None,
) -> Tensor:
    """`rand` with the shape (and by default the dtype and device) of `input`."""
    shape, d, dev = _like("rand_like", input, dtype, device)
    _float_dtype(d, "check_uniform_bounds")
    kernel, gen = uniform_op.kernels[dev], _generator(generator, dev)
    data = laid_out_like(input._data, lambda shape: kernel(gen, shape, d.np, 0, 1), memory_format)
    return _finish(wrap(data, dev), requires_grad)


def randn_like(
    input: Tensor,
    *,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    memory_format=None,
) -> Tensor:
    """`randn` with the shape (and by default the dtype and device) of `input`."""
    shape, d, dev = _like("randn_like", input, dtype, device)
    if math.prod(shape):  # PyTorch's kernel, and its dtype check, never run on no elements
        _float_dtype(d, "normal_kernel_cpu")
    kernel, gen = normal_op.kernels[dev], _generator(generator, dev)
    data = laid_out_like(
        input._data, lambda shape: kernel(gen, shape, d.np, 0.0, 1.0), memory_format
    )
    return _finish(wrap(data, dev), requires_grad)


def randint(
    low=0,
    high=None,
    size=None,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """Integers drawn uniformly from [low, high), of shape `size` (default dtype int64):
    ``randint(high, size)`` or ``randint(low, high, size)``."""
    position = 3
    if size is None:
        low, high, size, position = 0, low, high, 2
    if high is None or size is None:
        raise TypeError(
            "randint() missing required arguments: expected (high, size) or (low, high, size)"
        )
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"randint(): argument 'size' (position {position}) must be tuple of ints, not "
            f"{type(size).__name__}"
        )
    low, high = _int_arg(low, "randint", "low"), _int_arg(high, "randint", "high")
    shape = parse_size((size,), "randint")
    check_dtype("randint", dtype)
    d = dtype or _dtype.int64
    _check_range(low, high, d)
    dev = _device_of(device)
    data = integers_op.kernels[dev](_generator(generator, dev), shape, d.np, low, high)
    return _finish(wrap(data, dev), requires_grad, out)


def randint_like(
    input: Tensor,
    low=0,
    high=None,
    *,
    generator: Generator | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    memory_format=None,
) -> Tensor:
    """`randint` with the shape (and by default the dtype and device) of `input`:
    ``randint_like(input, high)`` or ``randint_like(input, low, high)``."""
    if high is None:
        low, high = 0, low
        if isinstance(high, Tensor):  # PyTorch's overload: one value, truncated to an int
            if high.numel() != 1 or high.dim() or high._device.type != "cpu":
                raise RuntimeError("high must be a scalar tensor and on CPU")
            high = int(high.item())
    low, high = _int_arg(low, "randint_like", "low"), _int_arg(high, "randint_like", "high")
    shape, d, dev = _like("randint_like", input, dtype, device)
    _check_range(low, high, d)
    kernel, gen = integers_op.kernels[dev], _generator(generator, dev)
    data = laid_out_like(
        input._data, lambda shape: kernel(gen, shape, d.np, low, high), memory_format
    )
    return _finish(wrap(data, dev), requires_grad)


def randperm(
    n: int,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: _dtype.dtype = _dtype.int64,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """A random permutation of ``0 .. n-1`` (default dtype int64)."""
    n = _int_arg(n, "randperm", "n")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    check_dtype("randperm", dtype)
    if dtype is _dtype.bool or dtype.is_complex:
        raise _not_implemented("randperm", dtype)
    if n - 1 > _bounds(dtype)[1]:
        raise RuntimeError(
            f"value cannot be converted to type {dtype.name}_t without overflow"
            if dtype.rank == _dtype.INTEGRAL
            else f"n is too large for result tensor type: '{dtype}'"
        )
    dev = _device_of(device)
    data = permutation_op.kernels[dev](_generator(generator, dev), n, dtype.np)
    return _finish(wrap(data, dev), requires_grad, out)


for _fn in (rand, randn, rand_like, randn_like, randint, randint_like, randperm):
    export(_fn)


def _check_std(std) -> None:
    if isinstance(std, Tensor) and std.dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if isinstance(std, Tensor):
        if bool((std._data < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0:  # NaN too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")


def _broadcast(a: tuple, b: tuple) -> tuple:
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        raise broadcast_error(a, b) from None


def normal(
    mean,
    std=1.0,
    size=None,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
    layout=None,
    device=None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """Values drawn from normal distributions of the given means and standard deviations.

    ``normal(mean: Tensor, std: Tensor)`` (shapes broadcast), ``normal(mean: Tensor,
    std: float = 1.0)``, ``normal(mean: float, std: Tensor)`` take the shape and dtype of the
    tensor (the mean's when both are); ``normal(mean: float, std: float, size)`` makes a new
    tensor of shape `size`.
    """
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mean_t or std_t):
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments - got "
                f"({type(mean).__name__}, {type(std).__name__}), but expected a "
                "tensor mean or std, or a size"
            )
        shape = parse_size((size,), "normal")
        _check_std(std)
        dev = _device_of(device)
        d = _float_dtype(dtype or _dtype.DEFAULTS.float, "normal_kernel_cpu")
        gen = _generator(generator, dev)
        data = kernel_context().run(normal_op.kernels[dev], gen, shape, d.np, mean, std)
        return _finish(wrap(data, dev), requires_grad, out)
    if size is not None:
        raise TypeError(
            "normal() received an invalid combination of arguments: size is only "
            "accepted with a float mean and a float std"
        )
    tensors = tuple(t for t in (mean, std) if isinstance(t, Tensor))
    dev = check_same_device(tensors)
    shape = _broadcast(mean._data.shape if mean_t else (), std._data.shape if std_t else ())
    d = tensors[0].dtype
    if math.prod(shape):
        _float_dtype(d, "normal_kernel_cpu")
    _check_std(std)
    data = kernel_context().run(
        normal_op.kernels[dev],
        _generator(generator, dev),
        shape,
        d.np,
        mean._data if mean_t else mean,
        std._data if std_t else std,
    )
    result = wrap(data, dev)
    return result if out is None else _finish(result, False, out)


def bernoulli(
    input: Tensor,
    p: float | None = None,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """1 or 0 drawn with the probabilities in `input` (or the number `p` for every element),
    with `input`'s shape and dtype; probabilities must be floating (an empty input is
    returned as it is, of any dtype)."""
    if not isinstance(input, Tensor):
        check_tensors("bernoulli", ("input", input))
    if p is not None:
        if isinstance(p, Tensor) and not p._data.ndim:  # PyTorch's parser reads a 0-dim p
            p = p.item()
        elif isinstance(p, Tensor):
            raise TypeError(
                "bernoulli() received an invalid combination of arguments - got (Tensor, "
                "Tensor), but expected one of: (Tensor input, *, Generator generator, Tensor "
                "out) or (Tensor input, float p, *, Generator generator)"
            )
        result = bernoulli_(_empty_like(input), p, generator=generator)
    elif not input._data.size:
        result = _empty_like(input)
    else:
        d = input.dtype
        _check_bernoulli_dtypes(d, d)
        dev = input._device
        result = wrap(
            bernoulli_op.kernels[dev](
                _generator(generator, dev), input._data.shape, d.np, input._data
            ),
            dev,
        )
    return result if out is None else _finish(result, False, out)


def _empty_like(t: Tensor) -> Tensor:
    return wrap(backend_of(t._device).xp.empty(t._data.shape, t._data.dtype), t._device)


def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: builtins.bool = False,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """Category indices drawn from the weights in each row of `input` (1-D or 2-D, not
    necessarily normalised): shape ``(num_samples,)`` or ``(rows, num_samples)``, int64.

    Without `replacement` each row's draws are distinct.
    """
    num_samples = _int_arg(num_samples, "multinomial", "num_samples")
    try:
        ndim = input._data.ndim
    except AttributeError:
        check_tensors("multinomial", ("input", input))
        raise
    if ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    d = input.dtype
    if not d.is_floating_point:
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {_dtype.TITLE[d]}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input._data.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if n > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    dev = input._device
    p = input._data if ndim == 2 else input._data[None]
    data = kernel_context().run(
        multinomial_op.kernels[dev],
        _generator(generator, dev),
        p,
        num_samples,
        # one draw is one draw either way: PyTorch takes the sampler without replacement
        builtins.bool(replacement) and num_samples > 1,
    )
    result = wrap(data if ndim == 2 else data[0], dev)
    return result if out is None else _finish(result, False, out)


export(normal)
export(bernoulli, method=True)
export(multinomial, method=True)


# -- in-place samplers ----------------------------------------------------------------------
def _fill(self: Tensor, op, *args) -> Tensor:
    """Write a fresh sample of `op` (shape and dtype of `self`) into `self`."""
    if self._ag is not None and STATE.grad_enabled and self.requires_grad:
        if self.is_leaf:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        raise RuntimeError(
            "in-place random sampling into a tensor that requires grad is "
            "not supported; sample under tocha.no_grad()"
        )
    check_no_internal_overlap(self)
    sample = kernel_context().run(op.kernels[self._device], *args)
    try:
        self._data[...] = sample
    except ValueError:
        check_writable(self._data)
        raise
    bump_version(self)
    return self


def uniform_(
    self: Tensor,
    from_: float = 0,
    to: float = 1,
    *,
    generator: Generator | None = None,
    **bounds,
) -> Tensor:
    """Fill `self` with values drawn uniformly from [from_, to) (PyTorch's keyword for the
    lower bound, ``from``, is accepted: ``uniform_(**{"from": 0})``)."""
    if bounds:
        unknown = set(bounds) - {"from"}
        if unknown:
            raise TypeError(f"uniform_() got an unexpected keyword argument '{unknown.pop()}'")
        from_ = bounds["from"]
    d = _float_dtype(self.dtype, "check_uniform_bounds")
    real = {_dtype.complex64: _dtype.float32, _dtype.complex128: _dtype.float64}.get(d, d)
    largest = float(_dtype.finfo(real).max)
    for name, bound in (("from", from_), ("to", to)):
        if not -largest <= bound <= largest:  # NaN too
            raise RuntimeError(f"{name} is out of bounds for {_C_NAMES[real]}")
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found "
            f"from={_num(from_)} > to={_num(to)}"
        )
    gen = _generator(generator, self._device)
    return _fill(self, uniform_op, gen, self._data.shape, d.np, from_, to)


def normal_(
    self: Tensor, mean: float = 0, std: float = 1, *, generator: Generator | None = None
) -> Tensor:
    """Fill `self` with values drawn from the normal distribution N(mean, std**2)."""
    d = self.dtype
    if self._data.size:  # with no elements, PyTorch's kernel (and its dtype check) never runs
        _float_dtype(d, "normal_kernel_cpu")
    _check_std(std)
    gen = _generator(generator, self._device)
    return _fill(self, normal_op, gen, self._data.shape, d.np, mean, std)


def _check_bernoulli_dtypes(self_dtype: _dtype.dtype, p_dtype: _dtype.dtype) -> None:
    """PyTorch's CPU kernel draws into no complex tensor and takes floating probabilities."""
    if self_dtype.is_complex:
        raise _not_implemented("bernoulli_tensor_cpu_self_", self_dtype)
    if not p_dtype.is_floating_point:
        raise _not_implemented("bernoulli_tensor_cpu_p_", p_dtype)


def bernoulli_(self: Tensor, p=0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill `self` with 1 drawn with probability `p` (a number, or a floating tensor
    broadcasting to `self`'s shape), else 0; `self` may be complex only when empty."""
    if isinstance(p, Tensor):
        if p._device is not self._device:
            check_same_device((self, p))
        _check_expand(p._data.shape, self._data.shape)
        if self._data.size:
            _check_bernoulli_dtypes(self.dtype, p.dtype)
        prob = p._data
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
        if self._data.size and self.dtype.is_complex:
            raise _not_implemented("bernoulli_scalar_cpu_", self.dtype)
        prob = float(p)
    gen = _generator(generator, self._device)
    return _fill(self, bernoulli_op, gen, self._data.shape, self._data.dtype, prob)


def _check_expand(shape: tuple, target: tuple) -> None:
    """`shape` must expand to `target` (PyTorch's ``expand`` errors)."""
    if len(shape) > len(target):
        raise RuntimeError(
            f"the number of sizes provided ({len(target)}) must be greater or "
            f"equal to the number of dimensions in the tensor ({len(shape)})"
        )
    offset = len(target) - len(shape)
    for i, size in enumerate(shape):
        if size != 1 and size != target[offset + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[offset + i]}) must match the "
                f"existing size ({size}) at non-singleton dimension {offset + i}.  Target "
                f"sizes: {list(target)}.  Tensor sizes: {list(shape)}"
            )


_NOT_GIVEN = object()


def random_(
    self: Tensor, from_=_NOT_GIVEN, to=_NOT_GIVEN, *, generator: Generator | None = None
) -> Tensor:
    """Fill `self` with integers drawn uniformly: ``random_()`` from [0, the dtype's largest
    exactly representable integer], ``random_(to)`` from [0, to), ``random_(from_, to)``
    from [from_, to) (``to=None``: up to the largest)."""
    d = self.dtype
    if d.is_complex:
        if from_ is not _NOT_GIVEN:
            raise RuntimeError(
                "check_random_bounds handles only integral, floating-point and boolean types"
            )
        if self._data.size:
            raise _not_implemented("random_", d)
        return self  # PyTorch's kernel, and its dtype check, never run on no elements
    if to is _NOT_GIVEN:
        low, high = (0, None) if from_ is _NOT_GIVEN else (0, from_)
    else:
        low, high = from_, to
    low = _int_arg(low, "random_", "from")
    if high is None:  # the dtype's top, past int64 for int64 itself: not an argument
        high = _random_top(d) + 1
        if low >= high:
            raise RuntimeError(
                f"random_ expects 'from' casted to dtype to be less than or "
                f"equal to 'to', but got from={low} > to={high - 1}"
            )
    else:
        high = _int_arg(high, "random_", "to")
    _check_range(low, high, d)
    gen = _generator(generator, self._device)
    return _fill(self, integers_op, gen, self._data.shape, d.np, low, high)


def _random_top(d: _dtype.dtype) -> int:
    """The largest value ``random_()`` draws: the dtype's top, or 2**mantissa for floats."""
    if d.is_floating_point:
        return 2 ** {_dtype.float16: 11, _dtype.bfloat16: 8, _dtype.float32: 24}.get(d, 53)
    return _bounds(d)[1]


def exponential_(self: Tensor, lambd: float = 1, *, generator: Generator | None = None) -> Tensor:
    """Fill `self` with values drawn from the exponential distribution of rate `lambd`."""
    d = self.dtype
    if not d.is_floating_point and self._data.size:
        raise RuntimeError(
            "Exponential distribution is a continuous probability "
            f"distribution. dtype must be a floating point but you specified "
            f"{_dtype.TITLE[d]}"
        )
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    gen = _generator(generator, self._device)
    return _fill(self, exponential_op, gen, self._data.shape, d.np, lambd)


for _fn in (uniform_, normal_, bernoulli_, random_, exponential_):
    export(_fn, method=True, function=False)


# -- more in-place samplers and Poisson -------------------------------------------------------
def _geometric_kernel(xp):
    def kernel(gen, shape, dtype, p):
        return gen.geometric(p, shape).astype(dtype, copy=False)

    return kernel


def _log_normal_kernel(xp):
    def kernel(gen, shape, dtype, mean, std):
        return gen.lognormal(mean, std, shape).astype(dtype, copy=False)

    return kernel


def _cauchy_kernel(xp):
    def kernel(gen, shape, dtype, median, sigma):
        c = gen.standard_cauchy(shape)
        c *= sigma
        c += median
        return c.astype(dtype, copy=False)

    return kernel


def _poisson_kernel(xp):
    def kernel(rates, gen):
        if not bool((rates >= 0).all()):
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        return gen.poisson(rates).astype(rates.dtype, copy=False)

    return kernel


def _binomial_kernel(xp):
    def kernel(count, prob, gen):
        count, prob = xp.broadcast_arrays(count, prob)
        c, p = count.astype(np.float64), prob.astype(np.float64)
        finite = xp.isfinite(c) & ~xp.isnan(p)
        trials = xp.where(finite, xp.floor(xp.maximum(c, 0.0)), 0.0).astype(np.int64)
        chance = xp.where(finite, xp.clip(p, 0.0, 1.0), 0.0)
        draws = xp.asarray(gen.binomial(trials, chance), dtype=np.float64)
        # a certain success returns the count itself, as PyTorch (a fraction stays)
        result = xp.where(p >= 1, c, xp.where(finite, draws, np.nan))
        return result.astype(count.dtype, copy=False)

    return kernel


binomial_op = defop("binomial", _binomial_kernel)
geometric_op = defop("geometric", _geometric_kernel, differentiable=False)
log_normal_op = defop("log_normal", _log_normal_kernel, differentiable=False)
cauchy_op = defop("cauchy", _cauchy_kernel, differentiable=False)
poisson_op = defop("poisson", _poisson_kernel)


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill `self` with the number of Bernoulli(`p`) trials up to the first success
    (1, 2, ...)."""
    d = self.dtype
    if (d is _dtype.bool or d.is_complex) and self._data.size:
        raise _not_implemented("geometric_cpu", d)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    gen = _generator(generator, self._device)
    return _fill(self, geometric_op, gen, self._data.shape, d.np, p)


def log_normal_(
    self: Tensor, mean: float = 1, std: float = 2, *, generator: Generator | None = None
) -> Tensor:
    """Fill `self` with ``exp(N(mean, std**2))`` samples."""
    d = self.dtype
    if not d.is_floating_point and self._data.size:
        raise _not_implemented("log_normal_cpu", d)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    gen = _generator(generator, self._device)
    return _fill(self, log_normal_op, gen, self._data.shape, d.np, mean, std)


def cauchy_(
    self: Tensor, median: float = 0, sigma: float = 1, *, generator: Generator | None = None
) -> Tensor:
    """Fill `self` with samples of the Cauchy distribution of `median` and scale `sigma`."""
    d = self.dtype
    if not d.is_floating_point:
        raise RuntimeError(
            "Cauchy distribution is a continuous probability distribution. "
            f"dtype must be a floating point but you specified {_C_NAMES[d]}"
        )
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    gen = _generator(generator, self._device)
    return _fill(self, cauchy_op, gen, self._data.shape, d.np, median, sigma)


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Counts drawn from Poisson distributions of the rates in `input` (non-negative floats),
    in `input`'s shape and dtype. Its gradient is zero."""
    try:
        d = input.dtype
    except AttributeError:
        check_tensors("poisson", ("input", input))
        raise
    if not d.is_floating_point:
        raise _not_implemented("poisson_cpu", d)
    from .._dispatch import call

    return call(poisson_op, (input,), _generator(generator, input._device))


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """The number of successes in `count` trials of success probability `prob` (float
    tensors of one dtype, broadcast), in their dtype. Not differentiable."""
    check_tensors("binomial", ("count", count), ("prob", prob))
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(
            "binomial(): argument 'generator' must be torch.Generator, not "
            f"{type(generator).__name__}"
        )
    d = count.dtype
    if not d.is_floating_point:
        raise ValueError(
            f"binomial only supports floating-point dtypes for count, got: {_dtype.TITLE[d]}"
        )
    if prob.dtype is not d:
        raise RuntimeError(f"Found dtype {_dtype.TITLE[prob.dtype]} but expected {_dtype.TITLE[d]}")
    if d in (_dtype.float16, _dtype.bfloat16):
        raise _not_implemented("binomial_cpu", d)
    _broadcast(count._data.shape, prob._data.shape)
    from .._dispatch import call

    return call(binomial_op, (count, prob), _generator(generator, count._device))


for _fn in (geometric_, log_normal_, cauchy_):
    export(_fn, method=True, function=False)
export(poisson)
export(binomial)
