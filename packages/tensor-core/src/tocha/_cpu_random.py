"""PyTorch's CPU random stream: PyTorch's values for the same seed.

The CPU backend's generators use it when `tocha.compat.use_pytorch_random` is on (as under
``tocha.run``). Then ``tocha.manual_seed(s)`` followed by ``rand``, ``randn``, ``randint``,
``randperm``, ``bernoulli``, ``dropout``, ``multinomial``, ``exponential_``, ``uniform_`` or
``normal_`` gives the numbers PyTorch gives on the CPU (to the last bit for uniform and
integer draws, within an ulp of float32 for normal ones, whose logarithm and cosine are
NumPy's). So a PyTorch program run under tocha initialises the same weights, shuffles its
data the same way and drops the same units.

The bits come from a 32-bit Mersenne Twister seeded as MT19937's reference ``init_genrand``
seeds it with the seed's low 32 bits (NumPy's `MT19937` holds the state; its legacy
seeding is that function). What PyTorch documents or shows of its draws fixes how they
become values:
- a float32 uniform is the low 24 bits of one 32-bit word times 2**-24; a float64 uniform
  the low 53 bits of a 64-bit word made of two 32-bit words, the first the high half;
- an integer in [low, low + n) is ``word % n + low``, with a 64-bit word when n >= 2**32;
- ``randperm(n)`` swaps position i with position ``i + word % (n - i)``, i from 0;
- normal draws use the Box-Muller transform. A tensor of 16 or more values is filled with
  uniforms of its dtype and transformed in blocks of 16: the first 8 give the radii
  ``sqrt(-2 log(1 - u))``, the last 8 the angles; a last partial block is redone over the
  last 16 values with fresh uniforms. Fewer than 16 values are drawn one at a time in
  float64 from pairs of uniforms, the sine's value kept for the next draw;
- exponential draws are ``-log(1 - u)``, geometric ones ``ceil(log(u) / log(1 - p))``,
  Cauchy ones ``tan(pi (u - 1/2))``, log-normal ones the exponential of normals drawn one
  at a time; Bernoulli draws are ``u < p``; u is a float64 uniform in all of them.
Other distributions (Poisson, gamma...) draw from NumPy's algorithms seeded by the stream:
repeatable in tocha, not PyTorch's values.
"""

from __future__ import annotations

import math

import numpy as np

_MASK24 = np.uint64((1 << 24) - 1)
_MASK53 = np.uint64((1 << 53) - 1)
_SHIFT32 = np.uint64(32)
_BLOCK = 16
# Draws of at most this many values are made in Python floats (NumPy costs more on them).
_FEW = 16
_KEY_WORDS = 624
# The saved state after the generator's 8-byte seed, laid out as PyTorch's CPU generator
# state (so ``get_rng_state()`` is PyTorch's 5056 bytes and either restores the other's):
# the words left before the next twist (int32), a seeded flag (int32), the next word's index
# (int64), the 624 key words (each in 64 bits), three float64s of which the second is the
# cached normal value, its flag (int32, 4 bytes of padding), then a float32 cache PyTorch
# keeps for float normals and its flag (bool, 3 bytes of padding).
_KEY_AT = 16
_NORMAL_AT = _KEY_AT + _KEY_WORDS * 8
STATE_BYTES = _NORMAL_AT + 24 + 8 + 8


