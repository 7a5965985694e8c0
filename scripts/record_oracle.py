"""Record PyTorch's answers for the tests that take the `torch` fixture (tests/oracle/).

Run with PyTorch installed (``pip install torch==2.13.0``), from the repository root:

    python scripts/record_oracle.py                 # every test file that uses the oracle
    python scripts/record_oracle.py tests/nn/test_conv.py ...   # only these files

Four passes of pytest, each over the same files:

1. record: PyTorch answers; the tapes of the tests that pass are written to tests/oracle/answers.
2. live: the tests that failed while recording run on PyTorch itself. Those that pass there
   cannot be recorded (the reason is kept, and they run live when PyTorch is installed);
   those that fail there are real failures, and the script stops.
3. check: every recorded test runs against PyTorch again; one whose answers differ from the
   recording (PyTorch's answers vary between runs) is kept live-only.
4. replay: PyTorch hidden; a recorded test that fails without it is kept live-only, with the
   first line of its failure as the reason.

The tests the last three passes set apart are listed at the end, with their reasons.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.oracle.tape import answers_file, load_answers, save_answers  # noqa: E402


def oracle_test_files() -> list[str]:
    """The test files whose tests may take the `torch` fixture."""
    files = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if "torch" in path.read_text():
            files.append(str(path.relative_to(ROOT)))
    return files


def run_pytest(mode: str, files: list[str], extra: list[str], only=None) -> dict[str, str]:
    """Run pytest in `mode` over `files` (only the nodeids `only`, when given); each oracle
    test's outcome."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = dict(os.environ, TOCHA_ORACLE_MODE=mode, TOCHA_ORACLE_REPORT=str(report))
        if only is not None:
            selection = Path(tmp) / "nodeids.txt"
            selection.write_text("\n".join(only) + "\n")
            env["TOCHA_ORACLE_ONLY"] = str(selection)
            files = sorted({nodeid.split("::", 1)[0] for nodeid in only})
        command = [sys.executable, "-m", "pytest", *files, "-q", "-p", "no:cacheprovider"]
        print(f"-- {mode}: {len(files) if only is None else len(only)} targets", flush=True)
        subprocess.run(command + extra, cwd=ROOT, env=env, check=False)
        return json.loads(report.read_text()) if report.exists() else {}


def failures(outcomes: dict[str, str]) -> dict[str, str]:
    return {
        nodeid: outcome.removeprefix("failed: ")
        for nodeid, outcome in outcomes.items()
        if outcome.startswith("failed")
    }


def keep_live(reasons: dict[str, str]) -> None:
    """Replace the recordings of these tests by the reason they run only on PyTorch."""
    by_file: dict[str, dict[str, str]] = {}
    for nodeid, reason in reasons.items():
        by_file.setdefault(nodeid.split("::", 1)[0], {})[nodeid] = reason
    for test_file, entries in by_file.items():
        answers = load_answers(test_file)
        answers.update(entries)
        save_answers(test_file, answers)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files (default: all that use the oracle)")
    parser.add_argument("--pytest", default="", help="extra pytest arguments, one string")
    options = parser.parse_args()
    files = options.files or oracle_test_files()
    extra = options.pytest.split()
    for test_file in files:  # a file recorded whole starts afresh: no answers of gone tests
        answers_file(test_file).unlink(missing_ok=True)

    recorded = run_pytest("record", files, extra)
    failed = failures(recorded)
    live = failures(run_pytest("live", files, extra, sorted(failed))) if failed else {}
    if live:
        print("These tests fail on PyTorch itself: fix them, then record again.")
        for nodeid, reason in live.items():
            print(f"  {nodeid}: {reason}")
        return 1
    set_apart = {
        nodeid: f"its answers cannot be recorded ({reason})" for nodeid, reason in failed.items()
    }
    keep_live(set_apart)

    passed = sorted(n for n, outcome in recorded.items() if outcome in ("passed", "skipped"))
    varying = failures(run_pytest("check", files, extra, passed)) if passed else {}
    varying = {n: f"PyTorch's answers vary between runs ({r})" for n, r in varying.items()}
    keep_live(varying)
    set_apart.update(varying)

    steady = [n for n in passed if n not in varying]
    unreplayable = failures(run_pytest("replay", files, extra, steady)) if steady else {}
    unreplayable = {n: f"it needs PyTorch itself at replay ({r})" for n, r in unreplayable.items()}
    keep_live(unreplayable)
    set_apart.update(unreplayable)

    print(
        f"\nrecorded {len(steady) - len(unreplayable)} tests; {len(set_apart)} run only on PyTorch:"
    )
    for nodeid, reason in sorted(set_apart.items()):
        print(f"  {nodeid}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
