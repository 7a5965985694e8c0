"""The torch alias: ``python -m tocha.run`` and ``tocha.compat.alias_torch()`` resolve every
``torch`` import to tocha's module objects; a ``torch.X`` tocha lacks is named as missing.
Each case runs in a fresh interpreter (the alias is process-wide)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = """
import sys
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader
import tocha
import torch.nn.modules.linear
import torch.optim.lr_scheduler as late
assert torch.Tensor is tocha.Tensor and torch.add is tocha.add and torch.__version__ == "2.13.0"
assert nn is tocha.nn and F is tocha.nn.functional and tocha.__version__ != "2.13.0"
assert torch.nn.modules.linear.Linear is tocha.nn.Linear
assert DataLoader is tocha.utils.data.DataLoader
assert late is tocha.optim.lr_scheduler and sys.modules["torch.optim"] is tocha.optim
assert tocha.nn.__spec__.name == "tocha.nn"
try:
    import torch._lazy
except ImportError as exc:
    print("missing:", exc)
print("argv:", sys.argv[1:], "main:", __name__)
"""


def run(args, tmp_path, code=PROGRAM):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code))
    proc = subprocess.run(
        [sys.executable, *args(script)], capture_output=True, text=True, cwd=str(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_run_aliases_torch(tmp_path):
    out = run(lambda s: ["-m", "tocha.run", str(s), "--flag", "x"], tmp_path)
    assert "missing: torch._lazy is not in tocha yet" in out
    assert "argv: ['--flag', 'x'] main: __main__" in out


def test_run_a_module(tmp_path):
    out = run(lambda s: ["-m", "tocha.run", "-m", "prog", "a"], tmp_path)
    assert "argv: ['a'] main: __main__" in out


def test_alias_torch_in_a_running_interpreter(tmp_path):
    code = (
        "import tocha.compat\ntocha.compat.alias_torch()\n"
        + PROGRAM
        + textwrap.dedent("""
        tocha.compat.unalias_torch()
        assert "torch" not in sys.modules and not tocha.compat.is_aliased()
    """)
    )
    out = run(lambda s: [str(s)], tmp_path, code)
    assert "missing: torch._lazy is not in tocha yet" in out


def test_alias_refuses_when_real_torch_is_imported(tmp_path):
    code = """
        import sys, types
        sys.modules["torch"] = types.ModuleType("torch")
        import tocha.compat
        try:
            tocha.compat.alias_torch()
        except RuntimeError as exc:
            print(exc)
    """
    assert "torch is already imported" in run(lambda s: [str(s)], tmp_path, code)


def test_missing_distribution_is_named(tmp_path):
    code = """
        import tocha, tocha.compat
        tocha._SUBPACKAGES["fakepkg"] = "tocha-fake"
        tocha.compat.alias_torch()
        try:
            import torch.fakepkg
        except ImportError as exc:
            print(exc)
    """
    out = run(lambda s: [str(s)], tmp_path, code)
    assert "torch.fakepkg comes from the distribution tocha-fake" in out


def test_run_without_a_program_prints_usage():
    proc = subprocess.run([sys.executable, "-m", "tocha.run"], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage: python -m tocha.run" in proc.stderr
