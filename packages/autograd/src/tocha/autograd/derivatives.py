"""Declaring derivatives: the published way for other distributions (tocha-nn's primitives,
third-party ops) to give an op declared with `tocha.library.defop` its backward.

``d(name, saves, formula)`` declares the derivative of primitive `name`: `saves` lists what
the backward needs (argument positions such as ``"01"``, ``"o"`` for the output, ``"2+"`` for
position 2 and every later one) and ``formula(grad, out, *args)`` returns one gradient per
argument of the op (None where an argument gets none). `args` are the op's arguments as the
dispatcher received them: a tensor argument not saved arrives as its metadata (shape, dtype,
device), and `out` is the output when saved. Write formulas in tocha ops, so that
``create_graph=True`` differentiates them again.
"""

from ._formulas import d

__all__ = ["d"]
