"""Random bit streams on the GPU with a 16-byte state.

CuPy's bit generators keep one cuRAND state per GPU thread in device memory (megabytes). A
`CounterGenerator` is instead a seed and a counter, as PyTorch's CUDA generator is a seed and
an offset: every draw runs a fresh Philox4x32-10 stream keyed by ``(seed, counter)`` and then
advances the counter. Philox is counter-based, so a fresh stream costs one small kernel.
"""

from __future__ import annotations

import numpy as np

# cuRAND states a draw initialises: enough threads to fill a GPU, few enough to be cheap.
THREADS = 1 << 14
_STATE_BYTES = 16


class CounterGenerator:
    """The subset of NumPy's ``Generator`` API tocha's random kernels use, over `random`
    (``cupy.random``: ``Generator`` and ``Philox4x3210``) and the array namespace `xp`."""

    __slots__ = ("random_module", "xp", "seed", "counter")

    def __init__(self, random_module, xp, seed: int):
        self.random_module = random_module
        self.xp = xp
        self.seed = seed
        self.counter = 0

    def _next(self):
        keys = np.random.SeedSequence((self.seed, self.counter))
        self.counter += 1
        rm = self.random_module
        return rm.Generator(rm.Philox4x3210(keys, size=THREADS))

    def philox_key(self) -> tuple[int, int]:
        """(seed, counter) keying the next draw of a kernel with its own Philox (dropout);
        advances the counter, as every draw does."""
        key = (self.seed, self.counter)
        self.counter += 1
        return key

    def random(self, size=None, dtype=np.float64):
        return self._next().random(size, dtype=dtype)

    def standard_normal(self, size=None, dtype=np.float64):
        return self._next().standard_normal(size, dtype=dtype)

    def standard_exponential(self, size=None, dtype=np.float64):
        """-log(1 - U) for U uniform on [0, 1)."""
        return -self.xp.log1p(-self.random(size, dtype))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return self._next().integers(low, high, size=size, dtype=dtype, endpoint=endpoint)

    def permutation(self, n: int):
        """A random permutation of ``0 .. n-1``: the order of n uniform keys."""
        return self.xp.argsort(self.random(n))

    def state(self) -> bytes:
        return self.seed.to_bytes(8, "little") + self.counter.to_bytes(8, "little")

    def set_state(self, state: bytes) -> None:
        if len(state) != _STATE_BYTES:
            raise ValueError(
                f"expected a cuda generator state of {_STATE_BYTES} bytes but found {len(state)}"
            )
        self.seed = int.from_bytes(state[:8], "little")
        self.counter = int.from_bytes(state[8:], "little")
