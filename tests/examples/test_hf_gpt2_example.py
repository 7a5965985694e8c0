"""examples/hf_gpt2.py (a tiny GPT-2 of Hugging Face transformers trained on local text) runs
unchanged on tocha under ``python -m tocha.run``, briefly: the loss falls and it generates."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hf_gpt2.py"


@pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None,
    reason="transformers is not installed (nox -s tests installs it)",
)
def test_hf_gpt2_trains_and_generates(tmp_path):
    args = ["--text", str(EXAMPLE), "--steps", "40", "--generate", "24"]
    proc = subprocess.run(
        [sys.executable, "-m", "tocha.run", str(EXAMPLE), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "step   40  loss" in proc.stdout
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["last_loss"] < out["first_loss"] - 0.5
    text = EXAMPLE.read_text()
    assert out["sample"].startswith(text[:16]) and len(out["sample"]) == 16 + 24
