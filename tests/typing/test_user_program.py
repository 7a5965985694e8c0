"""Type checkers see tocha: ``mypy --strict`` (with the repository's mypy.ini) passes on
`user_program.py`, a training program as a PyTorch user writes one, and reports the names
tocha lacks in another. Skipped without mypy (``nox -s typecheck`` installs it)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(__file__).with_name("user_program.py")
# Misspelt names: a Tensor method, a tocha function, a module class, a functional, an
# optimizer method, a scheduler.
MISTAKES = """
import tocha as torch
import tocha.nn as nn
import tocha.nn.functional as F

x = torch.ones(2)
x.unsqeeze(0)
torch.onse(2)
nn.Linaer(2, 2)
F.cross_entropi(x, x)
torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1).zero_grads()
torch.optim.lr_scheduler.StepLRR
"""


def test_mypy_strict(tmp_path):
    pytest.importorskip("mypy")
    mistakes = tmp_path / "mistakes.py"
    mistakes.write_text(MISTAKES)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", "mypy.ini"]
        + [str(PROGRAM), str(mistakes)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert not [line for line in errors if "user_program.py" in line], result.stdout
    found = {m.group(1) for line in errors if (m := re.search(r'has no attribute "(\w+)"', line))}
    expected = {"unsqeeze", "onse", "Linaer", "cross_entropi", "zero_grads", "StepLRR"}
    assert found == expected, result.stdout


def test_user_program_runs():
    result = subprocess.run(
        [sys.executable, str(PROGRAM)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "last loss" in result.stdout
