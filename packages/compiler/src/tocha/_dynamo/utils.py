"""``torch._dynamo.utils.counters``: what the compiler did, counted (``frames``: ``total``
captures tried and ``ok``; ``stats``: ``unique_graphs``; ``graph_break``: each reason)."""

from tocha.compiler._state import counters

__all__ = ["counters"]
