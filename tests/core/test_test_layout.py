"""The test tree's own rule: pytest imports test modules by basename (there are no
packages under tests/), so two test files with one name in different folders break the
collection of the whole suite."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_test_modules_have_unique_names():
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if "plugins" not in p.parts)
    assert not [name for name, n in names.items() if n > 1]
