"""The array namespace cuda kernels are built against: CuPy, with the few NumPy behaviours
that tocha's generic kernels use and CuPy lacks filled in.

- ``maximum.accumulate``, ``minimum.accumulate``, ``logaddexp.accumulate`` (CuPy accumulates
  only ``add`` and ``multiply``): a log-step scan, ``ceil(log2(n))`` whole-array ops;
- ``lexsort`` of a tuple of keys (CuPy takes one 2-D array of a single dtype): stable
  argsorts, last key first;
- ``add.at`` on dtypes CuPy's atomics lack (bool, 8/16-bit integers, int64, float16): done
  in a wider dtype and cast back, wrapping around as NumPy's does.
"""

from __future__ import annotations

import types

import numpy as np

# dtype char -> the dtype `add.at` runs in (int64 wraps identically as uint64).
_AT_WIDE = {"?": "u4", "b": "i4", "B": "u4", "h": "i4", "H": "u4", "l": "u8", "q": "u8", "e": "f4"}


class _Ufunc:
    """A ufunc of `base` whose `accumulate` is a log-step scan (its other methods are the
    ufunc's own)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc

    def __call__(self, *args, **kwargs):
        return self._ufunc(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._ufunc, name)

    def accumulate(self, x, axis=0, dtype=None, out=None):
        """Inclusive scan of `x` along `axis`: after step k each element holds the op over
        the 2**k elements ending at it."""
        result = x.astype(dtype or x.dtype, copy=True)
        moved = result.swapaxes(axis, -1)
        n, shift = moved.shape[-1], 1
        while shift < n:
            moved[..., shift:] = self._ufunc(moved[..., shift:], moved[..., :-shift].copy())
            shift *= 2
        if out is not None:
            out[...] = result
            return out
        return result


class _Add(_Ufunc):
    """``add`` whose ``at`` also takes the dtypes CuPy's atomic adds lack."""

    def __init__(self, ufunc, asarray):
        super().__init__(ufunc)
        self._asarray = asarray

    def at(self, a, indices, b=None):
        wide = _AT_WIDE.get(a.dtype.char)
        if wide is None:
            return self._ufunc.at(a, indices, b)
        tmp = a.astype(wide)
        self._ufunc.at(tmp, indices, self._asarray(b).astype(wide))
        a[...] = tmp.astype(a.dtype)
        return None


def _lexsort(base):
    stable = {"kind": "stable"} if base is np else {}  # CuPy's sorts are always stable

    def lexsort(keys, axis=-1):
        """Indices sorting 1-D `keys` by the last key, then the one before it...
        (``numpy.lexsort``)."""
        if not isinstance(keys, (tuple, list)):
            keys = list(keys)
        order = base.argsort(keys[0], axis=axis, **stable)
        for key in keys[1:]:
            order = order[base.argsort(key[order], axis=axis, **stable)]
        return order

    return lexsort


def kernel_namespace(base) -> types.ModuleType:
    """`base` (the CuPy module) as a module whose missing NumPy behaviours are filled in.

    Attribute access is a module lookup, as fast as on `base`; names `base` gains later (a
    submodule imported afterwards) are found through the module's ``__getattr__``.
    """
    ns = types.ModuleType(f"tocha_cuda.xp({base.__name__})", __doc__)
    ns.__dict__.update({k: v for k, v in vars(base).items() if not k.startswith("__")})
    ns.__getattr__ = lambda name: getattr(base, name)
    ns.maximum = _Ufunc(base.maximum)
    ns.minimum = _Ufunc(base.minimum)
    ns.logaddexp = _Ufunc(base.logaddexp)
    ns.add = _Add(base.add, base.asarray)
    ns.lexsort = _lexsort(base)
    return ns
