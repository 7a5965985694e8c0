"""Every script in examples/ runs end to end for a few steps, in a subprocess.

The scripts are run as a user runs them (``python examples/x.py --steps 3``), in a temporary
working directory, with a timeout. Those that need scikit-learn or matplotlib skip without
them; none needs PyTorch (finetune.py's checkpoint is written by tocha when it is missing).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TIMEOUT = 90


def run(tmp_path: Path, script: str, *args: str, hide_torch: bool = False):
    """Run ``python examples/<script> <args>`` in `tmp_path`; `hide_torch` puts a ``torch``
    module that fails to import first on the path (of this process and its children)."""
    env = dict(os.environ)
    if hide_torch:
        (tmp_path / "hidden").mkdir()
        (tmp_path / "hidden" / "torch.py").write_text("raise ImportError('hidden by the test')")
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(tmp_path / "hidden"), env.get("PYTHONPATH")])
        )
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def succeed(tmp_path: Path, script: str, *args: str, hide_torch: bool = False) -> str:
    """The standard output of a run that must succeed."""
    result = run(tmp_path, script, *args, hide_torch=hide_torch)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def needs(*modules: str) -> pytest.MarkDecorator:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


@needs("sklearn", "matplotlib")
def test_digits(tmp_path):
    out = succeed(tmp_path, "digits.py", *"--epochs 1 --limit 96 --workers 1 --out run".split())
    assert "test accuracy" in out and "reloaded" in out
    assert (tmp_path / "run" / "last.pt").is_file() and (tmp_path / "run" / "loss.png").is_file()
    trained = re.search(r"trained .*test accuracy ([\d.]+)%", out)
    reloaded = re.search(r"reloaded: test accuracy ([\d.]+)%", out)
    assert trained and reloaded and trained[1] == reloaded[1], out


def test_digits_on_cuda_fails_clearly(tmp_path):
    import tocha

    if tocha.backends.status().get("cuda", {}).get("loaded"):
        pytest.skip("a cuda backend is loaded")
    result = run(tmp_path, "digits.py", "--device", "cuda")
    assert result.returncode != 0
    assert "device type 'cuda'" in result.stderr  # no backend installed, or it failed to load
    assert "Traceback" not in result.stderr


def test_char_gpt(tmp_path):
    args = "--steps 3 --batch-size 4 --block 16 --workers 1 --samples 1 --length 10"
    out = succeed(tmp_path, "char_gpt.py", *args.split())
    assert "trained 3 steps" in out and "--- sample 1 ---\ndef " in out


def test_lstm_lm(tmp_path):
    out = succeed(tmp_path, "lstm_lm.py", "--epochs", "1", "--steps", "3", "--length", "10")
    assert "held-out loss" in out and "--- sample ---" in out


def test_custom_function(tmp_path):
    out = succeed(tmp_path, "custom_function.py", "--steps", "3")
    assert "gradcheck: True" in out and "gradgradcheck: True" in out
    assert "same values as F.silu: True" in out


FINETUNE = ["finetune.py", *"--checkpoint pre.pt --steps 3 --pretrain-steps 3 --samples 16".split()]


@needs("torch")
def test_finetune_from_a_pytorch_checkpoint(tmp_path):
    out = succeed(tmp_path, *FINETUNE)
    assert "written by PyTorch" in out and "everything fine-tuned" in out


def test_finetune_without_pytorch(tmp_path):
    out = succeed(tmp_path, *FINETUNE, hide_torch=True)
    assert "(PyTorch is not installed)" in out and "everything fine-tuned" in out


def test_hogwild(tmp_path):
    succeed(tmp_path, "hogwild.py", "--processes", "2", "--epochs", "1")
