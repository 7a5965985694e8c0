"""The differential sweep: every public callable PyTorch and tocha both have, called on the
same generated inputs, the outcomes compared and counted by class.

    python -m tests.fidelity.sweep --full --report build/fidelity/sweep.md
    python -m tests.fidelity.sweep --record      # rewrite the CI sample's answers and known list
    python -m tests.fidelity.sweep --relist      # after a fix: rewrite the known list (no torch)

Needs PyTorch (``/work/venv-torch`` or ``nox -s fidelity``). Without ``--full`` it runs the
CI sample (about one case in `SAMPLE_EVERY`). ``tests/fidelity/test_sweep_sample.py``
replays the sample on tocha alone against the recorded answers.
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import sys
import zlib
from pathlib import Path

from tests.fidelity import record
from tests.fidelity.calls import Library, classify, run
from tests.fidelity.generate import cases_for

SAMPLE_EVERY = 6
NAME = "sweep"
_LIBRARIES: dict[str, Library] = {}


def libraries() -> tuple[Library, Library]:
    if not _LIBRARIES:
        import torch

        import tocha

        torch.set_num_threads(1)
        _LIBRARIES["torch"] = Library(torch)
        _LIBRARIES["tocha"] = Library(tocha)
    return _LIBRARIES["torch"], _LIBRARIES["tocha"]


def in_sample(case) -> bool:
    return zlib.crc32(repr(case).encode()) % SAMPLE_EVERY == 0


def torch_side(case):
    """PyTorch's result for a case, and whether it is random (differs between two seeds)."""
    torch_lib, _ = libraries()
    want = run(torch_lib, case, seed=0)
    again = run(torch_lib, case, seed=1)
    random = classify(want, again) not in record.AGREEING or "empty" in case[0]
    return want, random


def job(case):
    """Run in a worker: ``(torch's result, random, tocha's result)``."""
    want, random = torch_side(case)
    _, tocha_lib = libraries()
    return want, random, run(tocha_lib, case)


def _tocha_library() -> Library:
    if "tocha" not in _LIBRARIES:
        import tocha

        _LIBRARIES["tocha"] = Library(tocha)
    return _LIBRARIES["tocha"]


def tocha_job(case):
    """Run in a worker without PyTorch: tocha's result."""
    return run(_tocha_library(), case)


job.warm = libraries
tocha_job.warm = _tocha_library
JOB_TOCHA = "tests.fidelity.sweep:tocha_job"


def replay_found(name: str, timeout: float = 20.0) -> dict:
    """Replay a recorded sample on tocha alone: its disagreements, ``(op, class) ->
    example``."""
    from tests.fidelity.pool import run_bounded

    records = record.load_answers(name)
    results = run_bounded(JOB_TOCHA, [r[0] for r in records], timeout=timeout)
    return summarize([(*r, got) for r, got in zip(records, results)])[1]


def replay(name: str, timeout: float = 20.0):
    """Replay a recorded sample on tocha: the disagreements missing from the known list,
    ``(op, class) -> example``, and the known ones that are gone."""
    found = replay_found(name, timeout)
    known = record.load_known(name)
    new = {key: text for key, text in found.items() if key not in known}
    fixed = sorted(key for key in known if key not in found)
    return new, fixed


def torch_job(case):
    """Run in a worker: PyTorch's result and whether it is random."""
    return torch_side(case)


torch_job.warm = libraries


def run_all(cases: list, workers: int, timeout: float) -> list:
    """``(case, torch's result, random, tocha's result)`` for each case, each call bounded
    in time (where tocha hangs or crashes, PyTorch's answer is asked alone)."""
    from tests.fidelity.pool import run_bounded

    results = run_bounded("tests.fidelity.sweep:job", cases, workers, timeout, _progress)
    lost = [i for i, result in enumerate(results) if result[0] in ("hang", "crash")]
    alone = (
        run_bounded("tests.fidelity.sweep:torch_job", [cases[i] for i in lost], workers, timeout)
        if lost
        else []
    )
    torch_results = dict(zip(lost, alone))
    records = []
    for i, (case, result) in enumerate(zip(cases, results)):
        if i in torch_results:
            want = torch_results[i]
            if want[0] in ("hang", "crash"):
                want = ((want[0],), None), False
            records.append((case, *want, result))
        else:
            records.append((case, *result))
    return records


def _probe(case):
    torch_lib, _ = libraries()
    outcome, _ = run(torch_lib, case)
    return outcome[2] if outcome[0] == "tensor" else None


def all_cases(patterns: list[str]) -> tuple[list, int]:
    """Every generated case of the ops matching `patterns` (all ops when empty)."""
    import torch

    import tocha
    from tests.fidelity.ops import enumerate_ops

    libraries()
    ops = enumerate_ops(torch, tocha)
    if patterns:
        ops = {op: s for op, s in ops.items() if any(fnmatch.fnmatch(op, p) for p in patterns)}
    cases = []
    for op, signatures in ops.items():
        cases.extend(cases_for(op, signatures, probe=_probe))
    return cases, len(ops)