class MersenneStream:
    """A random stream with the parts of NumPy's ``Generator`` API tocha's kernels use, whose
    values are PyTorch's CPU values for the same seed."""

    __slots__ = ("_bits", "_normal")

    def __init__(self, seed: int):
        self._bits = np.random.MT19937(0)
        self._bits._legacy_seeding(seed & 0xFFFFFFFF)
        self._normal: float | None = None

    # -- raw words -----------------------------------------------------------------------
    def words32(self, n: int) -> np.ndarray:
        """`n` 32-bit words (as uint64)."""
        return self._bits.random_raw(n)

    def words64(self, n: int) -> np.ndarray:
        """`n` 64-bit words, each from two 32-bit words (the first is the high half)."""
        pairs = self._bits.random_raw(2 * n).reshape(n, 2)
        return (pairs[:, 0] << _SHIFT32) | pairs[:, 1]

    def _uniform(self, n: int, dtype) -> np.ndarray:
        if n <= _FEW:
            return np.array(self._few_uniforms(n, np.dtype(dtype) == np.float64), dtype=dtype)
        if np.dtype(dtype) == np.float64:
            return (self.words64(n) & _MASK53).astype(np.float64) * 2.0**-53
        u = (self.words32(n) & _MASK24).astype(np.float32)
        u *= np.float32(2.0**-24)
        return u

    def _few_uniforms(self, n: int, wide: bool) -> list:
        """`n` uniforms as Python floats (exact: 24 or 53 bits), without NumPy's per-call
        cost on tiny arrays."""
        if not wide:
            return [(w & 0xFFFFFF) * 2.0**-24 for w in self._bits.random_raw(n).tolist()]
        words = self._bits.random_raw(2 * n).tolist()
        return [
            (((hi << 32) | lo) & 0x1FFFFFFFFFFFFF) * 2.0**-53
            for hi, lo in zip(words[::2], words[1::2])
        ]

    # -- NumPy's Generator API -----------------------------------------------------------
    def random(self, size=None, dtype=np.float64, out=None) -> np.ndarray:
        """Uniform values on [0, 1) of `dtype` (float32 or float64)."""
        shape = _shape(size)
        u = self._uniform(math.prod(shape), dtype).reshape(shape)
        if out is not None:
            out[...] = u
            return out
        return u

    def standard_normal(self, size=None, dtype=np.float64, out=None) -> np.ndarray:
        """Standard normal values of `dtype` (float32 or float64)."""
        shape = _shape(size)
        n = math.prod(shape)
        z = self._normal_block(n, dtype) if n >= _BLOCK else self._normal_pairs(n, dtype)
        z = z.reshape(shape)
        if out is not None:
            out[...] = z
            return out
        return z

    def standard_exponential(self, size=None, dtype=np.float64, method=None, out=None):
        """Exponential values of rate 1: ``-log(1 - u)``, u a float64 uniform."""
        shape = _shape(size)
        e = -np.log1p(-self._uniform(math.prod(shape), np.float64))
        e = e.astype(dtype, copy=False).reshape(shape)
        if out is not None:
            out[...] = e
            return out
        return e

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Integers in [low, high) (or [low, high] with `endpoint`), as `dtype`."""
        if high is None:
            low, high = 0, low
        count = int(high) - int(low) + (1 if endpoint else 0)
        if count <= 0:
            raise ValueError("high <= low")
        shape = _shape(size)
        n = math.prod(shape)
        if count >= 2**32:
            values = (self.words64(n) % np.uint64(count)).astype(np.int64)
        else:
            words = self.words32(n).astype(np.uint32)
            values = (words % np.uint32(count)).astype(np.int64)
        if low:
            values += int(low)
        return values.astype(dtype, copy=False).reshape(shape)

    def permutation(self, x):
        """A random permutation of ``range(x)`` (or of array `x`'s first axis)."""
        n = int(x) if np.ndim(x) == 0 else len(x)
        order = list(range(n))
        if n > 1:
            words = self.words64(n - 1) if n >= 2**32 else self.words32(n - 1)
            for i, z in enumerate((words % np.arange(n, 1, -1, dtype=np.uint64)).tolist()):
                j = i + z
                order[i], order[j] = order[j], order[i]
        index = np.array(order, dtype=np.int64)
        return index if np.ndim(x) == 0 else np.asarray(x)[index]

    def geometric(self, p, size=None) -> np.ndarray:
        """Trials to the first success: ``ceil(log(u) / log(1 - p))``, u a float64 uniform."""
        shape = _shape(size)
        u = self._uniform(math.prod(shape), np.float64).reshape(shape)
        return np.ceil(np.log(u) / np.log1p(-p))

    def lognormal(self, mean=0.0, sigma=1.0, size=None) -> np.ndarray:
        """``exp(mean + sigma * z)``, z drawn one at a time as for fewer than 16 normals."""
        shape = _shape(size)
        z = self._normal_pairs(math.prod(shape), np.float64).reshape(shape)
        return np.exp(z * sigma + mean)

    def standard_cauchy(self, size=None) -> np.ndarray:
        """``tan(pi (u - 1/2))``, u a float64 uniform."""
        shape = _shape(size)
        u = self._uniform(math.prod(shape), np.float64).reshape(shape)
        return np.tan(math.pi * (u - 0.5))

    def __getattr__(self, name):
        """Other distributions: NumPy's algorithms, seeded by the next 64-bit word."""
        if name.startswith("_"):
            raise AttributeError(name)
        seed = int(self.words64(1)[0])
        return getattr(np.random.Generator(np.random.PCG64(seed)), name)

    # -- normal draws ------------------------------------------------------------------
    def _normal_block(self, n: int, dtype) -> np.ndarray:
        dtype = np.float64 if np.dtype(dtype) == np.float64 else np.float32
        z = self._uniform(n, dtype)
        whole = n - n % _BLOCK
        _box_muller_blocks(z[:whole].reshape(-1, _BLOCK))
        if whole != n:
            tail = self._uniform(_BLOCK, dtype)
            z[n - _BLOCK :] = tail
            _box_muller_blocks(z[n - _BLOCK :].reshape(1, _BLOCK))
        return z

    def _normal_pairs(self, n: int, dtype) -> np.ndarray:
        """`n` values one at a time, in float64: each pair of uniforms gives a cosine value
        and a sine value, the sine value kept for the next draw."""
        if n <= _FEW:
            return np.array(self._few_normals(n), dtype=np.float64).astype(dtype)
        values = np.empty(n + 1, dtype=np.float64)
        start = 0
        if n and self._normal is not None:
            values[0], self._normal, start = self._normal, None, 1
        pairs = (n - start + 1) // 2
        if pairs:
            u = self._uniform(2 * pairs, np.float64).reshape(pairs, 2)
            radius = np.sqrt(-2.0 * np.log1p(-u[:, 1]))
            theta = 2.0 * math.pi * u[:, 0]
            drawn = values[start : start + 2 * pairs].reshape(pairs, 2)
            np.multiply(radius, np.cos(theta), out=drawn[:, 0])
            np.multiply(radius, np.sin(theta), out=drawn[:, 1])
            if (n - start) % 2:
                self._normal = float(values[n])
        return values[:n].astype(dtype)

    def _few_normals(self, n: int) -> list:
        values = []
        if n and self._normal is not None:
            values.append(self._normal)
            self._normal = None
        pairs = (n - len(values) + 1) // 2
        u = self._few_uniforms(2 * pairs, wide=True)
        for u1, u2 in zip(u[::2], u[1::2]):
            radius = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            values += (radius * math.cos(theta), radius * math.sin(theta))
        if len(values) > n:
            self._normal = values.pop()
        return values

    # -- state -------------------------------------------------------------------------
    def state(self) -> bytes:
        """The stream's state in PyTorch's layout (see `STATE_BYTES`)."""
        s = self._bits.state["state"]
        pos = int(s["pos"])
        state = bytearray(STATE_BYTES)
        state[0:4] = (_KEY_WORDS + 1 - pos).to_bytes(4, "little")
        state[4:8] = (1).to_bytes(4, "little")
        state[8:16] = (pos % _KEY_WORDS).to_bytes(8, "little")
        state[_KEY_AT:_NORMAL_AT] = np.asarray(s["key"], dtype="<u8").tobytes()
        if self._normal is not None:
            state[_NORMAL_AT + 8 : _NORMAL_AT + 16] = np.float64(self._normal).tobytes()
            state[_NORMAL_AT + 24] = 1
        return bytes(state)

    def set_state(self, state: bytes) -> None:
        """Restore a state `state` (or PyTorch's generator) gave; ValueError if it is not one."""
        if len(state) != STATE_BYTES:
            raise ValueError(f"expected a state of {STATE_BYTES} bytes but found {len(state)}")
        left = int.from_bytes(state[0:4], "little", signed=True)
        if not 1 <= left <= _KEY_WORDS:
            raise ValueError(f"{left} words left before the next twist is not in [1, 624]")
        key = np.frombuffer(state[_KEY_AT:_NORMAL_AT], dtype="<u8")
        if (key >> np.uint64(32)).any():
            raise ValueError("a key word does not fit in 32 bits")
        self._bits.state = {
            "bit_generator": "MT19937",
            "state": {"key": key.astype(np.uint32), "pos": _KEY_WORDS + 1 - left},
        }
        cached = state[_NORMAL_AT + 24]
        value = float(np.frombuffer(state[_NORMAL_AT + 8 : _NORMAL_AT + 16], dtype="<f8")[0])
        self._normal = value if cached else None


def _box_muller_blocks(blocks: np.ndarray) -> None:
    """Turn rows of 16 uniforms into 16 normal values each, in place, in their dtype."""
    dtype = blocks.dtype.type
    radius = np.log(1 - blocks[:, :8])
    radius *= dtype(-2)
    np.sqrt(radius, out=radius)
    theta = blocks[:, 8:] * dtype(2 * math.pi)
    np.multiply(radius, np.cos(theta), out=blocks[:, :8])
    np.multiply(radius, np.sin(theta), out=blocks[:, 8:])


def _shape(size) -> tuple:
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(int(s) for s in size)
