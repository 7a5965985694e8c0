"""Declaring derivatives: the published way for other distributions (tocha-nn's primitives,
third-party ops) to give an op declared with `tocha.library.defop` its backward.

``d(name, saves, formula)`` declares the derivative of primitive `name`: `saves` lists what
the backward needs (argument positions such as ``"01"``, ``"o"`` for the output, ``"2+"`` for
position 2 and every later one) and ``formula(grad, saved..., *args)`` returns one gradient
per differentiable input.
"""

from ._formulas import d

__all__ = ["d"]
