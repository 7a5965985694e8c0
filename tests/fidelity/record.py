"""What the instruments keep in the repository: PyTorch's answers for the CI sample
(``answers/<name>.pkl.xz``: the cases with PyTorch's outcomes) and the known disagreements
(``known_<name>.txt``: one ``op | class | reason`` a line), and the report they write."""

from __future__ import annotations

import lzma
import pickle
from pathlib import Path

HERE = Path(__file__).parent
AGREEING = {"agree", "agree-raise", "unbuilt"}


def answers_path(name: str) -> Path:
    return HERE / "answers" / f"{name}.pkl.xz"


def save_answers(name: str, records: list) -> None:
    """`records`: ``(case, torch_result, random)`` triples."""
    path = answers_path(name)
    path.parent.mkdir(exist_ok=True)
    with lzma.open(path, "wb", preset=9) as stream:
        pickle.dump(records, stream, protocol=5)


def load_answers(name: str) -> list:
    with lzma.open(answers_path(name), "rb") as stream:
        return pickle.load(stream)


def known_path(name: str) -> Path:
    return HERE / f"known_{name}.txt"


def load_known(name: str) -> dict[tuple[str, str], str]:
    """``(op, class) -> reason`` of the disagreements known to the sample."""
    known = {}
    path = known_path(name)
    if not path.exists():
        return known
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            op, cls, reason = (part.strip() for part in line.split("|", 2))
            known[(op, cls)] = reason
    return known


def save_known(name: str, found: dict[tuple[str, str], str], header: str) -> None:
    """Write the known disagreements, keeping the reasons already written for old entries."""
    old = load_known(name)
    lines = [f"# {line}" for line in header.splitlines()]
    for key in sorted(found):
        lines.append(f"{key[0]} | {key[1]} | {old.get(key, found[key])}")
    known_path(name).write_text("\n".join(lines) + "\n")


def report(title: str, counts, examples: dict, per_key, total_ops: int) -> str:
    """A Markdown report: counts per class, the (op, class) pairs with most cases, then one
    example for each (op, class)."""
    total = sum(counts.values())
    agreeing = sum(counts[c] for c in AGREEING)
    share = 100.0 * agreeing / max(total, 1)
    lines = [f"# {title}", "", f"{total} cases over {total_ops} ops; {share:.2f}% agree."]
    lines += ["", "| class | cases |", "|---|---|"]
    for cls, n in counts.most_common():
        lines.append(f"| {cls} | {n} |")
    lines += ["", "## The ops with most disagreements", ""]
    lines += ["| op | class | cases |", "|---|---|---|"]
    for (op, cls), n in per_key.most_common(60):
        lines.append(f"| `{op}` | {cls} | {n} |")
    lines += ["", "## Disagreements, one example per op and class", ""]
    for (op, cls), text in sorted(examples.items()):
        lines.append(f"- `{op}` **{cls}** ({per_key[op, cls]}): {text}")
    return "\n".join(lines) + "\n"
