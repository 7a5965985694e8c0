"""The benchmark suite does not rot: every case's callables run once on every library.

Nothing is timed here (tests never assert timings). A case whose tocha op does not exist yet
is skipped with the reason, as the benchmark table shows it as "n/a".
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

# Small data for the cases whose size is adjustable: the smoke test runs, it does not time.
os.environ.setdefault("TOCHA_BENCH_SERIALIZATION_MB", "16")
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
harness = importlib.import_module("harness")

CASES = harness.load_cases()


def test_cases_are_found():
    assert CASES, f"no cases in {BENCHMARKS}/cases_*.py"
    labels = [case.label for case in CASES]
    assert len(labels) == len(set(labels)), "two cases share a label"


@pytest.mark.parametrize("library", harness.LIBRARIES)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.label)
def test_case_runs(case, library):
    lib = pytest.importorskip(
        library, reason=f"this case's {library} side needs {library} installed"
    )
    try:
        harness.prepare(case, lib)
    except harness.Unavailable as exc:
        pytest.skip(f"{library}: {exc}")
