"""`Compare`: measurements side by side in text tables, one per label: a row per sub-label
(grouped by thread count), a column per description."""

from __future__ import annotations

from ._measurement import Measurement
from ._units import select_unit, trim_sigfig, unit_to_english

__all__ = ["Compare"]

_BEST = "\033[92m\033[1m"
_WORSE = "\033[2m\033[91m"
_END = "\033[0m\033[0m"


class Compare:
    """Tables of `results` (Measurements), printed with `print()` or ``str()``."""

    def __init__(self, results: list[Measurement]):
        self._results: list[Measurement] = []
        self._trim = False
        self._colorize = False
        self._rowwise = False
        self._highlight_warnings = False
        self.extend_results(results)

    def extend_results(self, results) -> None:
        """Add more measurements."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Show each time to the significant figures its spread supports."""
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        """Color each time by how it compares with the best of its column (of its row with
        `rowwise`)."""
        self._colorize = True
        self._rowwise = rowwise

    def highlight_warnings(self) -> None:
        """Mark the times whose measurements warn of a wide spread."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def __str__(self) -> str:
        return "\n".join(self._render())

    def _render(self) -> list[str]:
        merged = Measurement.merge(self._results)
        by_label: dict = {}
        for m in merged:
            by_label.setdefault(m.task_spec.label, []).append(m)
        lines: list[str] = []
        for label, group in by_label.items():
            lines.extend(self._table(label, group))
        return lines

    def _table(self, label, group: list[Measurement]) -> list[str]:
        unit, scale = select_unit(min(m.median for m in group))
        columns = list(dict.fromkeys(m.task_spec.description for m in group))
        by_threads: dict = {}
        for m in group:
            rows = by_threads.setdefault(m.task_spec.num_threads, {})
            rows.setdefault(m.as_row_name, {})[m.task_spec.description] = m
        cells = {id(m): self._cell(m, scale) for m in group}
        if self._colorize:
            self._paint(group, cells)
        widths = [
            max(
                [len(column or "")]
                + [len(_plain(cells[id(m)])) for m in group if m.task_spec.description == column]
            )
            for column in columns
        ]
        names = [name for rows in by_threads.values() for name in rows]
        name_width = max(len(n) for n in names)

        def line(first: str, texts: list[str], center: bool) -> str:
            parts = [first]
            for i, (text, width) in enumerate(zip(texts, widths, strict=True)):
                padding = width - len(_plain(text))
                if center:
                    left = (padding + 1) // 2
                    body = " " * left + text + " " * (padding - left)
                else:
                    body = " " * padding + text
                parts.append("|  " + body + ("" if i == len(widths) - 1 else "  "))
            return "".join(parts)

        first_width = 6 + name_width + 2
        header = line(" " * first_width, [c or "" for c in columns], True)
        body: list[str] = []
        for threads in sorted(by_threads):
            body.append(None)  # the thread count's rule, once the width is known
            for name, row in by_threads[threads].items():
                texts = [cells[id(row[c])] if c in row else "" for c in columns]
                body.append(line("      " + name.ljust(name_width) + "  ", texts, False))
        width = max(len(_plain(x)) for x in [header, *(b for b in body if b is not None)])
        title = f" {label} " if label else " "
        dashes = width - 2 - len(title)
        left = (dashes + 1) // 2
        out = ["[" + "-" * left + title + "-" * (dashes - left) + "]", header]
        thread_counts = iter(sorted(by_threads))
        for b in body:
            if b is None:
                rule = f"{next(thread_counts)} threads: "
                out.append(rule + "-" * (width - len(rule)))
            else:
                out.append(b)
        out += ["", f"Times are in {unit_to_english(unit)}s ({unit}).", ""]
        return out

    def _cell(self, m: Measurement, scale: float) -> str:
        value = m.median / scale
        if self._trim:
            value = trim_sigfig(value, m.significant_figures)
        text = f"{value:.1f}"
        if self._highlight_warnings and m.has_warnings:
            text += f" (! {m.iqr / m.median * 100:.0f}%)"
        return text

    def _paint(self, group: list[Measurement], cells: dict) -> None:
        """Best of each column (or row) green, those more than 10% slower dimmed red."""
        key = (
            (lambda m: (m.task_spec.num_threads, m.as_row_name))
            if self._rowwise
            else (lambda m: m.task_spec.description)
        )
        best: dict = {}
        for m in group:
            best[key(m)] = min(best.get(key(m), m.median), m.median)
        for m in group:
            fastest = best[key(m)]
            if m.median <= fastest:
                cells[id(m)] = _BEST + cells[id(m)] + _END
            elif m.median > fastest * 1.1:
                cells[id(m)] = _WORSE + cells[id(m)] + _END


def _plain(text: str) -> str:
    for code in (_BEST, _WORSE, _END):
        text = text.replace(code, "")
    return text
