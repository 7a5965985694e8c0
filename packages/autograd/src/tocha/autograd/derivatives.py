"""Declaring derivatives: the published way for other distributions (tocha-nn's primitives,
third-party ops) to give an op declared with `tocha.library.defop` its backward and its
forward-mode rule.

``d(name, saves, formula)`` declares the derivative of primitive `name`: `saves` lists what
the backward needs (argument positions such as ``"01"``, ``"o"`` for the output, ``"2+"`` for
position 2 and every later one) and ``formula(grad, out, *args)`` returns one gradient per
argument of the op (None where an argument gets none). `args` are the op's arguments as the
dispatcher received them: a tensor argument not saved arrives as its metadata (shape, dtype,
device), and `out` is the output when saved. Write formulas in tocha ops, so that
``create_graph=True`` differentiates them again.

``fwd(name, rule)`` declares the forward-mode rule (the Jacobian-vector product) of primitive
`name`, used under `tocha.autograd.forward_ad`: ``rule(tangents, out, *args)`` gets the op's
arguments as the dispatcher received them (every tensor whole, never metadata), their
tangents in the same positions (None for a non-tensor, or a tensor without tangent; at least
one is set) and the op's output (a tuple for several). It returns the output's tangent, or
one per output for several (None where an output gets none); a tangent that broadcasts to
its output's shape is expanded. Write rules in tocha ops, beside the op's `d`.

``fwd_linear(*names)`` declares ops linear in their tensor arguments (the leading ones): the
rule is the op itself applied to the tangents (a zero tangent for a tensor without one).
``fwd_multilinear(*names)`` declares ops linear in each tensor argument separately (products
such as a matmul): the rule sums the op with one argument at a time replaced by its tangent.
"""

from ._formulas import d
from ._forward import fwd, fwd_linear, fwd_multilinear

__all__ = ["d", "fwd", "fwd_linear", "fwd_multilinear"]
