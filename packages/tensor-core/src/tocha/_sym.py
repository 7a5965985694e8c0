"""Size arithmetic that stays symbolic under tracing: ``sym_int``, ``sym_max``... On plain
Python numbers each is the builtin operation; a symbolic size that defines the matching
method (``__sym_max__``...) answers for itself."""

from __future__ import annotations

import builtins
import math
import operator

from ._api import export


def _method(value, name: str):
    return getattr(type(value), name, None)


def sym_int(a):
    """``int(a)``, truncating toward zero."""
    return a if isinstance(a, builtins.int) else builtins.int(a)


def sym_float(a):
    """``float(a)``."""
    method = _method(a, "__sym_float__")
    return method(a) if method is not None else builtins.float(a)


def sym_not(a):
    """``not a``."""
    method = _method(a, "__sym_not__")
    return method(a) if method is not None else not a


def sym_sqrt(a):
    """The square root of `a`, a float."""
    method = _method(a, "__sym_sqrt__")
    return method(a) if method is not None else math.sqrt(a)


def sym_ite(b, t, f):
    """`t` if `b` else `f`."""
    return t if b else f


def sym_max(a, b):
    """The larger of `a` and `b`; a float when either is."""
    return _extreme(a, b, "__sym_max__", operator.ge)


def sym_min(a, b):
    """The smaller of `a` and `b`; a float when either is."""
    return _extreme(a, b, "__sym_min__", operator.le)


def _extreme(a, b, name: str, keeps_a):
    for x, y in ((a, b), (b, a)):
        method = _method(x, name)
        if method is not None:
            return method(x, y)
    result = a if keeps_a(a, b) else b
    if isinstance(a, builtins.float) or isinstance(b, builtins.float):
        return builtins.float(result)
    return result


def sym_sum(args):
    """The sum of the numbers in `args`."""
    total = 0
    for value in args:
        total = total + value
    return total


for _fn in (sym_int, sym_float, sym_not, sym_sqrt, sym_ite, sym_max, sym_min, sym_sum):
    export(_fn)
