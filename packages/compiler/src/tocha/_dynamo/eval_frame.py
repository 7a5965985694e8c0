"""``torch._dynamo.eval_frame``: the class of a compiled module, which libraries test for
(``isinstance(model, torch._dynamo.eval_frame.OptimizedModule)``)."""

from tocha.compiler._frontend import OptimizedModule

__all__ = ["OptimizedModule"]
