"""The errors TorchScript's front end raises when source falls outside the scriptable subset.

Each message names the construct and shows where it is, as PyTorch prints it::

    try blocks aren't supported:
      File "model.py", line 12
        try:
        ~~~ <--- HERE
"""

from __future__ import annotations

import ast

__all__ = ["FrontendError", "NotSupportedError", "UnsupportedNodeError", "SourceContext"]


class SourceContext:
    """Where a function's source came from: its file, first line and lines of text."""

    def __init__(self, filename: str, first_line: int, lines: list[str]) -> None:
        self.filename = filename
        self.first_line = first_line
        self.lines = lines

    def highlight(self, node: ast.AST | None, function: str | None = None) -> str:
        """The ``File ..., line N`` block pointing at ``node``'s first line (``, in f`` added
        when ``function`` is given, as in a traceback)."""
        if node is None or not hasattr(node, "lineno"):
            return f'  File "{self.filename}", line {self.first_line}\n'
        lineno: int = getattr(node, "lineno")  # noqa: B009  (checked above; AST has no stub)
        index = lineno - 1
        text = self.lines[index] if 0 <= index < len(self.lines) else ""
        start: int = getattr(node, "col_offset", 0)
        same_line = getattr(node, "end_lineno", None) == lineno
        end = getattr(node, "end_col_offset", None) if same_line else len(text)
        width = max(1, (end or start + 1) - start)
        line = self.first_line + index
        where = f", in {function}" if function else ""
        marker = f"{' ' * start}{'~' * width} <--- HERE"
        return f'  File "{self.filename}", line {line}{where}\n{text}\n{marker}\n'


class FrontendError(Exception):
    """A construct the TorchScript compiler cannot handle, with its place in the source."""

    def __init__(self, source: SourceContext | None, node: ast.AST | None, msg: str) -> None:
        self.msg = msg
        where = source.highlight(node) if source is not None else ""
        super().__init__(f"{msg}:\n{where}" if where else msg)


class NotSupportedError(FrontendError):
    """A language feature TorchScript does not support (``*args``, keyword-only defaults...)."""


class UnsupportedNodeError(NotSupportedError):
    """A statement or expression kind outside TorchScript (``try``, ``lambda``, ``global``...)."""

    def __init__(self, source: SourceContext | None, node: ast.AST, what: str) -> None:
        super().__init__(source, node, f"{what} aren't supported")