def spec_text(spec) -> str:
    kind = spec[0]
    if kind == "T":
        layout = {"c": "", "t": ".T", "s": "[..., ::2]"}[spec[3]]
        fill = "" if spec[5] == "normal" else f"<{spec[5]}>"
        return f"{spec[2]}{list(spec[1])}{fill}{layout}"
    if kind == "G":
        return f"float64{list(spec[1])}<grad>"
    if kind == "O":
        return f"empty({spec[1]})"
    if kind in ("L", "U"):
        inner = ", ".join(spec_text(s) for s in spec[1])
        return f"[{inner}]" if kind == "L" else f"({inner})"
    if kind == "D":
        return spec[1]
    if kind == "X":
        return f"<{spec[1]}>"
    return repr(spec[1])


def case_text(case) -> str:
    op, args, kwargs = case
    parts = [spec_text(a) for a in args] + [f"{k}={spec_text(v)}" for k, v in kwargs]
    return f"{op}({', '.join(parts)})"


def outcome_text(result) -> str:
    if result is None:
        return "?"
    outcome = result[0] if isinstance(result[0], tuple) else result
    kind = outcome[0]
    if kind == "raise":
        return f"{outcome[1]}: {' '.join(outcome[3].split())[:120]}"
    if kind == "tensor":
        ident = f" is {outcome[4]}" if outcome[4] else ""
        return f"{outcome[2]}{list(outcome[1])}{ident}"
    if kind == "seq":
        return f"{outcome[1]} of {len(outcome[2])}"
    if kind == "value":
        return repr(outcome[1])[:60]
    return " ".join(str(x) for x in outcome)


def explain(case, want, got) -> str:
    return f"{case_text(case)}: torch {outcome_text(want)}; tocha {outcome_text(got)}"


def tocha_class(want, random: bool, got) -> str:
    if got[0] in ("hang", "crash"):
        if got[0] == "hang" and want[0] == ("hang",):
            return "torch-hangs-too"  # PyTorch, asked alone, ran past the bound as well
        return got[0]
    return classify(want, got, random)


def summarize(records: list) -> tuple[collections.Counter, dict, collections.Counter]:
    """Counts per class, one explained example per (op, class) that disagrees, and the
    number of cases of each such (op, class), from ``(case, torch result, random, tocha
    result)`` records."""
    counts: collections.Counter = collections.Counter()
    per_key: collections.Counter = collections.Counter()
    examples: dict = {}
    for case, want, random, got in records:
        cls = tocha_class(want, random, got)
        counts[cls] += 1
        if cls not in record.AGREEING:
            per_key[case[0], cls] += 1
            examples.setdefault((case[0], cls), explain(case, want, got))
    return counts, examples, per_key


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="every case, not the CI sample")
    parser.add_argument("--record", action="store_true", help="rewrite the CI sample's answers")
    parser.add_argument(
        "--relist",
        action="store_true",
        help="replay the recorded sample on tocha alone and rewrite the known list (no PyTorch)",
    )
    parser.add_argument("--report", type=Path, help="write a Markdown report here")
    parser.add_argument("--ops", nargs="*", default=[], help="glob patterns of ops")
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=20.0)
    options = parser.parse_args(argv)
    if options.relist:
        record.save_known(NAME, replay_found(NAME), KNOWN_HEADER)
        return 0
    cases, n_ops = all_cases(options.ops)
    if not options.full:
        cases = [case for case in cases if in_sample(case)]
    print(f"{len(cases)} cases over {n_ops} ops", file=sys.stderr)
    records = run_all(cases, options.workers, options.timeout)
    counts, examples, per_key = summarize(records)
    title = "tocha against PyTorch: the differential sweep"
    text = record.report(title, counts, examples, per_key, n_ops)
    print(text.split("## Disagreements")[0])
    if options.report:
        options.report.parent.mkdir(parents=True, exist_ok=True)
        options.report.write_text(text)
    if options.record:
        sample = [r for r in records if in_sample(r[0])]
        record.save_answers(NAME, [r[:3] for r in sample])
        record.save_known(NAME, summarize(sample)[1], KNOWN_HEADER)
    return 0


KNOWN_HEADER = """Known disagreements of the sweep's CI sample with PyTorch: op | class | reason.
The test fails on a disagreement not listed here, and on a listed one that is gone (fixed:
remove its line, or run `python -m tests.fidelity.sweep --relist`, which keeps the reasons
written)."""


def _progress(done: int, total: int) -> None:
    if done % 1000 == 0 or done == total:
        print(f"  {done}/{total}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
