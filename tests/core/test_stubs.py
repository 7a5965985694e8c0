"""The checked-in type stubs (``tocha/__init__.pyi``, ``tocha/_tensor.pyi``...) are what
``scripts/generate_stubs.py`` writes from the code as it is now."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "generate_stubs.py"


def _all_distributions() -> None:
    """Skip unless every tocha distribution is installed (the stubs declare what each
    attaches to Tensor) and Python has ``typing.get_overloads`` (3.11)."""
    if sys.version_info < (3, 11):
        pytest.skip("the stub generator needs Python 3.11 (typing.get_overloads)")
    from tocha._missing import SUBPACKAGES

    for name in SUBPACKAGES:
        try:
            importlib.import_module(f"tocha.{name}")
        except ImportError as error:
            pytest.skip(f"the stubs are generated with every distribution installed: {error}")


def test_stubs_are_current():
    _all_distributions()
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr + result.stdout
