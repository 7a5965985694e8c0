"""The parts of ``torch._dynamo.testing`` that tests of compiled programs use: backends that
count what they compile."""

from __future__ import annotations

from typing import Any

from tocha.compiler._backends import Builtin, resolve

__all__ = ["CompileCounter", "CompileCounterWithBackend"]


class CompileCounterWithBackend(Builtin):
    """A backend that counts the graphs it is given (``frame_count``) and their operations
    (``op_count``: the primitives of their forward parts) and compiles them with `backend`
    (a built-in backend's name)."""

    def __init__(self, backend: str) -> None:
        chosen = resolve(backend)
        if not isinstance(chosen, Builtin):
            raise ValueError(f"CompileCounterWithBackend: {backend!r} is not a built-in backend")
        super().__init__(f"counter({chosen.name})", chosen.aot, chosen.fuse)
        self.frame_count = 0
        self.op_count = 0

    def build(self, cap: Any, name: str, symbols: dict | None = None) -> Any:
        """Count the capture, then compile it as the chosen backend does."""
        self.frame_count += 1
        n_outputs = len(cap.outputs)
        out = next(n for n in cap.gm.graph.nodes if n.op == "output")
        forward: set = set()
        stack = [v for v in out.args[0][:n_outputs] if hasattr(v, "all_input_nodes")]
        while stack:
            node = stack.pop()
            if node not in forward:
                forward.add(node)
                stack.extend(node.all_input_nodes)
        self.op_count += sum(n.op == "call_function" for n in forward)
        return super().build(cap, name, symbols)

    def clear(self) -> None:
        """Reset both counts."""
        self.frame_count = 0
        self.op_count = 0


class CompileCounter(CompileCounterWithBackend):
    """A backend that counts the graphs it is given and their operations, and runs them
    without fusion (as ``aot_eager``)."""

    def __init__(self) -> None:
        super().__init__("aot_eager")
